"""Trees from distance matrices: neighbour joining and UPGMA (C++ core), Newick output."""

from __future__ import annotations

import os
import re

import numpy as np

from .._core import NEWICK, atomic_output, check_threads, output_format
from ..distances import AA_MODELS, DistanceMatrix, check_distances, check_symmetric
from ..errors import BackendUnavailableError

_NEEDS_QUOTES = re.compile(r"[\s;,:()'\[\]]")


def quote_label(label: str) -> str:
    """Newick label: quoted (with ``'`` doubled) when it holds whitespace or ``;,:()'[]``.

    >>> quote_label("A/Sao_Paulo/43812/2009"), quote_label("Bacteria;Firmicutes")
    ('A/Sao_Paulo/43812/2009', "'Bacteria;Firmicutes'")
    """
    if label == "" or _NEEDS_QUOTES.search(label):
        return "'" + label.replace("'", "''") + "'"
    return label


class Tree:
    """A tree as an edge list: tips are nodes ``0..n-1`` (labelled), internal nodes follow.

    Attributes
    ----------
    labels : list of str
        Tip labels, in tip-id order.
    parent, child : ndarray of int64
        Edge ``k`` goes from ``parent[k]`` to ``child[k]``.
    length : ndarray of float64
        Branch length of each edge (never -0.0).
    root : int
        The root node (for NJ, the node the last three clusters hang from).
    """

    def __init__(self, labels, parent, child, length, root: int):
        self.labels = list(labels)
        self.parent = np.asarray(parent, dtype=np.int64)
        self.child = np.asarray(child, dtype=np.int64)
        self.length = length
        self.root = int(root)
        self.n_nodes = (
            int(max(self.parent.max(initial=0), self.child.max(initial=0), self.root)) + 1
        )
        self._children: list[list[int]] = [[] for _ in range(self.n_nodes)]
        for k, p in enumerate(self.parent):
            self._children[int(p)].append(k)

    @property
    def length(self) -> np.ndarray:
        """Branch length of each edge (float64; never -0.0: the one place every writer,
        Newick and R, reads lengths from)."""
        return self._length

    @length.setter
    def length(self, values) -> None:
        values = np.array(values, dtype=np.float64)
        values[values == 0] = 0.0  # -0.0 (UPGMA's h - h, clamped NJ lengths) as 0.0
        self._length = values

    @property
    def n_tips(self) -> int:
        return len(self.labels)

    def __repr__(self) -> str:
        return f"<Tree {self.n_tips} tips, {len(self.parent)} edges>"

    def to_newick(self, precision: int | None = None) -> str:
        """Newick text. Branch lengths use the shortest exact repr unless ``precision`` is given."""
        fmt = (lambda v: repr(float(v))) if precision is None else (lambda v: f"{v:.{precision}g}")
        parts: list[str] = []
        # iterative post-order: deep trees (caterpillars of 20,000 tips) must not recurse
        stack: list[tuple[int, int, int]] = [(self.root, -1, 0)]  # (node, edge in, next child)
        while stack:
            node, edge, k = stack.pop()
            kids = self._children[node]
            if not kids:
                parts.append(quote_label(self.labels[node]) if node < self.n_tips else "")
            elif k == 0:
                parts.append("(")
            if kids and k < len(kids):
                if k > 0:
                    parts.append(",")
                stack.append((node, edge, k + 1))
                e = kids[k]
                stack.append((int(self.child[e]), e, 0))
                continue
            if kids:
                parts.append(")")
            if edge >= 0:
                parts.append(":" + fmt(self.length[edge]))
        return "".join(parts) + ";"

    def write(self, path: str | os.PathLike) -> None:
        """Write Newick atomically (names: :data:`bioaccel._core.outputs.NEWICK`, or no extension)."""
        output_format(path, NEWICK, "Newick tree", default="newick")
        with atomic_output(path) as f:
            f.write(self.to_newick() + "\n")

    def patristic(self) -> np.ndarray:
        """Tip-to-tip path lengths (n_tips x n_tips), in label order.

        Each tip's path lengths up to every ancestor are summed edge by edge from the tip
        (as walking the path does); the pairs whose lowest common ancestor is ``v`` get the two
        sums to ``v`` added, one block per ``v``: O(n^2) work in NumPy blocks, no Python loop
        per pair (3,000 tips: well under a second)."""
        n_tips, n = self.n_tips, self.n_nodes
        kids: list[list[tuple[int, float]]] = [[] for _ in range(n)]
        for p, c, ln in zip(self.parent.tolist(), self.child.tolist(), self.length.tolist()):
            kids[p].append((c, ln))
        out = np.zeros((n_tips, n_tips))
        # post-order from the root: below[v] = the tips under v, up[v] = their sums to v
        order, stack = [], [self.root]
        while stack:
            v = stack.pop()
            order.append(v)
            stack.extend(c for c, _ in kids[v])
        below: list[np.ndarray | None] = [None] * n
        up: list[np.ndarray | None] = [None] * n
        for v in reversed(order):
            groups_t = [np.array([v], dtype=np.int64)] if v < n_tips else []
            groups_d = [np.zeros(1)] if v < n_tips else []
            for c, ln in kids[v]:
                groups_t.append(below[c])
                groups_d.append(up[c] + ln)
                below[c] = up[c] = None
            for a in range(len(groups_t)):  # pairs across two groups meet at v
                for b in range(a + 1, len(groups_t)):
                    block = groups_d[a][:, None] + groups_d[b][None, :]
                    out[np.ix_(groups_t[a], groups_t[b])] = block
                    out[np.ix_(groups_t[b], groups_t[a])] = block.T
            below[v] = np.concatenate(groups_t) if groups_t else np.zeros(0, np.int64)
            up[v] = np.concatenate(groups_d) if groups_d else np.zeros(0)
        return out


