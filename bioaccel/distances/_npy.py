"""NumPy ``.npy`` matrices read in row blocks straight into a float32 triangle (the ids from
``PATH.ids.txt`` beside them)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .._core import NPY_ROW_IDS, magic_of
from ..errors import MatrixFormatError
from ..sequences import check_unique_ids
from ._checks import (
    _first_asymmetry,
    asymmetry_error,
    diagonal_error,
    negative_error,
    past_float32_error,
)
from ._condensed import CondensedMatrix, _TriangleMemory


def _npy_ids(path: Path) -> list[str]:
    """The ids of an .npy matrix: ``PATH.ids.txt`` beside it. Without it the matrix is
    refused, naming the file to make: rows are never named 0..n-1 behind the user's back
    (a tree's tips would be numbers)."""
    side = Path(str(path) + NPY_ROW_IDS)
    if not side.exists():
        raise MatrixFormatError(
            f"{path}: no ids file {side} beside it (one id a line, row order); bioaccel "
            "distance -o x.npy writes one, DistanceMatrix.write(x.npy) too"
        )
    return side.read_text(encoding="utf-8").splitlines()


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
        if magic_of(head) == "zip":
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
        ids = _npy_ids(path)
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
        if asymmetric is not None:  # d(j, k) as the file holds it, not as float32 stores it
            j, k, _, lower = asymmetric
            f.seek(offset + j * row_bytes + k * dtype.itemsize)
            f.readinto(cell)
            upper = float(cell[0])
            # a Fortran-order file's rows are the matrix's columns: its (j, k) is (k, j)
            asymmetric = (j, k, *((lower, upper) if _fortran else (upper, lower)))
    if negative is not None:
        raise negative_error(ids, *negative)
    if asymmetric is not None:
        raise asymmetry_error(ids, *asymmetric)
    if triangle.first_past_float32 is not None:
        raise past_float32_error(ids, *triangle.first_past_float32)
    return CondensedMatrix(triangle.values, ids) if make is None else (ids, triangle)
