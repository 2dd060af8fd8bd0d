"""The binary condensed format ``.cdist`` (read by the R package's ``read_bioaccel_dist``): its one
header writer (:func:`cdist_header`) and reader (:func:`_cdist_head`), block reads and checks."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from .._core import MAGIC, condensed_pair
from ..errors import MatrixFormatError
from ._checks import negative_error, past_float32_error, to_float32
from ._condensed import CondensedMatrix

#: The binary condensed format (``.cdist``), read by the R package (``read_bioaccel_dist``):
#: 8 bytes ``BACDIST1``; uint32 bytes per value (8: float64, 4: float32); uint32 0;
#: uint64 n; uint64 byte length L of the labels; L bytes of UTF-8 labels, each ending in
#: "\n"; then n (n - 1) / 2 little-endian values, the upper triangle row by row (R's
#: ``dist`` order).
CDIST_MAGIC = MAGIC["cdist"]


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


def _cdist_blocks(f, path: Path, width: int, labels: list[str], out=None):
    """(start, float32 block) of the values of an open ``.cdist`` file, read in blocks
    (plain reads: the file's pages stay in the page cache, out of this process's memory,
    where a map would count them); float64 values are rounded block by block. With ``out``
    (the float32 values) the blocks are views of it, filled in place. The values are checked
    as read (float64 ones before rounding, so a message names the file's value): the first
    negative is refused at once, with :class:`DistanceMatrix`'s words; a finite value past
    float32's range (which the triangle would hold as Inf) after the last block."""
    n = len(labels)
    m = n * (n - 1) // 2
    step = 1 << 18
    wide = np.empty(step, dtype="<f8") if width == 8 else None  # read, then rounded
    mine = np.empty(step, dtype=np.float32) if out is None else None
    past = None
    for a in range(0, m, step):
        size = min(step, m - a)
        target = out[a : a + size] if out is not None else mine[:size]
        chunk = wide[:size] if width == 8 else target
        if f.readinto(memoryview(chunk).cast("B")) != chunk.nbytes:
            raise MatrixFormatError(f"{path}: truncated file")
        if width == 4 and not np.little_endian:  # the file is little-endian
            target.byteswap(inplace=True)
        if size and np.fmin.reduce(chunk) < 0:
            k = a + int(np.flatnonzero(chunk < 0)[0])
            error = negative_error(labels, *condensed_pair(k, n), chunk[k - a])
            raise MatrixFormatError(f"{path}: {error}")  # as read_condensed names it
        if chunk is not target:
            to_float32(chunk, target)
            if past is None and np.isinf(target).any():
                over = np.flatnonzero(np.isinf(target) & np.isfinite(chunk))
                if over.size:
                    k = a + int(over[0])
                    past = (*condensed_pair(k, n), float(chunk[k - a]))
        yield a, target
    if past is not None:
        raise MatrixFormatError(f"{path}: {past_float32_error(labels, *past)}")


def load_cdist(path: Path) -> CondensedMatrix:
    """A ``.cdist`` file as a :class:`CondensedMatrix`, read in blocks into one new float32
    array (see :func:`_cdist_blocks`, which checks the values as read)."""
    with open(path, "rb") as f:
        width, n, labels, _ = _cdist_head(f, path)
        values = np.empty(n * (n - 1) // 2, dtype=np.float32)
        for _ in _cdist_blocks(f, path, width, labels, out=values):
            pass
    return CondensedMatrix(values, labels)


def scan_cdist(path: Path) -> tuple[list[str], int, int, tuple | None]:
    """A ``.cdist`` file checked as :func:`load_cdist` and :class:`CondensedMatrix` check
    it (a negative value and one past float32's range are refused with their words), without
    holding its values: (labels, bytes per value, offset of the values, (i, j, value) of the
    first NaN or Inf in row order or None). The input check of the ``bioaccel-nj`` program."""
    with open(path, "rb") as f:
        width, n, labels, offset = _cdist_head(f, path)
        first_not_finite = None
        for a, block in _cdist_blocks(f, path, width, labels):
            if first_not_finite is None and not np.isfinite(block).all():
                k = a + int(np.flatnonzero(~np.isfinite(block))[0])
                first_not_finite = (*condensed_pair(k, n), float(block[k - a]))
    return labels, width, offset, first_not_finite


def read_cdist_values(path: Path) -> tuple[np.ndarray, list[str]]:
    """(float64 values, labels) of a ``.cdist`` file at its own precision, through the one
    header reader (:func:`_cdist_head`): :meth:`DistanceMatrix.read` of a ``.cdist``."""
    with open(path, "rb") as f:
        width, n, labels, _ = _cdist_head(f, path)
        values = np.fromfile(f, dtype="<f8" if width == 8 else "<f4", count=n * (n - 1) // 2)
    return values.astype(np.float64), labels
