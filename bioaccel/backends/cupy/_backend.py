"""CuPy backend: pair counts as matrix products of one-hot site matrices.

With X_b the (n, sites) 0/1 matrix of base b, ``X_a @ X_b.T`` counts the sites where
sequence i has a and j has b: the 4x4 contingency table is 16 GEMMs and the summary
counts fewer, all of them tensor-core friendly. The array code takes the array module
``xp`` as an argument, so the same code runs (and is tested) with NumPy.

Exactness: 0/1 inputs and float32 accumulation are exact up to 2**24 sites; longer
alignments switch to float64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...sequences import DNA_KNOWN
from ..base import Backend, DnaData, nvidia_driver_present, raised_by

_FLOAT32_EXACT = 2**24
_THREADS = 256


def onehot_numpy(xp: Any, codes: Any, dtype: Any) -> Any:
    """(n, 4, sites) one-hot of DNA codes (missing data is all-zero), array code only."""
    bases = xp.arange(DNA_KNOWN, dtype=codes.dtype).reshape(1, DNA_KNOWN, 1)
    return (codes[:, None, :] == bases).astype(dtype)


def gemm_counts(xp: Any, rows: Any, cols: Any, table: bool) -> Any:
    """Counts (4 or 16, r, c) from one-hot tiles ``rows`` (r, 4, s) and ``cols`` (c, 4, s)."""

    def product(a: int, b: int) -> Any:
        return rows[:, a, :] @ cols[:, b, :].T

    if table:
        return xp.stack([product(a, b) for a in range(4) for b in range(4)])
    known_r = rows.sum(axis=1)
    known_c = cols.sum(axis=1)
    sites = known_r @ known_c.T
    same = sum(product(b, b) for b in range(4))
    ts_purine = product(0, 2) + product(2, 0)  # A<->G
    ts_pyrimidine = product(1, 3) + product(3, 1)  # C<->T
    transversions = sites - same - ts_purine - ts_pyrimidine
    return xp.stack([sites, ts_purine, ts_pyrimidine, transversions])


class CupyBackend(Backend):
    """``xp=None`` uses CuPy on the current device; pass ``numpy`` to run the array code on the CPU."""

    name = "cupy"
    on_gpu = True
    operations = frozenset(
        {
            "dna_counts",
            "edit_distances",
            "edit_pairs",
            "align_scores",
            "lcs_lengths",
            "msa_profile_dp",
            "neighbor_joining",
            "pair_posteriors",
        }
    )
    # backend="auto" picks CuPy for the DNA pair counts (one-hot GEMMs) and for NJ on large
    # matrices (the size rule of AUTO_GPU_FROM); its alignment, edit, LCS and MSA kernels
    # run when the backend is named (auto takes numba-cuda there)
    auto_operations = frozenset({"dna_counts", "neighbor_joining"})

    #: what the NumPy stand-in (``xp=numpy``) can run: the alignment and edit kernels are
    #: CUDA C, so on NumPy only their array code exists (tested on its own) and asking the
    #: stand-in for them is the registry's "no kernels" error, not a half-run
    NUMPY_OPERATIONS = frozenset({"dna_counts", "neighbor_joining"})

    def __init__(self, xp: Any = None):
        self._xp = xp
        if xp is np:
            self.operations = self.NUMPY_OPERATIONS

    def device_scope(self, device):
        """CuPy's current device (``cupy.cuda.Device``) for this thread; nothing to select
        on the NumPy stand-in."""
        if self._xp is np:
            return super().device_scope(device)
        import cupy

        return cupy.cuda.Device(device.index)

    def is_device_failure(self, exc: BaseException) -> bool:
        return raised_by(exc, "cupy")

    @property
    def xp(self) -> Any:
        if self._xp is None:
            import cupy

            self._xp = cupy
        return self._xp

    def unavailable_reason(self, for_auto: bool) -> str | None:
        if self._xp is not None:
            return None
        import importlib.util

        if importlib.util.find_spec("cupy") is None:
            return "CuPy is not installed; pip install 'bioaccel[cuda12]' or '[cuda13]'"
        if not nvidia_driver_present():
            return "no NVIDIA driver (libcuda.so.1 does not load)"
        try:
            import cupy
        except ImportError as exc:
            return f"CuPy is not installed ({exc}); pip install 'bioaccel[cuda12]' or '[cuda13]'"
        except Exception as exc:  # a wheel built for another CUDA raises at import
            return f"CuPy failed to import ({exc}); run `bioaccel doctor`"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as exc:
            return f"CUDA runtime error from CuPy: {exc}; run `bioaccel doctor`"
        if count == 0:
            return "no CUDA device visible to CuPy"
        return None

    def _onehot(self, data: DnaData) -> Any:
        cached = data.device_cache.get(self.name)
        if cached is not None:
            return cached
        xp = self.xp
        dtype = xp.float32 if data.sites <= _FLOAT32_EXACT else xp.float64
        if xp is np:
            onehot = onehot_numpy(xp, data.alignment, dtype)
        else:
            onehot = self._onehot_device(data, dtype)
        data.device_cache[self.name] = onehot
        return onehot

    def _onehot_device(self, data: DnaData, dtype: Any) -> Any:
        xp = self.xp
        codes = xp.asarray(data.alignment)
        if dtype != xp.float32:
            return onehot_numpy(xp, codes, dtype)
        from ...kernels import cuda_source

        kernel = xp.RawModule(code=cuda_source("onehot.cu")).get_function("dna_onehot")
        out = xp.empty((data.n, 4, data.sites), dtype=xp.float32)
        total = data.n * data.sites
        if total:
            kernel(
                ((total + _THREADS - 1) // _THREADS,),
                (_THREADS,),
                (codes, out, np.int64(data.n), np.int64(data.sites)),
            )
        return out

    def align_scores(self, queries, targets, scoring, mode, symmetric, threads):
        from ..base import check_int32_scores
        from ._align import align_scores_cupy

        check_int32_scores(queries, targets, scoring)
        return align_scores_cupy(self.xp, queries, targets, scoring, mode, symmetric)

    def edit_distances(self, queries, targets, mode, max_distance, symmetric, threads):
        from ..base import all_pairs, scatter_pairs
        from ._edit import edit_distances_cupy

        pq, pt = all_pairs(len(queries), len(targets), symmetric)
        values = edit_distances_cupy(self.xp, queries, targets, mode, max_distance, pq, pt)
        return scatter_pairs(values, pq, pt, len(queries), len(targets), symmetric)

    def edit_pairs(self, seqs, pair_i, pair_j, max_distance, threads):
        """The listed pairs through ``kernels/edit_distance.cu`` (global, with the bound)."""
        from ._edit import edit_distances_cupy

        return edit_distances_cupy(
            self.xp,
            seqs,
            seqs,
            0,
            int(max_distance),
            np.ascontiguousarray(pair_i, dtype=np.int64),
            np.ascontiguousarray(pair_j, dtype=np.int64),
        )

    def neighbor_joining(self, d, threads, inplace=False, low_memory=False):
        if low_memory:
            from ...errors import BackendUnavailableError

            raise BackendUnavailableError(
                f"backend {self.name!r} has no low-memory neighbour joining (it holds the "
                "float64 square); low_memory=True runs on the cpu backend"
            )
        from ..nj_array import neighbor_joining_arrays

        return neighbor_joining_arrays(d, self.xp)

    def pair_posteriors(self, letters, offsets, pairs, odds, prm, threads=0):
        """Pair-HMM posteriors of the listed pairs (``kernels/posterior.cu``)."""
        if self.xp is np:
            from ...errors import BackendUnavailableError

            raise BackendUnavailableError(
                "the NumPy stand-in of the cupy backend has no "
                "pair_posteriors kernel (it is CUDA C)"
            )
        from ..posteriors import posteriors_cupy

        return posteriors_cupy(self.xp, letters, offsets, pairs, odds, prm)

    def lcs_lengths(self, queries, targets, letters, symmetric, threads):
        from ..base import all_pairs, scatter_pairs
        from ._edit import lcs_lengths_cupy

        pq, pt = all_pairs(len(queries), len(targets), symmetric)
        values = lcs_lengths_cupy(self.xp, queries, targets, letters, pq, pt)
        return scatter_pairs(values, pq, pt, len(queries), len(targets), symmetric)

    def dna_counts(self, data: DnaData, i0, i1, j0, j1, *, table, upper_only, threads):
        xp = self.xp
        onehot = self._onehot(data)
        counts = gemm_counts(xp, onehot[i0:i1], onehot[j0:j1], table)
        counts = xp.rint(counts).astype(xp.int32)
        return counts.get() if hasattr(counts, "get") else np.asarray(counts)

    def msa_profile_dp(self, pairs):
        from ._msa import profile_dp_batch

        return profile_dp_batch(pairs, self.xp)
