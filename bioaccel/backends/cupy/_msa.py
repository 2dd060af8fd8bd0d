"""The MSA profile-profile DP on the CuPy backend: a batch of profile pairs (all ready merges
of one guide-tree level) in one launch of ``kernels/msa_profile_dp.cu``, a thread block per
pair sweeping its DP by anti-diagonals, then one thread per pair tracing the path back.
Paths and scores are bit-identical to the CPU engine's (``_native.msa_profile_pair``).

``profile_dp_batch`` takes the array module ``xp``: the packing and unpacking run (and are
tested) with a NumPy stand-in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..msa_batch import D_M, D_N, SCRATCH_PER_CELL, pack_batch, unpack_paths

#: most threads per block (one pair per block; a diagonal's cells are shared among them)
THREADS = 128
#: shared memory for a block's three diagonals; longer A profiles keep them in global scratch
SHARED_BYTES = 48 * 1024
#: traceback bytes (one per DP cell) one launch may hold; a pair larger than this runs alone
TRACE_BYTES = 2**30
#: the kernel rounds every operation itself (__fadd_rn, __fmul_rn); --fmad=false makes
#: sure nothing else is contracted either
NVRTC_OPTIONS = ("--fmad=false",)


def _to_host(xp: Any, a: Any) -> np.ndarray:
    return xp.asnumpy(a) if hasattr(xp, "asnumpy") else np.asarray(a)


def launch_groups(trace_bytes: Sequence[int], budget: int) -> list[range]:
    """Consecutive runs of pairs whose traceback bytes fit in ``budget`` together (a pair
    over the budget forms a run of its own)."""
    groups, start, total = [], 0, 0
    for k, size in enumerate(trace_bytes):
        if k > start and total + size > budget:
            groups.append(range(start, k))
            start, total = k, 0
        total += size
    if len(trace_bytes):
        groups.append(range(start, len(trace_bytes)))
    return groups


def profile_dp_batch(
    pairs: Sequence[Mapping[str, Any]], xp: Any, threads: int = THREADS
) -> tuple[list[np.ndarray], np.ndarray]:
    """Optimal paths (uint8 ops: 0 Match, 1 GapInB, 2 GapInA) and float32 scores of the
    profile pairs (each a mapping as ``_native.msa_dp_inputs`` returns), on the current
    CUDA device when ``xp`` is CuPy. One launch for the batch, or several when the
    tracebacks would exceed ``TRACE_BYTES``."""
    from ...kernels import cuda_source

    if not pairs:
        raise ValueError("no profile pairs to align")
    module = xp.RawModule(code=cuda_source("msa_profile_dp.cu"), options=NVRTC_OPTIONS)
    kernel = module.get_function("msa_profile_dp")
    sizes = [np.asarray(p["sa"]).shape[0] * (np.asarray(p["occ_b"]).shape[0] + 1) for p in pairs]
    paths: list[np.ndarray] = []
    scores = []
    for group in launch_groups(sizes, TRACE_BYTES):
        p, s = _launch(xp, kernel, [pairs[k] for k in group], threads)
        paths += p
        scores.append(s)
    return paths, np.concatenate(scores)


def block_threads(n: np.ndarray, m: np.ndarray, most: int) -> int:
    """Threads per block: enough warps for the longest diagonal of the launch's pairs
    (min(n, m) + 1 cells), at most ``most``."""
    longest = int(np.max(np.minimum(n, m))) + 1
    return max(32, min(most, -(-longest // 32) * 32))


def _launch(
    xp: Any, kernel: Any, pairs: Sequence[Mapping[str, Any]], most_threads: int
) -> tuple[list[np.ndarray], np.ndarray]:
    batch = pack_batch(pairs)
    threads = block_threads(batch.desc[:, D_N], batch.desc[:, D_M], most_threads)
    n_pairs = batch.desc.shape[0]
    shared = SCRATCH_PER_CELL * (batch.max_n + 1) * 4
    use_shared = shared <= SHARED_BYTES
    trace = xp.empty(max(1, batch.trace_size), dtype=xp.uint8)
    path = xp.zeros(max(1, batch.path_size), dtype=xp.uint8)
    scratch = xp.empty(1 if use_shared else batch.scratch_size, dtype=xp.float32)
    score = xp.empty(n_pairs, dtype=xp.float32)
    path_len = xp.empty(n_pairs, dtype=xp.int32)
    kernel(
        (n_pairs,),
        (threads,),
        (
            xp.asarray(batch.desc),
            np.int32(n_pairs),
            np.int32(batch.letters),
            xp.asarray(batch.fdata),
            xp.asarray(batch.single),
            xp.asarray(batch.used),
            trace,
            path,
            scratch,
            np.int32(use_shared),
            score,
            path_len,
        ),
        shared_mem=shared if use_shared else 0,
    )
    paths = unpack_paths(batch, _to_host(xp, path), _to_host(xp, path_len))
    return paths, _to_host(xp, score).astype(np.float32, copy=False)
