"""A slow, plain neighbour-joining reference: row sums recomputed every step, every pair's
Q computed afresh, and ties settled by the documented rule of :func:`bioaccel.trees._tree.nj`
(Q within TIE_RTOL x max |row sum| of the minimum; smallest (lower, higher) node id wins).
Without ties that is ape::nj's tree."""

from __future__ import annotations

import numpy as np

TIE_RTOL = 1e-9  # the documented constant (bioaccel.backends.nj_array.TIE_RTOL), restated


def nj_reference(d: np.ndarray):
    """Return (edges, q_gaps): edges as (parent, child, length) with tips 0..n-1, and for
    each join the gap between the best and second-best Q value (a tie when ~0)."""
    d = np.array(d, dtype=float)
    n = d.shape[0]
    nodes = list(range(n))
    edges = []
    gaps = []
    nxt = n
    while len(nodes) > 3:
        m = len(nodes)
        s = d.sum(axis=1)
        q = (m - 2) * d - s[:, None] - s[None, :]
        iu = np.triu_indices(m, 1)
        vals = q[iu]
        ids = np.array(nodes)
        tied = vals <= vals.min() + TIE_RTOL * np.abs(s).max()
        key = np.minimum(ids[iu[0]], ids[iu[1]]) * (1 << 32) + np.maximum(ids[iu[0]], ids[iu[1]])
        k = int(np.argmin(np.where(tied, key, np.iinfo(np.int64).max)))
        srt = np.sort(vals)
        if m > 4:  # with 4 nodes Q(a,b) == Q(c,d) always, and both give the same tree
            gaps.append(srt[1] - srt[0])
        i, j = iu[0][k], iu[1][k]
        li = (d[i, j] + (s[i] - s[j]) / (m - 2)) / 2
        edges += [(nxt, nodes[i], li), (nxt, nodes[j], d[i, j] - li)]
        new = (d[i] + d[j] - d[i, j]) / 2
        keep = [t for t in range(m) if t not in (i, j)]
        d2 = np.zeros((m - 1, m - 1))
        d2[:-1, :-1] = d[np.ix_(keep, keep)]
        d2[-1, :-1] = d2[:-1, -1] = new[keep]
        nodes = [nodes[t] for t in keep] + [nxt]
        nxt += 1
        d = d2
    a, b, c = 0, 1, 2
    edges += [
        (nxt, nodes[a], (d[a, b] + d[a, c] - d[b, c]) / 2),
        (nxt, nodes[b], (d[a, b] + d[b, c] - d[a, c]) / 2),
        (nxt, nodes[c], (d[a, c] + d[b, c] - d[a, b]) / 2),
    ]
    return edges, np.array(gaps)


def check_joins_are_q_minima(d: np.ndarray, tree, rtol: float = 1e-12) -> None:
    """Replay a bioaccel NJ tree's joins (internal node n + k is the k-th join) on ``d``:
    each joined pair must have the minimum Q (up to rounding), and its branch lengths
    must be the NJ formulas. Valid on data with ties, where several trees are NJ trees."""
    d = np.array(d, dtype=float)
    n = d.shape[0]
    where = {i: i for i in range(n)}  # node id -> row in the current matrix
    nodes = list(range(n))
    by_parent: dict[int, list[tuple[int, float]]] = {}
    for p, c, ln in zip(tree.parent, tree.child, tree.length):
        by_parent.setdefault(int(p), []).append((int(c), float(ln)))
    for u in range(n, n + n - 3):
        (a, la), (b, lb) = by_parent[u]
        m = len(nodes)
        s = d.sum(axis=1)
        q = (m - 2) * d - s[:, None] - s[None, :]
        np.fill_diagonal(q, np.inf)
        i, j = where[a], where[b]
        scale = max(1.0, float(np.abs(q[np.isfinite(q)]).max()))
        assert q[i, j] <= q.min() + rtol * scale, f"join {u}: Q={q[i, j]} but min is {q.min()}"
        li = (d[i, j] + (s[i] - s[j]) / (m - 2)) / 2
        assert abs(la - li) <= 1e-9 and abs(lb - (d[i, j] - li)) <= 1e-9
        new = (d[i] + d[j] - d[i, j]) / 2
        keep = [t for t in range(m) if t not in (i, j)]
        d2 = np.zeros((m - 1, m - 1))
        d2[:-1, :-1] = d[np.ix_(keep, keep)]
        d2[-1, :-1] = d2[:-1, -1] = new[keep]
        nodes = [nodes[t] for t in keep] + [u]
        where = {node: r for r, node in enumerate(nodes)}
        d = d2


def _split_lengths(tree):
    """{split: length} of the internal edges plus {tip: length} of the tip edges."""
    n = tree.n_tips
    below: dict[int, frozenset] = {}
    order, stack = [], [tree.root]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(int(tree.child[e]) for e in tree._children[v])
    for v in reversed(order):
        below[v] = (
            frozenset([v])
            if v < n
            else frozenset().union(*(below[int(tree.child[e])] for e in tree._children[v]))
        )
    out = {}
    for _p, c, ln in zip(tree.parent, tree.child, tree.length):
        side = below[int(c)]
        key = side if 0 not in side else frozenset(range(n)) - side
        out[key] = out.get(key, 0.0) + float(ln)  # edges around a degree-2 root add up
    return out


def assert_same_nj_tree(a, b, atol=1e-9):
    la, lb = _split_lengths(a), _split_lengths(b)
    assert set(la) == set(lb), f"Robinson-Foulds distance {len(set(la) ^ set(lb))}"
    np.testing.assert_allclose([la[k] for k in la], [lb[k] for k in la], rtol=0, atol=atol)
