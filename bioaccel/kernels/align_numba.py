"""Numba CUDA kernel for alignment scores: one (query, target) pair per thread, Gotoh's
affine-gap recurrences row by row in int32, the row buffers laid out (column, pair) so that
neighbouring threads touch neighbouring words.

Same recurrences and boundary rules as the C++ scalar reference (``align_score_scalar``).
"""

from __future__ import annotations

from numba import cuda

THREADS = 128
NEG = -(2**30)


@cuda.jit
def align_scores_kernel(
    q_codes,
    q_off,
    t_codes,
    t_off,
    table,
    mode,
    gap_open,
    gap_extend,
    pair_q,
    pair_t,
    row_h,
    row_e,
    out,
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
    glob = mode == 0
    local = mode == 1
    if m == 0 or n == 0:
        total = m + n
        out[k] = -(gap_open + (total - 1) * gap_extend) if (glob and total > 0) else 0
        return
    for j in range(n + 1):
        row_h[j, k] = -(gap_open + (j - 1) * gap_extend) if (glob and j > 0) else 0
        row_e[j, k] = NEG
    best = 0 if local else NEG
    if mode == 2:
        best = 0  # H[0][n]
    for i in range(1, m + 1):
        diag = row_h[0, k]
        row_h[0, k] = -(gap_open + (i - 1) * gap_extend) if glob else 0
        f = NEG
        x = q_codes[a0 + i - 1]
        for j in range(1, n + 1):
            left = row_h[j - 1, k]
            f = max(f - gap_extend, left - gap_open)
            up = row_h[j, k]
            e = max(row_e[j, k] - gap_extend, up - gap_open)
            row_e[j, k] = e
            h = max(diag + table[x, t_codes[b0 + j - 1]], max(e, f))
            if local:
                h = max(h, 0)
                best = max(best, h)
            diag = up
            row_h[j, k] = h
        if mode == 2:
            best = max(best, row_h[n, k])
    if glob:
        out[k] = row_h[n, k]
    elif local:
        out[k] = best
    else:
        for j in range(n + 1):
            best = max(best, row_h[j, k])
        out[k] = best
