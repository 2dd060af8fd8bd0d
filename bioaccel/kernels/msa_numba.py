"""Numba CUDA kernel for the MSA profile-profile DP: one profile pair per thread, the DP row
by row as the CPU engine fills it (``ProfileDP::fill`` in csrc/msa/profile_dp.cpp), two rows
of M, X and Y in the pair's scratch slice, traceback bytes to global memory, then the
traceback. Inputs in the packed layout of ``backends/msa_batch.py`` (the CuPy kernel's).

Every float operation is one IEEE single operation in the CPU's order: on a GPU through
libdevice's ``fadd_rn`` / ``fsub_rn`` / ``fmul_rn`` (NVVM would otherwise contract a multiply
and an add into an FMA); under the CUDA simulator on NumPy float32 scalars. So paths and
scores are bit-identical to the CPU engine's.
"""

from __future__ import annotations

import math

from numba import config, cuda, float32

THREADS = 64

# desc fields (backends/msa_batch.py, MSA_D_* in msa_profile_dp.cu)
_N, _M, _SA, _FBT, _USED, _SINGLE, _TA, _TB, _TRACE, _PATH, _SCRATCH = range(11)

if config.ENABLE_CUDASIM:

    def fadd(a, b):
        return a + b

    def fsub(a, b):
        return a - b

    def fmul(a, b):
        return a * b
else:  # pragma: no cover - needs a GPU
    from numba.cuda import libdevice

    fadd, fsub, fmul = libdevice.fadd_rn, libdevice.fsub_rn, libdevice.fmul_rn


