"""``cluster``: amplicon clustering on the sparse graph of pairs within a threshold.

Methods (nodes are the amplicons in swarm's order, see :mod:`._amplicons`):

- ``swarm``: swarm 3's growth (algod1.cc for d = 1, algo.cc for d >= 2): each amplicon not
  yet in a swarm, in order, seeds one; generation g + 1 is every free amplicon within d of
  a member of generation g whose abundance is at most that member's (OTU breaking),
  sorted by node. ``fastidious`` (d = 1): swarms lighter than ``boundary`` are grafted
  onto heavy ones: each light amplicon's candidate is the first heavy amplicon within
  2 edits; candidates in (heavy, light) order attach each light swarm once, after the
  heavy swarm's members.
- ``linkage``: the same growth without OTU breaking: connected components of the pairs
  within d (``swarm -d D --no-otu-breaking``), members in swarm's order.
- ``greedy``: centroids in decreasing abundance: an amplicon joins the centroid of highest
  identity ``(L - e) / L`` >= ``identity`` (e the Levenshtein distance, L the longer
  length; ties: the more abundant centroid), else it becomes a centroid. With
  ``identity_definition="shorter"``, L is the shorter length and e the fewest edits that
  align the whole shorter sequence to a stretch of the longer: overhangs are free, as
  cd-hit-est's and vsearch's terminal gaps (on equal lengths, the fewer of the two ways).

The search: with backend ``auto``/``cpu`` the growth searches each member's free
neighbours as it reaches the member (``swarm_grow_search``, csrc/clusters/growth.cpp: no
pair list); a GPU backend or ``reference`` lists the pairs within d through
:func:`bioaccel.neighbors` and grows on that graph (``swarm_grow``): the same OTUs.

Differences: ``edit`` counts Levenshtein distances (exact, from :func:`bioaccel.neighbors`);
``swarm`` counts the differences (mismatches + gap columns) of swarm's optimal global
alignment (:func:`swarm_alignments`), which are never fewer: the pairs within d of the
neighbour search are recounted, each in both directions (swarm's tie-breaks make the
count depend on which amplicon is the query: the one growing).
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np

from .._core import check_threads, load_native
from ._amplicons import (
    CODE_LETTERS,
    SURROGATES,
    Amplicons,
    TextLines,
    amplicons_from_records,
    read_amplicons,
    with_abundance,
)

log = logging.getLogger("bioaccel.clusters")

METHODS = ("swarm", "linkage", "greedy")
DIFFERENCES = ("edit", "swarm")
#: greedy's identity: over the longer length (Levenshtein), or over the shorter with the
#: longer's overhangs free
IDENTITY_DEFINITIONS = ("longer", "shorter")
#: swarm's range of -d (0 is its dereplication mode, which bioaccel does not need)
MAX_DIFFERENCES = 255
#: identities are compared exactly in 64-bit integers: (L - e) x denominator stays far below
#: 2^63 for any length up to 10^9 letters
MAX_IDENTITY_DENOMINATOR = 10**9
#: fastidious grafting links light amplicons to heavy ones within this many edits (swarm -f)
GRAFT_DISTANCE = 2


@dataclass(frozen=True, eq=False)
class Clustering:
    """The OTUs of :func:`cluster`, in swarm's output order, and their writers.

    Attributes
    ----------
    amplicons : Amplicons
        The input, in swarm's order (node ``k`` is ``amplicons.ids[k]``).
    members : numpy.ndarray of int64
        Nodes OTU by OTU, each OTU in swarm's order (seed first); OTU ``c`` is
        ``members[starts[c]:starts[c + 1]]``.
    starts : numpy.ndarray of int64
    found : numpy.ndarray of int64
        The same nodes in the order swarm found them (its ``-u`` order for d >= 2).
    generation, radius : numpy.ndarray of int64, per node
        Generations from the seed and summed differences along the growth (swarm's -s
        columns 6 and 7); a grafted amplicon keeps those of its light swarm.
    own_size : numpy.ndarray of int64, per OTU
        Members grown from the seed (before any grafted light swarm).
    identity_definition : str or None
        greedy: ``"longer"`` or ``"shorter"`` (see :func:`cluster`); None for the others.
    """

    amplicons: Amplicons
    method: str
    max_distance: int | None
    differences: str
    fastidious: bool
    boundary: int | None
    identity: float | None
    members: np.ndarray
    starts: np.ndarray
    found: np.ndarray
    generation: np.ndarray
    radius: np.ndarray
    own_size: np.ndarray
    threads: int = 0
    identity_definition: str | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    # --- the numbers -------------------------------------------------------------------
    @property
    def n_clusters(self) -> int:
        return len(self.starts) - 1

    def __len__(self) -> int:
        return self.n_clusters

    @property
    def seeds(self) -> np.ndarray:
        """The seed node of each OTU."""
        return self.members[self.starts[:-1]]

    @property
    def seed_ids(self) -> list[str]:
        ids = list(self.amplicons.ids)  # decoded at once (faster than one by one)
        return [ids[k] for k in self.seeds.tolist()]

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.starts)

    @property
    def node_cluster(self) -> np.ndarray:
        """The 0-based OTU of each node."""
        if "node_cluster" not in self._cache:
            out = np.empty(len(self.amplicons), dtype=np.int64)
            out[self.members] = np.repeat(np.arange(self.n_clusters), self.sizes)
            self._cache["node_cluster"] = out
        return self._cache["node_cluster"]

    @property
    def labels(self) -> np.ndarray:
        """The 0-based OTU (in ``-o`` order) of each input record, in input order."""
        out = np.empty(len(self.amplicons), dtype=np.int64)
        out[self.amplicons.record] = self.node_cluster
        return out

    @property
    def abundances(self) -> np.ndarray:
        """The summed abundance (mass) of each OTU."""
        ab = self.amplicons.abundance[self.members].astype(np.uint64)
        return np.add.reduceat(ab, self.starts[:-1]) if len(ab) else ab

    def _own_stat(self, values: np.ndarray) -> np.ndarray:
        """The max of ``values`` (per node) over each OTU's own members."""
        v = values[self.members]
        ends = self.starts[:-1] + self.own_size
        out = np.zeros(self.n_clusters, dtype=np.int64)
        # own members are the first own_size of each OTU
        for_max = np.where(
            np.arange(len(v)) < np.repeat(ends, self.sizes), v, np.iinfo(np.int64).min
        )
        if len(v):
            out = np.maximum.reduceat(for_max, self.starts[:-1])
        return out

    def to_pandas(self):
        """A DataFrame of id, cluster (1-based, ``-o`` order), seed, abundance in input order."""
        import pandas as pd

        rows = self.assignment_rows()
        return pd.DataFrame(rows, columns=["id", "cluster", "seed", "abundance"])

    def assignment_rows(self) -> list[tuple[str, int, str, int]]:
        """(id, cluster (1-based, ``-o`` order), seed id, abundance) of each input record, in
        input order: the rows of :meth:`to_pandas` and :meth:`write_assignments`."""
        amp = self.amplicons
        ids = list(amp.ids)
        cl = self.node_cluster.tolist()
        seeds = self.seeds.tolist()
        abundance = amp.abundance.tolist()
        order = np.argsort(amp.record, kind="stable").tolist()  # nodes in input order
        return [(ids[k], cl[k] + 1, ids[seeds[cl[k]]], abundance[k]) for k in order]

    # --- writers (swarm's formats) --------------------------------------------------------
    def write_otus(self, out) -> None:
        """swarm's ``-o``: one line per OTU, its members' headers, space separated."""
        check_output_name("otus", out, [self.amplicons.source])
        h = self.amplicons.headers
        if isinstance(h, TextLines):  # streamed a block of members at a time
            _write_pieces(out, self._otu_blocks(h))
            return
        h = list(h)
        n = len(self.members)
        # the members' headers, each followed by a space, or a newline where its OTU ends
        pieces: list[str] = [""] * (2 * n)
        pieces[0::2] = [h[k] for k in self.members.tolist()]
        seps = [" "] * n
        for end in (self.starts[1:] - 1).tolist():
            seps[end] = "\n"
        pieces[1::2] = seps
        _write(out, "".join(pieces))

    def _otu_blocks(self, headers: TextLines, block: int = 1 << 14):
        """The ``-o`` text in pieces of ``block`` members: their header lines gathered, each
        newline a space but where an OTU ends."""
        ends = np.zeros(len(self.members), dtype=bool)
        ends[self.starts[1:] - 1] = True
        for a in range(0, len(self.members), block):
            text, newlines = headers.gather(self.members[a : a + block])
            text[newlines[~ends[a : a + block]]] = ord(" ")
            yield text.tobytes()

    def write_seeds(self, out) -> None:
        """swarm's ``-w``: each OTU's seed with the OTU's mass (``>a;size=SUM;``), the OTUs
        by decreasing mass, then seed header."""
        check_output_name("seeds", out, [self.amplicons.source])
        amp = self.amplicons
        seeds = self.seeds.tolist()
        raw = [amp.raw_headers[k] for k in seeds]  # the seeds' only, not every amplicon's
        mass = self.abundances.tolist()
        order = sorted(
            range(self.n_clusters),
            key=lambda c: (-mass[c], raw[c].encode("utf-8", SURROGATES)),
        )
        lines = []
        for c in order:
            lines.append(
                f">{with_abundance(raw[c], mass[c], amp.annotation)}\n{amp.sequence(seeds[c])}\n"
            )
        _write(out, "".join(lines))

    def write_statistics(self, out) -> None:
        """swarm's ``-s``: OTU size, mass, seed id, seed abundance, singletons, generations,
        radius (tab separated, one line per OTU in ``-o`` order)."""
        check_output_name("statistics", out, [self.amplicons.source])
        amp = self.amplicons
        ab = amp.abundance[self.members]
        single = np.add.reduceat((ab == 1).astype(np.int64), self.starts[:-1]) if len(ab) else ab
        gens = self._own_stat(self.generation)
        rad = self._own_stat(self.radius)
        mass = self.abundances
        seeds = self.seeds
        ids = amp.ids
        lines = [
            f"{sz}\t{ms}\t{ids[sd]}\t{sa}\t{sg}\t{g}\t{r}\n"
            for sz, ms, sd, sa, sg, g, r in zip(
                self.sizes.tolist(),
                mass.tolist(),
                seeds.tolist(),
                amp.abundance[seeds].tolist(),
                single.tolist(),
                gens.tolist(),
                rad.tolist(),
            )
        ]
        _write(out, "".join(lines))

    def write_uclust(self, out) -> None:
        """swarm's ``-u``: per OTU a C and an S line, then an H line per member with the
        identity and CIGAR of swarm's alignment of the member to the seed."""
        check_output_name("uclust", out, [self.amplicons.source])
        amp = self.amplicons
        h = list(amp.headers)
        lengths = amp.lengths
        # swarm lists members in -o order for d = 1, in the order found for d >= 2
        use_found = self.method in ("swarm", "linkage") and (self.max_distance or 1) >= 2
        seq = self.found if use_found else self.members
        starts = self.starts
        seeds = self.seeds
        queries = np.repeat(seeds, self.sizes)
        keep = seq != queries
        diffs, alens, cigars = swarm_alignments(
            amp, queries[keep], seq[keep], max_diffs=-1, cigars=True, threads=self.threads
        )
        lines = []
        it = iter(zip(diffs.tolist(), alens.tolist(), cigars))
        seq_l = seq.tolist()
        for c, (a, b) in enumerate(zip(starts.tolist(), starts[1:].tolist())):
            sd = int(seeds[c])
            lines.append(f"C\t{c}\t{b - a}\t*\t*\t*\t*\t*\t{h[sd]}\t*\n")
            lines.append(f"S\t{c}\t{lengths[sd]}\t*\t*\t*\t*\t*\t{h[sd]}\t*\n")
            for k in seq_l[a:b]:
                if k == sd:
                    continue
                d, al, cg = next(it)
                pid = 100.0 * (al - d) / al
                lines.append(
                    f"H\t{c}\t{lengths[k]}\t{pid:.1f}\t+\t0\t0\t{cg if d > 0 else '='}\t{h[k]}\t{h[sd]}\n"
                )
        _write(out, "".join(lines))

    def write_assignments(self, out) -> None:
        """TSV with a header: id (without ``;size=``), cluster (1-based, ``-o`` order),
        seed id; one row per input record, in input order."""
        check_output_name("assignments", out, [self.amplicons.source])
        rows = self.assignment_rows()
        _write(out, "id\tcluster\tseed\n" + "".join(f"{i}\t{c}\t{s}\n" for i, c, s, _ in rows))


