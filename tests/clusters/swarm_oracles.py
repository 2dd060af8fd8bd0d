"""Oracles of swarm's alignment for the cluster tests: a cell-by-cell port of swarm's nw.cc
(its traceback order included) and an exhaustive enumeration of every optimal alignment's
differences, independent of any traceback order."""

from __future__ import annotations

import itertools


def nw_reference(q: str, d: str):
    """swarm 3.1's nw.cc, cell by cell: costs mismatch 18, gap open 24, gap extend 13
    (swarm's conversion of +5/-4/12/4); backtrack from the end preferring a gap in the query
    (consuming d), then the diagonal, then a gap in d; a gap continues only where extending
    was strictly cheaper than opening. Returns (diffs, alignment length, CIGAR)."""
    go, ge, mm = 24, 13, 18
    ql, dl = len(q), len(d)
    H = [go + (i + 1) * ge for i in range(ql)]
    E = [2 * go + (i + 2) * ge for i in range(ql)]
    dirs = {}
    for j in range(dl):
        f = 2 * go + (j + 2) * ge
        h = 0 if j == 0 else go + j * ge
        for i in range(ql):
            n, e = H[i], E[i]
            h += 0 if q[i] == d[j] else mm
            b = 1 if f < h else 0
            h = min(h, f, e)
            b |= 2 if e == h else 0
            H[i] = h
            h += go + ge
            e += ge
            f += ge
            b |= 4 if f < h else 0
            b |= 8 if e < h else 0
            f, e = min(h, f), min(h, e)
            E[i] = e
            dirs[i, j] = b
            h = n
    i, j, op, ops, matches = ql, dl, "", [], 0
    while i > 0 and j > 0:
        b = dirs[i - 1, j - 1]
        if op == "I" and b & 8:
            j -= 1
        elif op == "D" and b & 4:
            i -= 1
        elif b & 2:
            j, op = j - 1, "I"
        elif b & 1:
            i, op = i - 1, "D"
        else:
            matches += q[i - 1] == d[j - 1]
            i, j, op = i - 1, j - 1, "M"
        ops.append(op)
    ops += ["D"] * i + ["I"] * j
    ops.reverse()
    return len(ops) - matches, len(ops), _cigar(ops)


def _cigar(ops):
    return "".join(
        (str(len(g)) if len(g) > 1 else "") + g[0]
        for g in ("".join(x) for _, x in itertools.groupby(ops))
    )


def optimal_alignment_differences(q: str, t: str) -> set[int]:
    """The differences (columns minus matches) of every optimal global alignment of q and t
    under swarm's costs (mismatch 18, a gap 24 + 13 a column), by exhaustive dynamic
    programming over (position, position, state) with the set of counts each optimum
    reaches: an oracle independent of any traceback order."""
    mm, go, ge = 18, 24, 13
    inf = float("inf")
    # best[i][j][s]: (cost, counts) of aligning q[i:], t[j:] after state s (0 match, 1 gap
    # in q, 2 gap in t)
    best = [[[(inf, set())] * 3 for _ in range(len(t) + 1)] for _ in range(len(q) + 1)]
    for i in range(len(q), -1, -1):
        for j in range(len(t), -1, -1):
            for s in range(3):
                if i == len(q) and j == len(t):
                    best[i][j][s] = (0, {0})
                    continue
                options = []
                if i < len(q) and j < len(t):
                    c, ds = best[i + 1][j + 1][0]
                    same = q[i] == t[j]
                    options.append((c + (0 if same else mm), {x + (not same) for x in ds}))
                if j < len(t):
                    c, ds = best[i][j + 1][1]
                    options.append((c + ge + (0 if s == 1 else go), {x + 1 for x in ds}))
                if i < len(q):
                    c, ds = best[i + 1][j][2]
                    options.append((c + ge + (0 if s == 2 else go), {x + 1 for x in ds}))
                low = min(c for c, _ in options)
                best[i][j][s] = (low, set().union(*(ds for c, ds in options if c == low)))
    return best[0][0][0][1]
