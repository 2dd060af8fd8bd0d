"""Numba CUDA backend: ``@cuda.jit`` kernels in :mod:`bioaccel.kernels.dna_counts_numba`."""

from __future__ import annotations

import os

import numpy as np

from .base import Backend, DnaData, nvidia_driver_present


def _simulator() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "") == "1"


class NumbaCudaBackend(Backend):
    name = "numba-cuda"

    def unavailable_reason(self, for_auto: bool) -> str | None:
        if _simulator() and for_auto:
            return "the CUDA simulator is slow; name backend='numba-cuda' to use it"
        if not _simulator() and not nvidia_driver_present():
            return "no NVIDIA driver (libcuda.so.1 does not load)"
        try:
            from numba import cuda
        except ImportError as exc:
            return f"numba-cuda is not installed ({exc}); pip install numba-cuda"
        if _simulator():
            return None
        try:
            if not cuda.is_available():
                return "no CUDA GPU or driver visible to numba (numba.cuda.is_available() is False)"
        except Exception as exc:  # driver errors surface as many types
            return f"CUDA driver error: {exc}"
        return None

    def dna_counts(self, data: DnaData, i0, i1, j0, j1, *, table, upper_only, threads):
        from numba import cuda

        from ..kernels import dna_counts_numba as k

        planes = data.device_cache.get(self.name)
        if planes is None:
            planes = cuda.to_device(data.planes)
            data.device_cache[self.name] = planes
        rows, cols = i1 - i0, j1 - j0
        out = cuda.to_device(np.zeros((16 if table else 4, rows, cols), dtype=np.int32))
        if rows and cols:
            grid = (-(-rows // k.BLOCK[0]), -(-cols // k.BLOCK[1]))
            kernel = k.table_counts_kernel if table else k.summary_counts_kernel
            kernel[grid, k.BLOCK](planes, i0, j0, bool(upper_only), out)
        return out.copy_to_host()
