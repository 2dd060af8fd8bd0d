"""The one file-format sniffer: the magic bytes of every binary file bioaccel reads or writes
(and of the gzip files it reads), and what a matrix file's name or first bytes say it holds.

Every reader that asks "what is this file?" asks here: the matrix readers
(:func:`matrix_format_of`), ``bioaccel tree``'s choice between sequences and a matrix
(:func:`looks_like_matrix`) and the sequence reader naming a binary file given as sequences
(:func:`magic_of`). ``tests/core/test_one_x.py`` fails when a magic-byte literal appears
anywhere else.
"""

from __future__ import annotations

import os
from pathlib import Path

from .outputs import MATRIX

#: the first bytes of each binary kind, longest first where one is a prefix of another
MAGIC = {
    "cdist": b"BACDIST1",  # bioaccel's condensed matrix (distances/_cdist.py: the layout)
    "npy": b"\x93NUMPY",  # a NumPy array (numpy.lib.format)
    "zip": b"PK",  # a zip archive: .npz (matrices, tiles, sketches)
    "gzip": b"\x1f\x8b",
}

#: the matrix format a file's extension names (the first of :data:`MATRIX`'s formats)
MATRIX_SUFFIXES = {ext: formats[0] for ext, formats in MATRIX.items()}

#: extensions that name a matrix and never sequences (``.phy``/``.phylip`` may be either)
_ONLY_MATRIX = {ext for ext in MATRIX_SUFFIXES if ext not in (".phy", ".phylip")}


def magic_of(head: bytes) -> str | None:
    """The kind (a key of :data:`MAGIC`) whose magic bytes ``head`` starts with, or None.

    >>> magic_of(b"\\x93NUMPY\\x01\\x00"), magic_of(b">seq1"), magic_of(b"BACDIST1....")
    ('npy', None, 'cdist')
    """
    for kind, magic in MAGIC.items():
        if head.startswith(magic):
            return kind
    return None


def _head(path: str | os.PathLike, size: int) -> bytes | None:
    try:
        with open(path, "rb") as f:
            return f.read(size)
    except OSError:
        return None


def matrix_format_of(path: str | os.PathLike, sniff: bool = False) -> str:
    """The format of the matrix file ``path``: from its extension; without a known one, and
    when ``sniff``, from its first bytes (npy, cdist, npz; a TSV's header line starts with a
    tab); else phylip."""
    path = Path(path)
    fmt = MATRIX_SUFFIXES.get(path.suffix.lower())
    if fmt is not None:
        return fmt
    if sniff:
        head = _head(path, 64) or b""
        kind = magic_of(head)
        if kind in ("npy", "cdist"):
            return kind
        if kind == "zip":
            return "npz"
        if head.startswith(b"\t"):
            return "tsv"
    return "phylip"


def looks_like_matrix(path: str | os.PathLike) -> bool:
    """True when ``path`` holds a distance matrix (npy, npz, cdist, TSV, PHYLIP matrix) rather
    than sequences: its extension names a matrix, or its first bytes are a matrix format's
    (the first line of a PHYLIP matrix is ``n`` alone; an alignment's is ``n sites``)."""
    path = Path(path)
    if path.suffix.lower() in _ONLY_MATRIX:
        return True
    head = _head(path, 4096)
    if head is None:
        return False
    if magic_of(head) in ("npy", "zip", "cdist") or head.startswith(b"\t"):
        return True
    head = head.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte-order mark
    lines = [ln for ln in head.splitlines() if ln.strip()]  # LF, CR LF or CR alone
    return bool(lines) and lines[0].strip().isdigit()
