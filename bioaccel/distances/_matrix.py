"""``DistanceMatrix``: labelled square matrix of pairwise distances, and its file formats."""

from __future__ import annotations

import codecs
import os
import re
import struct
from pathlib import Path

import numpy as np

from .._core.native import load_native
from .._core.outputs import MATRIX, NPY_ROW_IDS, output_format, without_negative_zero
from .._core.threads import check_threads
from ..errors import MatrixFormatError
from ..sequences._batch import check_unique_ids
from ..sequences._read import atomic_output

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
                a, b = data[r : r + step, c : c + step], data[c : c + step, r : r + step].T
                if np.array_equal(a, b):
                    continue
                ok = (
                    (a == b)
                    | (np.isnan(a) & np.isnan(b))
                    | (np.abs(a - b) <= SYMMETRY_RTOL * np.maximum(np.abs(a), np.abs(b)))
                )
                if not ok.all():
                    i, j = np.argwhere(~ok)[0]
                    i, j = min(r + i, c + j), max(r + i, c + j)
                    bad = (i, j) if bad is None or (i, j) < bad else bad
            if bad is not None:
                i, j = bad
                raise MatrixFormatError(
                    f"matrix is not symmetric: {ids[i]!r}/{ids[j]!r} = {float(data[i, j])!r} but "
                    f"{ids[j]!r}/{ids[i]!r} = {float(data[j, i])!r} (distances must agree to a "
                    f"relative {SYMMETRY_RTOL:g})"
                )


def check_distances(data: np.ndarray, ids) -> None:
    """Raise :class:`MatrixFormatError` unless ``data`` is a distance matrix: a zero
    diagonal and no negative entry (NaN and Inf pass: saturated models give them), naming the
    first offender. The one check of :class:`DistanceMatrix` (so of every reader),
    :func:`bioaccel.nj` and :func:`bioaccel.upgma`; an alignment *score* matrix (positive
    diagonal, negative scores) given as distances stops here."""
    diagonal = np.diagonal(data)
    off = np.flatnonzero(diagonal != 0)
    if off.size:
        k = int(off[0])
        raise MatrixFormatError(
            f"not a distance matrix: the distance of {ids[k]!r} to itself (row {k + 1} of "
            f"{len(ids)}) is {float(diagonal[k])!r}; a distance matrix has 0 on its diagonal "
            "(alignment scores or similarities are not distances)"
        )
    if data.size and np.fmin.reduce(data, axis=None) < 0:
        i, j = np.argwhere(data < 0)[0]
        raise MatrixFormatError(
            f"not a distance matrix: {ids[i]!r}/{ids[j]!r} = {float(data[i, j])!r} is negative "
            f"(row {i + 1}, column {j + 1}); distances are 0 or more"
        )


