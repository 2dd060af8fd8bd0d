"""Guide trees for progressive alignment, as a flat list of merges.

A guide tree reaches the engine as ``merges``, an (n - 1, 2) int64 array: merge k joins
nodes ``merges[k, 0]`` and ``merges[k, 1]`` into node ``n + k`` (tips are 0..n-1), children
always before parents. Multifurcations (NJ's root, Newick polytomies) are resolved by
joining the children one after another in their listed order.
"""

from __future__ import annotations

import numpy as np

from ..tree import Tree


def merges_from_tree(tree: Tree) -> np.ndarray:
    """The merges of ``tree`` (tips 0..n-1 are the tree's tips in label order)."""
    n = tree.n_tips
    kids: list[list[int]] = [[] for _ in range(tree.n_nodes)]
    for p, c in zip(tree.parent.tolist(), tree.child.tolist()):
        kids[p].append(c)
    merges: list[tuple[int, int]] = []
    node_id: dict[int, int] = {t: t for t in range(n)}
    # iterative post-order (deep trees must not recurse)
    stack: list[tuple[int, bool]] = [(tree.root, False)]
    while stack:
        node, expanded = stack.pop()
        if node < n and not kids[node]:
            continue
        if not expanded:
            stack.append((node, True))
            for c in reversed(kids[node]):
                stack.append((c, False))
            continue
        children = [node_id[c] for c in kids[node]]
        if len(children) == 1:
            node_id[node] = children[0]
            continue
        acc = children[0]
        for c in children[1:]:
            merges.append((acc, c))
            acc = n + len(merges) - 1
        node_id[node] = acc
    out = np.array(merges, dtype=np.int64).reshape(-1, 2)
    if len(out) != n - 1:
        raise ValueError(f"the guide tree joins {len(out) + 1} of its {n} tips")
    return out


GUIDE_TREES = ("auto", "single", "upgma", "nj", "medoid")
#: "auto" builds a medoid tree instead of single linkage over all pairs when the pairs' LCS
#: work (pairs x mean length x 64-bit words per sequence) passes this: about 25 s on two
#: AVX2 cores (10,000 x 250 residues: 5e10, 6 s, all pairs; 30,000 x 250: 4.5e11, medoid)
MEDOID_WORK = 2e11
MEDOID_SEEDS = 100
MEDOID_LEAF = 2000


def matchable_letters(alphabet) -> int:
    """Codes below this can match in the LCS: the 20 amino acids, or A/C/G/T(U)."""
    from ..alphabet import DNA
    return 4 if alphabet is DNA else 20


def lcs_condensed(batch, rows: np.ndarray, threads: int) -> np.ndarray:
    from ..backends.cpu import load_native
    return load_native().msa_lcs_distances(batch.codes, batch.offsets,
                                           matchable_letters(batch.alphabet),
                                           np.ascontiguousarray(rows, dtype=np.int64), None,
                                           int(threads))


def single_linkage_merges(batch, threads: int, rows: np.ndarray | None = None) -> np.ndarray:
    """FAMSA's default: single linkage over the LCS distances of all pairs of ``rows`` (all
    of ``batch`` by default; tip t is ``rows[t]``), streamed in blocks of rows through
    SLINK: O(n) memory."""
    from ..backends.cpu import load_native
    rows = np.arange(len(batch), dtype=np.int64) if rows is None else \
        np.ascontiguousarray(rows, dtype=np.int64)
    merges, _ = load_native().msa_single_linkage_lcs(batch.codes, batch.offsets,
                                                     matchable_letters(batch.alphabet), rows,
                                                     int(threads))
    return merges


def _square(batch, threads: int) -> np.ndarray:
    n = len(batch)
    cond = lcs_condensed(batch, np.arange(n), threads).astype(np.float64)
    cond = np.minimum(cond, np.finfo(np.float32).max)
    d = np.zeros((n, n))
    iu = np.triu_indices(n, 1)
    d[iu] = cond
    d.T[iu] = cond
    return d


