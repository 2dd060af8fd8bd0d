"""Pairs within an edit distance: the filter and its verification on each backend.

``cpu``: the C++ filter and verification in one call (csrc/neighbors/neighbors.cpp).
GPU backends (``cupy``, ``numba-cuda``) and ``devices=``: the C++ filter gives the candidate
pairs, block by block of probes, and the registry operation ``edit_pairs`` verifies them
(the edit-distance kernels with the bound), tile by tile over the GPUs with ``devices=``.
``reference``: every pair through :func:`bioaccel.pairwise.edit_distances`, a row block at a
time (quadratic: for tests and small inputs).
"""

from __future__ import annotations

import numpy as np

#: rows of the all-pairs matrix the reference holds at once
_REFERENCE_ROWS = 256
#: probes a GPU candidate block covers (bounds the candidate arrays)
_PROBE_BLOCK = 1 << 14


def reference_pairs(batch, d: int, first: int, last: int, threads: int):
    """(i, j, distance) of every pair i < j, i in [first, last), within ``d``: all pairs
    through ``edit_distances`` (its ``cpu`` kernel when the core is built, else the
    ``reference`` backend's DP)."""
    from ..backends import available_backends
    from ..pairwise import edit_distances

    engine = "cpu" if available_backends()["cpu"] is None else "reference"
    n = len(batch)
    ii, jj, dd = [], [], []
    for r0 in range(first, last, _REFERENCE_ROWS):
        r1 = min(last, r0 + _REFERENCE_ROWS)
        rows = batch.slice(r0, r1)
        cols = batch.slice(r0, n)
        block = edit_distances(
            rows, cols, max_distance=d, backend=engine, threads=threads
        )  # (r1 - r0, n - r0): column c is sequence r0 + c
        a, c = np.nonzero(block <= d)
        keep = c > a  # j > i
        ii.append(a[keep] + r0)
        jj.append(c[keep] + r0)
        dd.append(block[a[keep], c[keep]])
    if not ii:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32), 0
    i, j, dist = (np.concatenate(x) for x in (ii, jj, dd))
    order = np.lexsort((j, i))
    return i[order], j[order], dist[order].astype(np.int32), (last - first) * (n - 1)


#: the most sequences for which every pair may be verified instead of filtering
ALL_PAIRS_AT_MOST = 20_000


def all_pairs_cheaper(batch, d: int, first: int, last: int) -> bool:
    """Whether verifying every pair of the block costs less than the segment filter: at a
    threshold large against the lengths the filter's probes grow as d^3 a sequence (d + 1
    masks, each at 2d + 1 length shifts, over d + 1 segments), while a pair's banded check
    costs about L (2d + 1) / 64 words. 41 phiX genomes (5.4 kb) at d = 400: 30 s filtered,
    about a second pair by pair. Never past :data:`ALL_PAIRS_AT_MOST` sequences."""
    n = len(batch)
    if n > ALL_PAIRS_AT_MOST or last <= first or d < 2:
        return False
    lengths = np.diff(batch.offsets)
    mean = float(lengths.mean()) if n else 0.0
    pairs = (last - first) * (n - 1) - (last - first) * (first + last - 1) // 2  # i < j
    verify = pairs * mean * min(mean, 2.0 * d + 1.0) / 64.0
    return verify < (last - first) * float(d) ** 3


def cpu_pairs(batch, d: int, first: int, last: int, symmetric: bool, threads: int, **native_kw):
    from .._core import load_native

    i, j, dist, candidates = load_native().edit_neighbors(
        batch.codes,
        batch.offsets,
        batch.alphabet.size,
        int(d),
        symmetric=symmetric,
        first=first,
        last=last,
        threads=threads,
        **native_kw,
    )
    return i, j, dist, int(candidates)


def verified_pairs(
    batch, d: int, first: int, last: int, symmetric: bool, engine, devices, threads: int
):
    """Candidates from the C++ filter, verified by ``engine.edit_pairs`` (on ``devices``
    through the multi-GPU tile runner when given)."""
    from .._core import load_native

    native = load_native()
    out_i, out_j, out_d = [], [], []
    total = 0
    for p0 in range(first, last, _PROBE_BLOCK):
        p1 = min(last, p0 + _PROBE_BLOCK)
        ci, cj, _, _ = native.edit_neighbors(
            batch.codes,
            batch.offsets,
            batch.alphabet.size,
            int(d),
            symmetric=symmetric,
            first=p0,
            last=p1,
            verify=False,
            threads=threads,
        )
        total += len(ci)
        if not len(ci):
            continue
        if devices is None:
            dist = np.asarray(engine.edit_pairs(batch, ci, cj, d, threads), dtype=np.int32)
        else:
            dist = _on_devices(batch, ci, cj, d, engine, devices, threads)
        keep = dist <= d
        out_i.append(ci[keep])
        out_j.append(cj[keep])
        out_d.append(dist[keep])
    if not out_i:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int32), total
    i, j, dist = (np.concatenate(x) for x in (out_i, out_j, out_d))
    order = np.lexsort((j, i))
    return i[order], j[order], dist[order].astype(np.int32), total


def _on_devices(batch, ci, cj, d, engine, devices, threads) -> np.ndarray:
    """The candidates' distances, tiles of candidates spread over ``devices``."""
    from ..devices import Tile, run_tiles

    k = len(ci)
    per = max(1, -(-k // (6 * len(devices))))
    lengths = batch.lengths.astype(np.float64)
    work = lengths[ci] + lengths[cj]
    cum = np.concatenate([[0.0], np.cumsum(work)])
    tiles = [
        Tile(s, min(k, s + per), 0, 1, float(cum[min(k, s + per)] - cum[s]))
        for s in range(0, k, per)
    ]
    out = np.empty(k, dtype=np.int32)

    def compute(tile):
        return engine.edit_pairs(batch, ci[tile.i0 : tile.i1], cj[tile.i0 : tile.i1], d, threads)

    def gather(tile, values) -> None:
        out[tile.i0 : tile.i1] = values

    run_tiles(tiles, devices, engine, compute, gather, work, np.ones(1))
    return out
