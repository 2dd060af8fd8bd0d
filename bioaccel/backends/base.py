"""What a backend is, and the input it receives."""

from __future__ import annotations

import abc
import contextlib
from functools import cached_property
from typing import Any

import numpy as np

from ..sequences import pack_planes


def nvidia_driver_present() -> bool:
    """True when the CUDA driver library loads: a cheap test before importing GPU stacks."""
    import ctypes

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


class DnaData:
    """An aligned DNA tile source: the code matrix, and views of it built on demand.

    ``alignment`` holds the DNA codes after any global deletion (n, sites). Backends
    read :attr:`planes` (bit-packed, for popcount kernels) or :attr:`onehot`
    (for the GEMM formulation); ``device_cache`` keeps per-backend device copies
    for the life of one :func:`~bioaccel.distance_matrix` call.
    """

    def __init__(self, alignment: np.ndarray):
        self.alignment = np.ascontiguousarray(alignment, dtype=np.uint8)
        self.device_cache: dict[str, Any] = {}

    @property
    def n(self) -> int:
        return self.alignment.shape[0]

    @property
    def sites(self) -> int:
        return self.alignment.shape[1]

    @cached_property
    def planes(self) -> np.ndarray:
        return pack_planes(self.alignment)


class Backend(abc.ABC):
    """Base class: a named way of computing pair counts for a tile of sequence pairs."""

    name = "base"
    #: what this backend has kernels for
    operations: frozenset[str] = frozenset({"dna_counts"})
    #: operations ``backend="auto"`` may pick this backend for (default: all of them)
    auto_operations: frozenset[str] | None = None
    #: True for the GPU backends (``auto``'s size rules, the ``devices=`` checks)
    on_gpu: bool = False

    def unavailable_reason(self, for_auto: bool) -> str | None:
        """None when usable; else why not. ``for_auto`` also rejects slow stand-ins."""
        return None

    def device_scope(self, device):
        """A context in which this backend's kernels run on ``device`` (a
        :class:`bioaccel.devices.Device`), made current in this thread: the one device
        dispatch, which every multi-device path enters through
        :func:`bioaccel.devices.device_scope`. The CPU backends run anywhere (nothing to
        select); each GPU backend binds its own stack's device selection."""
        return contextlib.nullcontext()

    def is_device_failure(self, exc: BaseException) -> bool:
        """True when ``exc`` is this backend's stack saying its device failed (a driver or
        runtime error, not out of memory): the tile runner moves the device's tiles to the
        other devices. The CPU backends have no device to fail."""
        return False

    @abc.abstractmethod
    def dna_counts(
        self,
        data: DnaData,
        i0: int,
        i1: int,
        j0: int,
        j1: int,
        *,
        table: bool,
        upper_only: bool,
        threads: int,
    ) -> np.ndarray:
        """Counts (4 or 16, i1 - i0, j1 - j0) int32 for rows [i0, i1) x columns [j0, j1).

        Pairs with ``j <= i`` may be left at zero when ``upper_only`` is set.
        """

    def fill_distance_rows(
        self,
        data: DnaData,
        model: str,
        freqs: np.ndarray,
        i0: int,
        i1: int,
        out: np.ndarray,
        threads: int,
    ) -> bool:
        """Optionally compute distances of rows [i0, i1) (j > i) straight into ``out`` (n, n),
        both triangles. Returns False when this backend has no fused path."""
        return False

    def align_scores(
        self, queries, targets, scoring, mode: int, symmetric: bool, threads: int
    ) -> np.ndarray:
        """Alignment scores (len(queries), len(targets)) int32; see bioaccel.align_scores.
        Only backends listing ``align_scores`` in :attr:`operations` override this."""
        from ..errors import BackendUnavailableError

        raise BackendUnavailableError(f"backend {self.name!r} has no align_scores kernels")

    def edit_distances(
        self, queries, targets, mode: int, max_distance: int, symmetric: bool, threads: int
    ) -> np.ndarray:
        """Edit distances (len(queries), len(targets)) int32; see bioaccel.edit_distances.
        Only backends listing ``edit_distances`` in :attr:`operations` override this."""
        from ..errors import BackendUnavailableError

        raise BackendUnavailableError(f"backend {self.name!r} has no edit_distances kernels")

    def edit_pairs(
        self, seqs, pair_i: np.ndarray, pair_j: np.ndarray, max_distance: int, threads: int
    ) -> np.ndarray:
        """Global edit distances of the listed pairs of ``seqs`` (a SeqBatch), int32, any
        distance above ``max_distance`` (>= 0) reported as ``max_distance + 1``: the
        verification of :func:`bioaccel.neighbors.neighbors`' candidates. Only backends
        listing ``edit_pairs`` in :attr:`operations` override this."""
        from ..errors import BackendUnavailableError

        raise BackendUnavailableError(f"backend {self.name!r} has no edit_pairs kernels")

    def neighbor_joining(
        self, d: np.ndarray, threads: int, inplace: bool = False, low_memory: bool = False
    ):
        """Neighbour-joining tree of the finite, symmetric (n, n) float64 matrix ``d`` (n >= 3)
        as (parent, child, length, root) edge arrays, by the one tie rule of
        :func:`bioaccel.nj` (the same tree on every backend). ``inplace``: the backend may
        use ``d`` as its working memory (and overwrite it). ``low_memory``: ``d`` is the
        float32 condensed upper triangle, joined in place (the ``cpu`` backend only; others
        raise :class:`~bioaccel.errors.BackendUnavailableError`). Only backends listing
        ``neighbor_joining`` in :attr:`operations` override this."""
        from ..errors import BackendUnavailableError

        raise BackendUnavailableError(f"backend {self.name!r} has no neighbor_joining kernels")

    def lcs_lengths(
        self, queries, targets, letters: int, symmetric: bool, threads: int
    ) -> np.ndarray:
        """Longest-common-subsequence lengths (len(queries), len(targets)) int32, codes >=
        ``letters`` never matching (the MSA guide tree's distance stage). Only backends
        listing ``lcs_lengths`` in :attr:`operations` override this."""
        from ..errors import BackendUnavailableError

        raise BackendUnavailableError(f"backend {self.name!r} has no lcs_lengths kernels")

    def msa_profile_dp(self, pairs) -> tuple[list[np.ndarray], np.ndarray]:
        """Optimal paths (uint8 ops: 0 Match, 1 GapInB, 2 GapInA) and float32 scores of the
        MSA engine's profile pairs (each a mapping as ``_native.msa_dp_inputs`` returns),
        all in one batch: the ready merges of a guide-tree level. Only backends listing
        ``msa_profile_dp`` in :attr:`operations` override this."""
        from ..errors import BackendUnavailableError

        raise BackendUnavailableError(f"backend {self.name!r} has no msa_profile_dp kernels")

    def pair_posteriors(self, letters, offsets, pairs, odds, prm, threads: int = 0):
        """Pair-HMM posterior match probabilities of the listed pairs (the accurate MSA mode;
        layout in :mod:`bioaccel.backends.posteriors`). Only backends listing
        ``pair_posteriors`` in :attr:`operations` override this."""
        from ..errors import BackendUnavailableError

        raise BackendUnavailableError(f"backend {self.name!r} has no pair_posteriors kernels")

    def __repr__(self) -> str:
        return f"<bioaccel backend {self.name!r}>"


