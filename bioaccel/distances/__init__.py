"""Distance matrices: every model behind one dispatch, in memory, in tiles or on disk.

- ``_compute``: :func:`distance_matrix`, the entry point;
- ``_models``: the one model dispatch (aligned DNA, alignment-based protein/DNA, edit, k-mer);
- ``_dna``: ``ape::dist.dna`` formulas from site counts; ``_aa``: p/poisson/kimura of
  aligned proteins; ``_protein``: identity/scoredist from pairwise alignments;
- ``_kmers``: k-mer profiles and MinHash sketches (mash);
- ``_matrix``: :class:`DistanceMatrix` and its readers/writers (PHYLIP, TSV, npy, npz, cdist),
  :class:`CondensedMatrix` (float32 triangle: the low-memory NJ input);
- ``_tiles``: tiles of a matrix for workflows, and their merge; ``_ondisk``: matrices larger
  than memory, streamed to a condensed file; ``_options``: which option fits which model.
"""

from ._aa import AA_MODELS
from ._compute import distance_matrix
from ._dna import MODELS
from ._kmers import KMER_MODELS, KmerRows, Sketches, kmer_params, kmer_rows, sketch
from ._matrix import CondensedMatrix, DistanceMatrix
from ._models import ALL_MODELS
from ._ondisk import CondensedDistances, open_distances, stream_distances
from ._protein import ALIGNMENT_MODELS
from ._tiles import distance_tile, merge_tiles, write_tile

__all__ = [
    "AA_MODELS",
    "ALIGNMENT_MODELS",
    "ALL_MODELS",
    "KMER_MODELS",
    "MODELS",
    "CondensedDistances",
    "CondensedMatrix",
    "DistanceMatrix",
    "KmerRows",
    "Sketches",
    "distance_matrix",
    "distance_tile",
    "kmer_params",
    "kmer_rows",
    "merge_tiles",
    "open_distances",
    "sketch",
    "stream_distances",
    "write_tile",
]
