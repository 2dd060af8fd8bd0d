"""Numba CUDA kernel for LCS lengths (the MSA guide tree's distance stage): one (query,
target) pair per thread, the bit-parallel recurrence of csrc/msa/lcs.cpp over match masks
built on the host (``bioaccel.backends.bitmasks.build_peq`` with NumPy), V in a (word,
pair) work array so neighbouring threads touch neighbouring words."""

from __future__ import annotations

from numba import cuda, uint64

THREADS = 128
ALL = ~uint64(0)
SHIFT = uint64(63)


@cuda.jit
def lcs_length_kernel(q_off, word_off, peq, alpha, letters, t_codes, t_off, pair_q, pair_t, v, out):
    k = cuda.grid(1)
    if k >= pair_q.shape[0]:
        return
    qi = pair_q[k]
    ti = pair_t[k]
    m = q_off[qi + 1] - q_off[qi]
    b0 = t_off[ti]
    n = t_off[ti + 1] - b0
    if m == 0 or n == 0:
        out[k] = 0
        return
    words = (m + 63) // 64
    base = word_off[qi] * alpha
    for w in range(words):
        v[w, k] = ALL
    for j in range(n):
        c = t_codes[b0 + j]
        if c >= letters:
            continue  # never matches
        carry = uint64(0)
        for w in range(words):
            x = v[w, k]
            u = x & peq[base + w * alpha + c]
            s = x + u + carry
            carry = (u | (x & ~s)) >> SHIFT  # the top bit of maj(x, u, carry in)
            v[w, k] = s | (x - u)
    ones = 0
    for w in range(words):
        ones += cuda.popc(v[w, k])
    out[k] = words * 64 - ones