def _write_pieces(out, pieces) -> None:
    """:func:`_write` of a text given as pieces of bytes (UTF-8, non-UTF-8 header bytes as
    read), written as they come."""
    if hasattr(out, "write"):
        for piece in pieces:
            out.write(piece.decode("utf-8", SURROGATES))
        return
    from .._core import atomic_output

    with atomic_output(out, "wb") as f:
        for piece in pieces:
            f.write(piece)


def _write(out, text: str) -> None:
    """``text`` into a stream, or atomically into the file ``out`` as UTF-8 with the header
    bytes that were not UTF-8 given back as read (:data:`SURROGATES`)."""
    if hasattr(out, "write"):
        out.write(text)
        return
    from .._core import atomic_output

    with atomic_output(out, "wb") as f:
        f.write(text.encode("utf-8", SURROGATES))


#: the names each output may have: extension -> format (a name without an extension is taken
#: too), and what it is called in messages; the one rule of the writers below and of the CLI
OUTPUT_KINDS = {
    "otus": (
        {e: ("otus",) for e in (".txt", ".otus", ".otu", ".swarm", ".swarms", ".list", ".out")},
        "OTU list",
    ),
    "seeds": ({e: ("fasta",) for e in (".fa", ".fasta", ".fas", ".fna", ".fsa")}, "seed FASTA"),
    "statistics": (
        {e: ("tsv",) for e in (".tsv", ".txt", ".stats", ".statistics", ".out")},
        "statistics table",
    ),
    "uclust": ({e: ("uc",) for e in (".uc", ".uclust", ".tsv", ".txt", ".out")}, "uclust table"),
    "assignments": ({e: ("tsv",) for e in (".tsv", ".txt")}, "assignment table"),
}