def _as_matrix(d, labels) -> tuple[np.ndarray, list[str]]:
    """(data, labels) of a DistanceMatrix, a scikit-bio DistanceMatrix, a pandas DataFrame
    (labels from its index, which must equal its columns) or an array (``labels``, else
    ``0..n-1``). Labels must be unique; ``labels`` given with a labelled matrix must equal
    its labels."""
    from ..sequences import check_unique_ids

    own = None
    if isinstance(d, DistanceMatrix):
        data, own = d.data, list(d.ids)
    elif hasattr(d, "ids") and hasattr(d, "data") and not isinstance(d, np.ndarray):
        data, own = np.asarray(d.data, dtype=np.float64), [str(i) for i in d.ids]  # scikit-bio
    elif hasattr(d, "index") and hasattr(d, "columns"):  # pandas DataFrame
        rows, cols = [str(i) for i in d.index], [str(c) for c in d.columns]
        if rows != cols:
            raise ValueError(
                "a DataFrame distance matrix needs the same labels on its index and "
                f"columns (index {rows[:3]}..., columns {cols[:3]}...)"
            )
        data, own = np.asarray(d.to_numpy(), dtype=np.float64), rows
    else:
        try:
            data = np.asarray(d, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"expected a distance matrix (bioaccel or scikit-bio DistanceMatrix, "
                f"pandas DataFrame or square array), got {type(d).__name__}: {exc}"
            ) from None
    if data.ndim != 2 or data.shape[0] != data.shape[1]:
        raise ValueError(f"distance matrix must be square, got shape {data.shape}")
    if own is not None:
        if labels is not None and [str(x) for x in labels] != own:
            raise ValueError(
                f"labels= differ from the matrix's own labels ({own[:3]}...); give one or the other"
            )
        labels = own
    if labels is None:
        labels = [str(i) for i in range(data.shape[0])]
    labels = list(labels)
    if len(labels) != data.shape[0]:
        raise ValueError(f"{len(labels)} labels for a {data.shape[0]} x {data.shape[0]} matrix")
    check_unique_ids([str(x) for x in labels], "labels")
    check_distances(data, labels)
    check_symmetric(data, labels)
    return data, labels


def _check_finite(data: np.ndarray, labels: list[str], made_by=None) -> None:
    if np.isfinite(data).all():
        return
    bad = np.argwhere(~np.isfinite(data))
    if bad.size:
        i, j = bad[0]
        raise _not_finite_error(labels[i], labels[j], data[i, j], made_by)


