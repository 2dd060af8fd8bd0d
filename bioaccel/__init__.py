"""bioaccel: pairwise sequence distances, alignments, guide trees and multiple alignments,
on GPUs and CPUs.

``import bioaccel`` needs no GPU, no CuPy and no R: GPU and R modules load on first use.
The names below are the public API; each feature lives in a subpackage whose ``__init__``
lists what it offers:

- :mod:`bioaccel.sequences`: alphabets, :class:`SeqBatch`, the readers;
- :mod:`bioaccel.pairwise`: alignment scores and tracebacks, edit distances;
- :mod:`bioaccel.distances`: distance matrices (every model), tiles, on-disk matrices;
- :mod:`bioaccel.trees`: NJ, UPGMA, Newick;
- :mod:`bioaccel.msa_engine`: multiple sequence alignment;
- :mod:`bioaccel.backends` (reference, cpu, numba-cuda, cupy) over :mod:`bioaccel.kernels`;
- :mod:`bioaccel.devices`: GPUs and the multi-GPU tile runner;
- :mod:`bioaccel.sched`: host-wide GPU leases, policies, placement, the simulator;
- :mod:`bioaccel.cli` (the ``bioaccel`` command), :mod:`bioaccel.rinterop` (R via rpy2),
  :mod:`bioaccel.config` (``show_config``, ``bioaccel doctor``); :mod:`bioaccel._core` is the
  foundation every layer shares.
"""

from .backends import available_backends, get_backend
from .config import show_config
from .distances import MODELS, DistanceMatrix, distance_matrix
from .errors import (
    AlignmentLengthError,
    AlphabetError,
    BackendUnavailableError,
    BioaccelError,
    DeviceError,
    DeviceSelectionError,
    DuplicateIdError,
    LeaseTimeoutError,
    MatrixFormatError,
    ModelError,
    SchedulerConfigError,
    SequenceFormatError,
    ThreadCountError,
)
from .msa_engine import MultipleAlignment, msa
from .pairwise import Alignment, align, align_scores, edit_distances
from .sched import lease
from .sequences import DNA, PROTEIN, Alphabet, SeqBatch, read_many, read_sequences
from .trees import Tree, nj, read_newick, upgma

__version__ = "0.1.0"

__all__ = [
    "DNA",
    "PROTEIN",
    "Alignment",
    "Alphabet",
    "AlignmentLengthError",
    "AlphabetError",
    "BackendUnavailableError",
    "BioaccelError",
    "DeviceError",
    "DeviceSelectionError",
    "DistanceMatrix",
    "DuplicateIdError",
    "LeaseTimeoutError",
    "MODELS",
    "MatrixFormatError",
    "ModelError",
    "MultipleAlignment",
    "SchedulerConfigError",
    "SeqBatch",
    "SequenceFormatError",
    "Tree",
    "align",
    "align_scores",
    "available_backends",
    "distance_matrix",
    "edit_distances",
    "get_backend",
    "ThreadCountError",
    "lease",
    "msa",
    "nj",
    "read_many",
    "read_newick",
    "read_sequences",
    "show_config",
    "upgma",
]
