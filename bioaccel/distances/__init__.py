"""Distance matrices: every model behind one dispatch, in memory, in tiles or on disk.

- ``_compute``: :func:`distance_matrix`, the entry point;
- ``_models``: the one model dispatch (aligned DNA, alignment-based protein/DNA, edit, k-mer);
- ``_dna``: ``ape::dist.dna`` formulas from site counts; ``_aa``: p/poisson/kimura of
  aligned proteins; ``_protein``: identity/scoredist from pairwise alignments;
- ``_kmers``: k-mer profiles and MinHash sketches (mash);
- ``_matrix``: :class:`DistanceMatrix`, reading and writing every matrix format;
- ``_checks``: the checks every matrix passes (symmetry, diagonal, negative values, ids);
- ``_condensed``: :class:`CondensedMatrix` (float32 triangle: the low-memory NJ input) and
  the triangles it is filled through (in memory, or a scratch file);
- ``_text``: PHYLIP and TSV text, written and read; ``_npy``: ``.npy`` read into a
  triangle; ``_cdist``: the binary condensed ``.cdist`` format;
- ``_tiles``: tiles of a matrix for workflows, and their merge; ``_ondisk``: matrices larger
  than memory, streamed to a condensed file; ``_options``: which option fits which model.
"""

from .._core import MATRIX_FORMATS, lazy_getattr
from ._aa import AA_MODELS
from ._compute import distance_matrix
from ._condensed import CondensedMatrix
from ._dna import MODELS
from ._kmers import KMER_MODELS, KmerRows, Sketches, kmer_params, kmer_rows, sketch
from ._matrix import DistanceMatrix, matrix_format_of, write_triangle_file
from ._models import ALL_MODELS
from ._ondisk import CondensedDistances, open_distances, stream_distances
from ._protein import ALIGNMENT_MODELS
from ._tiles import distance_tile, merge_tiles, tile_bounds, write_tile

__all__ = [
    "AA_MODELS",
    "ALIGNMENT_MODELS",
    "ALL_MODELS",
    "CondensedDistances",
    "CondensedMatrix",
    "DistanceMatrix",
    "KMER_MODELS",
    "KmerRows",
    "kmer_params",
    "kmer_rows",
    "MATRIX_FORMATS",
    "MODELS",
    "Sketches",
    "USED_BY",
    "cdist_header",
    "check_distances",
    "check_model_options",
    "check_symmetric",
    "condensed_pair",
    "distance_matrix",
    "distance_tile",
    "matrix_format_of",
    "merge_tiles",
    "open_distances",
    "scan_cdist",
    "shown_value",
    "sketch",
    "stream_distances",
    "tile_bounds",
    "write_tile",
    "write_triangle_file",
]

#: Names other packages use, from the module that defines them, loaded on first use (PEP 562)
#: so that importing this package stays cheap.
_LAZY = {
    "USED_BY": ("._options", "USED_BY"),
    "cdist_header": ("._cdist", "cdist_header"),
    "check_distances": ("._checks", "check_distances"),
    "check_model_options": ("._options", "check_model_options"),
    "check_symmetric": ("._checks", "check_symmetric"),
    "condensed_pair": (".._core", "condensed_pair"),
    "scan_cdist": ("._cdist", "scan_cdist"),
    "shown_value": ("._checks", "shown_value"),
}

__getattr__ = lazy_getattr(__name__, _LAZY)
