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


def _candidate_pairs(values, offsets, tau, n: int):
    """Unique (i < j) pairs whose prefixes (global order: rarest value first) share a value."""
    sizes = np.diff(offsets)
    owner = np.repeat(np.arange(n, dtype=np.int64), sizes)
    uniq, inv, counts = np.unique(values, return_inverse=True, return_counts=True)
    rank = np.empty(len(uniq), dtype=np.int64)
    rank[np.lexsort((uniq, counts))] = np.arange(len(uniq))
    key = rank[inv]
    order = np.lexsort((key, owner))
    pos = np.arange(len(order)) - offsets[owner[order]]
    keep = order[pos < (sizes - tau + 1)[owner[order]]]
    pk, po = key[keep], owner[keep]
    by = np.lexsort((po, pk))
    pk, po = pk[by], po[by]
    starts = np.flatnonzero(np.r_[True, pk[1:] != pk[:-1]])
    ends = np.r_[starts[1:], len(pk)]
    group_end = np.repeat(ends, ends - starts)
    later = group_end - np.arange(len(pk)) - 1  # postings after each one in its group
    total = int(later.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    left = np.repeat(np.arange(len(pk)), later)
    step = np.arange(total) - np.repeat(np.cumsum(later) - later, later)
    right = left + 1 + step
    a, b = po[left], po[right]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    codes = np.unique(lo * n + hi)
    return codes // n, codes % n


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
    if n < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), 0
    rows = kmer_rows(batch, model, k=k, sketch_size=sketch_size, seed=seed, threads=threads)
    offsets = np.asarray(rows.offsets, dtype=np.int64)
    values = np.asarray(rows.values)
    sizes = np.diff(offsets)
    if d >= 1.0:  # every pair: Mash caps its distance at 1, 1 - J is at most 1
        iu, ju = np.triu_indices(n, 1)
        i, j = iu.astype(np.int64), ju.astype(np.int64)
    else:
        jmin = _min_jaccard(model, d, rows.k) * (1 - 1e-12)
        tau = np.maximum(1, np.ceil(jmin * sizes)).astype(np.int64)
        tau = np.minimum(tau, np.maximum(sizes, 1))
        i, j = _candidate_pairs(values, offsets, tau, n)
    block = (i >= first) & (i < last)
    i, j = i[block], j[block]
    candidates = len(i)
    from .._core import load_native

    native = load_native()
    out_d = np.empty(len(i))
    starts = np.flatnonzero(np.r_[True, i[1:] != i[:-1]]) if len(i) else np.zeros(0, np.int64)
    ends = np.r_[starts[1:], len(i)]
    for s, e in zip(starts, ends):
        members = np.r_[i[s], j[s:e]]
        parts = [values[offsets[m] : offsets[m + 1]] for m in members]
        sub_off = np.zeros(len(members) + 1, dtype=np.int64)
        np.cumsum([len(p) for p in parts], out=sub_off[1:])
        sub_values = np.concatenate(parts) if parts else values[:0]
        if model == "mash":
            rank, universe = native.kmer_ranks(sub_values)
        else:
            rank, universe = np.zeros(0, np.uint32), 0
        sub = KmerRows(
            model,
            [str(m) for m in members],
            np.asarray(rows.lengths, np.int64)[members],
            sub_values,
            sub_off,
            np.zeros(0, np.uint32),
            rank,
            universe,
            rows.k,
            rows.sketch_size,
        )
        out_d[s:e] = sub.distances(0, 1, threads=1)
    keep = out_d <= d
    return i[keep], j[keep], out_d[keep], candidates
