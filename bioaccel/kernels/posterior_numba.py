"""Numba CUDA kernel for pair-HMM posteriors (the accurate MSA mode): one pair per thread,
the five-state model and row-scaled forward-backward of csrc/msa/posteriors.cpp and
``kernels/posterior.cu`` (double precision, posteriors written as float32). Per pair the
work area (a flat float64 array) holds the forward match values (lx * ly), 18 rolling rows
of ly + 1 and the row scales (lx + 1), at ``work_start[k]``."""

from __future__ import annotations

from numba import cuda

THREADS = 64


def work_size(lx: int, ly: int) -> int:
    """float64 work cells a pair of lengths (lx, ly) needs."""
    return lx * ly + 18 * (ly + 1) + lx + 1


@cuda.jit
def pair_posteriors_kernel(
    letters, offsets, pair_x, pair_y, out_start, work_start, odds, prm, work, post, status
):
    k = cuda.grid(1)
    if k >= pair_x.shape[0]:
        return
    x = pair_x[k]
    y = pair_y[k]
    bx = offsets[x]
    by = offsets[y]
    lx = offsets[x + 1] - bx
    ly = offsets[y + 1] - by
    status[k] = 0
    if lx == 0 or ly == 0:
        return
    o0 = prm[5]
    o1 = prm[6]
    e0 = prm[7]
    e1 = prm[8]
    tmm = 1.0 - 2.0 * (o0 + o1)
    tim0 = 1.0 - e0
    tim1 = 1.0 - e1
    W = ly + 1
    fm = work_start[k]  # fM(i, j) = work[fm + (i-1) ly + j-1]
    rw = fm + lx * ly  # rolling row r (0..17), slot c: rw + (2 r + c) W
    sc = rw + 18 * W  # scale[i] = work[sc + i]
    ob = out_start[k]
    # row indices: fx0 0, fx1 1, fy0 2, fy1 3, bM 4, bx0 5, bx1 6, by0 7, by1 8
    FX0 = rw
    FX1 = rw + 2 * W
    FY0 = rw + 4 * W
    FY1 = rw + 6 * W
    BM = rw + 8 * W
    BX0 = rw + 10 * W
    BX1 = rw + 12 * W
    BY0 = rw + 14 * W
    BY1 = rw + 16 * W
    work[sc] = 1.0
    work[FX0] = 0.0
    work[FX1] = 0.0
    work[FY0] = 0.0
    work[FY1] = 0.0
    for j in range(1, ly + 1):
        work[FX0 + j] = 0.0
        work[FX1 + j] = 0.0
        work[FY0 + j] = (prm[2] if j == 1 else 0.0) + work[FY0 + j - 1] * e0
        work[FY1 + j] = (prm[4] if j == 1 else 0.0) + work[FY1 + j - 1] * e1
    inv_prev = 1.0
    for i in range(1, lx + 1):
        c = (i & 1) * W
        p = W - c
        xl = letters[bx + i - 1]
        cm = fm + (i - 1) * ly
        pm = fm + (i - 2) * ly
        work[FX0 + c] = (prm[1] if i == 1 else 0.0) + (0.0 * o0 + work[FX0 + p] * e0) * inv_prev
        work[FX1 + c] = (prm[3] if i == 1 else 0.0) + (0.0 * o1 + work[FX1 + p] * e1) * inv_prev
        for j in range(1, ly + 1):
            pdiag = work[pm + j - 2] if (i > 1 and j > 1) else 0.0
            pup = work[pm + j - 1] if i > 1 else 0.0
            frm = (
                pdiag * tmm
                + (work[FX0 + p + j - 1] + work[FY0 + p + j - 1]) * tim0
                + (work[FX1 + p + j - 1] + work[FY1 + p + j - 1]) * tim1
            ) * inv_prev
            em = odds[xl, letters[by + j - 1]]
            v = em * frm
            if i == 1 and j == 1:
                v += em * prm[0]
            work[cm + j - 1] = v
            work[FX0 + c + j] = (pup * o0 + work[FX0 + p + j] * e0) * inv_prev
            work[FX1 + c + j] = (pup * o1 + work[FX1 + p + j] * e1) * inv_prev
        work[FY0 + c] = 0.0
        work[FY1 + c] = 0.0
        ya = 0.0
        yb = 0.0
        s0 = work[FX0 + c] + work[FX1 + c]
        s1 = 0.0
        for j in range(1, ly + 1):
            left = work[cm + j - 2] if j > 1 else 0.0
            ya = left * o0 + ya * e0
            yb = left * o1 + yb * e1
            work[FY0 + c + j] = ya
            work[FY1 + c + j] = yb
            s0 += (work[cm + j - 1] + work[FX0 + c + j]) + ya
            s1 += work[FX1 + c + j] + yb
        total = s0 + s1
        if not (total > 0.0) or total > 1e300:
            status[k] = 1
            return
        work[sc + i] = total
        inv_prev = 1.0 / total
    cl = (lx & 1) * W
    zend = (
        work[fm + (lx - 1) * ly + ly - 1] * prm[0]
        + work[FX0 + cl + ly] * prm[1]
        + work[FY0 + cl + ly] * prm[2]
        + work[FX1 + cl + ly] * prm[3]
        + work[FY1 + cl + ly] * prm[4]
    ) / work[sc + lx]
    if not (zend > 0.0):
        status[k] = 1
        return
    inv_z = 1.0 / zend
    for i in range(lx, 0, -1):
        c = (i & 1) * W
        nx = W - c
        last = i == lx
        inv_next = 0.0 if last else 1.0 / work[sc + i + 1]
        xn = letters[bx + i] if not last else 0
        for j in range(ly + 1):
            if last or j == ly:
                work[BM + c + j] = 0.0
            else:
                work[BM + c + j] = odds[xn, letters[by + j]] * work[BM + nx + j + 1] * inv_next
            work[BX0 + c + j] = 0.0 if last else work[BX0 + nx + j] * inv_next
            work[BX1 + c + j] = 0.0 if last else work[BX1 + nx + j] * inv_next
        work[BY0 + c + ly] = prm[2] if last else (1.0 - e0) * work[BM + c + ly]
        work[BY1 + c + ly] = prm[4] if last else (1.0 - e1) * work[BM + c + ly]
        for j in range(ly - 1, -1, -1):
            work[BY0 + c + j] = tim0 * work[BM + c + j] + e0 * work[BY0 + c + j + 1]
            work[BY1 + c + j] = tim1 * work[BM + c + j] + e1 * work[BY1 + c + j + 1]
        for j in range(ly + 1):
            yn0 = 0.0 if j == ly else work[BY0 + c + j + 1]
            yn1 = 0.0 if j == ly else work[BY1 + c + j + 1]
            m = work[BM + c + j]
            xa = work[BX0 + c + j]
            xb = work[BX1 + c + j]
            work[BM + c + j] = tmm * m + o0 * (xa + yn0) + o1 * (xb + yn1)
            work[BX0 + c + j] = tim0 * m + e0 * xa
            work[BX1 + c + j] = tim1 * m + e1 * xb
        if last:
            work[BM + c + ly] = prm[0]
            work[BX0 + c + ly] = prm[1]
            work[BX1 + c + ly] = prm[3]
        norm = inv_z / work[sc + i]
        for j in range(1, ly + 1):
            post[ob + (i - 1) * ly + j - 1] = (
                work[fm + (i - 1) * ly + j - 1] * work[BM + c + j] * norm
            )
