"""Neighbour joining written once against an array module: NumPy (the ``reference``
backend's ``neighbor_joining``) or CuPy (the ``cupy`` backend's: the Q-matrix minimum and the
row updates on the GPU).

The same algorithm as the C++ core (``csrc/trees/nj.cpp``), step for step: alive clusters in
slots ``0..m-1``, a join puts the new cluster in the lower slot and moves the last slot into
the freed one, ties follow :data:`TIE_RTOL` (see :func:`bioaccel.nj`), row sums are
updated incrementally and recomputed whenever the number of clusters has halved. Each step computes the whole
Q matrix of the alive slots (O(m^2) work, O(n^3) in all): on a GPU that is one fused pass
over memory per join.
"""

from __future__ import annotations

import numpy as np

#: Q values within ``TIE_RTOL`` x (largest |row sum|) of the minimum Q are ties; a tie goes
#: to the pair with the smallest (lower node id, higher node id). The C++ core
#: (``kTieRtol`` in csrc/trees/nj.cpp) follows the same rule.
TIE_RTOL = 1e-9


def neighbor_joining_arrays(d: np.ndarray, xp=np):
    """(parent, child, length, root) of the NJ tree of the n x n matrix ``d`` (n >= 3)."""
    n = d.shape[0]
    w = xp.array(d, dtype=xp.float64)
    r = _row_sums(w, n, xp)
    upper = xp.triu(xp.ones((n, n), dtype=bool), 1)
    node_of_slot = list(range(n))
    nodes = xp.arange(n, dtype=xp.int64)  # node id of each slot, on the device
    parent: list[int] = []
    child: list[int] = []
    length: list[float] = []
    next_node, m, m_at_rebuild = n, n, n
    while m > 3:
        q = (m - 2.0) * w[:m, :m] - r[:m, None] - r[None, :m]
        q = xp.where(upper[:m, :m], q, xp.inf)
        i, j = _pick(q, r[:m], nodes[:m], xp)
        dij = float(w[i, j])
        li = (dij + (float(r[i]) - float(r[j])) / (m - 2)) / 2
        u = next_node
        next_node += 1
        parent += [u, u]
        child += [node_of_slot[i], node_of_slot[j]]
        length += [li, dij - li]
        dik, djk = w[i, :m].copy(), w[j, :m].copy()
        duk = (dik + djk - dij) / 2
        keep = xp.ones(m, dtype=bool)
        keep[i] = keep[j] = False
        r[:m] = xp.where(keep, r[:m] + (duk - dik - djk), r[:m])
        new_row = xp.where(keep, duk, 0.0)
        w[i, :m] = new_row
        w[:m, i] = new_row
        r[i] = xp.cumsum(new_row)[-1]  # in slot order, as the C++ loop adds
        node_of_slot[i] = u
        nodes[i] = u
        last = m - 1
        if j != last:
            w[j, :m] = w[last, :m]
            w[:m, j] = w[:m, last]
            w[j, j] = 0.0
            r[j] = r[last]
            node_of_slot[j] = node_of_slot[last]
            nodes[j] = nodes[last]
        m -= 1
        if m * 2 <= m_at_rebuild:
            r[:m] = _row_sums(w[:m, :m], m, xp)
            m_at_rebuild = m
    dab, dac, dbc = float(w[0, 1]), float(w[0, 2]), float(w[1, 2])
    root = next_node
    parent += [root] * 3
    child += node_of_slot[:3]
    length += [(dab + dac - dbc) / 2, (dab + dbc - dac) / 2, (dac + dbc - dab) / 2]
    return (
        np.array(parent, dtype=np.int64),
        np.array(child, dtype=np.int64),
        np.array(length, dtype=np.float64),
        root,
    )


def _pick(q, r, nodes, xp) -> tuple[int, int]:
    """Slots (i < j) of the pair to join: the tie rule of :data:`TIE_RTOL` on the Q matrix
    ``q`` (+inf outside the upper triangle)."""
    m = q.shape[0]
    qmin = float(q.min())
    if not np.isfinite(qmin):
        raise RuntimeError("neighbor_joining: no finite Q value (NaN distances?)")
    tol = TIE_RTOL * float(xp.abs(r).max())
    lo = xp.minimum(nodes[:, None], nodes[None, :])
    hi = xp.maximum(nodes[:, None], nodes[None, :])
    key = xp.where(q <= qmin + tol, lo * (1 << 32) + hi, np.iinfo(np.int64).max)  # ids < 2**31
    i, j = divmod(int(xp.argmin(key)), m)
    return i, j


def _row_sums(w, m: int, xp):
    """Row sums added left to right, as the C++ core does (a pairwise sum rounds otherwise)."""
    return xp.cumsum(w[:m, :m], axis=1)[:, -1].copy() if m else xp.zeros(0)
