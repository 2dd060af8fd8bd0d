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
- :mod:`bioaccel.neighbors`: every pair within a threshold (edit, mash, jaccard), never all pairs;
- :mod:`bioaccel.clusters`: amplicon clustering (swarm, linkage, greedy) on the pairs within d;
- :mod:`bioaccel.backends` (reference, cpu, numba-cuda, cupy) over :mod:`bioaccel.kernels`;
- :mod:`bioaccel.devices`: GPUs and the multi-GPU tile runner;
- :mod:`bioaccel.sched`: host-wide GPU leases, policies, placement, the simulator;
- :mod:`bioaccel.cli` (the ``bioaccel`` command), :mod:`bioaccel.rinterop` (R via rpy2),
  :mod:`bioaccel.config` (``show_config``, ``bioaccel doctor``); :mod:`bioaccel._core` is the
  foundation every layer shares.
"""

from typing import TYPE_CHECKING

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

#: Where each public name lives. They load on first use (PEP 562), so ``import bioaccel``
#: (and every ``bioaccel`` command) pays only for the subpackages it touches: NumPy, the
#: compiled core and the MSA engine are not imported to print ``--version``.
_LAZY = {
    "available_backends": "backends",
    "get_backend": "backends",
    "show_config": "config",
    "cluster": "clusters",
    "Clustering": "clusters",
    "MODELS": "distances",
    "DistanceMatrix": "distances",
    "distance_matrix": "distances",
    "MultipleAlignment": "msa_engine",
    "msa": "msa_engine",
    "Neighbors": "neighbors",
    "neighbors": "neighbors",
    "read_neighbors": "neighbors",
    "Alignment": "pairwise",
    "align": "pairwise",
    "align_scores": "pairwise",
    "edit_distances": "pairwise",
    "lease": "sched",
    "DNA": "sequences",
    "PROTEIN": "sequences",
    "Alphabet": "sequences",
    "SeqBatch": "sequences",
    "read_many": "sequences",
    "read_sequences": "sequences",
    "Tree": "trees",
    "nj": "trees",
    "read_newick": "trees",
    "upgma": "trees",
}

#: Subpackages reachable as attributes after ``import bioaccel`` alone, as before.
_SUBPACKAGES = frozenset(
    {
        "backends",
        "cli",
        "clusters",
        "config",
        "devices",
        "distances",
        "kernels",
        "msa_engine",
        "neighbors",
        "pairwise",
        "rinterop",
        "sched",
        "sequences",
        "trees",
    }
)


def __getattr__(name: str):
    import importlib

    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value
    if name in _SUBPACKAGES:
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'bioaccel' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | _SUBPACKAGES)


if TYPE_CHECKING:  # the names as static tools see them
    from .backends import available_backends, get_backend
    from .clusters import Clustering, cluster
    from .config import show_config
    from .distances import MODELS, DistanceMatrix, distance_matrix
    from .msa_engine import MultipleAlignment, msa
    from .neighbors import Neighbors, neighbors, read_neighbors
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
    "Clustering",
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
    "Neighbors",
    "SchedulerConfigError",
    "SeqBatch",
    "SequenceFormatError",
    "Tree",
    "align",
    "align_scores",
    "available_backends",
    "cluster",
    "distance_matrix",
    "edit_distances",
    "get_backend",
    "ThreadCountError",
    "lease",
    "msa",
    "neighbors",
    "nj",
    "read_many",
    "read_neighbors",
    "read_newick",
    "read_sequences",
    "show_config",
    "upgma",
]
