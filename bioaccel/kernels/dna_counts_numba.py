"""Numba CUDA kernels for aligned-DNA pair counts: one thread per pair of sequences.

Planes are the (n, 3, words) uint64 bit planes of :func:`bioaccel.distances._dna.pack_planes`.
Importing this module imports ``numba.cuda``; set ``NUMBA_ENABLE_CUDASIM=1`` before the
first numba import to run the kernels on the CPU simulator.
"""

from __future__ import annotations

from numba import cuda, int64

#: threads per block along each axis of the (rows, cols) pair grid
BLOCK = (16, 16)


@cuda.jit
def summary_counts_kernel(planes, i0, j0, upper_only, out):
    r, c = cuda.grid(2)
    if r >= out.shape[1] or c >= out.shape[2]:
        return
    i = i0 + r
    j = j0 + c
    if upper_only and j <= i:
        return
    sites = 0
    ts_purine = 0
    ts_pyrimidine = 0
    transversions = 0
    for w in range(planes.shape[2]):
        k = planes[i, 0, w] & planes[j, 0, w]
        dp = planes[i, 1, w] ^ planes[j, 1, w]
        ts = k & ~dp & (planes[i, 2, w] ^ planes[j, 2, w])
        sites += cuda.popc(k)
        transversions += cuda.popc(k & dp)
        ts_pyrimidine += cuda.popc(ts & planes[i, 1, w])
        ts_purine += cuda.popc(ts & ~planes[i, 1, w])
    out[0, r, c] = sites
    out[1, r, c] = ts_purine
    out[2, r, c] = ts_pyrimidine
    out[3, r, c] = transversions


@cuda.jit
def table_counts_kernel(planes, i0, j0, upper_only, out):
    r, c = cuda.grid(2)
    if r >= out.shape[1] or c >= out.shape[2]:
        return
    i = i0 + r
    j = j0 + c
    if upper_only and j <= i:
        return
    acc = cuda.local.array(16, dtype=int64)
    for t in range(16):
        acc[t] = 0
    for w in range(planes.shape[2]):
        ka = planes[i, 0, w]
        pa = planes[i, 1, w]
        ga = planes[i, 2, w]
        kb = planes[j, 0, w]
        pb = planes[j, 1, w]
        gb = planes[j, 2, w]
        for a in range(4):
            # one-hot plane of base a (A, C, G, T) in sequence i: bit1 = pyrimidine, bit0 = G/T
            xa = ka & (pa if a & 1 else ~pa) & (ga if a & 2 else ~ga)
            for b in range(4):
                yb = kb & (pb if b & 1 else ~pb) & (gb if b & 2 else ~gb)
                acc[4 * a + b] += cuda.popc(xa & yb)
    for t in range(16):
        out[t, r, c] = acc[t]
