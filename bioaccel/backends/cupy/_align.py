"""Alignment scores on the CuPy backend: array code builds the query profiles, the CUDA C
kernels in ``kernels/align_scores.cu`` run Gotoh's recurrences: one target per thread (a
block per query, 16 query rows per pass in registers), or, for long targets and for calls
with few pairs, one target per warp (lanes own 16-row strips and pass boundary cells by warp
shuffles; see :func:`split_targets`).

``build_profiles`` takes the array module ``xp``, so it runs (and is tested) with NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_THREADS = 128
#: warps (one pair each) per block of the warp kernel
_WARPS_PER_BLOCK = 4
#: targets longer than this are aligned by a warp each
_WARP_MIN_TARGET = 4096
#: calls with fewer pairs than this are aligned a warp per pair
_WARP_MAX_PAIRS = 16384
#: bytes of boundary rows one launch may use
_BOUNDARY_BYTES = 512 * 2**20
#: shared memory for a block's query profile (int16 values)
_SHARED_BYTES = 48 * 1024


def build_profiles(xp: Any, codes: Any, offsets: Any, table: Any) -> tuple[Any, Any]:
    """Query profiles, concatenated: profile q is ``table[:, codes of q]`` (alphabet x m,
    row c = scores of letter c against each position), flattened row-major, starting at
    ``prof_off[q]``. Returns (profiles int16, prof_off int64)."""
    codes = xp.asarray(codes)
    offsets = xp.asarray(offsets, dtype=xp.int64)
    table = xp.asarray(table, dtype=xp.int16)
    alpha = table.shape[0]
    lengths = offsets[1:] - offsets[:-1]
    prof_off = xp.zeros(len(lengths) + 1, dtype=xp.int64)
    xp.cumsum(lengths * alpha, out=prof_off[1:])
    if codes.size == 0:
        return xp.zeros(1, dtype=xp.int16), prof_off
    seq = xp.repeat(xp.arange(len(lengths), dtype=xp.int64), lengths)
    pos = xp.arange(codes.size, dtype=xp.int64) - offsets[seq]
    m = lengths[seq]
    letters = xp.arange(alpha, dtype=xp.int64)
    # element (c, i) of query q at prof_off[q] + c * m + i
    where = prof_off[seq][None, :] + letters[:, None] * m[None, :] + pos[None, :]
    profiles = xp.zeros(int(prof_off[-1]), dtype=xp.int16)
    profiles[where.ravel()] = table[:, codes.astype(xp.int64)].ravel()
    return profiles, prof_off


def split_targets(target_lengths: np.ndarray, n_queries: int) -> tuple[np.ndarray, np.ndarray]:
    """Target indices for the one-thread-per-pair kernel and for the warp-per-pair kernel,
    each sorted by length (neighbours finish together). Targets longer than
    ``_WARP_MIN_TARGET`` go to the warp kernel (one thread would carry a long row alone and
    its boundary rows would crowd memory), and so does every target when the call has fewer
    than ``_WARP_MAX_PAIRS`` pairs (one thread per pair could not fill a GPU)."""
    order = np.argsort(target_lengths, kind="stable")
    if n_queries * len(target_lengths) < _WARP_MAX_PAIRS:
        return order[:0], order
    long = target_lengths[order] > _WARP_MIN_TARGET
    return order[~long], order[long]


def align_scores_cupy(xp, queries, targets, scoring, mode: int, symmetric: bool) -> np.ndarray:
    """Scores (len(queries), len(targets)) on the current CUDA device."""
    from ...kernels import cuda_source

    nq, nt = len(queries), len(targets)
    out = np.zeros((nq, nt), dtype=np.int32)
    if nq == 0 or nt == 0:
        return out
    profiles, prof_off = build_profiles(xp, queries.codes, queries.offsets, scoring.table)
    module = xp.RawModule(code=cuda_source("align_scores.cu"))
    alpha = scoring.table.shape[0]
    common = {
        "profiles": profiles,
        "prof_off": prof_off,
        "q_len": xp.asarray(queries.lengths, dtype=xp.int64),
        "t_codes": xp.asarray(targets.codes),
        "t_off": xp.asarray(targets.offsets, dtype=xp.int64),
        "args": (
            np.int32(mode),
            np.int32(scoring.gap_open),
            np.int32(scoring.gap_extend),
            np.int64(_SHARED_BYTES // 2),
        ),
        "shared": min(_SHARED_BYTES, 2 * alpha * int(queries.lengths.max(initial=0))),
    }
    by_thread, by_warp = split_targets(np.asarray(targets.lengths), nq)
    for chosen, warp in ((by_thread, False), (by_warp, True)):
        if len(chosen):
            out[:, chosen] = _launch(xp, module, warp, chosen, targets.lengths, nq, **common)
    if symmetric:  # the kernel computed both triangles; they agree, keep one convention
        iu = np.triu_indices(nq, 1)
        out[(iu[1], iu[0])] = out[iu]
    return out


def _launch(
    xp,
    module,
    warp: bool,
    chosen: np.ndarray,
    lengths: np.ndarray,
    nq: int,
    *,
    profiles,
    prof_off,
    q_len,
    t_codes,
    t_off,
    args,
    shared,
) -> np.ndarray:
    """Scores of every query against the targets ``chosen`` (nq, len(chosen)), by the
    one-thread-per-pair kernel or the warp-per-pair one, queries batched so the boundary rows
    fit in ``_BOUNDARY_BYTES``."""
    nt = len(chosen)
    tgt = xp.asarray(chosen.astype(np.int64))
    longest = int(lengths[chosen].max(initial=0))
    per_block = _WARPS_PER_BLOCK if warp else _THREADS  # pairs per block
    blocks_x = -(-nt // per_block)
    slots_per_query = blocks_x * per_block
    batch = max(1, min(nq, _BOUNDARY_BYTES // max(1, 8 * (longest + 1) * slots_per_query), 65535))
    out = np.zeros((nq, nt), dtype=np.int32)
    kernel = module.get_function("align_scores_warp" if warp else "align_scores_batch")
    for q0 in range(0, nq, batch):
        qb = min(batch, nq - q0)
        slots = qb * slots_per_query
        bound_h = xp.empty((longest + 1) * slots, dtype=xp.int32)
        bound_f = xp.empty((longest + 1) * slots, dtype=xp.int32)
        res = xp.empty((qb, nt), dtype=xp.int32)
        head = (profiles, prof_off, q_len, np.int64(q0), t_codes, t_off, tgt, np.int64(nt))
        if warp:  # each warp's rows contiguous: (longest + 1) ints apart
            kernel(
                (blocks_x, qb),
                (32 * _WARPS_PER_BLOCK,),
                head + args + (np.int64(longest + 1), bound_h, bound_f, res),
                shared_mem=shared,
            )
        else:  # column j of slot s at j * slots + s
            kernel(
                (blocks_x, qb),
                (_THREADS,),
                head + args + (bound_h, bound_f, res),
                shared_mem=shared,
            )
        out[q0 : q0 + qb] = res.get()
    return out