def _not_finite_error(a: str, b: str, value, made_by=None) -> ValueError:
    """The error of a distance a tree cannot join, with the hint that applies: ``made_by``
    is the matrix's :attr:`DistanceMatrix.made_by` (model, pairwise deletion), None when no
    model made it here (a file, an array): then there is no model or option to change."""
    from ..distances import shown_value

    said = f"distance between {a!r} and {b!r} is {shown_value(value)}; tree building needs finite"
    if made_by is None:
        return ValueError(
            f"{said} distances (the matrix holds it: no model made it here to change)"
        )
    model, pairwise_deletion = made_by
    if model in (*AA_MODELS, "scoredist"):
        later = (
            "use a model that saturates later: 'poisson' (finite below p = 1) or 'p' instead "
            "of 'kimura' (Inf from p = 0.854)"
        )
    else:
        later = "use a model that saturates later: 'raw'" + (
            "" if model in ("jc69", "raw") else " or 'jc69' (finite below p = 3/4)"
        )
    if np.isnan(value):
        # a NaN has two causes the matrix does not tell apart: no site to compare, or a
        # model's logarithm of a negative number (jc69 past p = 3/4, tn93 or logdet on a
        # divergent pair at any p)
        no_sites = (
            "the pair has no site where both have a letter (pairwise deletion is on already: "
            "leave one of them out)"
            if pairwise_deletion
            else f"{model} has no site left to compare for the pair (try pairwise deletion: "
            "only the sites missing in the pair are left out)"
        )
        hint = f"NaN: either {no_sites}, or the pair is past {model}'s saturation ({later})"
    else:
        hint = f"Inf: the pair is past {model}'s saturation ({later})"
    return ValueError(f"{said} distances: {hint}")


def _native():
    from .._core import load_native

    return load_native()


def nj(
    d,
    labels=None,
    *,
    clamp_negative: bool = False,
    threads: int = 0,
    backend: str = "cpu",
    inplace: bool = False,
    low_memory: bool = False,
) -> Tree:
    """Neighbour-joining tree (Saitou & Nei 1987), as ``ape::nj``.

    Parameters
    ----------
    d : DistanceMatrix or (n, n) array; with ``low_memory`` also a CondensedMatrix or CondensedDistances
    labels : list of str, optional
        Tip labels when ``d`` is a plain array.
    clamp_negative : bool
        Set negative branch lengths to 0 (ape keeps them; so does the default).
    threads : int
        0 = all cores; the tree does not depend on it.
    backend : str
        A backend of the registry (:func:`bioaccel.backends.get_backend`) with the
        ``neighbor_joining`` operation: ``cpu``: the C++ core (RapidNJ-style bounded
        search). ``cupy``: the Q minimum and row updates on the GPU
        (:mod:`bioaccel.backends.nj_array`, the same steps); ``reference``: that code on
        NumPy. ``auto``: the first such backend of the registry's order that can run here
        (``cupy`` when a GPU is usable) from
        ``bioaccel.backends.AUTO_GPU_FROM['neighbor_joining']`` taxa on, else ``cpu``.
    inplace : bool
        Let the ``cpu`` backend use the matrix's own memory (a writeable, C-contiguous
        float64 array, or a DistanceMatrix holding one) as its working matrix instead of an
        n x n copy: half the memory at scale, and ``d`` holds garbage afterwards. Other
        inputs and backends are copied as usual; the tree is the same either way.
        With ``low_memory``: a :class:`~bioaccel.distances.CondensedMatrix` is
        joined in its own ``values`` (overwritten) instead of a copy.
    low_memory : bool
        Join in a float32 condensed triangle, as QuickTree does: n (n - 1) / 2 x 4 bytes
        (0.2 GB at n = 10,000; 1.8 GB at 30,000) plus 384 bytes and a few doubles per taxon,
        instead of the n x n float64 square (0.8 GB, 7.2 GB) and its sorted rows. ``d`` can
        stay out of memory as a float64 square: give a
        :class:`~bioaccel.distances.CondensedDistances` (a ``.cdist`` file, read in blocks)
        or what :meth:`DistanceMatrix.read_condensed
        <bioaccel.distances.DistanceMatrix.read_condensed>` returns (``.cdist``, ``.npy`` and
        PHYLIP files read straight into the triangle). The same search and tie rule, but the
        distances, the input's and every joined one, are stored rounded to float32 (row sums
        and Q stay float64): where two Q values are closer than that rounding (near-ties) the
        join can differ from the exact mode's and from ``ape::nj``; without near-ties the
        tree is the same, branch lengths to about 1e-7 relative. ``cpu`` backend only
        (``auto`` picks it).

    Returns
    -------
    Tree
        Unrooted: the root node carries the last three clusters.

    Notes
    -----
    Ties, the same in every backend: Q values within ``1e-9 x max |row sum|`` of the
    minimum Q (:data:`bioaccel.backends.nj_array.TIE_RTOL`) are ties, so last-bit differences between
    backends' sums never decide a join; a tie goes to the pair with the smallest (lower
    node id, higher node id), where tips are ``0..n-1`` in matrix order and the k-th join
    makes node ``n + k``. Distinct Q values closer than that window count as tied.

    Examples
    --------
    >>> d = [[0, 5, 9, 9, 8], [5, 0, 10, 10, 9], [9, 10, 0, 8, 7],
    ...      [9, 10, 8, 0, 3], [8, 9, 7, 3, 0]]
    >>> nj(d, list("abcde")).to_newick()
    '(((a:2.0,b:3.0):3.0,c:4.0):2.0,e:1.0,d:2.0);'
    """
    threads = check_threads(threads)
    if low_memory:
        return _nj_low_memory(d, labels, clamp_negative, threads, backend, inplace)
    data, labels = _as_matrix(d, labels)
    _check_finite(data, labels, getattr(d, "made_by", None))
    n = data.shape[0]
    if n < 2:
        raise ValueError(f"need at least 2 taxa for a tree, got {n}")
    if n == 2:
        half = data[0, 1] / 2
        tree = Tree(labels, [2, 2], [0, 1], [half, half], 2)
    else:
        engine = _nj_backend(backend, n)
        parent, child, length, root = engine.neighbor_joining(data, threads, inplace=inplace)
        tree = Tree(labels, parent, child, length, root)
    if clamp_negative:
        tree.length = np.maximum(tree.length, 0.0)
    return tree