def medoid_merges(batch, threads: int, leaf: int = MEDOID_LEAF,
                  seeds: int = MEDOID_SEEDS) -> np.ndarray:
    """A medoid-style guide tree in O(n * seeds) distances per level (as FAMSA's medoid
    tree and Clustal Omega's mBed): ``seeds`` sequences spread over the input (the longest,
    then evenly spaced in the canonical order) split the rest by their nearest seed; groups
    of at most ``leaf`` sequences get a single-linkage tree of all their pairs, larger ones
    are split again; the groups are joined by single linkage over their seeds."""
    from ..backends.cpu import load_native
    native = load_native()
    n = len(batch)
    letters = matchable_letters(batch.alphabet)
    merges: list[tuple[int, int]] = []

    def new_node(a: int, b: int) -> int:
        merges.append((a, b))
        return n + len(merges) - 1

    def build(rows: np.ndarray) -> int:
        """Merges joining `rows`; returns the node id of their subtree."""
        if len(rows) == 1:
            return int(rows[0])
        if len(rows) <= leaf:
            local = single_linkage_merges(batch, threads, rows)
            ids = [int(r) for r in rows]
            for a, b in local.tolist():
                ids.append(new_node(ids[a], ids[b]))
            return ids[-1]
        lengths = batch.lengths[rows]
        k = min(seeds, len(rows))
        picks = [int(np.argmax(lengths))]
        for p in np.linspace(0, len(rows) - 1, k).astype(np.int64).tolist():
            if p not in picks and len(picks) < k:
                picks.append(p)
        seed_rows = rows[np.array(picks)]
        d = native.msa_lcs_distances(batch.codes, batch.offsets, letters, rows, seed_rows,
                                     int(threads))
        nearest = np.argmin(d, axis=1)   # ties: the first seed
        groups = [rows[nearest == s] for s in range(len(picks))]
        if max(len(g) for g in groups) == len(rows):  # no progress: split evenly
            half = len(rows) // 2
            return new_node(build(rows[:half]), build(rows[half:]))
        subtree = [build(g) if len(g) else -1 for g in groups]
        present = [s for s in range(len(picks)) if subtree[s] >= 0]
        if len(present) == 1:
            return subtree[present[0]]
        top = single_linkage_merges(batch, threads, seed_rows[np.array(present)])
        ids = [subtree[s] for s in present]
        for a, b in top.tolist():
            ids.append(new_node(ids[a], ids[b]))
        return ids[-1]

    build(np.arange(n, dtype=np.int64))
    return np.array(merges, dtype=np.int64).reshape(-1, 2)


def all_pairs_work(batch) -> float:
    """64-bit word steps of the LCS distances of all pairs of ``batch``."""
    n = len(batch)
    mean = float(batch.lengths.mean()) if n else 0.0
    return n * (n - 1) / 2 * mean * np.ceil(mean / 64)


def guide_merges(batch, method, threads: int) -> tuple[np.ndarray, str]:
    """Merges for ``batch`` (in its order) by ``method``; returns (merges, method used)."""
    n = len(batch)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64), "none"
    key = str(method).lower()
    if key == "auto":
        key = "medoid" if all_pairs_work(batch) > MEDOID_WORK else "single"
    if key == "single":
        return single_linkage_merges(batch, threads), key
    if key == "medoid":
        return medoid_merges(batch, threads), key
    if key in ("upgma", "nj"):
        from ..tree import nj, upgma
        d = _square(batch, threads)
        tree = upgma(d, list(range(n))) if key == "upgma" else nj(d, list(range(n)), threads=threads)
        return merges_from_tree(tree), key
    raise ValueError(f"unknown guide tree {method!r}; expected one of {list(GUIDE_TREES)}, "
                     "a bioaccel.Tree or a Newick file")


def merges_for_labels(tree: Tree, ids: list[str], source: str) -> np.ndarray:
    """Merges of a user's guide tree whose tip labels must be exactly ``ids``; tips are
    renumbered to the order of ``ids``."""
    from ..errors import SequenceFormatError
    labels = tree.labels
    position = {label: k for k, label in enumerate(ids)}
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise SequenceFormatError(f"{source}: the guide tree names {label!r} twice")
        if label not in position:
            raise SequenceFormatError(f"{source}: the guide tree names {label!r}, which is "
                                      "not a sequence of the input")
        seen.add(label)
    missing = [i for i in ids if i not in seen]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise SequenceFormatError(f"{source}: the guide tree misses the sequence "
                                  f"{missing[0]!r}{more}")
    merges = merges_from_tree(tree)
    n = len(ids)
    remap = np.arange(2 * n - 1, dtype=np.int64)
    remap[:n] = [position[label] for label in labels]
    return remap[merges]