@cuda.jit
def msa_profile_dp_kernel(desc, K, fdata, single, used, trace, path, scratch, score, path_len):
    k = cuda.grid(1)
    if k >= desc.shape[0]:
        return
    neg = float32(-math.inf)
    n = desc[k, _N]
    m = desc[k, _M]
    ta = desc[k, _TA]
    tb = desc[k, _TB]
    tr = desc[k, _TRACE]
    w = m + 1
    b_single = desc[k, _SINGLE]
    b_fbt = desc[k, _FBT]
    b_used = desc[k, _USED]
    # rows: current and previous M, X, Y at scratch + (row * 3 + state) * w
    base = desc[k, _SCRATCH]
    cur = 0
    # first row
    st0 = fdata[ta + n]  # start_a[0]
    ct0 = fdata[ta + 2 * n + 1]  # cont_a[0]
    scratch[base] = float32(0.0)
    scratch[base + w] = neg
    scratch[base + 2 * w] = neg
    for j in range(1, m + 1):
        occ = fdata[tb + j - 1]
        best = fsub(scratch[base + j - 1], fmul(occ, st0))
        c = fsub(scratch[base + 2 * w + j - 1], fmul(occ, ct0))
        if c > best:
            best = c
        c = fsub(scratch[base + w + j - 1], fmul(occ, st0))
        if c > best:
            best = c
        scratch[base + j] = neg
        scratch[base + w + j] = neg
        scratch[base + 2 * w + j] = best
    for i in range(1, n + 1):
        prev = base + cur * 3 * w
        cur = 1 - cur
        row = base + cur * 3 * w
        occ_a = fdata[ta + i - 1]
        credit_a = fdata[ta + 4 * n + 2 + i - 1]
        start_a = fdata[ta + n + i]
        cont_a = fdata[ta + 2 * n + 1 + i]
        t = tr + (i - 1) * w
        sa = desc[k, _SA] + (i - 1) * K
        own_a = fdata[ta + 3 * n + 2 + i - 1]
        # column 0: only a gap in B
        so = fmul(occ_a, fdata[tb + m])  # start_b[0]
        co = fmul(occ_a, fdata[tb + 2 * m + 1])  # cont_b[0]
        best = fsub(scratch[prev], so)
        s = 0
        c = fsub(scratch[prev + w], co)
        if c > best:
            best = c
            s = 1
        c = fsub(scratch[prev + 2 * w], so)
        if c > best:
            best = c
            s = 2
        scratch[row] = neg
        scratch[row + 2 * w] = neg
        scratch[row + w] = best
        trace[t] = s << 2
        # The traceback byte of cell (i, j) is trace[t + j], but written as `trace[t + j]`
        # CUDA 13.0's NVVM (numba-cuda 0.30.4) stepped that index by j instead of 1 (the PTX
        # shows `add.s64 %rd797, %rd795, %rd797`), so on a real GPU the bytes landed at
        # t + j (j + 1) / 2 and the paths were wrong while the scores were right (an H200,
        # 2026-12-04; that index replayed on the simulator gives the GPU's paths for 55 of
        # 67 pairs). An explicit counter compiles to a step of one.
        tj = t
        for j in range(1, m + 1):
            ob = fdata[tb + j - 1]
            # M: ties go to M, then X, then Y
            d = scratch[prev + j - 1]
            sm = 0
            dx = fadd(scratch[prev + w + j - 1], fmul(occ_a, fdata[tb + 4 * m + 2 + j - 1]))
            dy = fadd(scratch[prev + 2 * w + j - 1], fmul(ob, credit_a))
            if dx > d:
                d = dx
                sm = 1
            if dy > d:
                d = dy
                sm = 2
            # t(i - 1, j - 1) (PairScores::row)
            if b_single >= 0:
                t_ij = fsub(fdata[sa + single[b_single + j - 1]], own_a)
            else:
                t_ij = float32(0.0)
                for y in range(K):
                    if used[b_used + y] != 0:
                        t_ij = fadd(t_ij, fmul(fdata[sa + y], fdata[b_fbt + y * m + j - 1]))
                t_ij = fsub(t_ij, fadd(fmul(ob, own_a), fmul(occ_a, fdata[tb + 3 * m + 2 + j - 1])))
            scratch[row + j] = fadd(d, t_ij)
            # X: ties go to M, then X, then Y
            sxo = fmul(occ_a, fdata[tb + m + j])
            bx = fsub(scratch[prev + j], sxo)
            sx = 0
            c = fsub(scratch[prev + w + j], fmul(occ_a, fdata[tb + 2 * m + 1 + j]))
            if c > bx:
                bx = c
                sx = 1
            c = fsub(scratch[prev + 2 * w + j], sxo)
            if c > bx:
                bx = c
                sx = 2
            scratch[row + w + j] = bx
            # Y: ties go to M, then Y, then X
            syo = fmul(ob, start_a)
            by = fsub(scratch[row + j - 1], syo)
            sy = 0
            c = fsub(scratch[row + 2 * w + j - 1], fmul(ob, cont_a))
            if c > by:
                by = c
                sy = 2
            c = fsub(scratch[row + w + j - 1], syo)
            if c > by:
                by = c
                sy = 1
            scratch[row + 2 * w + j] = by
            tj += 1
            trace[tj] = sm | (sx << 2) | (sy << 4)
    # best final state (ties M > X > Y) and the traceback
    row = base + cur * 3 * w
    best = scratch[row + m]
    state = 0
    if scratch[row + w + m] > best:
        best = scratch[row + w + m]
        state = 1
    if scratch[row + 2 * w + m] > best:
        best = scratch[row + 2 * w + m]
        state = 2
    score[k] = best
    i = n
    j = m
    end = desc[k, _PATH] + n + m
    pos = end
    while i > 0:
        pos -= 1
        if j == 0:
            path[pos] = 1
            i -= 1
        else:
            tv = trace[tr + (i - 1) * w + j]
            if state == 0:
                path[pos] = 0
                state = tv & 3
                i -= 1
                j -= 1
            elif state == 1:
                path[pos] = 1
                state = (tv >> 2) & 3
                i -= 1
            else:
                path[pos] = 2
                state = (tv >> 4) & 3
                j -= 1
    while j > 0:
        pos -= 1
        path[pos] = 2
        j -= 1
    path_len[k] = end - pos