def check_output_name(kind: str, path, inputs=()) -> None:
    """Refuse ``path`` for output ``kind`` (:data:`OUTPUT_KINDS`) before anything is written:
    an extension of another kind of file (``otus.fa`` for the OTU list), or one of
    ``inputs`` (the same file by any name: the amplicons would be replaced). ``-``, None and
    open streams pass."""
    if path is None or hasattr(path, "write") or str(path) == "-":
        return
    from .._core import output_format, refuse_overwriting_inputs

    allowed, what = OUTPUT_KINDS[kind]
    refuse_overwriting_inputs({f"the {what}": path}, list(inputs))
    output_format(path, allowed, what, default=next(iter(allowed.values()))[0])


# --- the graph ----------------------------------------------------------------------------
def _neighbour_pairs(amp: Amplicons, d: int, threads: int, backend: str):
    """(i, j, distance) of every pair within Levenshtein d, i < j, from bioaccel.neighbors."""
    if d <= 0 or len(amp) < 2:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z.astype(np.int32)
    from ..neighbors import neighbors

    nb = neighbors(amp.batch, max_distance=d, model="edit", threads=threads, backend=backend)
    i = np.asarray(nb.i, dtype=np.int64)
    j = np.asarray(nb.j, dtype=np.int64)
    dist = np.asarray(nb.distance, dtype=np.int32)
    key = i * len(amp) + j
    if len(key) > 1 and not (np.diff(key) > 0).all():  # the graph needs them by (i, j)
        o = np.argsort(key, kind="stable")
        i, j, dist = i[o], j[o], dist[o]
    return i, j, dist


