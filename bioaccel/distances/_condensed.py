""":class:`CondensedMatrix` (the float32 upper triangle, input of the low-memory NJ) and the
triangles it is filled through: in memory, or :class:`TriangleFile` (a scratch file beside the
output, never held)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np

from .._core import pairs_before
from ..sequences import check_unique_ids
from ._checks import check_condensed_distances, to_float32


def _upper_at(n: int) -> np.ndarray:
    """Where rows start in a condensed upper triangle of n, shifted: d(i, j), i < j, is entry
    ``_upper_at(n)[i] + j``; d(j, k) for all j < k is ``values[_upper_at(n)[:k] + k]``."""
    rows = np.arange(n, dtype=np.int64)
    return pairs_before(rows, n) - rows - 1


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


class CondensedMatrix:
    """Distances as a float32 condensed upper triangle (``values``: d(i, j), i < j, row by
    row, n (n - 1) / 2 of them: SciPy's and R's ``dist`` order) with their ``ids``: the input
    of the low-memory :func:`bioaccel.nj`, n^2 / 2 x 4 bytes. Made by
    :meth:`DistanceMatrix.read_condensed`, :meth:`CondensedDistances.load
    <bioaccel.distances.CondensedDistances.load>` or :meth:`from_matrix`; the values are
    checked as :class:`DistanceMatrix` checks its own (no negative distance).

    >>> from bioaccel.distances import DistanceMatrix
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
        """The upper triangle of a :class:`DistanceMatrix` (anything with ``data`` and
        ``ids``) or of a square array, row by row: no index arrays of n^2 / 2. A
        DistanceMatrix made from a triangle gives its triangle (no square is made)."""
        ids = getattr(d, "ids", None)
        if ids is not None and getattr(d, "_data", ...) is None:  # condensed already
            return cls(d._condensed, ids)
        data = np.asarray(d.data if ids is not None else d)
        n = data.shape[0]
        values = np.empty(n * (n - 1) // 2, dtype=np.float32)
        start = 0
        for i in range(n - 1):
            to_float32(data[i, i + 1 :], values[start : start + n - i - 1])
            start += n - i - 1
        return cls(values, ids if ids is not None else range(n))

    def __len__(self) -> int:
        return len(self.ids)

    def __repr__(self) -> str:
        return f"<CondensedMatrix {len(self)} x {len(self)} float32>"


def _first_past_float32(raw, stored) -> int | None:
    """The index of the first value of ``raw`` that is finite but ``stored`` (its float32
    narrowing) holds as Inf, or None."""
    inf = np.isinf(stored)
    if not inf.any():
        return None
    past = np.flatnonzero(inf & np.isfinite(np.asarray(raw, dtype=np.float64)))
    return int(past[0]) if past.size else None


class _Narrowed:
    """What the triangles share: ``first_past_float32``, (i, j, the value read) of the first
    finite distance (row order) that float32 cannot hold (it would be stored as Inf); the
    readers refuse it, naming the value read, after the checks of :class:`DistanceMatrix`."""

    first_past_float32 = None

    def _note_upper(self, k: int, raw, stored) -> None:
        at = _first_past_float32(raw, stored)
        if at is not None:
            self._note_past((k, k + 1 + at, float(np.asarray(raw)[at])))

    def _note_lower(self, k: int, raw, stored) -> None:
        at = _first_past_float32(raw, stored)
        if at is not None:
            self._note_past((at, k, float(np.asarray(raw)[at])))

    def _note_past(self, pair) -> None:
        if self.first_past_float32 is None or pair[:2] < self.first_past_float32[:2]:
            self.first_past_float32 = pair


class _TriangleMemory(_Narrowed):
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
        stored = to_float32(upper, self.values[self._at[k] + k + 1 : self._at[k] + self.n])
        self._note_upper(k, upper, stored)

    def put_lower(self, k: int, lower) -> None:
        """d(j, k) for j < k (row k of a lower triangle)."""
        stored = to_float32(lower)
        self.values[self._at[:k] + k] = stored
        self._note_lower(k, lower, stored)

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


class TriangleFile(_Narrowed):
    """The float32 triangle of the low-memory readers written to ``path`` row by row, never
    held whole: the input of the ``bioaccel-nj`` program (:mod:`bioaccel.trees._program`).
    A square input's upper parts go in the ``.cdist`` order (``layout`` "upper"); a lower
    triangle's rows in theirs ("lower": row k's d(k, j < k) after row k - 1's), which the
    program turns as it reads. :meth:`mirror` reads d(j, k), j < k, from a strip of
    :data:`STRIP` columns per row, read once per block of as many rows (plus the block's own
    rows, kept): about n x STRIP x 8 bytes held. ``first_not_finite``: (i, j, value as
    stored) of the first NaN or Inf in the upper triangle's row order, which the in-memory
    path leaves to :func:`bioaccel.nj` (a value past float32's range never gets there: the
    readers refuse it by ``first_past_float32``, naming the value read)."""

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
        self._note_upper(k, upper, values)
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
        self._note_lower(k, lower, values)
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