#: the driver and runtime errors of the GPU stacks (cupy, numba.cuda) that mean a device failed
GPU_FAILURE_ERRORS = (
    "CUDARuntimeError",
    "CUDADriverError",
    "CudaAPIError",
    "CudaSupportError",
    "CudaDriverError",
)


def raised_by(exc: BaseException, stack: str) -> bool:
    """True when ``exc`` is one of :data:`GPU_FAILURE_ERRORS` of the package ``stack``."""
    module = type(exc).__module__ or ""
    return module.split(".")[0] == stack and type(exc).__name__ in GPU_FAILURE_ERRORS


def all_pairs(nq: int, nt: int, symmetric: bool) -> tuple[np.ndarray, np.ndarray]:
    """(query, target) index arrays of every pair to score; i <= j when symmetric."""
    if symmetric:
        i, j = np.triu_indices(nq)
        return i.astype(np.int64), j.astype(np.int64)
    qi, ti = np.meshgrid(np.arange(nq), np.arange(nt), indexing="ij")
    return qi.ravel().astype(np.int64), ti.ravel().astype(np.int64)


def scatter_pairs(
    values: np.ndarray, pq: np.ndarray, pt: np.ndarray, nq: int, nt: int, symmetric: bool
) -> np.ndarray:
    out = np.zeros((nq, nt), dtype=np.int32)
    out[pq, pt] = values
    if symmetric:
        out[pt, pq] = values
    return out


def check_int32_scores(queries, targets, scoring) -> None:
    """OverflowError when some alignment score could leave the int32 range."""
    longest = int(max(queries.lengths.max(initial=0), targets.lengths.max(initial=0)))
    top = abs(int(scoring.table.max())) + abs(int(scoring.table.min()))
    bound = 2 * longest * (top + scoring.gap_open + scoring.gap_extend) + scoring.gap_open
    if bound >= 2**30:
        raise OverflowError(
            f"alignment scores of sequences up to {longest} letters could exceed int32; "
            "use the cpu backend, which checks each pair"
        )
