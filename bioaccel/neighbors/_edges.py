"""The edge table of :func:`bioaccel.neighbors.neighbors`: :class:`Neighbors`, its files
(``.tsv``, ``.npz``), :func:`read_neighbors` and :func:`merge_neighbors`."""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._core import NEIGHBOR_TABLE
from ..errors import DuplicateIdError, MatrixFormatError

#: ``;size=N`` (swarm, vsearch) and ``;size=N;`` annotations, removed from the ids
_SIZE = re.compile(r";size=\d+(;|$)")


_NPZ_VERSION = 1


def strip_size(name: str) -> str:
    """``name`` without its abundance annotation: ``a;size=12`` and ``a;size=12;`` -> ``a``;
    ``a;size=3;sample=x`` -> ``a;sample=x``.

    >>> strip_size("u1;size=12;"), strip_size("u2;size=3;sample=x"), strip_size("u3")
    ('u1', 'u2;sample=x', 'u3')
    """
    return _SIZE.sub(lambda m: ";" if m.end() < len(m.string) else "", name, count=1)


#: swarm's default abundance annotation: a header ending in ``_N`` (N > 0), id before it
_UNDERSCORE = re.compile(r"^(.+)_0*([1-9][0-9]*)$")
ABUNDANCE_ANNOTATIONS = ("size", "underscore")


def strip_underscore(ids, source: str | None = None) -> list[str]:
    """The ids without swarm's default ``_N`` annotation (``amp_12`` -> ``amp``, ``x_1_7`` ->
    ``x_1``); a name without one (or with ``_0``) is a ValueError naming the record: the
    caller said the file carries them, so a missing one is a mistake, not a plain id."""
    out = []
    for k, name in enumerate(ids):
        m = _UNDERSCORE.match(str(name))
        if m is None:
            where = f"{source}: " if source else ""
            raise ValueError(
                f"{where}record {k + 1} {str(name)!r} does not end in an abundance _N (N >= 1), "
                "as abundance_annotation='underscore' (swarm's default headers) expects"
            )
        out.append(m.group(1))
    return out


def display_ids(ids, source: str | None = None, annotation: str = "size") -> list[str]:
    """The ids as the edge table names them (annotations removed: ``;size=N``, or with
    ``annotation="underscore"`` a trailing ``_N``); two records that become one name are a
    :class:`DuplicateIdError` naming both."""
    if annotation not in ABUNDANCE_ANNOTATIONS:
        raise ValueError(
            f"abundance_annotation={annotation!r}: expected one of {list(ABUNDANCE_ANNOTATIONS)}"
        )
    out = None
    if annotation == "underscore":
        out = strip_underscore(ids, source)
    elif len(ids) > 1000:  # in bulk, in C++, when every name is plain ASCII without newlines
        blob = "\n".join(str(x) for x in ids)
        if blob.isascii() and blob.count("\n") == len(ids) - 1:
            from .._core import load_native

            out = load_native().strip_size_lines(blob.encode()).decode().split("\n")
    if out is None:
        out = [strip_size(str(x)) for x in ids]
    if len(set(out)) == len(out):
        return out
    seen: dict[str, int] = {}
    for k, name in enumerate(out):
        if name in seen:
            where = f"{source}: " if source else ""
            raise DuplicateIdError(
                f"{where}records {ids[seen[name]]!r} (record {seen[name] + 1}) and {ids[k]!r} "
                f"(record {k + 1}) are both {name!r} without their abundance annotation; "
                "dereplicate the sequences first (e.g. vsearch --derep_fulllength)"
            )
        seen[name] = k
    return out


