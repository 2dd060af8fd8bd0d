"""bioaccel: pairwise sequence distances, alignments and guide trees, on GPUs and CPUs.

``import bioaccel`` needs no GPU, no CuPy and no R: GPU and R modules load on first use.
"""

from .pairwise._align import Alignment, align, align_scores
from .sequences._alphabet import DNA, PROTEIN, Alphabet
from .backends import available_backends, get_backend
from .config import show_config
from .distances._compute import distance_matrix
from .distances._matrix import DistanceMatrix
from .distances._dna import MODELS
from .pairwise._edit import edit_distances
from .errors import (AlignmentLengthError, AlphabetError, BackendUnavailableError, BioaccelError,
                     DeviceError, DeviceSelectionError, DuplicateIdError, LeaseTimeoutError,
                     MatrixFormatError, ModelError, SchedulerConfigError, SequenceFormatError,
                     ThreadCountError)
from .sequences._read import read_many, read_sequences
from .msa_engine import MultipleAlignment, msa
from .trees._newick import read_newick
from .sequences._batch import SeqBatch
from .sched import lease
from .trees._tree import Tree, nj, upgma

__version__ = "0.1.0"

__all__ = [
    "DNA", "PROTEIN", "Alignment", "Alphabet", "AlignmentLengthError", "AlphabetError",
    "BackendUnavailableError", "BioaccelError", "DeviceError", "DeviceSelectionError",
    "DistanceMatrix", "DuplicateIdError", "LeaseTimeoutError", "MODELS", "MatrixFormatError",
    "ModelError", "MultipleAlignment", "SchedulerConfigError", "SeqBatch",
    "SequenceFormatError", "Tree", "align", "align_scores", "available_backends", "distance_matrix", "edit_distances", "get_backend",
    "ThreadCountError", "lease", "msa", "nj", "read_many", "read_newick", "read_sequences",
    "show_config", "upgma",
]
