"""Pair-HMM posteriors (the accurate MSA mode's first stage) on each backend: the operation
``pair_posteriors``. Every engine takes the same inputs and returns the same layout:

- ``letters``: int16 letter indices of all sequences (0..K-1 scored, K unknown),
  ``offsets`` (n + 1), ``pairs`` (k, 2) with x < y;
- ``odds``: the padded (K + 1, K + 1) match odds (row and column K all 1), ``prm``: the
  nine model numbers start[5], open[2], extend[2];
- returns (flat float32 posteriors, int64 start of each pair's lx * ly block in it).

``cpu`` runs the C++ forward-backward (csrc/msa/posteriors.cpp), ``cupy`` the CUDA C
kernel ``kernels/posterior.cu``, ``numba-cuda`` ``kernels/posterior_numba.py``; all three
compute the same double-precision recurrences, so they agree to float32 rounding.
"""

from __future__ import annotations

import numpy as np

#: float64 work cells per launch (fm + rolling rows + scales): 1 GiB
WORK_CELLS = 1 << 27
THREADS = 64


def work_size(lx: np.ndarray, ly: np.ndarray) -> np.ndarray:
    """float64 work cells each pair needs (kernels/posterior.cu's layout)."""
    lx = np.asarray(lx, dtype=np.int64)
    ly = np.asarray(ly, dtype=np.int64)
    return lx * ly + 18 * (ly + 1) + lx + 1


def chunks(pairs: np.ndarray, lengths: np.ndarray, budget: int = WORK_CELLS):
    """Runs [a, b) of ``pairs`` whose work fits ``budget`` (a pair alone may exceed it)."""
    w = work_size(lengths[pairs[:, 0]], lengths[pairs[:, 1]])
    a = 0
    total = 0
    for k in range(len(pairs)):
        if k > a and total + w[k] > budget:
            yield a, k
            a, total = k, 0
        total += int(w[k])
    if a < len(pairs):
        yield a, len(pairs)


def _layout(pairs: np.ndarray, lengths: np.ndarray):
    lx = lengths[pairs[:, 0]]
    ly = lengths[pairs[:, 1]]
    size = lx * ly
    out_start = np.zeros(len(pairs), dtype=np.int64)
    np.cumsum(size[:-1], out=out_start[1:])
    w = work_size(lx, ly)
    work_start = np.zeros(len(pairs), dtype=np.int64)
    np.cumsum(w[:-1], out=work_start[1:])
    return out_start, int(size.sum()), work_start, int(w.sum())


def _check_status(status: np.ndarray, pairs: np.ndarray) -> None:
    bad = np.flatnonzero(status)
    if len(bad):
        x, y = pairs[bad[0]]
        raise RuntimeError(f"pair-HMM forward: pair ({x}, {y}) has no probability (odds underflow)")


def posteriors_cpu(native, letters, offsets, pairs, odds, prm):
    """The C++ engine (``native``: the compiled module), one pair at a time (the accurate
    mode itself calls it on all pairs at once through ``MsaPosteriorSet.compute``)."""
    lengths = np.diff(offsets)
    out_start, total, _, _ = _layout(pairs, lengths)
    flat = np.empty(total, dtype=np.float32)
    K1 = odds.shape[0]
    core = np.ascontiguousarray(odds[: K1 - 1, : K1 - 1])
    for k, (x, y) in enumerate(pairs.tolist()):
        post, _ = native.msa_pair_posteriors(
            letters[offsets[x] : offsets[x + 1]],
            letters[offsets[y] : offsets[y + 1]],
            core,
            prm[:5],
            prm[5:7],
            prm[7:9],
        )
        flat[out_start[k] : out_start[k] + post.size] = post.ravel()
    return flat, out_start


def posteriors_cupy(xp, letters, offsets, pairs, odds, prm):
    """``kernels/posterior.cu`` on the current CUDA device, in launches of at most
    :data:`WORK_CELLS` work cells."""
    from ..kernels import cuda_source

    lengths = np.diff(offsets)
    kernel = xp.RawModule(code=cuda_source("posterior.cu")).get_function("pair_posteriors")
    d_letters = xp.asarray(np.ascontiguousarray(letters, dtype=np.int16))
    d_offsets = xp.asarray(np.ascontiguousarray(offsets, dtype=np.int64))
    d_odds = xp.asarray(np.ascontiguousarray(odds, dtype=np.float64))
    d_prm = xp.asarray(np.ascontiguousarray(prm, dtype=np.float64))
    out_start, total, _, _ = _layout(pairs, lengths)
    flat = np.empty(total, dtype=np.float32)
    for a, b in chunks(pairs, lengths):
        sub = np.ascontiguousarray(pairs[a:b])
        o_start, o_total, w_start, w_total = _layout(sub, lengths)
        k = len(sub)
        d_post = xp.empty(max(1, o_total), dtype=xp.float32)
        d_work = xp.empty(max(1, w_total), dtype=xp.float64)
        d_status = xp.zeros(k, dtype=xp.int32)
        kernel(
            ((k + THREADS - 1) // THREADS,),
            (THREADS,),
            (
                d_letters,
                d_offsets,
                xp.asarray(sub[:, 0].copy()),
                xp.asarray(sub[:, 1].copy()),
                xp.asarray(o_start),
                xp.asarray(w_start),
                d_odds,
                np.int32(odds.shape[0]),
                d_prm,
                np.int64(k),
                d_work,
                d_post,
                d_status,
            ),
        )
        _check_status(xp.asnumpy(d_status), sub)
        flat[out_start[a] : out_start[a] + o_total] = xp.asnumpy(d_post)[:o_total]
    return flat, out_start


def posteriors_numba(letters, offsets, pairs, odds, prm):
    """``kernels/posterior_numba.py`` on the current CUDA device (or the simulator)."""
    from numba import cuda

    from ..kernels import posterior_numba as k

    lengths = np.diff(offsets)
    d_letters = cuda.to_device(np.ascontiguousarray(letters, dtype=np.int16))
    d_offsets = cuda.to_device(np.ascontiguousarray(offsets, dtype=np.int64))
    d_odds = cuda.to_device(np.ascontiguousarray(odds, dtype=np.float64))
    d_prm = cuda.to_device(np.ascontiguousarray(prm, dtype=np.float64))
    out_start, total, _, _ = _layout(pairs, lengths)
    flat = np.empty(total, dtype=np.float32)
    for a, b in chunks(pairs, lengths):
        sub = np.ascontiguousarray(pairs[a:b])
        o_start, o_total, w_start, w_total = _layout(sub, lengths)
        n = len(sub)
        d_post = cuda.device_array(max(1, o_total), dtype=np.float32)
        d_work = cuda.device_array(max(1, w_total), dtype=np.float64)
        d_status = cuda.device_array(n, dtype=np.int32)
        k.pair_posteriors_kernel[-(-n // k.THREADS), k.THREADS](
            d_letters,
            d_offsets,
            cuda.to_device(sub[:, 0].copy()),
            cuda.to_device(sub[:, 1].copy()),
            cuda.to_device(o_start),
            cuda.to_device(w_start),
            d_odds,
            d_prm,
            d_work,
            d_post,
            d_status,
        )
        _check_status(d_status.copy_to_host(), sub)
        flat[out_start[a] : out_start[a] + o_total] = d_post.copy_to_host()[:o_total]
    return flat, out_start
