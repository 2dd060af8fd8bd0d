"""``DistanceMatrix``: labelled square matrix of pairwise distances, and its file formats."""

from __future__ import annotations

import codecs
import errno
import itertools
import os
import re
import struct
from pathlib import Path

import numpy as np

from .._core.native import load_native
from .._core.outputs import MATRIX, NPY_ROW_IDS, output_format
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


def _agree(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where entries ``a`` and their mirrors ``b`` agree (:data:`SYMMETRY_RTOL`)."""
    with np.errstate(invalid="ignore", over="ignore"):
        return (
            (a == b)
            | (np.isnan(a) & np.isnan(b))
            | (np.abs(a - b) <= SYMMETRY_RTOL * np.maximum(np.abs(a), np.abs(b)))
        )


def asymmetry_error(ids, i: int, j: int, dij: float, dji: float) -> MatrixFormatError:
    """The error of a pair whose two entries disagree (every reader's words)."""
    return MatrixFormatError(
        f"matrix is not symmetric: {ids[i]!r}/{ids[j]!r} = {float(dij)!r} but "
        f"{ids[j]!r}/{ids[i]!r} = {float(dji)!r} (distances must agree to a "
        f"relative {SYMMETRY_RTOL:g})"
    )


def check_symmetric(data: np.ndarray, ids) -> None:
    """Raise :class:`MatrixFormatError` naming the first pair (row order) whose two entries
    disagree beyond :data:`SYMMETRY_RTOL`. Works in square tiles of the upper triangle
    against their mirror tiles: no n x n temporary, cache-friendly."""
    n = data.shape[0]
    step = 256
    bad = None
    for r in range(0, n, step):
        for c in range(r, n, step):
            a, b = data[r : r + step, c : c + step], data[c : c + step, r : r + step].T
            if np.array_equal(a, b):
                continue
            ok = _agree(a, b)
            if not ok.all():
                i, j = np.argwhere(~ok)[0]
                i, j = min(r + i, c + j), max(r + i, c + j)
                bad = (i, j) if bad is None or (i, j) < bad else bad
        if bad is not None:
            i, j = bad
            raise asymmetry_error(ids, i, j, data[i, j], data[j, i])


def diagonal_error(ids, k: int, value: float) -> MatrixFormatError:
    return MatrixFormatError(
        f"not a distance matrix: the distance of {ids[k]!r} to itself (row {k + 1} of "
        f"{len(ids)}) is {float(value)!r}; a distance matrix has 0 on its diagonal "
        "(alignment scores or similarities are not distances)"
    )


def negative_error(ids, i: int, j: int, value: float) -> MatrixFormatError:
    return MatrixFormatError(
        f"not a distance matrix: {ids[i]!r}/{ids[j]!r} = {float(value)!r} is negative "
        f"(row {i + 1}, column {j + 1}); distances are 0 or more"
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
        raise diagonal_error(ids, k, diagonal[k])
    if data.size and np.fmin.reduce(data, axis=None) < 0:
        i, j = np.argwhere(data < 0)[0]
        raise negative_error(ids, i, j, data[i, j])


def condensed_pair(k: int, n: int) -> tuple[int, int]:
    """(i, j), i < j, of entry ``k`` of a condensed upper triangle of ``n`` (row by row)."""
    i = int(np.searchsorted(_row_starts(n), k, side="right")) - 1
    return i, int(k - _row_starts(n)[i] + i + 1)


def _row_starts(n: int) -> np.ndarray:
    i = np.arange(n, dtype=np.int64)
    return i * n - i * (i + 1) // 2


def check_condensed_distances(values: np.ndarray, ids) -> None:
    """:func:`check_distances` of a condensed upper triangle (the same first offender and
    words: a symmetric matrix's first negative in row order lies in its upper triangle), in
    blocks: no temporary of the whole."""
    n = len(ids)
    step = 1 << 18
    for a in range(0, values.size, step):
        block = values[a : a + step]
        if np.fmin.reduce(block) < 0:
            k = a + int(np.flatnonzero(block < 0)[0])
            i, j = condensed_pair(k, n)
            raise negative_error(ids, i, j, values[k])


def _clean_negative_zero(data: np.ndarray, source) -> np.ndarray:
    """``data`` with -0.0 as 0.0: the one normalisation point of every matrix (files, R,
    trees all take ``DistanceMatrix.data``). Copies only when there is a -0.0 and ``data``
    may belong to the caller."""
    width = data.shape[1] if data.ndim == 2 else 1
    step = max(1, (1 << 20) // max(1, width))  # row blocks: no n x n temporary
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


#: values formatted per native call (about 5 MB of text; two chunks are in flight): bounds
#: the memory of a write
_TEXT_CHUNK_VALUES = 1 << 18


def _made_ahead(chunks):
    """The items of the iterator ``chunks``, the next one made on another thread while the
    caller uses this one: the compiled formatter and the file's write both release the GIL,
    so text is formatted while the previous chunk is written."""
    from concurrent.futures import ThreadPoolExecutor

    chunks = iter(chunks)
    with ThreadPoolExecutor(1, thread_name_prefix="bioaccel-text") as pool:
        pending = pool.submit(next, chunks, None)
        while (chunk := pending.result()) is not None:
            pending = pool.submit(next, chunks, None)
            yield chunk


def matrix_text(
    ids: list[str],
    data: np.ndarray,
    fmt: str,
    threads: int = 0,
    utf8: bool = False,
    condensed: bool = False,
):
    """The text of a ``phylip``, ``phylip-lower`` or ``tsv`` matrix file, in chunks of whole
    rows: the one place that lays out a text matrix. Each value is ``repr`` of the Python float
    (the shortest text that reads back to the same double), written by the compiled core
    (``format_matrix_rows``, byte for byte ``repr``) when it is built, else by Python.

    PHYLIP: the count of taxa, then per row the name padded to 10 columns and two spaces
    (strict and relaxed readers read the same names), then the values separated by spaces
    (``phylip-lower``: the k values left of the diagonal on row k; a row without values is
    the bare name). TSV: an empty corner cell and the names, then per row the name and the
    values, separated by tabs. ``data`` holds no -0.0 (see :func:`without_negative_zero`);
    with ``condensed`` it is the matrix's condensed upper triangle (no square is made).
    """
    n = len(ids)
    data = np.ascontiguousarray(data, dtype=np.float64)
    if condensed and data.shape != (n * (n - 1) // 2,):
        raise ValueError(f"{data.size} condensed values do not fit {n} ids")
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
                data,
                i0,
                [p.encode("utf-8", errors) for p in prefixes[i0:i1]],
                lower,
                sep,
                threads,
                n if condensed else -1,
            )
            yield chunk if utf8 else chunk.decode("utf-8", errors)
        else:
            rows = _square_rows(data, n, i0, i1) if condensed else data[i0:i1]
            text = "".join(
                prefixes[k] + sep.join(map(repr, rows[k - i0, : k if lower else n].tolist())) + "\n"
                for k in range(i0, i1)
            )
            yield text.encode() if utf8 else text


def to_float32(values, out=None) -> np.ndarray:
    """``values`` rounded to float32 (into ``out`` when given): the one place distances are
    narrowed (the low-memory triangle, float32 ``.cdist`` files). A finite value past
    float32's range becomes Inf without NumPy's overflow warning on the user's terminal: it
    is stored so, and the tree's finiteness check names it."""
    with np.errstate(over="ignore"):
        if out is None:
            return np.ascontiguousarray(values, dtype=np.float32)
        out[...] = values
        return out


def _upper_at(n: int) -> np.ndarray:
    """Where rows start in a condensed upper triangle of n, shifted: d(i, j), i < j, is entry
    ``_upper_at(n)[i] + j``; d(j, k) for all j < k is ``values[_upper_at(n)[:k] + k]``."""
    return _row_starts(n) - np.arange(n) - 1


def _square_rows(values: np.ndarray, n: int, i0: int, i1: int) -> np.ndarray:
    """Rows [i0, i1) of the square of a condensed upper triangle."""
    starts = _upper_at(n)
    out = np.zeros((i1 - i0, n))
    for k in range(i0, i1):
        out[k - i0, :k] = values[starts[:k] + k]
        out[k - i0, k + 1 :] = values[starts[k] + k + 1 : starts[k] + n]
    return out


def _square_from_condensed(values: np.ndarray, n: int, block: int = 128) -> np.ndarray:
    """The float64 square of a condensed upper triangle: the upper rows copied as slices,
    then mirrored a block of ``block`` columns at a time (a transposed copy of a block
    stays in cache; a column at a time was ten times slower at n = 4,000)."""
    data = np.empty((n, n))
    start = 0
    for i in range(n):
        data[i, i] = 0.0
        data[i, i + 1 :] = values[start : start + n - 1 - i]
        start += n - 1 - i
    for b in range(0, n, block):
        e = min(n, b + block)
        data[b:e, :b] = data[:b, b:e].T
        lower = np.tril_indices(e - b, -1)
        square = data[b:e, b:e]
        square[lower] = square.T[lower]
    return data


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

    @property
    def data(self) -> np.ndarray:
        """The (n, n) float64 distances. A matrix made by :meth:`from_condensed` makes its
        square on first use: writing it as text or ``.cdist`` needs none."""
        if self._data is None:
            self._data = _square_from_condensed(self._condensed, len(self.ids))
            self._condensed = None
        return self._data

    @data.setter
    def data(self, value: np.ndarray) -> None:
        self._data, self._condensed = value, None

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
        if self._data is None:
            return self._condensed.copy()
        i, j = np.triu_indices(len(self), k=1)
        return self.data[i, j]

    @classmethod
    def from_condensed(cls, values, ids) -> DistanceMatrix:
        """The matrix of a condensed upper triangle (:meth:`condensed`'s order), checked as
        the constructor checks a square (no negative value, unique ids). The square is made
        on first use of :attr:`data`."""
        source = values
        values = np.asarray(values, dtype=np.float64)
        ids = [str(i) for i in ids]
        n = len(ids)
        if values.shape != (n * (n - 1) // 2,):
            raise ValueError(f"{values.size} condensed values do not fit {n} ids")
        check_unique_ids(ids)
        check_condensed_distances(values, ids)
        self = cls.__new__(cls)
        self.ids = ids
        self._data, self._condensed = None, _clean_negative_zero(values, source)
        return self

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
        # the values hold no -0.0: every DistanceMatrix is cleaned when made
        if fmt == "cdist":
            with atomic_output(path, "wb") as f:
                f.write(cdist_header(self.ids, 8))
                f.write(self.condensed().astype("<f8", copy=False).tobytes())
            return
        data = self.data if self._data is not None or fmt in ("npy", "npz") else None
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
            chunks = (
                matrix_text(self.ids, data, fmt, threads=threads, utf8=utf8)
                if data is not None
                else matrix_text(self.ids, self._condensed, fmt, threads, utf8, condensed=True)
            )
            for chunk in _made_ahead(chunks):
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
    def read_condensed(cls, path: str | os.PathLike, format: str | None = None) -> CondensedMatrix:
        """Read a matrix file as a :class:`CondensedMatrix` (float32 upper triangle), the
        input of :func:`bioaccel.nj` with ``low_memory=True``, with the checks and words of
        :meth:`read`. ``.cdist`` and ``.npy`` files are read in blocks straight into the
        triangle, never as a float64 square (about n^2 / 2 x 4 bytes in all; symmetry is
        checked at float32 precision there); PHYLIP text is streamed twice (the layout from
        the rows' field counts, then the values row by row). TSV and npz are read by
        :meth:`read` first: the float64 square exists while they are read."""
        path = Path(path)
        fmt = (format or _format_from_suffix(path, sniff=True)).lower()
        if not path.exists():
            raise MatrixFormatError(f"{path}: no such file")
        try:
            if fmt == "cdist":
                return load_cdist(path)
            if fmt == "npy":
                return _read_npy_condensed(path)
            if fmt == "phylip":
                return _read_phylip_condensed(path)
            return CondensedMatrix.from_matrix(cls._read(path, fmt))
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
            return cls(data, _npy_ids(path, len(data)))
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


class CondensedMatrix:
    """Distances as a float32 condensed upper triangle (``values``: d(i, j), i < j, row by
    row, n (n - 1) / 2 of them: SciPy's and R's ``dist`` order) with their ``ids``: the input
    of the low-memory :func:`bioaccel.nj`, n^2 / 2 x 4 bytes. Made by
    :meth:`DistanceMatrix.read_condensed`, :meth:`CondensedDistances.load
    <bioaccel.distances.CondensedDistances.load>` or :meth:`from_matrix`; the values are
    checked as :class:`DistanceMatrix` checks its own (no negative distance).

    >>> CondensedMatrix.from_matrix(DistanceMatrix([[0, 1.5], [1.5, 0]], ["a", "b"])).values
    array([1.5], dtype=float32)
    """

    def __init__(self, values, ids):
        values = to_float32(values)
        ids = [str(i) for i in ids]
        n = len(ids)
        if values.shape != (n * (n - 1) // 2,):
            raise ValueError(f"{values.size} condensed values do not fit {n} ids")
        check_unique_ids(ids)
        check_condensed_distances(values, ids)
        self.values = values
        self.ids = ids

    @classmethod
    def from_matrix(cls, d) -> CondensedMatrix:
        """The upper triangle of a :class:`DistanceMatrix` (or anything it takes with
        ``ids``), row by row: no index arrays of n^2 / 2."""
        if isinstance(d, DistanceMatrix) and d._data is None:  # condensed already: no square
            return cls(d._condensed, d.ids)
        data = np.asarray(d.data if isinstance(d, DistanceMatrix) else d)
        n = data.shape[0]
        values = np.empty(n * (n - 1) // 2, dtype=np.float32)
        start = 0
        for i in range(n - 1):
            to_float32(data[i, i + 1 :], values[start : start + n - i - 1])
            start += n - i - 1
        return cls(values, d.ids if isinstance(d, DistanceMatrix) else range(n))

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"<CondensedMatrix {len(self)} x {len(self)} float32>"


class _TriangleMemory:
    """The float32 upper triangle of the low-memory readers, held in memory (``values``: the
    :class:`CondensedMatrix`'s). Rows arrive in order: a square input's upper parts
    (:meth:`put_upper`, checked against :meth:`mirror`) or a lower triangle's rows
    (:meth:`put_lower`)."""

    def __init__(self, n: int):
        self.n = n
        self.values = np.empty(n * (n - 1) // 2, dtype=np.float32)
        self._at = _upper_at(n)

    def put_upper(self, k: int, upper) -> None:
        """d(k, j) for j > k."""
        to_float32(upper, self.values[self._at[k] + k + 1 : self._at[k] + self.n])

    def put_lower(self, k: int, lower) -> None:
        """d(j, k) for j < k (row k of a lower triangle)."""
        self.values[self._at[:k] + k] = to_float32(lower)

    def mirror(self, k: int) -> np.ndarray:
        """d(j, k) for j < k, as stored (float32)."""
        return self.values[self._at[:k] + k]


def _free_bytes(folder: Path) -> int | None:
    """Bytes free to this user in ``folder``'s file system, or None when it cannot be told."""
    import shutil

    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


class TriangleFile:
    """The float32 triangle of the low-memory readers written to ``path`` row by row, never
    held whole: the input of the ``bioaccel-nj`` program (:mod:`bioaccel.trees._program`).
    A square input's upper parts go in the ``.cdist`` order (``layout`` "upper"); a lower
    triangle's rows in theirs ("lower": row k's d(k, j < k) after row k - 1's), which the
    program turns as it reads. :meth:`mirror` reads d(j, k), j < k, from a strip of
    :data:`STRIP` columns per row, read once per block of as many rows (plus the block's own
    rows, kept): about n x STRIP x 8 bytes held. ``first_not_finite``: (i, j, value as
    stored) of the first NaN or Inf in the upper triangle's row order (a value past float32's
    range is stored as Inf), which the in-memory path leaves to :func:`bioaccel.nj`."""

    STRIP = 256

    def __init__(self, path: Path, n: int):
        self.path, self.n, self.layout = Path(path), n, "upper"
        self.first_not_finite = None
        need, free = 4 * (n * (n - 1) // 2), _free_bytes(self.path.parent)
        if free is not None and need > free:  # before any row is read, not at the disk's end
            raise OSError(
                errno.ENOSPC,
                f"the float32 triangle of {n} taxa needs {need / 2**20:,.1f} MiB of scratch "
                f"space in {self.path.parent.parent}, which has {free / 2**20:,.1f} MiB free; "
                "free some, write the output elsewhere, or give a .cdist file (read in place)",
            )
        self._file = open(self.path, "w+b")  # noqa: SIM115 (closed by close())
        self._at = _upper_at(n)
        self._block = -1
        self._rows = np.zeros((min(self.STRIP, n), n), dtype=np.float32)
        self._strip = np.zeros((0, 0), dtype=np.float32)

    def close(self) -> None:
        self._file.close()

    def _note_not_finite(self, pairs) -> None:
        if self.first_not_finite is None or pairs[:2] < self.first_not_finite[:2]:
            self.first_not_finite = pairs

    def put_upper(self, k: int, upper) -> None:
        values = to_float32(upper)
        os.pwrite(
            self._file.fileno(),
            values.astype("<f4", copy=False).tobytes(),
            4 * int(self._at[k] + k + 1),
        )
        self._enter_block(k)
        self._rows[k - self._block, k + 1 :] = values
        if self.first_not_finite is None and not np.isfinite(values).all():
            j = k + 1 + int(np.flatnonzero(~np.isfinite(values))[0])
            self._note_not_finite((k, j, float(values[j - k - 1])))

    def put_lower(self, k: int, lower) -> None:
        self.layout = "lower"
        values = to_float32(lower)
        os.pwrite(
            self._file.fileno(), values.astype("<f4", copy=False).tobytes(), 4 * (k * (k - 1) // 2)
        )
        if not np.isfinite(values).all():
            j = int(np.flatnonzero(~np.isfinite(values))[0])
            self._note_not_finite((j, k, float(values[j])))

    def _enter_block(self, k: int) -> None:
        """Rows k's block: the strip d(j, b0 .. b1 - 1) of every earlier row j < b0."""
        b0 = k - k % self.STRIP
        if b0 == self._block:
            return
        self._block, b1 = b0, min(self.n, b0 + self.STRIP)
        self._strip = np.empty((b0, b1 - b0), dtype="<f4")
        fd, width = self._file.fileno(), 4 * (b1 - b0)
        for j in range(b0):
            raw = os.pread(fd, width, 4 * int(self._at[j] + b0))
            self._strip[j] = np.frombuffer(raw, dtype="<f4")
        self._rows[:] = 0

    def mirror(self, k: int) -> np.ndarray:
        self._enter_block(k)
        b0 = self._block
        return np.concatenate([self._strip[:, k - b0], self._rows[: k - b0, k]])


#: a ``.cdist`` header after the magic: bytes per value, 0, n, bytes of the labels
_CDIST_HEAD = struct.Struct("<IIQQ")


def cdist_header(ids: list[str], width: int) -> bytes:
    """The header of a ``.cdist`` file of ``ids`` with ``width`` bytes per value (4 or 8):
    the one writer of it (:func:`_cdist_head` the one reader)."""
    labels = "".join(i + "\n" for i in ids).encode()
    return CDIST_MAGIC + _CDIST_HEAD.pack(width, 0, len(ids), len(labels)) + labels


def _cdist_head(f, path: Path) -> tuple[int, int, list[str], int]:
    """(bytes per value, n, labels, offset of the values) of an open ``.cdist`` file, its size
    checked against them."""
    head_size = len(CDIST_MAGIC) + _CDIST_HEAD.size
    head = f.read(head_size)
    if len(head) < head_size or not head.startswith(CDIST_MAGIC):
        raise MatrixFormatError(f"{path}: not a bioaccel .cdist file (no {CDIST_MAGIC!r} header)")
    width, _, n, nbytes = _CDIST_HEAD.unpack(head[len(CDIST_MAGIC) :])
    if width not in (4, 8):
        raise MatrixFormatError(f"{path}: {width} bytes per value; expected 4 or 8")
    try:
        labels = f.read(nbytes).decode("utf-8").split("\n")[:-1]
    except UnicodeDecodeError as exc:
        raise MatrixFormatError(
            f"{path}: byte {head_size + exc.start} of the header's labels is not UTF-8 "
            f"(0x{exc.object[exc.start]:02x}): a damaged .cdist file"
        ) from None
    if len(labels) != n:
        raise MatrixFormatError(f"{path}: header says {n} labels, found {len(labels)}")
    m = n * (n - 1) // 2
    if path.stat().st_size != head_size + nbytes + m * width:
        raise MatrixFormatError(
            f"{path}: {path.stat().st_size} bytes; a complete matrix of {n} has "
            f"{head_size + nbytes + m * width} (truncated file?)"
        )
    return width, int(n), labels, head_size + nbytes


def _cdist_blocks(f, path: Path, width: int, m: int, out=None):
    """(start, float32 block) of the m values of an open ``.cdist`` file, read in blocks
    (plain reads: the file's pages stay in the page cache, out of this process's memory,
    where a map would count them); float64 values are rounded block by block. With ``out``
    (m float32 values) the blocks are views of it, filled in place."""
    step = 1 << 18
    wide = np.empty(step, dtype="<f8") if width == 8 else None  # read, then rounded
    mine = np.empty(step, dtype=np.float32) if out is None else None
    for a in range(0, m, step):
        size = min(step, m - a)
        target = out[a : a + size] if out is not None else mine[:size]
        chunk = wide[:size] if width == 8 else target
        if f.readinto(memoryview(chunk).cast("B")) != chunk.nbytes:
            raise MatrixFormatError(f"{path}: truncated file")
        if chunk is not target:
            to_float32(chunk, target)
        if width == 4 and not np.little_endian:  # the file is little-endian
            target.byteswap(inplace=True)
        yield a, target


def load_cdist(path: Path) -> CondensedMatrix:
    """A ``.cdist`` file as a :class:`CondensedMatrix`, read in blocks into one new float32
    array (see :func:`_cdist_blocks`)."""
    with open(path, "rb") as f:
        width, n, labels, _ = _cdist_head(f, path)
        values = np.empty(n * (n - 1) // 2, dtype=np.float32)
        for _ in _cdist_blocks(f, path, width, values.size, out=values):
            pass
    return CondensedMatrix(values, labels)


def scan_cdist(path: Path) -> tuple[list[str], int, int, tuple | None]:
    """A ``.cdist`` file checked as :func:`load_cdist` and :class:`CondensedMatrix` check
    it (a negative value is refused with their words), without holding its values: (labels,
    bytes per value, offset of the values, (i, j, value) of the first NaN or Inf in row
    order or None). The input check of the ``bioaccel-nj`` program."""
    with open(path, "rb") as f:
        width, n, labels, offset = _cdist_head(f, path)
        first_not_finite = None
        for a, block in _cdist_blocks(f, path, width, n * (n - 1) // 2):
            if block.size and np.fmin.reduce(block) < 0:
                k = a + int(np.flatnonzero(block < 0)[0])
                error = negative_error(labels, *condensed_pair(k, n), float(block[k - a]))
                raise MatrixFormatError(f"{path}: {error}")  # as read_condensed names it
            if first_not_finite is None and not np.isfinite(block).all():
                k = a + int(np.flatnonzero(~np.isfinite(block))[0])
                first_not_finite = (*condensed_pair(k, n), float(block[k - a]))
    return labels, width, offset, first_not_finite


def write_triangle_file(path: Path, dest: Path) -> tuple[list[str], TriangleFile]:
    """A PHYLIP or ``.npy`` matrix file checked as :meth:`DistanceMatrix.read_condensed`
    checks it (its errors and words) and written to ``dest`` as a :class:`TriangleFile`,
    never held whole: (ids, the closed file). Other formats raise ValueError."""
    path = Path(path)
    fmt = _format_from_suffix(path, sniff=True).lower()
    if not path.exists():
        raise MatrixFormatError(f"{path}: no such file")
    readers = {"npy": _read_npy_condensed, "phylip": _read_phylip_condensed}
    if fmt not in readers:
        raise ValueError(f"{path}: {fmt} is read whole, not as a triangle file")
    made = []

    def make(n):
        made.append(TriangleFile(dest, n))
        return made[-1]

    try:
        ids, triangle = readers[fmt](path, make)
    except MatrixFormatError as exc:
        if str(exc).startswith(str(path)):
            raise
        raise MatrixFormatError(f"{path}: {exc}") from None
    finally:
        for t in made:
            t.close()
    return ids, triangle


def _npy_ids(path: Path, n: int) -> list[str]:
    """The ids of an .npy matrix: ``PATH.ids.txt`` beside it, else 0..n-1."""
    side = Path(str(path) + NPY_ROW_IDS)
    return side.read_text().splitlines() if side.exists() else [str(i) for i in range(n)]


#: bytes of the rows an .npy matrix is read in by :func:`_read_npy_condensed`
NPY_BLOCK_BYTES = 1 << 21


def _read_npy_condensed(path: Path, make=None):
    """An .npy square matrix read in row blocks (plain reads: no map, so no page of the file
    counts in this process's memory) into a float32 upper triangle, with the checks of
    :class:`DistanceMatrix` and its words: the diagonal, then negative entries (row order),
    then symmetry, here at float32 precision (each lower entry against its mirror as stored:
    they agree when within :data:`SYMMETRY_RTOL` or one float32 step)."""
    fmt_lib = np.lib.format
    with open(path, "rb") as f:
        head = f.read(6)
        f.seek(0)
        if head.startswith(b"PK"):
            raise MatrixFormatError(
                f"{path}: an .npz archive, not a NumPy .npy matrix; name it .npz"
            )
        try:
            version = fmt_lib.read_magic(f)
            read_header = (
                fmt_lib.read_array_header_1_0
                if version == (1, 0)
                else fmt_lib.read_array_header_2_0
            )
            shape, _fortran, dtype = read_header(f)
        except (OSError, ValueError, EOFError):
            raise MatrixFormatError(f"{path}: not a NumPy .npy distance matrix") from None
        if dtype.hasobject or dtype.kind not in "fiub":
            raise MatrixFormatError(f"{path}: not a NumPy .npy distance matrix")
        if len(shape) != 2 or shape[0] != shape[1]:
            raise ValueError(f"distance matrix must be square, got shape {tuple(shape)}")
        n = int(shape[0])
        ids = _npy_ids(path, n)
        if len(ids) != n:
            raise ValueError(f"{len(ids)} ids for a {n} x {n} matrix")
        check_unique_ids(ids)
        offset = f.tell()
        row_bytes = n * dtype.itemsize
        if path.stat().st_size < offset + n * row_bytes:
            raise MatrixFormatError(f"{path}: not a NumPy .npy distance matrix (truncated file?)")
        # the diagonal first (DistanceMatrix checks it before anything else)
        cell = np.empty(1, dtype=dtype)
        for k in range(n):
            f.seek(offset + k * row_bytes + k * dtype.itemsize)
            f.readinto(cell)
            if cell[0] != 0:
                raise diagonal_error(ids, k, cell[0])
        f.seek(offset)
        triangle = (make or _TriangleMemory)(n)
        rows = max(1, NPY_BLOCK_BYTES // max(1, n * 8))
        raw = np.empty((rows, n), dtype=dtype)
        negative = asymmetric = None
        for r0 in range(0, n, rows):
            r1 = min(n, r0 + rows)
            got = f.readinto(memoryview(raw[: r1 - r0]).cast("B"))
            if got != (r1 - r0) * row_bytes:
                raise MatrixFormatError(
                    f"{path}: not a NumPy .npy distance matrix (truncated file?)"
                )
            # (a Fortran-order file holds columns: the rows of the transpose, the same
            # matrix when it is symmetric, which is checked as for rows)
            block = raw[: r1 - r0].astype(np.float64)
            if negative is None and np.fmin.reduce(block, axis=None) < 0:
                i, j = np.argwhere(block < 0)[0]
                negative = (r0 + int(i), int(j), block[i, j])
            for k in range(r0, r1):
                row = block[k - r0]
                triangle.put_upper(k, row[k + 1 :])
                if k == 0:
                    continue
                asymmetric = _first_asymmetry(triangle.mirror(k), k, row, asymmetric)
    if negative is not None:
        raise negative_error(ids, *negative)
    if asymmetric is not None:
        raise asymmetry_error(ids, *asymmetric)
    return CondensedMatrix(triangle.values, ids) if make is None else (ids, triangle)


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


#: fields that are all numbers, one space apart (a whole row checked in one match)
_NUMBERS = re.compile(rf"(?:{_NUMBER.pattern})(?: (?:{_NUMBER.pattern}))*", re.IGNORECASE)


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


def _phylip_layout(path: Path, n: int, rows, counts, strict_counts, wrapped: bool) -> str:
    """The layout every row fits (relaxed square, strict square, relaxed lower, strict lower):
    ``counts`` are the fields of each row, ``strict_counts`` the fields after its first 10
    characters (None when it has no more); ``rows`` give (line, field count) for the error."""
    if all(c >= n + 1 for c in counts):
        return "square"
    if not wrapped and all(c == n for c in strict_counts):
        return "strict square"
    if all(c >= k + 1 for k, c in enumerate(counts)):
        return "lower"
    if not wrapped and all(c == k for k, c in enumerate(strict_counts)):
        return "strict lower"
    square_like = counts[0] > 1
    for k, (ln, count) in enumerate(rows):
        want = n if square_like else k
        if count < want + 1:
            raise MatrixFormatError(
                f"{path}, line {ln}: a name and {count - 1} value(s); a "
                f"{'square' if square_like else 'lower-triangular'} matrix needs a name and "
                f"{want} here (the first row holds "
                f"{'values' if square_like else 'a name only'})"
            )
    raise MatrixFormatError(
        f"{path}: rows fit neither a square nor a lower-triangular matrix of {n} taxa"
    )


def _strict_split(text: str):
    """A strict PHYLIP row: (name, fields after the first 10 characters with their columns)."""
    return (text[:10].strip(), _fields(text[10:])) if len(text) > 10 else (text.strip(), [])


def _phylip_row(path: Path, n: int, layout: str, k: int, ln: int, text: str, fields, glued_counts):
    """Row ``k`` of a PHYLIP matrix of ``layout``: (name, values as float64). ``fields``:
    the row's (line, field, column) triples, or None for a one-line row whose columns are
    worked out only when a value is not a number (the streamed reader's fast path)."""
    want = n if layout.endswith("square") else k
    if fields is None:
        words = text.split()
        if not layout.startswith("strict") and (
            want == 0 or _NUMBERS.fullmatch(" ".join(words[len(words) - want :]))
        ):
            name = _row_name(
                path, n, layout, want, ln, len(words), words[: len(words) - want], glued_counts
            )
            return name, np.array(words[len(words) - want :], dtype=np.float64)
        fields = [(ln, f, c) for f, c in _fields(text)]
    if layout.startswith("strict"):
        name, strict = _strict_split(text)
        cells = [(ln, f, c + 10) for f, c in strict]
    else:
        words, cells = fields[: len(fields) - want], fields[len(fields) - want :]
        name = _row_name(
            path, n, layout, want, ln, len(fields), [f for _, f, _ in words], glued_counts
        )
    if all(_NUMBER.fullmatch(f) for _, f, _ in cells):
        return name, np.array([f for _, f, _ in cells], dtype=np.float64)
    return name, np.array([_parse_float(path, cl, f, c) for cl, f, c in cells], dtype=np.float64)


def _row_name(path, n, layout, want, ln, count, words, glued_counts) -> str:
    """The name of a relaxed row (its words before the ``want`` values)."""
    glued = _trailing_number_words(words)
    glued_counts.add(len(glued))
    # names may end in numbers ("strain 12", the same on every row), but a value
    # (a decimal) or a varying count of numbers there is a row with too many or too
    # few values: a ragged matrix, or a lower triangle with its diagonal
    if any(not w.isdigit() for w in glued) or len(glued_counts) > 1:
        raise MatrixFormatError(
            f"{path}, line {ln}: {count - 1} value(s) after the first word, but a "
            f"{layout} matrix of {n} taxa has {want} on this row (a ragged matrix? "
            f"{(glued or ['the numbers'])[0]!r} would be read as part of the name); "
            "PHYLIP's square rows hold n values, its lower triangle none on the first "
            "row and no diagonal"
        )
    return " ".join(words)


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
    field that is not a number, non-ASCII text) is read by :func:`_phylip_row`, and errors
    are named there."""
    native = _native_or_none()
    texts = [text for _, text, _ in rows]
    counts = [len(f) for _, _, f in rows] if wrapped else _field_counts(texts, 0, native)
    strict_counts = None  # consulted only when the rows are not a relaxed square
    if not all(c >= n + 1 for c in counts):
        counted = _field_counts(texts, 10, native)
        strict_counts = [c if len(t) > 10 else 0 for c, t in zip(counted, texts)]
    layout = _phylip_layout(
        path, n, [(ln, c) for (ln, _, _), c in zip(rows, counts)], counts, strict_counts, wrapped
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
    glued_counts: set[int] = set()
    for k, (ln, text, fields) in enumerate(rows):
        if ends[k] < 0:  # not taken by the compiled core: read (and errors named) here
            name, values = _phylip_row(path, n, layout, k, ln, text, fields, glued_counts)
            if square:
                data[k] = values
            else:
                data[k, :k] = values
                data[:k, k] = values
        elif strict:
            name = text[:10].strip() if len(text) > 10 else text.strip()
        else:
            words = text[: ends[k]].split()
            want = n if square else k
            name = _row_name(path, n, layout, want, ln, counts[k], words, glued_counts)
        ids.append(name)
    return DistanceMatrix(data, ids)


def _text_lines(path: Path):
    """(line number, text) of each line of a text matrix file, streamed: the checks and
    decoding of :func:`_matrix_text` line by line (CR LF, CR and LF line ends)."""
    with open(path, "rb") as f:
        if f.read(2) == b"\x1f\x8b":
            raise MatrixFormatError(f"{path}: a gzip file; decompress it first (gunzip)")
        f.seek(0)
        offset, lineno = 0, 0
        for raw in f:
            control = re.search(rb"[\x00-\x08\x0e-\x1a\x1c-\x1f]", raw)
            if control is not None:
                at = offset + control.start()
                raise MatrixFormatError(
                    f"{path}: byte {at} is not text (0x{raw[control.start()]:02x}): a binary "
                    "file, not a PHYLIP or TSV distance matrix"
                )
            if offset == 0:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            offset += len(raw)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                text = raw.decode("latin-1")
            parts = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
            for part in parts[:-1] if parts[-1] == "" else parts:
                lineno += 1
                yield lineno, part


def _first_asymmetry(mirror, k: int, row, asymmetric):
    """The first asymmetric pair so far, given row ``k`` of a square matrix (float64) and
    ``mirror``, d(j, k) for j < k as the float32 triangle stores them: equal within the
    reader's tolerance or one float32 step counts as symmetric (the stored mirror is
    rounded)."""
    lower = row[:k]
    with np.errstate(invalid="ignore"):  # Inf - Inf: NaN, not agreeing (Inf == Inf agrees)
        ok = _agree(lower, mirror.astype(np.float64)) | (
            np.abs(lower - mirror) <= np.spacing(np.abs(mirror))
        )
    if ok.all():
        return asymmetric
    j = int(np.flatnonzero(~ok)[0])
    if asymmetric is None or (j, k) < asymmetric[:2]:
        return (j, k, float(mirror[j]), float(lower[j]))
    return asymmetric


def _streamed_rows(path: Path, n: int, layout: str, groups, lines, glued_counts):
    """(k, name, values) of each row of a streamed PHYLIP matrix (``groups``: line, fields,
    strict fields, lines of each row; ``lines`` the non-blank lines after the header). Blocks
    of one-line rows (about 2^17 values) have their numbers read by the compiled core
    (``parse_matrix_rows``, as :func:`_phylip_rows`) when it is built; wrapped rows, rows it
    does not take and every error go through :func:`_phylip_row`."""
    native = _native_or_none()
    square, strict = layout.endswith("square"), layout.startswith("strict")
    block = max(1, (1 << 17) // max(n, 1))
    buf = np.empty((block, n)) if native is not None else None
    k = 0
    while k < len(groups):
        batch = []
        while (
            k + len(batch) < len(groups) and len(batch) < block and groups[k + len(batch)][3] == 1
        ):
            batch.append(next(lines))
        if not batch:  # a row wrapped onto continuation lines
            ln, t = next(lines)
            fields = [(ln, f, c) for f, c in _fields(t)]
            for _ in range(groups[k][3] - 1):
                cl, ct = next(lines)
                fields.extend((cl, f, c) for f, c in _fields(ct))
            yield k, *_phylip_row(path, n, layout, k, ln, t, fields, glued_counts)
            k += 1
            continue
        ends = [-1] * len(batch)
        if native is not None:
            wants = np.array([n if square else k + r for r in range(len(batch))], dtype=np.int64)
            first = np.full(len(batch), 10 if strict else 0, dtype=np.int64)
            texts = [t for _, t in batch]
            ends = native.parse_matrix_rows(texts, first, wants, buf, False, False, 0).tolist()
        for r, (ln, t) in enumerate(batch):
            row_k, want = k + r, (n if square else k + r)
            if ends[r] < 0:  # not taken by the compiled core: read (and errors named) here
                yield row_k, *_phylip_row(path, n, layout, row_k, ln, t, None, glued_counts)
            elif strict:
                yield row_k, (t[:10].strip() if len(t) > 10 else t.strip()), buf[r, :want]
            else:
                words = t[: ends[r]].split()
                name = _row_name(path, n, layout, want, ln, groups[row_k][1], words, glued_counts)
                yield row_k, name, buf[r, :want]
        k += len(batch)


def _read_phylip_condensed(path: Path, make=None):
    """A PHYLIP matrix streamed into a float32 upper triangle: one pass for each row's field
    counts (the layout, by :func:`_phylip_layout`), one for the values (each row by
    :func:`_phylip_row`), so neither the text nor a float64 square is ever held. The
    checks and words of :func:`_read_phylip` and :class:`DistanceMatrix`; symmetry of a
    square layout at float32 precision (as :func:`_read_npy_condensed`)."""
    lines = ((ln, t) for ln, t in _text_lines(path) if t.strip())
    first = next(lines, None)
    if first is None:
        raise MatrixFormatError(f"{path}: file is empty; expected a distance matrix")
    lineno, text = first
    head = text.split()
    if len(head) != 1 or not head[0].isdigit():
        raise MatrixFormatError(
            f"{path}, line {lineno}: expected the number of taxa, got {text[:40]!r}"
        )
    n = int(head[0])
    # pass 1: field counts only; a wrapped row (indented lines of numbers) joins its row
    rows: list[tuple[int, int, int, bool]] = []  # line, fields, strict fields, continues
    native = _native_or_none()
    block = max(1, (1 << 17) // max(n, 1))  # lines counted at once (the compiled core's)
    while chunk := list(itertools.islice(lines, block)):
        texts = [t for _, t in chunk]
        counts = _field_counts(texts, 0, native)
        stricts = _field_counts(texts, 10, native)
        for (ln, t), c, sc in zip(chunk, counts, stricts):
            cont = t[:1].isspace() and all(_NUMBER.fullmatch(w) for w in t.split())
            rows.append((ln, c, sc if len(t) > 10 else 0, cont))
    wrapped = False
    if len(rows) > n:
        groups: list[list] = []
        for r in rows:
            if groups and r[3]:
                groups[-1][1] += r[1]
                groups[-1][3] += 1
            else:
                groups.append([r[0], r[1], r[2], 1])
        if len(groups) == n:
            wrapped = True
    if not wrapped:
        if len(rows) != n:
            raise MatrixFormatError(f"{path}: header says {n} taxa, found {len(rows)} rows")
        groups = [[ln, c, sc, 1] for ln, c, sc, _ in rows]
    del rows
    counts = [g[1] for g in groups]
    layout = _phylip_layout(
        path, n, [(g[0], g[1]) for g in groups], counts, [g[2] for g in groups], wrapped
    )
    del counts
    square = layout.endswith("square")
    # pass 2: the values, row by row, into the triangle
    triangle = (make or _TriangleMemory)(n)
    ids: list[str] = []
    glued_counts: set[int] = set()
    diagonal = negative = asymmetric = None
    lines = ((ln, t) for ln, t in _text_lines(path) if t.strip())
    next(lines)
    for k, name, row in _streamed_rows(path, n, layout, groups, lines, glued_counts):
        ids.append(name)
        if square:
            if diagonal is None and row[k] != 0:
                diagonal = (k, row[k])
            if negative is None and np.fmin.reduce(row) < 0:
                j = int(np.flatnonzero(row < 0)[0])
                negative = (k, j, row[j])
            triangle.put_upper(k, row[k + 1 :])
            if k:
                asymmetric = _first_asymmetry(triangle.mirror(k), k, row, asymmetric)
        elif k:
            triangle.put_lower(k, row)  # d(j, k), j < k
            if np.fmin.reduce(row) < 0:
                j = int(np.flatnonzero(row < 0)[0])
                if negative is None or (j, k) < negative[:2]:
                    negative = (j, k, row[j])
    check_unique_ids(ids)
    if diagonal is not None:
        raise diagonal_error(ids, *diagonal)
    if negative is not None:
        raise negative_error(ids, *negative)
    if asymmetric is not None:
        raise asymmetry_error(ids, *asymmetric)
    return CondensedMatrix(triangle.values, ids) if make is None else (ids, triangle)


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
