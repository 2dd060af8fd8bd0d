"""Pairwise comparison of many sequences at once: alignment scores and tracebacks, edit
distances, on every backend (all-vs-all, one-vs-many, listed pairs).

- ``_align``: :func:`align_scores` and :func:`align` (global, local, semiglobal; affine gaps);
- ``_edit``: :func:`edit_distances` (Myers/Hyyrö bit-parallel; global, infix, prefix);
- ``_scoring``: substitution matrices (the one loader, :func:`load_matrix`: Biopython, then
  scoring-matrices) and the gap convention;
- ``_cigar``: CIGAR strings and column counts of an alignment;
- ``_tables``: the alignment table and score matrix writers (TSV, ``.npy``);
- ``_dispatch``: the one path from an operation to a backend, on one device or many.
"""

from .._core import lazy_getattr
from ._align import Alignment, align, align_scores
from ._cigar import cigar_columns, cigar_runs
from ._edit import EDIT_MODES, edit_distances
from ._scoring import (
    MODES,
    Scoring,
    ScoringError,
    check_matrix_kind,
    default_scoring,
    gaps_from_blast,
    gaps_from_skbio,
    load_matrix,
    make_scoring,
    scoring_defaults,
)
from ._tables import save_scores, write_alignment_table, write_score_table

__all__ = [
    "Alignment",
    "EDIT_MODES",
    "MODES",
    "Scoring",
    "ScoringError",
    "align",
    "align_scores",
    "check_matrix_kind",
    "cigar_columns",
    "cigar_runs",
    "default_scoring",
    "edit_distances",
    "gaps_from_blast",
    "gaps_from_skbio",
    "load_matrix",
    "make_scoring",
    "pairwise",
    "save_scores",
    "scoring_defaults",
    "write_alignment_table",
    "write_score_table",
]

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "pairwise": ("._dispatch", "pairwise"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)
