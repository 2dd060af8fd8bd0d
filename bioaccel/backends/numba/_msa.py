"""The MSA profile-profile DP on Numba CUDA (``kernels/msa_numba.py``, one pair per thread),
on the same packed batch as the CuPy kernel; runs under the CUDA simulator too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..msa_batch import pack_batch, unpack_paths


def profile_dp_batch_numba(
    pairs: Sequence[Mapping[str, Any]],
) -> tuple[list[np.ndarray], np.ndarray]:
    """Optimal paths and float32 scores of the profile pairs (as ``cupy_msa.profile_dp_batch``)."""
    from numba import cuda

    from ...kernels import THREADS, msa_profile_dp_kernel

    batch = pack_batch(pairs)
    n_pairs = batch.desc.shape[0]
    trace = cuda.device_array(max(1, batch.trace_size), dtype=np.uint8)
    path = cuda.to_device(np.zeros(max(1, batch.path_size), dtype=np.uint8))
    scratch = cuda.device_array(batch.scratch_size, dtype=np.float32)
    score = cuda.device_array(n_pairs, dtype=np.float32)
    path_len = cuda.device_array(n_pairs, dtype=np.int32)
    blocks = -(-n_pairs // THREADS)
    msa_profile_dp_kernel[blocks, THREADS](
        cuda.to_device(batch.desc),
        np.int64(batch.letters),
        cuda.to_device(batch.fdata),
        cuda.to_device(batch.single),
        cuda.to_device(batch.used),
        trace,
        path,
        scratch,
        score,
        path_len,
    )
    paths = unpack_paths(batch, path.copy_to_host(), path_len.copy_to_host())
    return paths, score.copy_to_host()
