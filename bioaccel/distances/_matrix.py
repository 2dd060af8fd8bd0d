""":class:`DistanceMatrix`: a labelled square matrix of pairwise distances, reading and writing
every matrix format through the format modules (``_text``, ``_npy``, ``_cdist``), and the
low-memory triangle file of a matrix file."""

from __future__ import annotations

import codecs
import os
from pathlib import Path

import numpy as np

from .._core import (
    MATRIX,
    NPY_ROW_IDS,
    atomic_output,
    check_threads,
    matrix_format_of,
    output_format,
    without_negative_zero,
)
from ..errors import MatrixFormatError
from ..sequences import check_unique_ids
from ._cdist import cdist_header, load_cdist, read_cdist_values
from ._checks import (
    check_condensed_distances,
    check_distances,
    check_symmetric,
    check_writable_ids,
)
from ._condensed import CondensedMatrix, TriangleFile, _square_from_condensed
from ._npy import _npy_ids, _read_npy_condensed
from ._text import (
    _made_ahead,
    _matrix_text,
    _read_phylip,
    _read_phylip_condensed,
    _read_tsv,
    matrix_text,
)


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

    #: how the distances were made, ``(model, pairwise_deletion)``, when
    #: :func:`~bioaccel.distances.distance_matrix` made them; None for a file, an array or a
    #: matrix built by hand. The tree's messages give a model's hints only where one applies.
    made_by: tuple[str, bool] | None = None

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
        self.data = without_negative_zero(data, source)
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
        self._data, self._condensed = None, without_negative_zero(values, source)
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
        fmt = (format or matrix_format_of(path, sniff=True)).lower()
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
        fmt = (format or matrix_format_of(path, sniff=True)).lower()
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
            return cls.from_condensed(*read_cdist_values(path))
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
            return cls(loaded, _npy_ids(path))
        numbered = [
            (k + 1, ln) for k, ln in enumerate(_matrix_text(path).splitlines()) if ln.strip()
        ]
        if not numbered:
            raise MatrixFormatError(f"{path}: file is empty; expected a distance matrix")
        if fmt == "tsv":
            return cls(*_read_tsv(path, [ln for _, ln in numbered], threads))
        return cls(*_read_phylip(path, numbered, threads))


def write_triangle_file(path: Path, dest: Path) -> tuple[list[str], TriangleFile]:
    """A PHYLIP or ``.npy`` matrix file checked as :meth:`DistanceMatrix.read_condensed`
    checks it (its errors and words) and written to ``dest`` as a :class:`TriangleFile`,
    never held whole: (ids, the closed file). Other formats raise ValueError."""
    path = Path(path)
    fmt = matrix_format_of(path, sniff=True).lower()
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
