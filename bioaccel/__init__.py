"""bioaccel: pairwise sequence distances, alignments and guide trees, on GPUs and CPUs.

``import bioaccel`` needs no GPU, no CuPy and no R: GPU and R modules load on first use.
"""

from .alphabet import DNA, PROTEIN, Alphabet
from .backends import available_backends, get_backend
from .config import show_config
from .distance import distance_matrix
from .distmatrix import DistanceMatrix
from .dna_models import MODELS
from .errors import (AlignmentLengthError, AlphabetError, BackendUnavailableError, BioaccelError,
                     DuplicateIdError, MatrixFormatError, ModelError, SequenceFormatError)
from .io import read_sequences
from .seqbatch import SeqBatch
from .tree import Tree, nj, upgma

__version__ = "0.1.0"

__all__ = [
    "DNA", "PROTEIN", "Alphabet", "AlignmentLengthError", "AlphabetError",
    "BackendUnavailableError", "BioaccelError", "DistanceMatrix", "DuplicateIdError",
    "MODELS", "MatrixFormatError", "ModelError", "SeqBatch", "SequenceFormatError", "Tree",
    "available_backends", "distance_matrix", "get_backend", "nj", "read_sequences",
    "show_config", "upgma",
]