def _check_digest(amp: Amplicons, digest, node, name: str) -> None:
    """Refuse a neighbour table computed on other sequences (ids match on any two files that
    `vsearch --relabel` numbered alike): its digest of the letters, in input order, must be
    these amplicons'. ``node``: each input record's amplicon."""
    from ..neighbors import sequences_digest

    again = f"compute it again: bioaccel neighbors {amp.source} -d D -o pairs.npz"
    if digest is None:
        raise ValueError(
            f"{name} records no digest of the sequences it was computed on (a table made by "
            f"hand or by an older bioaccel), so it cannot be checked against {amp.source}; " + again
        )
    b = amp.batch
    if sequences_digest(b.codes, b.offsets, CODE_LETTERS, node) != digest:
        raise ValueError(
            f"{name} was computed on other sequences than those of {amp.source} (the ids "
            "agree, the letters do not): not a table of this file; " + again
        )


def _edge_pairs(amp: Amplicons, edges, d: int):
    """(i, j, distance) of the pairs of a precomputed neighbour table of these amplicons,
    in amplicon (swarm's) order, i < j, sorted by (i, j): ``edges`` a :class:`Neighbors`,
    an ``.npz`` path or the ``.npz`` paths of every shard. The table must be of the same
    file (the same records in the same input order, ids compared), ``model="edit"``, and
    computed for a threshold of at least ``d``: pairs it was never asked for cannot be
    found in it."""
    from ..neighbors import Neighbors, merge_neighbors, read_neighbors

    if isinstance(edges, Neighbors):
        nb, name = edges, "edges"
    else:
        paths = [edges] if isinstance(edges, (str, os.PathLike)) else list(edges)
        if not paths:
            raise ValueError("edges: no neighbour table given")
        for p in paths:
            if not isinstance(p, (str, os.PathLike)):
                raise TypeError(f"edges: expected a Neighbors table or .npz paths, got {p!r}")
            if Path(p).suffix.lower() != ".npz":
                tsv = Path(p).suffix.lower() == ".tsv"
                raise ValueError(
                    f"{p}: edges need an .npz neighbour table (bioaccel neighbors -o "
                    "pairs.npz)"
                    + (
                        "; a .tsv records neither its threshold nor the amplicons without a pair"
                        if tsv
                        else ""
                    )
                )
        nb = read_neighbors(paths[0]) if len(paths) == 1 else merge_neighbors(paths)
        name = str(paths[0]) if len(paths) == 1 else f"the {len(paths)} shards of {paths[0]}"
    if nb.shard is not None:
        k, count = nb.shard
        raise ValueError(
            f"{name} holds shard {k + 1}/{count} only: give the files of all {count} shards"
        )
    if nb.model != "edit":
        raise ValueError(f"{name} holds {nb.model} distances; clustering needs model 'edit'")
    if nb.max_distance < d:
        raise ValueError(
            f"{name} holds the pairs within {nb.max_distance} edits; max_distance={d} needs "
            f"a table computed with -d {d} or more"
        )
    n = len(amp)
    if nb.n != n:
        raise ValueError(
            f"{name} is a table of {nb.n} sequences, {amp.source} has {n} amplicons: "
            "not a table of this file"
        )
    table_ids = np.asarray(nb.ids, dtype=object)[amp.record]
    # `neighbors` names a record by its header less a ;size=N annotation, and less a _N
    # suffix only with --abundance-annotation underscore: on a _N file either table fits
    own_ids = np.asarray(list(amp.ids), dtype=object)
    differ = np.flatnonzero(table_ids != own_ids)
    if len(differ) and amp.annotation == "underscore":
        own_ids = np.asarray(list(amp.raw_headers), dtype=object)
        differ = np.flatnonzero(table_ids != own_ids)
    if len(differ):
        k = int(differ[0])
        raise ValueError(
            f"{name}: sequence {int(amp.record[k]) + 1} is {table_ids[k]!r}, but record "
            f"{int(amp.record[k]) + 1} of {amp.source} is {own_ids[k]!r}: not a table of "
            "this file"
        )
    node = np.empty(n, dtype=np.int64)
    node[amp.record] = np.arange(n, dtype=np.int64)
    _check_digest(amp, nb.digest, node, name)
    # in swarm's order, sorted by (i, j); the temporaries freed as they go (tens of
    # millions of pairs at sequencing scale)
    dist = np.asarray(nb.distance, dtype=np.int32)
    a, b = node[nb.i], node[nb.j]
    del nb
    i = np.minimum(a, b)
    j = np.maximum(a, b, out=b)
    del a, b
    key = i * n
    key += j
    o = np.argsort(key, kind="stable")
    del key
    return i[o], j[o], dist[o]


def _whole_numbers(name: str, values, lowest: int) -> np.ndarray:
    """``values`` as contiguous int64, refused (naming the first bad one) unless they are
    whole numbers of at least ``lowest``: a float index or distance is not rounded."""
    a = np.asarray(values)
    if a.size and a.dtype.kind not in "iu":
        raise ValueError(
            f"{name}: expected whole numbers, got {a.dtype} values (the first: {a.flat[0]!r})"
        )
    if a.size and int(a.min()) < lowest:
        k = int(np.argmin(a))
        raise ValueError(f"{name}: {int(a.flat[k])} at pair {k}; expected {lowest} or more")
    return np.ascontiguousarray(a, dtype=np.int64)