@dataclass(eq=False)
class Neighbors:
    """Every pair of sequences within a threshold: an edge table, one row per pair.

    Attributes
    ----------
    i, j : numpy.ndarray of int64
        Indices into the input order, ``i < j``, sorted by ``(i, j)``.
    distance : numpy.ndarray
        int32 for ``model="edit"``, float64 for ``"mash"`` / ``"jaccard"``.
    ids : list of str
        The ids of all ``n`` input sequences (``;size=N`` annotations removed).
    model : str
    max_distance : int or float
        The threshold the pairs were found for (``distance <= max_distance``).
    shard : tuple of int or None
        ``(k, N)`` (0-based k) when this table holds one shard's pairs.

    Examples
    --------
    >>> from bioaccel.neighbors import neighbors
    >>> nb = neighbors(["ACGT", "ACGA", "TTTT"], max_distance=1)
    >>> len(nb), nb.i.tolist(), nb.j.tolist(), nb.distance.tolist()
    (1, [0], [1], [1])
    """

    i: np.ndarray
    j: np.ndarray
    distance: np.ndarray
    ids: list[str]
    model: str = "edit"
    max_distance: float = 0
    shard: tuple[int, int] | None = None
    #: pairs the filter proposed before verification (0 when not counted)
    candidates: int = field(default=0, repr=False)
    #: :func:`sequences_digest` of the sequences the pairs were found in (edit model; None
    #: for a table made by hand, read from a .tsv, or written by an older bioaccel): what
    #: ties the table to its file when clustering reuses it
    digest: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.i = np.ascontiguousarray(self.i, dtype=np.int64)
        self.j = np.ascontiguousarray(self.j, dtype=np.int64)
        dtype = np.int32 if self.model == "edit" else np.float64
        self.distance = np.ascontiguousarray(self.distance, dtype=dtype)
        if not (len(self.i) == len(self.j) == len(self.distance)):
            raise ValueError("i, j and distance must have one entry per pair")

    @property
    def n(self) -> int:
        """The number of sequences (not of pairs: that is ``len(nb)``)."""
        return len(self.ids)

    def __len__(self) -> int:
        return len(self.i)

    def __repr__(self) -> str:
        part = f", shard {self.shard[0] + 1}/{self.shard[1]}" if self.shard else ""
        return (
            f"<Neighbors: {len(self)} pairs of {self.n} sequences within "
            f"{self.max_distance} ({self.model}{part})>"
        )

    def to_scipy(self, format: str = "coo"):
        """The n x n sparse matrix (upper triangle: entry (i, j), i < j) of the distances,
        ``"coo"`` or ``"csr"``. Distances of 0 (identical sequences) are stored entries,
        not absent ones: ``.nnz == len(self)``."""
        from scipy import sparse

        m = sparse.coo_matrix((self.distance, (self.i, self.j)), shape=(self.n, self.n))
        if format == "coo":
            return m
        if format == "csr":
            return m.tocsr()
        raise ValueError(f"format must be 'coo' or 'csr', got {format!r}")

    def to_pandas(self):
        """A DataFrame with columns id1, id2, distance (one row per pair)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "Neighbors.to_pandas needs pandas (pip install pandas); the arrays i, j, "
                "distance and ids hold the same table"
            ) from None
        names = np.asarray(self.ids, dtype=object)
        return pd.DataFrame({"id1": names[self.i], "id2": names[self.j], "distance": self.distance})

    def write(self, path: str | os.PathLike, threads: int = 0) -> None:
        """Write ``.tsv`` (``id1<TAB>id2<TAB>distance``, one line per pair, in (i, j)
        order, no header) or ``.npz`` (the COO arrays, the ids and the threshold),
        atomically: a failed write leaves nothing at ``path``."""
        from .._core import atomic_output, output_format

        fmt = output_format(path, NEIGHBOR_TABLE, "neighbour table")
        if fmt == "npz":
            with atomic_output(path, "wb") as f:
                np.savez(
                    f,
                    version=np.int64(_NPZ_VERSION),
                    i=self.i,
                    j=self.j,
                    distance=self.distance,
                    ids=np.asarray(self.ids, dtype=np.str_),
                    model=np.str_(self.model),
                    max_distance=np.float64(self.max_distance),
                    shard=np.asarray(self.shard or (0, 1), dtype=np.int64),
                    **({"sequences_digest": np.str_(self.digest)} if self.digest else {}),
                )
            return
        with atomic_output(path, "wb") as f:
            write_tsv(self, f, threads)


def sequences_digest(codes, offsets, symbols: str, order=None) -> str:
    """A 128-bit BLAKE2b digest (hex) of sequences as letters: their number and lengths, then
    their letters (``symbols[code]``, upper case), in input order. ``order``: the stored
    index of each input record, when the sequences are stored in another order (amplicons
    in swarm's). Two readers that agree on the letters agree on the digest, whatever codes
    they store."""
    lut = np.frombuffer(str(symbols).upper().encode("ascii"), dtype=np.uint8)
    codes = np.asarray(codes)
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    n = len(lengths)
    if order is not None:
        order = np.asarray(order, dtype=np.int64)
        lengths = lengths[order]
    h = hashlib.blake2b(digest_size=16)
    h.update(np.int64(n).astype("<i8").tobytes())
    h.update(lengths.astype("<i8").tobytes())
    step = 1 << 22  # letters a piece: the lookups' temporaries stay small
    if order is None:
        for a in range(0, int(offsets[-1]) if n else 0, step):
            h.update(lut[codes[a : a + step]].tobytes())
        return h.hexdigest()
    per = max(1, step // max(1, int(lengths.mean()) if n else 1))  # records a piece
    for a in range(0, n, per):
        lens = lengths[a : a + per]
        starts = offsets[order[a : a + per]]
        shift = starts - np.concatenate(([0], np.cumsum(lens)[:-1]))
        index = np.repeat(shift, lens) + np.arange(int(lens.sum()), dtype=np.int64)
        h.update(lut[codes[index]].tobytes())
    return h.hexdigest()


def write_tsv(nb: Neighbors, f, threads: int = 0, chunk: int = 1 << 20) -> None:
    """The TSV lines of ``nb`` into the binary stream ``f``, in chunks (the C++ formatter)."""
    from .._core import load_native

    native = load_native()
    names = [x.encode() for x in nb.ids]
    blob = b"".join(names)
    offsets = np.zeros(len(names) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in names], out=offsets[1:])
    ids = np.frombuffer(blob, dtype=np.uint8) if blob else np.zeros(0, np.uint8)
    for s in range(0, len(nb), chunk):
        e = min(len(nb), s + chunk)
        f.write(
            native.format_neighbor_lines(
                ids,
                offsets,
                nb.i[s:e],
                nb.j[s:e],
                nb.distance[s:e].astype(np.float64),
                nb.model == "edit",
                threads,
            )
        )


def read_neighbors(path: str | os.PathLike) -> Neighbors:
    """Read a table :meth:`Neighbors.write` wrote.

    ``.npz`` gives back everything (the ids of sequences without a pair too). A ``.tsv``
    names only sequences in some pair: its ids are those, in order of first appearance
    (each pair then put as ``i < j``, sorted by ``(i, j)``), and ``model`` is ``"edit"``
    when every distance is an integer.

    Raises
    ------
    MatrixFormatError
        A line that is not ``id1<TAB>id2<TAB>distance`` (named by line number), or an
        ``.npz`` file of another kind.
    """
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(2, f"{path}: no such file", str(path))
    if path.suffix.lower() == ".npz":
        try:
            z = np.load(path, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise MatrixFormatError(f"{path}: not a neighbour table (.npz): {exc}") from None
        with z:
            need = {"i", "j", "distance", "ids", "model", "max_distance"}
            if not need <= set(z.files):
                raise MatrixFormatError(
                    f"{path}: not a neighbour table (.npz): missing {sorted(need - set(z.files))}"
                )
            shard = tuple(int(x) for x in z["shard"]) if "shard" in z.files else (0, 1)
            model = str(z["model"])
            maxd = float(z["max_distance"])
            digest = str(z["sequences_digest"]) if "sequences_digest" in z.files else None
            return Neighbors(
                z["i"],
                z["j"],
                z["distance"],
                [str(x) for x in z["ids"]],
                model,
                int(maxd) if model == "edit" else maxd,
                shard if shard != (0, 1) else None,
                digest=digest,
            )
    a_list, b_list, d_list = [], [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                raise MatrixFormatError(
                    f"{path}: line {number} has {len(parts)} fields; expected "
                    "id1<TAB>id2<TAB>distance"
                )
            a_list.append(parts[0])
            b_list.append(parts[1])
            d_list.append(parts[2])
    index: dict[str, int] = {}
    for a, b in zip(a_list, b_list):
        index.setdefault(a, len(index))
        index.setdefault(b, len(index))
    try:
        values = np.array(d_list, dtype=np.float64)
    except ValueError:
        bad = next(k for k, x in enumerate(d_list) if not _is_number(x))
        raise MatrixFormatError(
            f"{path}: line {bad + 1}: distance {d_list[bad]!r} is not a number"
        ) from None
    edit = all(x.lstrip("-").isdigit() for x in d_list)
    a = np.array([index[x] for x in a_list], dtype=np.int64)
    b = np.array([index[x] for x in b_list], dtype=np.int64)
    # ids are numbered in order of first appearance, so a line's second id may come first:
    # each pair as (i < j), sorted by (i, j), as every table is
    i, j = np.minimum(a, b), np.maximum(a, b)
    order = np.lexsort((j, i))
    i, j, values = i[order], j[order], values[order]
    return Neighbors(
        i,
        j,
        values,
        list(index),
        "edit" if edit else "mash",
        (int(values.max()) if edit else float(values.max())) if len(values) else 0,
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def merge_neighbors(paths, output: str | os.PathLike | None = None):
    """The shards' tables as one: ``.tsv`` shards are concatenated in the order given (shard
    1/N first: shard k holds the pairs whose first index lies in block k of the input, so
    this is the one-process order and the bytes are the same); ``.npz`` shards are checked
    (same ids, threshold and shard count, every shard once) and joined in shard order.

    ``paths`` may instead be the shards' :class:`Neighbors` tables themselves (computed in
    this process, ``neighbors(..., shard=(k, N))``), checked as ``.npz`` shards are. The
    same file given twice is refused (a ``.tsv`` shard holds nothing else to check).

    Returns the merged :class:`Neighbors` (``.npz`` input or tables) or None (``.tsv``
    input, streamed to ``output``). ``output``: where to write (``.tsv`` or ``.npz``); a ``.tsv`` output of
    ``.npz`` shards is written from the merged table.
    """
    from .._core import atomic_output, output_format

    items = list(paths)
    if not items:
        raise ValueError("merge_neighbors needs at least one shard")
    if all(isinstance(x, Neighbors) for x in items):  # shards computed in this process
        return _merge_tables(items, [f"shard table {k + 1}" for k in range(len(items))], output)
    if any(isinstance(x, Neighbors) for x in items):
        raise TypeError(
            "merge_neighbors: give every shard as a Neighbors table or every one as a file"
        )
    for x in items:
        if not isinstance(x, (str, os.PathLike)):
            raise TypeError(f"merge_neighbors: expected shard files or Neighbors tables, got {x!r}")
    paths = [Path(p) for p in items]
    for p in paths:
        if not p.is_file():
            raise FileNotFoundError(2, "no such file", str(p))
    for a in range(len(paths)):
        for b in range(a):
            if os.path.samefile(paths[a], paths[b]):
                raise ValueError(
                    f"{paths[b]} and {paths[a]} are the same file: give each shard once"
                )
    kinds = {p.suffix.lower() for p in paths}
    if not kinds <= set(NEIGHBOR_TABLE) or len(kinds) != 1:
        raise ValueError(
            "shards must all be .tsv or all be .npz files, got "
            + ", ".join(sorted(p.name for p in paths))
        )
    if kinds == {".tsv"}:
        if output is None:
            raise ValueError("merging .tsv shards needs an output path")
        if output_format(output, NEIGHBOR_TABLE, "neighbour table") != "tsv":
            raise ValueError(f"{output}: .tsv shards merge into a .tsv file")
        with atomic_output(output, "wb") as out:
            for p in paths:
                with open(p, "rb") as f:
                    while True:
                        block = f.read(1 << 22)
                        if not block:
                            break
                        out.write(block)
        return None
    return _merge_tables([read_neighbors(p) for p in paths], paths, output)


def _merge_tables(tables: list, paths: list, output) -> Neighbors:
    """The shards' tables (``paths``: how messages name them) checked and joined in shard
    order (see :func:`merge_neighbors`)."""
    first = tables[0]
    count = first.shard[1] if first.shard else 1
    seen = {}
    for p, t in zip(paths, tables):
        if (
            t.ids != first.ids
            or t.model != first.model
            or t.max_distance != first.max_distance
            or t.digest != first.digest
        ):
            raise ValueError(
                f"{p} is not a shard of the same run as {paths[0]} (ids, sequences, model or "
                "threshold differ)"
            )
        k, c = t.shard or (0, 1)
        if c != count:
            raise ValueError(f"{p} is shard {k + 1}/{c}, but {paths[0]} is one of {count}")
        if k in seen:
            raise ValueError(f"{p} and {seen[k]} are both shard {k + 1}/{count}")
        seen[k] = p
    if len(seen) != count:
        missing = sorted(set(range(count)) - set(seen))
        raise ValueError(f"shards {[m + 1 for m in missing]} of {count} are missing")
    order = sorted(range(len(tables)), key=lambda x: (tables[x].shard or (0, 1))[0])
    # one output buffer filled shard by shard, each shard let go once copied: the merge
    # holds the pairs about once, not twice (tens of millions of pairs at scale)
    ids, model, max_distance, digest = first.ids, first.model, first.max_distance, first.digest
    candidates = sum(t.candidates for t in tables)
    total = sum(len(t.i) for t in tables)
    i = np.empty(total, dtype=first.i.dtype)
    j = np.empty(total, dtype=first.j.dtype)
    dist = np.empty(total, dtype=first.distance.dtype)
    del first, t  # the checks' references to the first and last tables
    at = 0
    for x in order:
        part, tables[x] = tables[x], None
        k = len(part.i)
        i[at : at + k], j[at : at + k], dist[at : at + k] = part.i, part.j, part.distance
        at += k
        del part
    merged = Neighbors(i, j, dist, ids, model, max_distance, None, candidates, digest)
    if output is not None:
        merged.write(output)
    return merged