def _nj_low_memory(d, labels, clamp_negative, threads, backend, inplace) -> Tree:
    """:func:`nj` with ``low_memory=True``: the float32 condensed triangle, on the cpu backend."""
    from ..backends import backends_with, get_backend, resolve_backend_name
    from ..distances import CondensedDistances, CondensedMatrix, condensed_pair

    fits = backends_with("neighbor_joining_low_memory")
    if resolve_backend_name(backend, "neighbor_joining_low_memory") not in fits:
        engine = get_backend(backend, "neighbor_joining")  # an unknown name fails as usual
        raise BackendUnavailableError(
            f"low_memory=True runs on the {' or '.join(fits)} backend only, not on "
            f"{engine.name!r} (its neighbour joining holds the float64 square); use "
            f"backend={fits[0]!r} or leave low_memory"
        )
    if isinstance(d, CondensedDistances):
        cm, owned = d.load(), True
    elif isinstance(d, CondensedMatrix):
        cm, owned = d, inplace
    else:
        data, lab = _as_matrix(d, labels)
        cm, owned = CondensedMatrix.from_matrix(DistanceMatrix(data, lab)), True
    if labels is not None and not isinstance(d, (DistanceMatrix, np.ndarray, list)):
        if [str(x) for x in labels] != cm.ids:
            raise ValueError(
                f"labels= differ from the matrix's own labels ({cm.ids[:3]}...); give one or the other"
            )
    labels, values, n = cm.ids, cm.values, len(cm.ids)
    if n < 2:
        raise ValueError(f"need at least 2 taxa for a tree, got {n}")
    step = 1 << 18
    for a in range(0, values.size, step):
        block = values[a : a + step]
        if not np.isfinite(block).all():  # the first in row order, as _check_finite
            k = a + int(np.flatnonzero(~np.isfinite(block))[0])
            i, j = condensed_pair(k, n)
            raise _not_finite_error(labels[i], labels[j], values[k], getattr(d, "made_by", None))
    if n == 2:
        half = float(values[0]) / 2
        tree = Tree(labels, [2, 2], [0, 1], [half, half], 2)
    else:
        from ..backends import get_backend

        work = values if owned else values.copy()
        engine = get_backend("cpu", "neighbor_joining")
        parent, child, length, root = engine.neighbor_joining(work, threads, low_memory=True)
        tree = Tree(labels, parent, child, length, root)
    if clamp_negative:
        tree.length = np.maximum(tree.length, 0.0)
    return tree


def _nj_backend(backend: str, n: int):
    """The registry's backend for ``neighbor_joining`` on ``n`` taxa (``auto``: the one
    resolver, :func:`bioaccel.backends.auto_backend`, with its size rule)."""
    from ..backends import get_backend

    return get_backend(backend, "neighbor_joining", size=n)


def upgma(d, labels=None) -> Tree:
    """UPGMA tree (average linkage), rooted and ultrametric, as ``phangorn::upgma``.

    Node heights are half the merge distances, so tip-to-tip path lengths equal the
    cophenetic distances of average-linkage clustering.
    """
    data, labels = _as_matrix(d, labels)
    _check_finite(data, labels, getattr(d, "made_by", None))
    if data.shape[0] < 2:
        raise ValueError(f"need at least 2 taxa for a tree, got {data.shape[0]}")
    parent, child, length, root = _native().upgma(data)
    return Tree(labels, parent, child, length, root)
