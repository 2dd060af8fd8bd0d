"""Guide trees for progressive alignment, as a flat list of merges.

A guide tree reaches the engine as ``merges``, an (n - 1, 2) int64 array: merge k joins
nodes ``merges[k, 0]`` and ``merges[k, 1]`` into node ``n + k`` (tips are 0..n-1), children
always before parents. Multifurcations (NJ's root, Newick polytomies) are resolved by
joining the children one after another in their listed order.
"""

from __future__ import annotations

import numpy as np

from ..trees import Tree


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
    from ..sequences import DNA

    return 4 if alphabet is DNA else 20


class GuideDistances:
    """The guide tree's LCS distances of ``batch`` (FAMSA 2.4's ``(la + lb - 2 lcs)^0.75 /
    lcs``): on the CPU engine (eight pairs per vector, all cores) by default, or with a GPU
    ``backend`` or ``devices=`` as LCS lengths through :func:`bioaccel.pairwise._dispatch.pairwise`
    (tiles over several GPUs; virtual GPUs run the CPU engine), turned into distances by
    the same C++ function, so every path gives the same floats and the same tree."""

    #: pairs per block of rows on the GPU path (int32 lengths: 128 MiB)
    BLOCK_PAIRS = 1 << 25

    def __init__(self, batch, threads: int, backend: str = "cpu", devices=None):
        from .._core import load_native

        self.batch = batch
        self.threads = int(threads)
        self.letters = matchable_letters(batch.alphabet)
        self.backend = backend
        self.devices = devices
        self.native = load_native()
        self.on_cpu_engine = devices is None and str(backend).lower() == "cpu"

    def _lengths(self, queries, targets) -> np.ndarray:
        from ..pairwise import pairwise

        letters = self.letters
        return pairwise(
            queries,
            targets,
            False,
            operation="lcs_lengths",
            dtype=np.int32,
            backend=self.backend,
            devices=self.devices,
            threads=self.threads,
            kernel=lambda engine, qb, tb, sym, th: engine.lcs_lengths(qb, tb, letters, sym, th),
        )

    def _of_lengths(self, lcs: np.ndarray, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
        la2 = np.broadcast_to(la.astype(np.int64)[:, None], lcs.shape).ravel()
        lb2 = np.broadcast_to(lb.astype(np.int64)[None, :], lcs.shape).ravel()
        d = self.native.msa_lcs_distance_of_lengths(la2, lb2, lcs.astype(np.int64).ravel())
        return d.reshape(lcs.shape)

    def rect(self, rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
        """Distances (len(rows_a), len(rows_b)) float32."""
        rows_a = np.ascontiguousarray(rows_a, dtype=np.int64)
        rows_b = np.ascontiguousarray(rows_b, dtype=np.int64)
        if self.on_cpu_engine:
            return self.native.msa_lcs_distances(
                self.batch.codes, self.batch.offsets, self.letters, rows_a, rows_b, self.threads
            )
        lcs = self._lengths(self.batch.subset(rows_a), self.batch.subset(rows_b))
        return self._of_lengths(lcs, self.batch.lengths[rows_a], self.batch.lengths[rows_b])

    def square(self) -> np.ndarray:
        """All pairs as a float64 (n, n) matrix (for UPGMA and NJ)."""
        n = len(self.batch)
        rows = np.arange(n, dtype=np.int64)
        if not self.on_cpu_engine:
            return self.rect(rows, rows).astype(np.float64)  # LCS is symmetric, diagonal 0
        # the CPU engine computes each pair once (the upper triangle)
        cond = self.native.msa_lcs_distances(
            self.batch.codes, self.batch.offsets, self.letters, rows, None, self.threads
        )
        d = np.zeros((n, n))
        iu = np.triu_indices(n, 1)
        d[iu] = cond
        d.T[iu] = cond
        return d

    def single_linkage(self, rows: np.ndarray | None = None) -> np.ndarray:
        """FAMSA's default tree: single linkage over all pairs of ``rows`` (all of the batch
        by default; tip t is ``rows[t]``), fed to SLINK a block of rows at a time: O(n)
        memory beyond a block."""
        rows = (
            np.arange(len(self.batch), dtype=np.int64)
            if rows is None
            else np.ascontiguousarray(rows, dtype=np.int64)
        )
        n = len(rows)
        if n < 2:
            return np.zeros((0, 2), dtype=np.int64)
        if self.on_cpu_engine:
            merges, _ = self.native.msa_single_linkage_lcs(
                self.batch.codes, self.batch.offsets, self.letters, rows, self.threads
            )
            return merges
        slink = self.native.MsaSlink(n)
        block = max(1, min(n, self.BLOCK_PAIRS // n))
        for i0 in range(0, n, block):
            i1 = min(n, i0 + block)
            # row i needs the points before it: columns [0, i1) cover the whole block
            slink.add_rows(self.rect(rows[i0:i1], rows[:i1]))
        merges, _ = slink.merges()
        return merges


def medoid_merges(
    dist: GuideDistances, leaf: int = MEDOID_LEAF, seeds: int = MEDOID_SEEDS
) -> np.ndarray:
    """A medoid-style guide tree in O(n * seeds) distances per level (as FAMSA's medoid
    tree and Clustal Omega's mBed): ``seeds`` sequences spread over the input (the longest,
    then evenly spaced in the canonical order) split the rest by their nearest seed; groups
    of at most ``leaf`` sequences get a single-linkage tree of all their pairs, larger ones
    are split again; the groups are joined by single linkage over their seeds."""
    batch = dist.batch
    n = len(batch)
    merges: list[tuple[int, int]] = []

    def new_node(a: int, b: int) -> int:
        merges.append((a, b))
        return n + len(merges) - 1

    def build(rows: np.ndarray) -> int:
        """Merges joining `rows`; returns the node id of their subtree."""
        if len(rows) == 1:
            return int(rows[0])
        if len(rows) <= leaf:
            local = dist.single_linkage(rows)
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
        d = dist.rect(rows, seed_rows)
        nearest = np.argmin(d, axis=1)  # ties: the first seed
        groups = [rows[nearest == s] for s in range(len(picks))]
        if max(len(g) for g in groups) == len(rows):  # no progress: split evenly
            half = len(rows) // 2
            return new_node(build(rows[:half]), build(rows[half:]))
        subtree = [build(g) if len(g) else -1 for g in groups]
        present = [s for s in range(len(picks)) if subtree[s] >= 0]
        if len(present) == 1:
            return subtree[present[0]]
        top = dist.single_linkage(seed_rows[np.array(present)])
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


def guide_merges(
    batch, method, threads: int, backend: str = "cpu", devices=None
) -> tuple[np.ndarray, str]:
    """Merges for ``batch`` (in its order) by ``method``; returns (merges, method used).
    ``backend`` / ``devices`` place the distance stage (see :class:`GuideDistances`)."""
    n = len(batch)
    if n < 2:
        return np.zeros((0, 2), dtype=np.int64), "none"
    key = str(method).lower()
    if key == "auto":
        key = "medoid" if all_pairs_work(batch) > MEDOID_WORK else "single"
    if key not in ("single", "medoid", "upgma", "nj"):
        raise ValueError(
            f"unknown guide tree {method!r}; expected one of {list(GUIDE_TREES)}, "
            "a bioaccel.Tree or a Newick file"
        )
    dist = GuideDistances(batch, threads, backend, devices)
    if key == "single":
        return dist.single_linkage(), key
    if key == "medoid":
        return medoid_merges(dist), key
    from ..trees import nj, upgma

    d = dist.square()
    tree = upgma(d, list(range(n))) if key == "upgma" else nj(d, list(range(n)), threads=threads)
    return merges_from_tree(tree), key


def merges_for_labels(tree: Tree, ids: list[str], source: str) -> np.ndarray:
    """Merges of a user's guide tree whose tip labels must be exactly ``ids``; tips are
    renumbered to the order of ``ids``."""
    from ..errors import DuplicateIdError, SequenceFormatError

    labels = tree.labels
    position = {label: k for k, label in enumerate(ids)}
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise DuplicateIdError(f"{source}: the guide tree names {label!r} twice")
        if label not in position:
            raise SequenceFormatError(
                f"{source}: the guide tree names {label!r}, which is not a sequence of the input"
            )
        seen.add(label)
    missing = [i for i in ids if i not in seen]
    if missing:
        more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
        raise SequenceFormatError(
            f"{source}: the guide tree misses the sequence {missing[0]!r}{more}"
        )
    merges = merges_from_tree(tree)
    n = len(ids)
    remap = np.arange(2 * n - 1, dtype=np.int64)
    remap[:n] = [position[label] for label in labels]
    return remap[merges]