def _clean_negative_zero(data: np.ndarray, source) -> np.ndarray:
    """``data`` with -0.0 as 0.0: the one normalisation point of every matrix (files, R,
    trees all take ``DistanceMatrix.data``). Copies only when there is a -0.0 and ``data``
    may belong to the caller."""
    step = max(1, (1 << 20) // max(1, data.shape[1]))  # row blocks: no n x n temporary
    copied = False
    for r in range(0, data.shape[0], step):
        block = data[r : r + step]
        negative_zero = (block == 0) & np.signbit(block)
        if negative_zero.any():
            if not copied and (np.may_share_memory(data, source) or not data.flags.writeable):
                data, copied = data.copy(), True
                block = data[r : r + step]
            block[negative_zero] = 0.0
    return data


def check_writable_ids(ids: list[str], fmt: str) -> None:
    """Refuse, before writing, ids that ``fmt`` would not give back whole: line breaks
    (every format but npz); tabs (TSV); for PHYLIP an empty id, whitespace other than
    single inner spaces, or ids ending in numbers other than all alike (``strain 1``,
    ``strain 2``: the reader could not tell them from values)."""
    for i in ids:
        if fmt != "npz" and ("\n" in i or "\r" in i):
            raise ValueError(f"id {i!r} holds a line break; a {fmt} matrix file cannot hold it")
        if fmt == "tsv" and "\t" in i:
            raise ValueError(f"id {i!r} holds a tab; a TSV matrix cannot hold it (write PHYLIP)")
    if not fmt.startswith("phylip"):
        return
    counts = set()
    for i in ids:
        if i == "" or i != " ".join(i.split()):
            raise ValueError(
                f"PHYLIP matrix ids must be non-empty with single spaces only "
                f"inside: {i!r} would be read back otherwise (write TSV or npz)"
            )
        glued = _trailing_number_words(i.split())
        counts.add(len(glued))
        if any(not w.isdigit() for w in glued) or len(counts) > 1:
            raise ValueError(
                f"PHYLIP matrix id {i!r} ends in a number a reader cannot tell from "
                "the values (write TSV or npz)"
            )


#: values formatted per native call (about 20 MB of text): bounds the memory of a write
_TEXT_CHUNK_VALUES = 1 << 20


def matrix_text(ids: list[str], data: np.ndarray, fmt: str, threads: int = 0, utf8: bool = False):
    """The text of a ``phylip``, ``phylip-lower`` or ``tsv`` matrix file, in chunks of whole
    rows: the one place that lays out a text matrix. Each value is ``repr`` of the Python float
    (the shortest text that reads back to the same double), written by the compiled core
    (``format_matrix_rows``, byte for byte ``repr``) when it is built, else by Python.

    PHYLIP: the count of taxa, then per row the name padded to 10 columns and two spaces
    (strict and relaxed readers read the same names), then the values separated by spaces
    (``phylip-lower``: the k values left of the diagonal on row k; a row without values is
    the bare name). TSV: an empty corner cell and the names, then per row the name and the
    values, separated by tabs. ``data`` holds no -0.0 (see :func:`without_negative_zero`).
    """
    n = len(ids)
    data = np.ascontiguousarray(data, dtype=np.float64)
    lower = fmt == "phylip-lower"
    if fmt == "tsv":
        head = "\t" + "\t".join(ids) + "\n"
        prefixes, sep = [name + "\t" for name in ids], "\t"
    else:
        head = f"{n}\n"
        prefixes = [f"{name:<10}  " if k or not lower else name for k, name in enumerate(ids)]
        sep = " "
    yield head.encode() if utf8 else head
    native = _native_or_none()
    step = max(1, _TEXT_CHUNK_VALUES // max(1, n))
    for i0 in range(0, n, step):
        i1 = min(n, i0 + step)
        if native is not None:
            errors = "strict" if utf8 else "surrogatepass"
            chunk = native.format_matrix_rows(
                data, i0, [p.encode("utf-8", errors) for p in prefixes[i0:i1]], lower, sep, threads
            )
            yield chunk if utf8 else chunk.decode("utf-8", errors)
        else:
            text = "".join(
                prefixes[k] + sep.join(map(repr, data[k, : k if lower else n].tolist())) + "\n"
                for k in range(i0, i1)
            )
            yield text.encode() if utf8 else text


class DistanceMatrix:
    """Square, symmetric float64 distances with unique labels.

    Symmetric up to :data:`SYMMETRY_RTOL` (rounding), 0 on the diagonal, no negative entry
    (:func:`check_distances`); anything else is refused with
    :class:`~bioaccel.errors.MatrixFormatError` naming the pair. ``data`` never holds -0.0.

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
        source = data
        data = np.asarray(data, dtype=np.float64)
        ids = [str(i) for i in ids]
        if data.ndim != 2 or data.shape[0] != data.shape[1]:
            raise ValueError(f"distance matrix must be square, got shape {data.shape}")
        if data.shape[0] != len(ids):
            raise ValueError(f"{len(ids)} ids for a {data.shape[0]} x {data.shape[0]} matrix")
        check_unique_ids(ids)
        check_distances(data, ids)
        check_symmetric(data, ids)
        self.data = _clean_negative_zero(data, source)
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
            raise TypeError(
                f"index a DistanceMatrix by a pair: dm[i, j] or dm[id_i, id_j], not {key!r}"
            )
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
        start = 0
        for i in range(n - 1):  # row slices: no n x n index arrays
            seg = values[start : start + n - 1 - i]
            data[i, i + 1 :] = seg
            data[i + 1 :, i] = seg
            start += n - 1 - i
        return cls(data, ids)

    def to_skbio(self):
        """A ``skbio.DistanceMatrix`` (needs scikit-bio; NaN/Inf are rejected by it)."""
        from skbio import DistanceMatrix as SkbioDistanceMatrix

        return SkbioDistanceMatrix(self.data, self.ids)

    # -- writing ---------------------------------------------------------------
    def write(
        self, path: str | os.PathLike, format: str | None = None, *, threads: int = 0
    ) -> None:
        """Write atomically as ``phylip`` (square), ``phylip-lower``, ``tsv``, ``npy``, ``npz``
        or ``cdist``: the format of the extension (:data:`bioaccel._core.outputs.MATRIX`; another
        extension is refused), ``format`` when the name has none, else PHYLIP.

        PHYLIP keeps full names (no 10-character cut), padded to 10 columns and followed by
        two spaces, so strict and relaxed PHYLIP readers agree; a reader takes the last n (or
        i) fields of a row as values. Ids it could not give back are refused
        (:func:`check_writable_ids`).
        ``npy`` holds the matrix alone and writes the ids to ``PATH.ids.txt`` beside it.
        Text is formatted by :func:`matrix_text` on ``threads`` threads (0: all cores).
        """
        threads = check_threads(threads)
        path = Path(path)
        fmt = output_format(path, MATRIX, "distance matrix", format, default="phylip")
        check_writable_ids(self.ids, fmt)
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
                with atomic_output(Path(str(path) + NPY_ROW_IDS)) as f:
                    f.write("".join(i + "\n" for i in self.ids))
            return
        with atomic_output(path) as f:
            # UTF-8 bytes straight into the file's buffer when the file's text is UTF-8
            utf8 = codecs.lookup(f.encoding).name == "utf-8" and os.linesep == "\n"
            if utf8:
                f.flush()
            write = f.buffer.write if utf8 else f.write
            for chunk in matrix_text(self.ids, data, fmt, threads=threads, utf8=utf8):
                write(chunk)

    # -- reading ---------------------------------------------------------------
    @classmethod
    def read(
        cls, path: str | os.PathLike, format: str | None = None, *, threads: int = 0
    ) -> DistanceMatrix:
        """Read a matrix written by :meth:`write` (PHYLIP square or lower, TSV, npy, npz).
        The numbers of text files are parsed by the compiled core on ``threads`` threads (0:
        all cores).

        Raises
        ------
        MatrixFormatError
            Names the file, line and field that could not be read.
        """
        threads = check_threads(threads)
        path = Path(path)
        fmt = (format or _format_from_suffix(path, sniff=True)).lower()
        if not path.exists():
            raise MatrixFormatError(f"{path}: no such file")
        try:
            return cls._read(path, fmt, threads)
        except MatrixFormatError as exc:
            if str(exc).startswith(str(path)):
                raise
            raise MatrixFormatError(f"{path}: {exc}") from None

    @classmethod
    def _read(cls, path: Path, fmt: str, threads: int = 0) -> DistanceMatrix:
        if fmt == "cdist":
            return _read_cdist(path)
        import zipfile

        if fmt in ("npz", "npy"):
            try:
                loaded = np.load(path, allow_pickle=False)
            except (OSError, ValueError, EOFError, zipfile.BadZipFile):
                # NumPy's own words ("pickled data", "allow_pickle") would mislead here
                raise MatrixFormatError(f"{path}: not a NumPy .{fmt} distance matrix") from None
        if fmt == "npz":
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise MatrixFormatError(
                    f"{path}: a NumPy .npy array, not an .npz distance matrix; name it .npy"
                )
            with loaded as z:
                if not {"data", "ids"} <= set(z.files):
                    raise MatrixFormatError(
                        f"{path}: not a distance matrix .npz (it holds {sorted(z.files)}, not "
                        "'data' and 'ids')"
                    )
                try:
                    data, ids = z["data"], [str(i) for i in z["ids"]]
                except (OSError, ValueError, EOFError, zipfile.BadZipFile) as exc:
                    raise MatrixFormatError(f"{path}: damaged .npz archive ({exc})") from None
                return cls(data, ids)
        if fmt == "npy" and isinstance(loaded, np.lib.npyio.NpzFile):
            loaded.close()
            raise MatrixFormatError(
                f"{path}: an .npz archive, not a NumPy .npy matrix; name it .npz"
            )
        if fmt == "npy":
            data = loaded
            side = Path(str(path) + ".ids.txt")
            ids = (
                side.read_text().splitlines()
                if side.exists()
                else [str(i) for i in range(len(data))]
            )
            return cls(data, ids)
        numbered = [
            (k + 1, ln) for k, ln in enumerate(_matrix_text(path).splitlines()) if ln.strip()
        ]
        if not numbered:
            raise MatrixFormatError(f"{path}: file is empty; expected a distance matrix")
        if fmt == "tsv":
            return _read_tsv(path, [ln for _, ln in numbered], threads)
        return _read_phylip(path, numbered, threads)


#: bytes that mark a binary file, and all the others
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]")
_NOT_CONTROL = bytes(b for b in range(256) if not _CONTROL.fullmatch(bytes([b])))


def _matrix_text(path: Path) -> str:
    """A text matrix file's text (UTF-8, a byte-order mark dropped; CR and CR LF line ends
    as LF); a binary file is refused naming what it looks like."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raise MatrixFormatError(f"{path}: a gzip file; decompress it first (gunzip)")
    # the bytes left when all others are deleted: a C loop, far faster than a regex search
    control = re.search(_CONTROL, raw) if raw.translate(None, _NOT_CONTROL) else None
    if control is not None:
        raise MatrixFormatError(
            f"{path}: byte {control.start()} is not text "
            f"(0x{raw[control.start()]:02x}): a binary file, not a PHYLIP or "
            "TSV distance matrix"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = raw.decode("latin-1")  # names from old tools; the numbers are ASCII anyway
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _format_from_suffix(path: Path, sniff: bool = False) -> str:
    suffix = path.suffix.lower()
    by_suffix = {
        ".npy": "npy",
        ".npz": "npz",
        ".tsv": "tsv",
        ".cdist": "cdist",
        ".phy": "phylip",
        ".phylip": "phylip",
        ".dist": "phylip",
        ".mat": "phylip",
    }
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
    labels = raw[head : head + nbytes].decode("utf-8").split("\n")[:-1]
    if len(labels) != n:
        raise MatrixFormatError(f"{path}: header says {n} labels, found {len(labels)}")
    values = np.frombuffer(raw, dtype="<f8" if width == 8 else "<f4", offset=head + nbytes)
    if values.size != n * (n - 1) // 2:
        raise MatrixFormatError(
            f"{path}: {values.size} values for {n} labels; expected "
            f"{n * (n - 1) // 2} (truncated file?)"
        )
    return DistanceMatrix.from_condensed(values.astype(np.float64), labels)


#: a number as a matrix file holds it: decimal point, exponent, sign, nan/inf; no decimal
#: comma, no digit separators (Python's float() also takes "1_000")
_NUMBER = re.compile(
    r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|infinity|nan)", re.IGNORECASE
)


def _parse_float(path: Path, lineno: int, field: str, column: int | None = None) -> float:
    if _NUMBER.fullmatch(field):
        return float(field)
    where = f"line {lineno}" + (f", column {column}" if column is not None else "")
    hint = (
        " (a decimal comma? write 1.5, not 1,5)"
        if re.fullmatch(r"[-+]?\d+,\d+", field)
        else " (missing values are not allowed in a distance matrix)"
        if field.upper() in ("NA", "N/A", "-", "?", "NAN?")
        else ""
    )
    raise MatrixFormatError(f"{path}, {where}: {field!r} is not a number{hint}")


def _parse_floats(path: Path, lineno: int, fields: list[str]) -> np.ndarray:
    """A row of fields as float64, each checked as :func:`_parse_float` checks it (the error
    names the first field that is not a number); NumPy converts the row at once."""
    if all(_NUMBER.fullmatch(f) for f in fields):
        return np.array(fields, dtype=np.float64)
    return np.array([_parse_float(path, lineno, v) for v in fields], dtype=np.float64)


def _fields(text: str) -> list[tuple[str, int]]:
    """Whitespace-separated fields of a line with their 1-based character columns."""
    return [(m.group(), m.start() + 1) for m in re.finditer(r"\S+", text)]


def _is_number_word(field: str) -> bool:
    return bool(_NUMBER.fullmatch(field)) and any(c.isdigit() for c in field)


def _trailing_number_words(words: list[str]) -> list[str]:
    """The words at the end of a name of several words that are numbers (``strain 12`` ->
    ``['12']``; a one-word name, even ``0``, has none)."""
    out: list[str] = []
    for w in reversed(words[1:]):
        if not _is_number_word(w):
            break
        out.append(w)
    return out[::-1]


def _read_phylip(path: Path, lines: list[tuple[int, str]], threads: int = 0) -> DistanceMatrix:
    """A PHYLIP matrix: square or lower-triangular, relaxed (a name, whitespace, the values;
    a name may hold spaces) or strict (a name of exactly 10 characters, which may touch the
    first value, as PHYLIP and scikit-bio write). The layout is the one that every row fits
    (relaxed square, strict square, relaxed lower, strict lower, in that order); rows that
    PHYLIP wraps onto indented continuation lines are joined first."""
    lineno, first = lines[0]
    head = first.split()
    if len(head) != 1 or not head[0].isdigit():
        raise MatrixFormatError(
            f"{path}, line {lineno}: expected the number of taxa, got {first[:40]!r}"
        )
    n = int(head[0])
    rows = lines[1:]
    if len(rows) > n:  # PHYLIP wraps long rows: indented lines of numbers continue a row
        joined: list[tuple[int, str, list[tuple[int, str, int]]]] = []
        for ln, text in rows:
            fields = _fields(text)
            if joined and text[:1].isspace() and all(_NUMBER.fullmatch(f) for f, _ in fields):
                joined[-1][2].extend((ln, f, c) for f, c in fields)
            else:
                joined.append((ln, text, [(ln, f, c) for f, c in fields]))
        if len(joined) == n:
            return _phylip_rows(path, n, joined, wrapped=True, threads=threads)
    if len(rows) != n:
        raise MatrixFormatError(f"{path}: header says {n} taxa, found {len(rows)} rows")
    return _phylip_rows(
        path, n, [(ln, text, None) for ln, text in rows], wrapped=False, threads=threads
    )


def _native_or_none():
    try:
        return load_native()
    except ImportError:
        return None


def _field_counts(texts: list[str], start: int, native) -> list[int]:
    """Whitespace-separated fields of each text from character ``start`` on (``len(
    text[start:].split())``), counted by the compiled core where it is built."""
    counts = native.count_matrix_fields(texts, start).tolist() if native is not None else None
    return [
        c if counts is not None and c >= 0 else len(t[start:].split())
        for c, t in zip(counts or [-1] * len(texts), texts)
    ]


def _phylip_rows(path: Path, n: int, rows, wrapped: bool, threads: int = 0) -> DistanceMatrix:
    """The matrix of PHYLIP rows ``(line, text, fields)``: ``fields`` the ``(line, field,
    column)`` of a row joined from wrapped lines, or None for a row that is its one line
    (its fields are then found only where needed). The numbers of rows of one line are read
    by the compiled core (``parse_matrix_rows``) when it is built; a row it does not take (a
    field that is not a number, non-ASCII text) is read here, and errors are named here."""
    native = _native_or_none()
    texts = [text for _, text, _ in rows]
    if wrapped:
        counts = [len(f) for _, _, f in rows]
    else:
        counts = _field_counts(texts, 0, native)

    def row_fields(k):
        ln, text, fields = rows[k]
        return fields if fields is not None else [(ln, f, c) for f, c in _fields(text)]

    def strict_counts():
        counted = _field_counts(texts, 10, native)
        return [c if len(t) > 10 else 0 for c, t in zip(counted, texts)]

    layout = None
    if all(c >= n + 1 for c in counts):
        layout = "square"
    elif not wrapped and all(c == n for c in strict_counts()):
        layout = "strict square"
    elif all(c >= k + 1 for k, c in enumerate(counts)):
        layout = "lower"
    elif not wrapped and all(c == k for k, c in enumerate(strict_counts())):
        layout = "strict lower"
    if layout is None:
        square_like = counts[0] > 1
        for k, (ln, _, _) in enumerate(rows):
            want = n if square_like else k
            if counts[k] < want + 1:
                raise MatrixFormatError(
                    f"{path}, line {ln}: a name and {counts[k] - 1} value(s); a "
                    f"{'square' if square_like else 'lower-triangular'} matrix needs a name and "
                    f"{want} here (the first row holds "
                    f"{'values' if square_like else 'a name only'})"
                )
        raise MatrixFormatError(
            f"{path}: rows fit neither a square nor a lower-triangular matrix of {n} taxa"
        )
    square = layout.endswith("square")
    strict = layout.startswith("strict")
    data = np.zeros((n, n))
    wants = np.arange(n, dtype=np.int64) if not square else np.full(n, n, dtype=np.int64)
    if native is not None and not wrapped:
        starts = np.full(n, 10 if strict else 0, dtype=np.int64)
        ends = native.parse_matrix_rows(
            texts, starts, wants, data, False, not square, threads
        ).tolist()
    else:
        ends = [-1] * n
    ids = []
    glued_counts = set()
    for k, (ln, text, _) in enumerate(rows):
        want = n if square else k
        read = ends[k] >= 0
        if strict:
            name = text[:10].strip() if len(text) > 10 else text.strip()
            if not read:
                cells = [(ln, f, c + 10) for f, c in _fields(text[10:])] if len(text) > 10 else []
        else:
            if read:
                words = text[: ends[k]].split()
            else:
                fields = row_fields(k)
                words = [f for _, f, _ in fields[: len(fields) - want]]
                cells = fields[len(fields) - want :]
            glued = _trailing_number_words(words)
            glued_counts.add(len(glued))
            # names may end in numbers ("strain 12", the same on every row), but a value
            # (a decimal) or a varying count of numbers there is a row with too many or too
            # few values: a ragged matrix, or a lower triangle with its diagonal
            if any(not w.isdigit() for w in glued) or len(glued_counts) > 1:
                raise MatrixFormatError(
                    f"{path}, line {ln}: {counts[k] - 1} value(s) after the first word, but a "
                    f"{layout} matrix of {n} taxa has {want} on this row (a ragged matrix? "
                    f"{(glued or ['the numbers'])[0]!r} would be read as part of the name); "
                    "PHYLIP's square rows hold n values, its lower triangle none on the first "
                    "row and no diagonal"
                )
            name = " ".join(words)
        ids.append(name)
        if not read:
            values = [_parse_float(path, cl, f, c) for cl, f, c in cells]
            if square:
                data[k] = values
            else:
                data[k, :k] = values
                data[:k, k] = values
    return DistanceMatrix(data, ids)


def _unquoted(names: list[str]) -> list[str]:
    """R's ``write.table`` quotes every name (``"a b"``; an inner quote as ``\\"``, or
    ``""`` with ``qmethod = "double"``): when all the names are quoted so, the quotes are
    not part of them."""
    if names and all(len(x) >= 2 and x[0] == x[-1] == '"' for x in names):
        return [x[1:-1].replace('\\"', '"').replace('""', '"') for x in names]
    return names


def _read_tsv(path: Path, lines: list[str], threads: int = 0) -> DistanceMatrix:
    head = lines[0].split("\t")
    # an empty corner cell, then the names (bioaccel); R's write.table(m, sep = "\t")
    # writes no corner cell, and with col.names = NA a quoted empty one: only R's files have
    # their quotes taken off (bioaccel's own ids may hold quotes)
    r_default = len(head) == len(lines) - 1 and len(head) > 1
    ids = head if r_default else head[1:]
    names = [line.split("\t", 1)[0] for line in lines[1:]]
    quoted = _unquoted(ids + names) if r_default or head[0] == '""' else ids + names
    if quoted != ids + names:
        ids, lines = (
            quoted[: len(ids)],
            [lines[0]]
            + [
                q + "\t" + line.split("\t", 1)[1] if "\t" in line else q
                for q, line in zip(quoted[len(ids) :], lines[1:])
            ],
        )
    n = len(ids)
    if len(lines) - 1 != n:
        raise MatrixFormatError(f"{path}: header names {n} taxa, found {len(lines) - 1} rows")
    data = np.zeros((n, n))
    rows = lines[1:]
    native = _native_or_none()
    ends = [-1] * n
    if native is not None:  # the numbers after each row's first tab, where all are numbers
        starts = np.array([line.find("\t") + 1 or len(line) + 1 for line in rows])
        ends = native.parse_matrix_rows(
            rows, starts.astype(np.int64), np.full(n, n, dtype=np.int64), data, True, False, threads
        ).tolist()
    for k, line in enumerate(rows):
        count = line.count("\t") + 1
        if count != n + 1:
            raise MatrixFormatError(
                f"{path}, line {k + 2}: expected a name and {n} values, got {count} fields"
            )
        name = line.split("\t", 1)[0]
        if name != ids[k]:
            raise MatrixFormatError(
                f"{path}, line {k + 2}: row name {name!r} differs from column {ids[k]!r}"
            )
        if ends[k] < 0:
            data[k] = _parse_floats(path, k + 2, line.split("\t")[1:])
    return DistanceMatrix(data, ids)
