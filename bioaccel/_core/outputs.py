"""Output names that say what the file holds: the one check of every writer and command.

A name's extension must be one its kind of output accepts, and it decides the format
(``d.csv`` is refused rather than filled with PHYLIP). A name without an extension gets
the kind's default format, or the explicitly asked one. An explicit format must agree
with the extension.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: extension -> the formats such a file may hold (the first is the default)
MATRIX = {".phy": ("phylip", "phylip-lower"), ".phylip": ("phylip", "phylip-lower"),
          ".dist": ("phylip", "phylip-lower"), ".mat": ("phylip", "phylip-lower"),
          ".tsv": ("tsv",), ".npy": ("npy",), ".npz": ("npz",), ".cdist": ("cdist",)}
CONDENSED = {".cdist": ("cdist",)}
TILE = {".npz": ("npz",)}
SKETCHES = {".npz": ("npz",)}
SCORES = {".npy": ("npy",), ".tsv": ("tsv",)}
ALIGNMENTS = {".tsv": ("tsv",)}
NEWICK = {ext: ("newick",) for ext in (".nwk", ".newick", ".tre", ".tree", ".treefile", ".nw")}


def output_format(path: str | os.PathLike, allowed: Mapping[str, tuple[str, ...]], what: str,
                  format: str | None = None, default: str | None = None) -> str:
    """The format to write ``path`` in, or a ``ValueError`` naming the accepted extensions.

    Parameters
    ----------
    allowed : extension -> formats, e.g. :data:`MATRIX`
    what : the kind of output, for messages ("distance matrix")
    format : explicitly asked format (``--format``), or None
    default : format of a name without an extension (None: such names are refused)

    >>> output_format("d.phy", MATRIX, "distance matrix")
    'phylip'
    >>> output_format("d.csv", MATRIX, "distance matrix")
    Traceback (most recent call last):
    ...
    ValueError: d.csv: a distance matrix is not written as .csv; name it .cdist, .dist, .mat, .npy, .npz, .phy, .phylip or .tsv
    """
    ext = Path(path).suffix.lower()
    fmt = format.lower() if format else None
    names = _or_list(sorted(allowed))
    if ext in allowed:
        if fmt is None:
            return allowed[ext][0]
        if fmt in allowed[ext]:
            return fmt
        fits = [e for e, fmts in sorted(allowed.items()) if fmt in fmts]
        raise ValueError(f"{path}: the name says {allowed[ext][0]} but the format asked is {fmt}; "
                         + (f"name it {_or_list(fits)}" if fits else f"{what} formats: {names}"))
    if ext:
        raise ValueError(f"{path}: a {what} is not written as {ext}; name it {names}")
    every = {f for fmts in allowed.values() for f in fmts}
    if fmt is not None:
        if fmt not in every:
            raise ValueError(f"unknown {what} format {format!r}; expected one of {sorted(every)}")
        return fmt
    if default is None:
        raise ValueError(f"{path}: the name has no extension; a {what} is named {names}")
    return default


def without_negative_zero(values):
    """``values`` with every -0.0 turned into 0.0 (IEEE: -0.0 + 0.0 == +0.0; NaN, Inf and
    every other value unchanged). Every matrix writer passes its values through this, so no
    file holds "-0.0" (``-log(1)`` of identical sequences gives -0.0 in several models)."""
    return values + values.dtype.type(0) if values.dtype.kind == "f" else values


def _or_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