def swarm_alignments(
    amp: Amplicons,
    queries,
    targets,
    *,
    max_diffs: int = -1,
    cigars: bool = False,
    threads: int = 0,
    edits=None,
):
    """swarm's alignment of amplicon ``queries[k]`` (swarm's query) with ``targets[k]``:
    (diffs, alignment lengths, CIGARs). ``max_diffs >= 0`` aligns in the band that holds
    every alignment of at most that many differences and reports ``max_diffs + 1`` past it.
    ``edits``: each pair's Levenshtein distance where known exactly (-1 where not), as the
    growth passes it: the band narrows, and a pair whose edit distance one gap run reaches
    is counted without the dynamic programme (the same diffs and lengths; not with
    ``cigars``, whose ties the programme breaks)."""
    native = load_native()
    q = _whole_numbers("queries", queries, 0)
    t = _whole_numbers("targets", targets, 0)
    e = np.empty(0, dtype=np.int64) if edits is None else _whole_numbers("edits", edits, -1)
    diffs, lengths, cg = native.swarm_align(
        amp.batch.codes, amp.batch.offsets, q, t, int(max_diffs), bool(cigars), threads, e
    )
    return diffs, lengths, cg


def _csr_pairs(n: int, i, j, dij, dji, keep_ij, keep_ji):
    """The CSR graph of the directed edges i -> j (count dij, where keep_ij) and j -> i
    (dji, where keep_ji) of pairs sorted by (i, j), i < j: each row's neighbours ascending
    (the edges into lower nodes, from the second half, come first), in O(edges), built in
    C++ with no buffer past the graph's own (csrc/clusters/clusters.cpp, directed_rows)."""

    def u8(mask):
        mask = np.ascontiguousarray(mask, dtype=bool)
        return mask.view(np.uint8)

    return load_native().directed_graph(
        n,
        np.ascontiguousarray(i, dtype=np.int64),
        np.ascontiguousarray(j, dtype=np.int64),
        np.ascontiguousarray(dij, dtype=np.int32),
        np.ascontiguousarray(dji, dtype=np.int32),
        u8(keep_ij),
        u8(keep_ji),
    )


def _csr(n: int, i, j, dist):
    """The symmetric CSR graph of the pairs (i, j, dist) sorted by (i, j), i < j."""
    every = np.ones(len(i), dtype=bool)
    return _csr_pairs(n, i, j, dist, dist, every, every)


#: pairs recounted at a time on the graph paths (the temporaries are a block's)
_RECOUNT_BLOCK = 1 << 20


def _graph(amp, i, j, dist, d, differences, threads, breaking):
    """The directed CSR graph of the pairs within d: u -> v with the count of u as query.

    With ``differences="swarm"`` the pairs one edit apart keep 1 (a single edit is swarm's
    optimal alignment) and the others are recounted by swarm's alignment, in each direction
    that the growth can use (with OTU breaking only towards an abundance at most the
    query's)."""
    n = len(amp)
    keep = dist <= d
    if not keep.all():  # a table of a larger threshold: its pairs within d
        i, j, dist = i[keep], j[keep], dist[keep]
    del keep
    if differences == "swarm" and d >= 2 and len(i):
        ab = amp.abundance
        m = len(i)
        dij, dji = dist.copy(), dist.copy()
        use_ij, use_ji = np.empty(m, dtype=bool), np.empty(m, dtype=bool)
        # a block of pairs at a time: the temporaries stay a block's (tens of millions of
        # pairs at sequencing scale); the pairs' distances are their exact Levenshtein
        # distances (the neighbour search verifies every pair): the recount narrows its
        # band and skips the programme where one gap run reaches them
        for start in range(0, m, _RECOUNT_BLOCK):
            at = slice(start, min(m, start + _RECOUNT_BLOCK))
            bi, bj, bd = i[at], j[at], dist[at]
            need = bd >= 2
            down = ab[bj] <= ab[bi]  # i may grow into j (OTU breaking)
            up = ab[bi] <= ab[bj]
            fwd = need & down if breaking else need
            bwd = need & up if breaking else need
            if fwd.any():
                dij[at][fwd] = swarm_alignments(
                    amp, bi[fwd], bj[fwd], max_diffs=d, threads=threads, edits=bd[fwd]
                )[0]
            if bwd.any():
                dji[at][bwd] = swarm_alignments(
                    amp, bj[bwd], bi[bwd], max_diffs=d, threads=threads, edits=bd[bwd]
                )[0]
            u_ij, u_ji = ~need | fwd, ~need | bwd
            if breaking:  # edges the growth cannot use are left out
                u_ij &= down
                u_ji &= up
            use_ij[at] = u_ij & (dij[at] <= d)
            use_ji[at] = u_ji & (dji[at] <= d)
        return _csr_pairs(n, i, j, dij, dji, use_ij, use_ji)
    return _csr(n, i, j, dist)


# --- the methods --------------------------------------------------------------------------
def _grow(amp, indptr, nbr, dist, breaking):
    native = load_native()
    order, found, starts, gen, rad, _parent = native.swarm_grow(
        indptr, nbr, dist, np.ascontiguousarray(amp.abundance, dtype=np.uint64), breaking
    )
    return order.astype(np.int64), found.astype(np.int64), starts, gen, rad


