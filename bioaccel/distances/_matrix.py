"""``DistanceMatrix``: labelled square matrix of pairwise distances, and its file formats."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import numpy as np

from ..errors import MatrixFormatError
from ..sequences._read import atomic_output
from .._core.outputs import MATRIX, output_format, without_negative_zero
from ..sequences._batch import check_unique_ids

#: formats of :meth:`DistanceMatrix.write` / :meth:`DistanceMatrix.read`
MATRIX_FORMATS = ("phylip", "phylip-lower", "tsv", "npy", "npz", "cdist")

#: The binary condensed format (``.cdist``), read by the R package (``read_bioaccel_dist``):
#: 8 bytes ``BACDIST1``; uint32 bytes per value (8: float64, 4: float32); uint32 0;
#: uint64 n; uint64 byte length L of the labels; L bytes of UTF-8 labels, each ending in
#: "\n"; then n (n - 1) / 2 little-endian values, the upper triangle row by row (R's
#: ``dist`` order).
CDIST_MAGIC = b"BACDIST1"

#: Symmetry tolerance of every distance matrix (DistanceMatrix, nj, upgma, every reader):
#: d[i, j] and d[j, i] agree when equal (NaN with NaN, Inf with Inf) or when
#: ``|d[i, j] - d[j, i]| <= SYMMETRY_RTOL * max(|d[i, j]|, |d[j, i]|)`` (rounding). The R
#: package's write_bioaccel_dist applies the same rule.
SYMMETRY_RTOL = 1e-9


def check_symmetric(data: np.ndarray, ids) -> None:
    """Raise :class:`MatrixFormatError` naming the first pair (row order) whose two entries
    disagree beyond :data:`SYMMETRY_RTOL`. Works in square tiles of the upper triangle
    against their mirror tiles: no n x n temporary, cache-friendly."""
    n = data.shape[0]
    step = 256
    bad = None
    with np.errstate(invalid="ignore", over="ignore"):
        for r in range(0, n, step):
            for c in range(r, n, step):
                a, b = data[r:r + step, c:c + step], data[c:c + step, r:r + step].T
                if np.array_equal(a, b):
                    continue
                ok = (a == b) | (np.isnan(a) & np.isnan(b)) | \
                    (np.abs(a - b) <= SYMMETRY_RTOL * np.maximum(np.abs(a), np.abs(b)))
                if not ok.all():
                    i, j = np.argwhere(~ok)[0]
                    i, j = min(r + i, c + j), max(r + i, c + j)
                    bad = (i, j) if bad is None or (i, j) < bad else bad
            if bad is not None:
                i, j = bad
                raise MatrixFormatError(
                    f"matrix is not symmetric: {ids[i]!r}/{ids[j]!r} = {float(data[i, j])!r} but "
                    f"{ids[j]!r}/{ids[i]!r} = {float(data[j, i])!r} (distances must agree to a "
                    f"relative {SYMMETRY_RTOL:g})")


class DistanceMatrix:
    """Square, symmetric float64 distances with unique labels.

    Symmetric up to :data:`SYMMETRY_RTOL` (rounding); anything else is refused with
    :class:`~bioaccel.errors.MatrixFormatError` naming the pair.

    Parameters
    ----------
    data : array-like, shape (n, n)
    ids : sequence of str

    Examples
    --------
    >>> dm = DistanceMatrix([[0, 1.5], [1.5, 0]], ["a", "b"])
    >>> dm.condensed().tolist()
    [1.5]
    """

    def __init__(self, data, ids):
        data = np.asarray(data, dtype=np.float64)
        ids = [str(i) for i in ids]
        if data.ndim != 2 or data.shape[0] != data.shape[1]:
            raise ValueError(f"distance matrix must be square, got shape {data.shape}")
        if data.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids for a {data.shape[0]} x {data.shape[0]} matrix")
        check_unique_ids(ids)
        check_symmetric(data, ids)
        self.data = data
        self.ids = ids

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"<DistanceMatrix {len(self)} x {len(self)}>"

    def __eq__(self, other) -> bool:
        if not isinstance(other, DistanceMatrix):
            return NotImplemented
        return self.ids == other.ids and np.array_equal(self.data, other.data, equal_nan=True)

    @property
    def shape(self) -> tuple[int, int]:
        return self.data.shape

    def __array__(self, dtype=None, copy=None):
        """``np.asarray(dm)``: the (n, n) data (a copy only when asked or for another dtype)."""
        if copy:
            return np.array(self.data, dtype=dtype)
        return self.data if dtype is None else self.data.astype(dtype)

    def __getitem__(self, key) -> float:
        """``dm[i, j]``: one distance, each of ``i`` and ``j`` an index (negative counts
        from the end) or an id.

        >>> dm = DistanceMatrix([[0, 1.5], [1.5, 0]], ["a", "b"])
        >>> dm[0, 1], dm["a", "b"], dm["b", 0], dm[-1, 0]
        (1.5, 1.5, 1.5, 1.5)
        """
        if not (isinstance(key, tuple) and len(key) == 2):
            raise TypeError(f"index a DistanceMatrix by a pair: dm[i, j] or dm[id_i, id_j], not {key!r}")
        i, j = (self._position(k) for k in key)
        return float(self.data[i, j])

    def _position(self, key) -> int:
        n = len(self)
        if isinstance(key, str):
            if not hasattr(self, "_index"):
                self._index = {name: k for k, name in enumerate(self.ids)}
            if key not in self._index:
                raise KeyError(f"no id {key!r} in this {n} x {n} distance matrix")
            return self._index[key]
        if isinstance(key, (bool, np.bool_)) or not isinstance(key, (int, np.integer)):
            raise TypeError(f"a DistanceMatrix index is an int or an id, not {type(key).__name__}")
        if not -n <= key < n:
            raise IndexError(f"index {key} outside a {n} x {n} distance matrix")
        return int(key) % n

    def condensed(self) -> np.ndarray:
        """Upper triangle row by row: SciPy's ``squareform`` order, and R's ``dist`` order."""
        i, j = np.triu_indices(len(self), k=1)
        return self.data[i, j]

    @classmethod
    def from_condensed(cls, values, ids) -> DistanceMatrix:
        values = np.asarray(values, dtype=np.float64)
        n = len(ids)
        if values.shape != (n * (n - 1) // 2,):
            raise ValueError(f"{values.size} condensed values do not fit {n} ids")
        data = np.zeros((n, n))
        i, j = np.triu_indices(n, k=1)
        data[i, j] = values
        data[j, i] = values
        return cls(data, ids)

    def to_skbio(self):
        """A ``skbio.DistanceMatrix`` (needs scikit-bio; NaN/Inf are rejected by it)."""
        from skbio import DistanceMatrix as SkbioDistanceMatrix
        return SkbioDistanceMatrix(self.data, self.ids)

    # -- writing ---------------------------------------------------------------
    def write(self, path: str | os.PathLike, format: str | None = None) -> None:
        """Write atomically as ``phylip`` (square), ``phylip-lower``, ``tsv``, ``npy``, ``npz``
        or ``cdist``: the format of the extension (:data:`bioaccel._core.outputs.MATRIX`; another
        extension is refused), ``format`` when the name has none, else PHYLIP.

        PHYLIP keeps full names (no 10-character cut); a name and its values are separated
        by whitespace, so a reader takes the last n (or i) fields of a row as values.
        ``npy`` holds the matrix alone and writes the ids to ``PATH.ids.txt`` beside it.
        """
        path = Path(path)
        fmt = output_format(path, MATRIX, "distance matrix", format, default="phylip")
        data = without_negative_zero(self.data)
        if fmt == "cdist":
            labels = "".join(i + "\n" for i in self.ids).encode()
            with atomic_output(path, "wb") as f:
                f.write(CDIST_MAGIC + struct.pack("<IIQQ", 8, 0, len(self), len(labels)) + labels)
                f.write(without_negative_zero(self.condensed()).astype("<f8").tobytes())
            return
        if fmt in ("npy", "npz"):
            with atomic_output(path, "wb") as f:
                if fmt == "npy":
                    np.save(f, data)
                else:
                    np.savez(f, data=data, ids=np.array(self.ids, dtype=str))
            if fmt == "npy":
                with atomic_output(Path(str(path) + ".ids.txt")) as f:
                    f.write("".join(i + "\n" for i in self.ids))
            return
        with atomic_output(path) as f:
            # repr of a Python float: the shortest text that reads back to the same double
            if fmt == "tsv":
                f.write("\t" + "\t".join(self.ids) + "\n")
                for name, row in zip(self.ids, data):
                    f.write(name + "\t" + "\t".join(map(repr, row.tolist())) + "\n")
                return
            f.write(f"{len(self)}\n")
            for k, (name, row) in enumerate(zip(self.ids, data)):
                values = row[:k] if fmt == "phylip-lower" else row
                f.write(name + ("  " + " ".join(map(repr, values.tolist())) if len(values) else "") + "\n")

    # -- reading ---------------------------------------------------------------
    @classmethod
    def read(cls, path: str | os.PathLike, format: str | None = None) -> DistanceMatrix:
        """Read a matrix written by :meth:`write` (PHYLIP square or lower, TSV, npy, npz).

        Raises
        ------
        MatrixFormatError
            Names the file, line and field that could not be read.
        """
        path = Path(path)
        fmt = (format or _format_from_suffix(path, sniff=True)).lower()
        if not path.exists():
            raise MatrixFormatError(f"{path}: no such file")
        try:
            return cls._read(path, fmt)
        except MatrixFormatError as exc:
            if str(exc).startswith(str(path)):
                raise
            raise MatrixFormatError(f"{path}: {exc}") from None

    @classmethod
    def _read(cls, path: Path, fmt: str) -> DistanceMatrix:
        if fmt == "cdist":
            return _read_cdist(path)
        if fmt in ("npz", "npy"):
            import zipfile
            try:
                loaded = np.load(path, allow_pickle=False)
            except (OSError, ValueError, EOFError, zipfile.BadZipFile):
                # NumPy's own words ("pickled data", "allow_pickle") would mislead here
                raise MatrixFormatError(f"{path}: not a NumPy .{fmt} distance matrix") from None
        if fmt == "npz":
            with loaded as z:
                if not {"data", "ids"} <= set(z.files):
                    raise MatrixFormatError(
                        f"{path}: not a distance matrix .npz (it holds {sorted(z.files)}, not "
                        "'data' and 'ids')")
                return cls(z["data"], [str(i) for i in z["ids"]])
        if fmt == "npy":
            data = loaded
            side = Path(str(path) + ".ids.txt")
            ids = side.read_text().splitlines() if side.exists() else [str(i) for i in range(len(data))]
            return cls(data, ids)
        lines = [ln for ln in path.read_text().splitlines() if ln.strip()]
        if not lines:
            raise MatrixFormatError(f"{path}: file is empty; expected a distance matrix")
        if fmt == "tsv":
            return _read_tsv(path, lines)
        return _read_phylip(path, lines)


def _format_from_suffix(path: Path, sniff: bool = False) -> str:
    suffix = path.suffix.lower()
    by_suffix = {".npy": "npy", ".npz": "npz", ".tsv": "tsv", ".cdist": "cdist",
                 ".phy": "phylip", ".phylip": "phylip", ".dist": "phylip", ".mat": "phylip"}
    if suffix in by_suffix:
        return by_suffix[suffix]
    if sniff and path.exists():
        with open(path, "rb") as f:
            head = f.read(64)
        if head.startswith(b"\x93NUMPY"):
            return "npy"
        if head.startswith(CDIST_MAGIC):
            return "cdist"
        if head.startswith(b"PK"):
            return "npz"
        if head.startswith(b"\t"):
            return "tsv"
    return "phylip"


def _read_cdist(path: Path) -> DistanceMatrix:
    raw = path.read_bytes()
    head = 8 + struct.calcsize("<IIQQ")
    if len(raw) < head or not raw.startswith(CDIST_MAGIC):
        raise MatrixFormatError(f"{path}: not a bioaccel .cdist file (no {CDIST_MAGIC!r} header)")
    width, _, n, nbytes = struct.unpack("<IIQQ", raw[8:head])
    if width not in (4, 8):
        raise MatrixFormatError(f"{path}: {width} bytes per value; expected 4 or 8")
    labels = raw[head:head + nbytes].decode("utf-8").split("\n")[:-1]
    if len(labels) != n:
        raise MatrixFormatError(f"{path}: header says {n} labels, found {len(labels)}")
    values = np.frombuffer(raw, dtype="<f8" if width == 8 else "<f4", offset=head + nbytes)
    if values.size != n * (n - 1) // 2:
        raise MatrixFormatError(f"{path}: {values.size} values for {n} labels; expected "
                                f"{n * (n - 1) // 2} (truncated file?)")
    return DistanceMatrix.from_condensed(values.astype(np.float64), labels)


def _parse_float(path: Path, lineno: int, field: str) -> float:
    try:
        return float(field)
    except ValueError:
        raise MatrixFormatError(
            f"{path}, line {lineno}: value {field!r} is not a number"
        ) from None


def _trailing_numbers(fields: list[str]) -> int:
    """How many fields at the end of a row parse as numbers (a name may hold spaces)."""
    count = 0
    for f in reversed(fields[1:]):
        try:
            float(f)
        except ValueError:
            break
        count += 1
    return count


def _read_phylip(path: Path, lines: list[str]) -> DistanceMatrix:
    head = lines[0].split()
    if len(head) != 1 or not head[0].isdigit():
        raise MatrixFormatError(
            f"{path}, line 1: expected the number of taxa, got {lines[0][:40]!r}"
        )
    n = int(head[0])
    if len(lines) - 1 != n:
        raise MatrixFormatError(f"{path}: header says {n} taxa, found {len(lines) - 1} rows")
    first = _trailing_numbers(lines[1].split()) if n else 0
    square = first >= n if n else True
    if not square and first:
        # a lower-triangular first row holds a name only (numbers there end the name), but
        # a full row further down (n values, 0 on the diagonal) says the rows are square
        # and this one is short
        for k, line in enumerate(lines[2:], start=1):
            fields = line.split()
            if _trailing_numbers(fields) >= n and float(fields[len(fields) - n + k]) == 0.0:
                raise MatrixFormatError(
                    f"{path}, line 2: {first} value(s) after the name, but line {k + 2} holds {n}: "
                    f"a ragged matrix (square rows need {n} values; a lower-triangular "
                    "matrix has none on its first row)")
    data = np.zeros((n, n))
    ids = []
    for k, line in enumerate(lines[1:]):
        fields = line.split()
        want = n if square else k
        if len(fields) < want + 1:
            raise MatrixFormatError(
                f"{path}, line {k + 2}: expected a name and {want} values, got {len(fields)} fields"
            )
        ids.append(" ".join(fields[:len(fields) - want]))
        values = [_parse_float(path, k + 2, v) for v in fields[len(fields) - want:]]
        if square:
            data[k] = values
        else:
            data[k, :k] = values
            data[:k, k] = values
    return DistanceMatrix(data, ids)


def _read_tsv(path: Path, lines: list[str]) -> DistanceMatrix:
    ids = lines[0].split("\t")[1:]
    n = len(ids)
    if len(lines) - 1 != n:
        raise MatrixFormatError(f"{path}: header names {n} taxa, found {len(lines) - 1} rows")
    data = np.zeros((n, n))
    for k, line in enumerate(lines[1:]):
        fields = line.split("\t")
        if len(fields) != n + 1:
            raise MatrixFormatError(
                f"{path}, line {k + 2}: expected a name and {n} values, got {len(fields)} fields"
            )
        if fields[0] != ids[k]:
            raise MatrixFormatError(
                f"{path}, line {k + 2}: row name {fields[0]!r} differs from column {ids[k]!r}"
            )
        data[k] = [_parse_float(path, k + 2, v) for v in fields[1:]]
    return DistanceMatrix(data, ids)

