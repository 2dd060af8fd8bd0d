"""Numba CUDA kernel for edit distances: one (query, target) pair per thread, Myers'
bit-vectors (Hyyrö's blocks) in a (word, pair) work array so neighbouring threads touch
neighbouring words. Same recurrences as csrc/align/edit_distance.cpp."""

from __future__ import annotations

from numba import cuda, uint64

THREADS = 128
ONE = uint64(1)
ALL = ~uint64(0)
HIGH = uint64(1) << uint64(63)


@cuda.jit
def edit_distance_kernel(
    q_codes, q_off, t_codes, t_off, mode, max_distance, pair_q, pair_t, pv, mv, out
):
    k = cuda.grid(1)
    if k >= pair_q.shape[0]:
        return
    qi = pair_q[k]
    ti = pair_t[k]
    a0 = q_off[qi]
    m = q_off[qi + 1] - a0
    b0 = t_off[ti]
    n = t_off[ti + 1] - b0
    if m == 0 or n == 0:
        d = (n if mode == 0 else 0) if m == 0 else m
        if max_distance >= 0 and d > max_distance:
            d = max_distance + 1
        out[k] = d
        return
    words = (m + 63) // 64
    last_bit = ONE << uint64((m - 1) % 64)
    for w in range(words):
        pv[w, k] = ALL
        mv[w, k] = uint64(0)
    top = 0 if mode == 1 else 1
    score = m
    best = m
    for j in range(n):
        c = t_codes[b0 + j]
        h = top
        for w in range(words):
            # match mask of letter c in query word w, built on the fly
            eq = uint64(0)
            base = a0 + 64 * w
            for bit in range(min(64, m - 64 * w)):
                if q_codes[base + bit] == c:
                    eq |= ONE << uint64(bit)
            p = pv[w, k]
            q = mv[w, k]
            xv = eq | q
            if h < 0:
                eq |= ONE
            xh = (((eq & p) + p) ^ p) | eq
            ph = q | ~(xh | p)
            mh = p & xh
            out_bit = last_bit if w == words - 1 else HIGH
            hout = 1 if (ph & out_bit) != 0 else (-1 if (mh & out_bit) != 0 else 0)
            ph = ph << ONE
            mh = mh << ONE
            if h < 0:
                mh |= ONE
            elif h > 0:
                ph |= ONE
            pv[w, k] = mh | ~(xv | ph)
            mv[w, k] = ph & xv
            h = hout
        score += h
        if score < best:
            best = score
    d = score if mode == 0 else best
    if max_distance >= 0 and d > max_distance:
        d = max_distance + 1
    out[k] = d
