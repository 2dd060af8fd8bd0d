"""Alignment scores on the CuPy backend: array code builds the query profiles, the CUDA C
kernel in ``kernels/align_scores.cu`` runs Gotoh's recurrences (one target per thread, a
block per query, 16 query rows per pass in registers).

``build_profiles`` takes the array module ``xp``, so it runs (and is tested) with NumPy.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_THREADS = 128
#: bytes of boundary rows one launch may use
_BOUNDARY_BYTES = 512 * 2 ** 20
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


def align_scores_cupy(xp, queries, targets, scoring, mode: int, symmetric: bool) -> np.ndarray:
    """Scores (len(queries), len(targets)) on the current CUDA device."""
    from ..kernels import cuda_source

    profiles, prof_off = build_profiles(xp, queries.codes, queries.offsets, scoring.table)
    kernel = xp.RawModule(code=cuda_source("align_scores.cu")).get_function("align_scores_batch")
    t_codes = xp.asarray(targets.codes)
    t_off = xp.asarray(targets.offsets, dtype=xp.int64)
    q_len = xp.asarray(queries.lengths, dtype=xp.int64)
    nq, nt = len(queries), len(targets)
    out = np.zeros((nq, nt), dtype=np.int32)
    if nq == 0 or nt == 0:
        return out
    order = np.argsort(targets.lengths, kind="stable")  # neighbours finish together
    tgt = xp.asarray(order.astype(np.int64))
    blocks_x = -(-nt // _THREADS)
    longest = int(targets.lengths.max(initial=0))
    per_query = 2 * 4 * (longest + 1) * blocks_x * _THREADS
    batch = max(1, min(nq, _BOUNDARY_BYTES // max(1, per_query), 65535))
    shared_limit = _SHARED_BYTES // 2
    alpha = scoring.table.shape[0]
    shared = min(_SHARED_BYTES, 2 * alpha * int(queries.lengths.max(initial=0)))
    for q0 in range(0, nq, batch):
        qb = min(batch, nq - q0)
        slots = qb * blocks_x * _THREADS
        bound_h = xp.empty((longest + 1) * slots, dtype=xp.int32)
        bound_f = xp.empty((longest + 1) * slots, dtype=xp.int32)
        res = xp.empty((qb, nt), dtype=xp.int32)
        kernel((blocks_x, qb), (_THREADS,),
               (profiles, prof_off, q_len, np.int64(q0), t_codes, t_off, tgt, np.int64(nt),
                np.int32(mode), np.int32(scoring.gap_open), np.int32(scoring.gap_extend),
                np.int64(shared_limit), bound_h, bound_f, res), shared_mem=shared)
        out[q0:q0 + qb][:, order] = res.get()
    if symmetric:  # the kernel computed both triangles; they agree, keep one convention
        iu = np.triu_indices(nq, 1)
        out[(iu[1], iu[0])] = out[iu]
    return out
