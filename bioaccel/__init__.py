"""bioaccel: pairwise sequence distances, alignments and guide trees, on GPUs and CPUs.

``import bioaccel`` needs no GPU, no CuPy and no R: GPU and R modules load on first use.
"""

from .align import Alignment, align, align_scores
from .alphabet import DNA, PROTEIN, Alphabet
from .backends import available_backends, get_backend
from .config import show_config
from .distance import distance_matrix
from .distmatrix import DistanceMatrix
from .dna_models import MODELS
from .edit import edit_distances
from .errors import (AlignmentLengthError, AlphabetError, BackendUnavailableError, BioaccelError,
                     DeviceError, DeviceSelectionError, DuplicateIdError, LeaseTimeoutError,
                     MatrixFormatError, ModelError, SchedulerConfigError, SequenceFormatError,
                     ThreadCountError)
from .io import read_many, read_sequences
from .msa_engine import MultipleAlignment, msa
from .newick import read_newick
from .seqbatch import SeqBatch
from .sched import lease
from .tree import Tree, nj, upgma

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
