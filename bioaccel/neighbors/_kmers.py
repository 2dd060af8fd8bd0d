"""Pairs within a k-mer distance (``mash``: MinHash sketches; ``jaccard``: exact k-mer
sets), from an inverted index instead of all pairs.

A pair within distance D has a Jaccard value (estimate) of at least J_min (``jaccard``:
1 - D; ``mash``: w / (2 - w) with w = exp(-k D), inverting Mash's D = -ln(2J / (1 + J)) / k),
and so shares at least tau_a = ceil(J_min |A|) of A's k-mers (hashes): the Jaccard value
is at most |A & B| / |A| (exact: |A | B| >= |A|; MinHash: the estimate's denominator is the
union sketch's size, at least |A|, and its numerator at most |A & B|). Prefix filtering then
finds every such pair: with the values of every set in one global order (rarest first), a
pair sharing >= tau values shares one among the first |A| - tau + 1 of A and the first
|B| - tau + 1 of B. The postings of those prefixes give the candidates; each is then
computed exactly by the same C++ rows as :func:`bioaccel.distance_matrix`, so the values
are the dense matrix's bit for bit. D >= 1 admits every pair (Mash reports 1 for pairs
sharing nothing): then all pairs are returned.

Memory and time. The rows of the shard are taken in blocks of about :data:`_BLOCK_PAIRS`
pairs (rows x n); the index is built once, over every row's prefix. A block's postings
pairs are counted before anything is expanded (each prefix entry pairs with the later
entries of its value's postings); when expanding them would cost more than the block's
dense rows (short sequences sharing most of their k-mers, as 16S amplicons do under
``mash``, or a threshold near 1), and more than one chunk, the block's rows are computed whole by the same C++ rows
as the matrix, and the pairs <= D kept. Otherwise the postings pairs are expanded in chunks
of :data:`_CHUNK` into one mark a pair of the block (each candidate once, sorted by
(i, j)), and the candidates verified row by row, or by the block's dense rows when they
would cost less. Memory is O(n * sketch + block + pairs kept), never one entry per
postings pair of the whole shard. ``candidates`` counts the filter's candidates of the
blocks expanded and every pair of the blocks computed whole.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def check_kmer_threshold(d, model: str) -> float:
    if isinstance(d, bool) or not isinstance(d, numbers.Real) or d != d or d < 0:
        raise ValueError(
            f"max_distance must be a number >= 0 for model {model!r} (a distance in [0, 1]), got {d!r}"
        )
    return float(d)


def _min_jaccard(model: str, d: float, k: int) -> float:
    if model == "jaccard":
        return 1.0 - d
    w = math.exp(-k * d)
    return w / (2.0 - w)


# Blocks of rows of about this many pairs (rows x n): one mark byte a pair while the block's
# candidates are gathered, or one float64 a pair when its rows are computed whole.
_BLOCK_PAIRS = 1 << 23
# Postings pairs expanded at once (a few int64 arrays of this length).
_CHUNK = 1 << 20
# Rough costs, in nanoseconds, that choose between the index and the dense rows of a block:
# a postings pair expanded and marked (numpy), a row verified alone (the call and its
# sketches gathered), and per value of a candidate's sketch verified; the dense rows cost
# per pair and thread (mash: the C++ postings rows; jaccard: a merge of the two sets).
_NS_POSTING = 15.0
_NS_ROW = 40_000.0
_NS_VERIFY_VALUE = 4.0
_NS_DENSE_MASH = 150.0
_NS_DENSE_JACCARD_VALUE = 2.5


class _PrefixIndex:
    """The prefixes' postings (global order: rarest value first), by value then row, and for
    each row its prefix entries and how many later postings they pair with.

    Built in two steps: :meth:`__init__` finds the prefixes and how many postings pairs they
    make in all (:attr:`total_pairs`, to skip the rest when the dense rows are cheaper);
    :meth:`build` sorts the postings by value."""

    def __init__(self, offsets, tau, n: int, rank, universe: int):
        sizes = np.diff(offsets)
        rank = np.asarray(rank, dtype=np.int64)  # the values' order, dense from 0
        universe = max(1, int(universe))
        counts = np.bincount(rank, minlength=universe)
        key_of = np.empty(universe, dtype=np.int64)  # rarest first, then by value
        key_of[np.argsort(counts, kind="stable")] = np.arange(universe, dtype=np.int64)
        key = key_of[rank]
        del rank, counts, key_of
        owner = np.repeat(np.arange(n, dtype=np.int64), sizes)
        if n * universe < 2**62:  # one int64 sort by (row, key)
            key += owner * universe
            key.sort()
            key -= owner * universe  # rows keep their places: each row holds sizes[i] values
        else:
            key = key[np.lexsort((key, owner))]
        plen = np.maximum(sizes - tau + 1, 0)
        pos = np.arange(len(key), dtype=np.int64) - np.repeat(offsets[:-1], sizes)
        keep = pos < np.repeat(plen, sizes)
        del pos
        self.n = n
        self.universe = universe
        self.key = key[keep]  # prefix entries, by (row, key)
        self.owner = owner[keep]
        del key, owner, keep
        self.row_start = np.zeros(n + 1, np.int64)
        np.cumsum(np.minimum(plen, sizes), out=self.row_start[1:])
        df = np.bincount(self.key, minlength=universe)
        self.total_pairs = int((df * (df - 1) // 2).sum())

    def build(self) -> None:
        n, key, owner = self.n, self.key, self.owner
        if n * self.universe < 2**62:
            by = np.argsort(key * n + owner)
        else:
            by = np.lexsort((owner, key))
        pk = key[by]
        self.row = owner[by]  # the postings' rows, by (value, row)
        if len(pk):
            starts = np.flatnonzero(np.r_[True, pk[1:] != pk[:-1]])
            ends = np.r_[starts[1:], len(pk)]
            # postings after each one in its value's list (later rows: rows ascend there)
            self.later = np.repeat(ends, ends - starts) - np.arange(len(pk)) - 1
        else:
            self.later = np.zeros(0, np.int64)
        del pk, self.key, self.owner
        self.by_row = np.empty(len(by), dtype=np.int64)  # postings in (row, key) order
        self.by_row[by] = np.arange(len(by), dtype=np.int64)
        cum = np.zeros(len(by) + 1, np.int64)
        np.cumsum(self.later[self.by_row], out=cum[1:])
        self.row_cost = cum[self.row_start]  # postings pairs of the rows before i

    def postings_pairs(self, b0: int, b1: int) -> int:
        return int(self.row_cost[b1] - self.row_cost[b0])

    def candidates(self, b0: int, b1: int):
        """Unique (i, j), i in [b0, b1) and j > i, sharing a prefix value; sorted by (i, j)."""
        n = self.n
        ents = self.by_row[self.row_start[b0] : self.row_start[b1]]
        counts = self.later[ents]
        some = counts > 0
        ents, counts = ents[some], counts[some]
        mark = np.zeros((b1 - b0) * n, dtype=bool)
        ends = np.cumsum(counts)
        s = 0
        while s < len(ents):
            done = int(ends[s - 1]) if s else 0
            e = max(s + 1, int(np.searchsorted(ends, done + _CHUNK, side="right")))
            pe, pc = ents[s:e], counts[s:e]
            total = int(ends[e - 1]) - done
            # the later postings of entry p are p + 1 ... p + counts: for the t-th pair of
            # the chunk, t + (p + 1 - first pair of p)
            right = np.arange(total, dtype=np.int64)
            right += np.repeat(pe + 1 - (ends[s:e] - pc - done), pc)
            code = np.repeat((self.row[pe] - b0) * n, pc)
            code += self.row[right]
            del right
            mark[code] = True
            del code
            s = e
        flat = np.flatnonzero(mark)
        del mark
        i = flat // n + b0
        j = flat % n
        later = j > i  # a value held twice by one row would pair it with itself
        return i[later], j[later]


def _dense_block(rows, b0: int, b1: int, d: float, threads):
    """The pairs <= d of rows [b0, b1) against every later row, from the C++ rows of the
    whole table (the very tiles of :func:`bioaccel.distance_matrix`)."""
    n = len(rows.offsets) - 1
    out = np.asarray(rows.distances(b0, b1, threads=threads), dtype=np.float64)
    keep = np.flatnonzero(out <= d)
    width = n - 1 - np.arange(b0, b1, dtype=np.int64)
    row_first = np.zeros(b1 - b0, np.int64)
    np.cumsum(width[:-1], out=row_first[1:])
    r = np.searchsorted(row_first, keep, side="right") - 1
    i = r + b0
    j = keep - row_first[r] + i + 1
    return i, j, out[keep]


def _verify_rows(rows, i, j, native, KmerRows):
    """Distances of candidate pairs (sorted by (i, j)), each row i with its candidates as a
    small table (i first, then its j ascending) given to the same C++ rows."""
    offsets = np.asarray(rows.offsets, dtype=np.int64)
    values = np.asarray(rows.values)
    sizes = np.diff(offsets)
    lengths = np.asarray(rows.lengths, np.int64)
    out_d = np.empty(len(i))
    if not len(i):
        return out_d
    starts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]])
    ends = np.r_[starts[1:], len(i)]
    for s, e in zip(starts.tolist(), ends.tolist()):
        members = np.r_[i[s], j[s:e]]
        size = sizes[members]
        sub_off = np.zeros(len(members) + 1, dtype=np.int64)
        np.cumsum(size, out=sub_off[1:])
        at = np.arange(int(sub_off[-1]), dtype=np.int64)
        at += np.repeat(offsets[members] - sub_off[:-1], size)
        sub_values = values[at]
        if rows.model == "mash":
            rank, universe = native.kmer_ranks(sub_values)
        else:
            rank, universe = np.zeros(0, np.uint32), 0
        sub = KmerRows(
            rows.model,
            [""] * len(members),
            lengths[members],
            sub_values,
            sub_off,
            np.zeros(0, np.uint32),
            rank,
            universe,
            rows.k,
            rows.sketch_size,
        )
        out_d[s:e] = sub.distances(0, 1, threads=1)
    return out_d


def kmer_neighbors(
    batch, model, d, first, last, threads, backend, devices, *, k, sketch_size, seed
):
    """(i, j, distance, candidates) of the pairs i < j, i in [first, last), within ``d``."""
    from ..backends import resolve_backend_name
    from ..distances import KmerRows, kmer_rows
    from ..errors import BackendUnavailableError

    if resolve_backend_name(backend, "kmer_neighbors") != "cpu" or devices is not None:
        raise BackendUnavailableError(
            f"{model} neighbours run on the cpu backend (the C++ k-mer rows); leave backend "
            "and devices out, or give backend='cpu'"
        )
    n = len(batch)
    last = min(int(last), n)
    first = max(0, min(int(first), last))
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), 0
    rows = kmer_rows(batch, model, k=k, sketch_size=sketch_size, seed=seed, threads=threads)
    offsets = np.asarray(rows.offsets, dtype=np.int64)
    values = np.asarray(rows.values)
    sizes = np.diff(offsets)
    from .._core import load_native, resolve_threads

    native = load_native()
    cores = resolve_threads(threads)  # the one threads= rule (0 = all cores)
    if model == "mash":
        ns_pair = _NS_DENSE_MASH / max(1, cores)
    else:
        ns_pair = _NS_DENSE_JACCARD_VALUE * 2 * max(1.0, float(sizes.mean())) / max(1, cores)
    index = None
    if d < 1.0:  # else every pair: Mash caps its distance at 1, 1 - J is at most 1
        jmin = _min_jaccard(model, d, rows.k) * (1 - 1e-12)
        tau = np.maximum(1, np.ceil(jmin * sizes)).astype(np.int64)
        tau = np.minimum(tau, np.maximum(sizes, 1))
        if len(rows.rank) == len(values):
            rank, universe = rows.rank, rows.universe
        else:
            rank, universe = native.kmer_ranks(values)
        index = _PrefixIndex(offsets, tau, n, rank, universe)
        # the shard's share of the postings pairs, if its rows are about as rich as the rest
        shard_pairs = (last - first) * (2 * n - first - last - 1) // 2
        share = index.total_pairs * shard_pairs / max(1, n * (n - 1) // 2)
        if index.total_pairs > _CHUNK and share * _NS_POSTING >= 2 * shard_pairs * ns_pair:
            index = None  # every block would be dense: the index would not be used
        else:
            index.build()
    step = max(1, _BLOCK_PAIRS // n)
    parts_i, parts_j, parts_d = [], [], []
    candidates = 0
    for b0 in range(first, last, step):
        b1 = min(last, b0 + step)
        pairs = (b1 - b0) * (2 * n - b0 - b1 - 1) // 2  # sum of n - 1 - i over the block
        if pairs == 0:
            continue
        dense_ns = pairs * ns_pair
        expand = index is not None and index.postings_pairs(b0, b1)
        # expanded when cheaper than the dense rows, or anyway when it fits one chunk
        if index is None or (expand > _CHUNK and expand * _NS_POSTING >= dense_ns):
            i, j, dist = _dense_block(rows, b0, b1, d, threads)
            candidates += pairs
        else:
            i, j = index.candidates(b0, b1)
            candidates += len(i)
            if not len(i):
                continue
            rows_verified = int(np.count_nonzero(np.r_[True, i[1:] != i[:-1]]))
            verify_ns = rows_verified * _NS_ROW + _NS_VERIFY_VALUE * float(
                sizes[i].sum() + sizes[j].sum()
            )
            if verify_ns >= dense_ns:
                i, j, dist = _dense_block(rows, b0, b1, d, threads)
            else:
                dist = _verify_rows(rows, i, j, native, KmerRows)
                keep = dist <= d
                i, j, dist = i[keep], j[keep], dist[keep]
        parts_i.append(i)
        parts_j.append(j)
        parts_d.append(dist)
    if not parts_i:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), candidates
    return (
        np.concatenate(parts_i).astype(np.int64, copy=False),
        np.concatenate(parts_j).astype(np.int64, copy=False),
        np.concatenate(parts_d).astype(np.float64, copy=False),
        candidates,
    )