def _greedy(amp: Amplicons, ident: Fraction, threads: int, backend: str, overhangs_free=False):
    """Each node's centroid and its distance to it. ``auto``/``cpu``: searched as it goes
    (csrc/clusters/growth.cpp ``greedy_search``: the centroids within 2 edits from an index,
    the others tried only where one of them could still win; no pair list); a GPU backend or
    ``reference``: every pair within the threshold's distance listed through
    :func:`bioaccel.neighbors` with that backend, then the same rule on their graph."""
    native = load_native()
    if _searches_as_it_grows(backend):
        if amp.letters is not None:  # the reader's 2-bit letters, read in place
            return native.greedy_search_packed(
                amp.letters, ident.numerator, ident.denominator, threads, overhangs_free
            )
        return native.greedy_search(
            amp.batch.codes,
            amp.batch.offsets,
            ident.numerator,
            ident.denominator,
            threads,
            overhangs_free,
        )
    if overhangs_free:
        raise ValueError(
            f"identity_definition='shorter' is searched on the CPU (backend 'auto' or 'cpu'), "
            f"not with backend={backend!r}: the pair search lists pairs by their Levenshtein "
            "distance, which does not bound an overhang"
        )
    n = len(amp)
    lmax = int(amp.lengths.max())
    dmax = (lmax * (ident.denominator - ident.numerator)) // ident.denominator
    i, j, dist = _neighbour_pairs(amp, dmax, threads, backend)
    indptr, nbr, dd = _csr(n, i, j, dist)
    cent = native.greedy_centroids(
        indptr,
        nbr,
        dd,
        np.ascontiguousarray(amp.lengths, dtype=np.int64),
        ident.numerator,
        ident.denominator,
    )
    rad = np.zeros(n, dtype=np.int64)
    rows = np.repeat(np.arange(n), np.diff(indptr))
    hit = nbr == cent[rows]
    rad[rows[hit]] = dd[hit]
    return cent, rad


def _searches_as_it_grows(backend: str) -> bool:
    """``auto`` and ``cpu`` grow with the C++ search (no pair list); a GPU backend or
    ``reference`` lists the pairs through :func:`bioaccel.neighbors` with that backend, then
    grows on their graph (the same OTUs)."""
    from ..backends import available_backends, get_backend

    name = str(backend).lower().replace("_", "-")
    if name == "auto":
        return available_backends()["cpu"] is None
    if name == "cpu":
        get_backend("cpu", "edit_pairs")  # unavailable: BackendUnavailableError
        return True
    return False


def _grow_searching(amp, d, differences, breaking):
    """swarm's growth with each member's free neighbours searched as the growth reaches it
    (csrc/clusters/growth.cpp); the same result as :func:`_grow` on the graph of all pairs."""
    native = load_native()
    abundance = np.ascontiguousarray(amp.abundance, dtype=np.uint64)
    if amp.letters is not None:  # the reader's 2-bit letters, read in place
        grown = native.swarm_grow_search_packed(
            amp.letters, abundance, int(d), bool(breaking), differences == "swarm"
        )
    else:
        grown = native.swarm_grow_search(
            amp.batch.codes,
            amp.batch.offsets,
            abundance,
            int(d),
            bool(breaking),
            differences == "swarm",
        )
    order, found, starts, gen, rad, _parent = grown
    # the nodes come 4 bytes each (the growth's peak); widened once its index is let go
    return order.astype(np.int64), found.astype(np.int64), starts, gen, rad


def _heavy_nodes(amp, order, starts, boundary):
    """Per node: whether its swarm's mass reaches ``boundary`` (swarm -f's heavy swarms)."""
    sizes = np.diff(starts)
    mass = np.add.reduceat(amp.abundance[order].astype(np.uint64), starts[:-1])
    heavy = np.zeros(len(amp), dtype=np.uint8)
    heavy[order] = np.repeat(mass >= np.uint64(boundary), sizes)
    return heavy


def _graft_pairs(amp, order, starts, boundary, threads):
    """(heavy, light, -1): each light amplicon with the first heavy amplicon within
    GRAFT_DISTANCE edits, from a search of the light amplicons in an index of the heavy."""
    native = load_native()
    heavy = _heavy_nodes(amp, order, starts, boundary)
    if amp.letters is not None:
        best = native.nearest_in_set_packed(amp.letters, heavy, GRAFT_DISTANCE, threads)
    else:
        best = native.nearest_in_set(
            amp.batch.codes, amp.batch.offsets, heavy, GRAFT_DISTANCE, threads
        )
    light = np.flatnonzero(best >= 0)
    return best[light], light, np.full(len(light), -1, dtype=np.int32)


def _graft(amp, order, found, starts, pairs2, boundary):
    """swarm's fastidious step: light swarms (mass < boundary) attached to heavy ones."""
    n_sw = len(starts) - 1
    sizes = np.diff(starts)
    swarm_of = np.empty(len(amp), dtype=np.int64)
    swarm_of[order] = np.repeat(np.arange(n_sw), sizes)
    mass = np.add.reduceat(amp.abundance[order].astype(np.uint64), starts[:-1])
    heavy = mass >= np.uint64(boundary)
    i, j, _ = pairs2
    a = np.concatenate([i, j])
    b = np.concatenate([j, i])
    cand = heavy[swarm_of[a]] & ~heavy[swarm_of[b]]
    h, light = a[cand], b[cand]
    host = np.arange(n_sw)
    rank = np.zeros(n_sw, dtype=np.int64)
    if len(h):
        # each light amplicon's candidate: the first heavy amplicon (smallest node)
        best = np.full(len(amp), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(best, light, h)
        lights = np.flatnonzero(best != np.iinfo(np.int64).max)
        parents = best[lights]
        o = np.lexsort((lights, parents))
        parents, lights = parents[o], lights[o]
        ls = swarm_of[lights]
        _, first = np.unique(ls, return_index=True)
        first.sort()
        host[ls[first]] = swarm_of[parents[first]]
        rank[ls[first]] = np.arange(1, len(first) + 1)
        log.info("fastidious: %d light swarms grafted", len(first))
    seq = np.lexsort((rank, host))  # swarms: each host, then its grafts in attach order
    idx = np.concatenate([np.arange(starts[s], starts[s + 1]) for s in seq]) if n_sw else seq
    members = order[idx]
    found_members = found[idx]
    hosts = host[seq]
    new_start_mask = np.r_[True, hosts[1:] != hosts[:-1]] if n_sw else np.zeros(0, bool)
    otu_first_swarm = np.flatnonzero(new_start_mask)
    sw_sizes = sizes[seq]
    sw_starts = np.r_[0, np.cumsum(sw_sizes)]
    new_starts = np.r_[sw_starts[otu_first_swarm], sw_starts[-1]].astype(np.int64)
    own = sw_sizes[otu_first_swarm].astype(np.int64)
    return members, found_members, new_starts, own


def _check_int(name, value, lo, hi):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name}={value!r}: expected an integer from {lo} to {hi}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name}={value!r} is out of range: expected {lo} to {hi}")
    return int(value)


