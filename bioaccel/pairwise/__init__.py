"""Pairwise comparison of many sequences at once: alignment scores and tracebacks, edit
distances, on every backend (all-vs-all, one-vs-many, listed pairs).

- ``_align``: :func:`align_scores` and :func:`align` (global, local, semiglobal; affine gaps);
- ``_edit``: :func:`edit_distances` (Myers/Hyyrö bit-parallel; global, infix, prefix);
- ``_scoring``: substitution matrices (Biopython) and the gap convention;
- ``_cigar``: CIGAR strings and column counts of an alignment;
- ``_tables``: the alignment table and score matrix writers (TSV, ``.npy``);
- ``_dispatch``: the one path from an operation to a backend, on one device or many.
"""

from ._align import Alignment, align, align_scores
from ._cigar import cigar_columns, cigar_runs
from ._edit import EDIT_MODES, edit_distances
from ._scoring import MODES, Scoring, gaps_from_blast, gaps_from_skbio, make_scoring
from ._tables import save_scores, write_alignment_table, write_score_table

__all__ = [
    "EDIT_MODES",
    "MODES",
    "Alignment",
    "Scoring",
    "align",
    "align_scores",
    "cigar_columns",
    "cigar_runs",
    "edit_distances",
    "gaps_from_blast",
    "gaps_from_skbio",
    "make_scoring",
    "save_scores",
    "write_alignment_table",
    "write_score_table",
]