def cluster(
    seqs,
    method: str = "swarm",
    max_distance: int | None = None,
    fastidious: bool = False,
    boundary: int | None = None,
    differences: str = "edit",
    identity: float | None = None,
    identity_definition: str | None = None,
    threads: int = 0,
    backend: str = "auto",
    default_abundance: int | None = None,
    edges=None,
    abundance_annotation: str | None = None,
) -> Clustering:
    """Cluster dereplicated amplicons (swarm, single linkage or greedy centroids).

    Parameters
    ----------
    seqs : path, ``-``, bytes of FASTA, :class:`Amplicons`, or (header, sequence) pairs
        Headers carry the abundance as ``;size=N`` (see :mod:`bioaccel.clusters._amplicons`).
    method : {"swarm", "linkage", "greedy"}
    max_distance : int
        d, 1 to 255 (swarm and linkage; default 1).
    fastidious, boundary : swarm's ``-f`` and ``-b`` (d = 1 only; boundary default 3).
    differences : {"edit", "swarm"}
        Levenshtein distance, or swarm's count of differences of its optimal alignment.
    identity : float
        The greedy method's threshold, in (0, 1] (default 0.97).
    identity_definition : {"longer", "shorter"}
        (default ``"longer"``)
        greedy: ``(L - e) / L`` with L the longer length and e the Levenshtein distance
        (overhangs are edits), or with L the shorter length and e the fewest edits aligning
        the whole shorter sequence to a stretch of the longer (overhangs free, as cd-hit-est
        and vsearch's terminal gaps; CPU only, every centroid tried).
    threads, backend : ``auto``/``cpu``: the growth searches as it grows, on one thread (its
        order is sequential); ``threads`` serve the fastidious search and the greedy method.
        A GPU backend or ``reference``: the pair list comes from :func:`bioaccel.neighbors`
        with that backend and ``threads`` (and the alignments).
    default_abundance : int, optional
        The abundance of records without annotation (swarm's ``-a``); by default they are
        refused. Refused with :class:`Amplicons` (``read_amplicons`` applies it).
    edges : :class:`~bioaccel.neighbors.Neighbors`, ``.npz`` path or paths, optional
        The pairs within d, already computed (``bioaccel neighbors seqs -d D -o pairs.npz``,
        D >= ``max_distance``, on the same file; the ``.npz`` files of all its shards, as
        ``--shard k/N`` writes them, are merged): the growth runs on them instead of
        searching (swarm and linkage; the same OTUs). ``--fastidious`` still searches the
        light amplicons among the heavy ones itself.
    abundance_annotation : {"size", "underscore"}, optional
        How headers carry abundances: ``;size=N`` (vsearch, ``swarm -z``; the default), or
        a ``_N`` suffix (swarm's default; seeds are then written ``id_MASS``). With
        :class:`Amplicons` already read, only the annotation they were read with.

    Returns
    -------
    Clustering

    Examples
    --------
    >>> c = cluster([("a;size=5", "ACGTACGT"), ("b;size=2", "ACGTACGA"), ("c;size=1", "TTTTTTTT")])
    >>> c.seed_ids, c.labels.tolist()
    (['a', 'c'], [0, 0, 1])
    """
    if method not in METHODS:
        raise ValueError(f"method={method!r}: expected one of {', '.join(METHODS)}")
    if differences not in DIFFERENCES:
        raise ValueError(f"differences={differences!r}: expected one of {', '.join(DIFFERENCES)}")
    threads = check_threads(threads)
    if edges is not None:
        if method == "greedy":
            raise ValueError(
                "edges apply to method='swarm' and 'linkage' (greedy's reach depends on the "
                "lengths)"
            )
        from ..backends import get_backend

        named = str(backend).lower().replace("_", "-")
        if named != "auto" and get_backend(named, "edit_pairs").name != "cpu":
            raise ValueError(
                f"backend={backend!r} serves the pair search, and with edges there is none: "
                "leave backend='auto'"
            )
    # a setting that does not apply to the method is refused, never dropped (as the CLI does)
    if method == "greedy":
        if max_distance is not None:
            raise ValueError("max_distance does not apply to method='greedy' (it takes identity=)")
        identity = 0.97 if identity is None else identity
        identity_definition = identity_definition or "longer"
    else:
        for name, value in (("identity", identity), ("identity_definition", identity_definition)):
            if value is not None:
                raise ValueError(f"{name}= applies to method='greedy' only, not {method!r}")
        max_distance, identity_definition = (1 if max_distance is None else max_distance), "longer"
    if boundary is not None and not fastidious:
        raise ValueError("boundary= applies with fastidious=True only (as swarm's -b)")
    boundary = 3 if boundary is None else boundary
    if isinstance(identity, (str, bytes, bool)):
        raise ValueError(f"identity={identity!r}: expected a number in (0, 1]")
    if identity_definition not in IDENTITY_DEFINITIONS:
        raise ValueError(
            f"identity_definition={identity_definition!r}: expected one of "
            f"{', '.join(IDENTITY_DEFINITIONS)}"
        )
    if method == "greedy":
        if differences != "edit":
            raise ValueError(
                "differences='swarm' does not apply to method='greedy' (its identity is "
                "defined on the Levenshtein distance)"
            )
        if fastidious:
            raise ValueError("fastidious applies to method='swarm' only")
        try:
            ident = Fraction(str(identity))
        except (ValueError, TypeError):
            raise ValueError(f"identity={identity!r}: expected a number in (0, 1]") from None
        if not 0 < ident <= 1:
            raise ValueError(f"identity={identity!r} is out of range: expected (0, 1]")
        if ident.denominator > MAX_IDENTITY_DENOMINATOR:
            # (L - e) / L is compared with it exactly, in 64-bit integers
            raise ValueError(
                f"identity={identity!r}: give at most 9 decimal places (it is compared "
                "exactly with (L - edits) / L)"
            )
        d = None
    else:
        d = _check_int("max_distance", max_distance, 1, MAX_DIFFERENCES)
        if fastidious:
            if method != "swarm":
                raise ValueError("fastidious applies to method='swarm' only")
            if d != 1:
                raise ValueError(f"fastidious needs max_distance=1 (as swarm's -f), got {d}")
            boundary = _check_int("boundary", boundary, 1, 2**63 - 1)
    if isinstance(seqs, Amplicons):
        # how the records were read is settled: a reading option that differs is refused
        if default_abundance is not None:
            raise ValueError(
                "default_abundance applies when reading: give it to read_amplicons(), not "
                "with Amplicons already read"
            )
        if abundance_annotation not in (None, seqs.annotation):
            raise ValueError(
                f"abundance_annotation={abundance_annotation!r}: these Amplicons were read "
                f"with {seqs.annotation!r}; give it to read_amplicons()"
            )
        amp = seqs
    elif isinstance(seqs, (list, tuple, dict)):
        amp = amplicons_from_records(
            seqs,
            default_abundance=default_abundance,
            differences=differences,
            abundance_annotation=abundance_annotation or "size",
        )
    else:
        amp = read_amplicons(
            seqs,
            default_abundance=default_abundance,
            differences=differences,
            abundance_annotation=abundance_annotation or "size",
        )
    if (
        differences == "swarm"
        and amp.letters is None  # 2-bit letters are A C G T
        and amp.batch.codes.size
        and int(amp.batch.codes.max()) > 3
    ):
        raise ValueError(
            f"{amp.source}: IUPAC codes are not swarm's alphabet; use differences='edit'"
        )
    n = len(amp)
    if method == "greedy":
        cent, rad = _greedy(amp, ident, threads, backend, identity_definition == "shorter")
        # OTUs in order of their centroids; members: the centroid, then the others in order
        is_c = cent == np.arange(n)
        key = np.where(is_c, -1, np.arange(n))
        members = np.lexsort((key, cent))
        cents = cent[members]
        starts = np.r_[np.flatnonzero(np.r_[True, cents[1:] != cents[:-1]]), n].astype(np.int64)
        gen = (~is_c).astype(np.int64)
        return Clustering(
            amp,
            method,
            None,
            differences,
            False,
            None,
            float(identity),
            members,
            starts,
            members.copy(),
            gen,
            rad,
            np.diff(starts),
            threads,
            identity_definition,
        )
    breaking = method == "swarm"
    if edges is not None:
        i, j, dist = _edge_pairs(amp, edges, d)
        indptr, nbr, dd = _graph(amp, i, j, dist, d, differences, threads, breaking)
        order, found, starts, gen, rad = _grow(amp, indptr, nbr, dd, breaking=breaking)
        own = np.diff(starts)
        if fastidious:
            pairs = _graft_pairs(amp, order, starts, boundary, threads)
            order, found, starts, own = _graft(amp, order, found, starts, pairs, boundary)
    elif _searches_as_it_grows(backend):
        order, found, starts, gen, rad = _grow_searching(amp, d, differences, breaking)
        own = np.diff(starts)
        if fastidious:
            pairs = _graft_pairs(amp, order, starts, boundary, threads)
            order, found, starts, own = _graft(amp, order, found, starts, pairs, boundary)
    else:
        reach = GRAFT_DISTANCE if fastidious else d
        i, j, dist = _neighbour_pairs(amp, reach, threads, backend)
        indptr, nbr, dd = _graph(amp, i, j, dist, d, differences, threads, breaking)
        order, found, starts, gen, rad = _grow(amp, indptr, nbr, dd, breaking=breaking)
        own = np.diff(starts)
        if fastidious:
            order, found, starts, own = _graft(amp, order, found, starts, (i, j, dist), boundary)
    return Clustering(
        amp,
        method,
        d,
        differences,
        bool(fastidious),
        boundary if fastidious else None,
        None,
        order,
        starts,
        found,
        gen,
        rad,
        own,
        threads,
    )
