"""Output names that say what the file holds: the one rule of every writer and command
(matrices, trees, alignments, tiles, sketches, scores).

A name's extension must be one its kind of output accepts, and it decides the format
(``d.csv`` is refused rather than filled with PHYLIP; ``x.msf`` is refused rather than
filled with FASTA). A name without an extension gets the kind's default format, or the
explicitly asked one. An explicit format must agree with the extension. Kinds that may be
compressed (alignments) take ``NAME.EXT.gz`` and are then written gzip-compressed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: extension -> the formats such a file may hold (the first is the default)
MATRIX = {
    ".phy": ("phylip", "phylip-lower"),
    ".phylip": ("phylip", "phylip-lower"),
    ".dist": ("phylip", "phylip-lower"),
    ".mat": ("phylip", "phylip-lower"),
    ".tsv": ("tsv",),
    ".npy": ("npy",),
    ".npz": ("npz",),
    ".cdist": ("cdist",),
}
CONDENSED = {".cdist": ("cdist",)}
#: formats of :meth:`bioaccel.DistanceMatrix.write` / ``read`` (here, below the distances
#: package, so that the CLI's option choices need not import it)
MATRIX_FORMATS = ("phylip", "phylip-lower", "tsv", "npy", "npz", "cdist")
#: what a ``.npy`` matrix's writer puts beside it (PATH + suffix): the row ids, and for a
#: query-vs-target score matrix the column ids
NPY_ROW_IDS = ".ids.txt"
NPY_COLUMN_IDS = ".target_ids.txt"
TILE = {".npz": ("npz",)}
SKETCHES = {".npz": ("npz",)}
#: an edge table of ``bioaccel neighbors`` (id1, id2, distance; or COO arrays)
NEIGHBOR_TABLE = {".tsv": ("tsv",), ".npz": ("npz",)}
SCORES = {".npy": ("npy",), ".tsv": ("tsv",)}
#: the table of pairwise alignments of ``bioaccel align --traceback``
ALIGNMENT_TABLE = {".tsv": ("tsv",)}
#: multiple alignments (:meth:`bioaccel.msa_engine.MultipleAlignment.write`, ``bioaccel msa``);
#: also ``NAME.EXT.gz``, gzip-compressed
ALIGNMENT = {
    **{ext: ("fasta",) for ext in (".fa", ".fasta", ".fas", ".afa", ".mfa")},
    **{ext: ("clustal",) for ext in (".aln", ".clustal", ".clw")},
    **{ext: ("stockholm",) for ext in (".sto", ".stockholm", ".stk")},
    ".a2m": ("a2m",),
    ".phy": ("phylip",),
    ".phylip": ("phylip",),
}
NEWICK = {ext: ("newick",) for ext in (".nwk", ".newick", ".tre", ".tree", ".treefile", ".nw")}


def output_format(
    path: str | os.PathLike,
    allowed: Mapping[str, tuple[str, ...]],
    what: str,
    format: str | None = None,
    default: str | None = None,
) -> str:
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
    return output_spec(path, allowed, what, format, default)[0]


def output_spec(
    path: str | os.PathLike,
    allowed: Mapping[str, tuple[str, ...]],
    what: str,
    format: str | None = None,
    default: str | None = None,
    compressible: bool = False,
) -> tuple[str, bool]:
    """(format, gzip): :func:`output_format`, and for a ``compressible`` kind whether the
    name ends in ``.gz`` (the extension before it then decides the format).

    >>> output_spec("x.aln.gz", ALIGNMENT, "alignment", default="fasta", compressible=True)
    ('clustal', True)
    >>> output_spec("x.msf", ALIGNMENT, "alignment", default="fasta", compressible=True)
    Traceback (most recent call last):
    ...
    ValueError: x.msf: an alignment is not written as .msf; name it .a2m, .afa, .aln, .clustal, .clw, .fa, .fas, .fasta, .mfa, .phy, .phylip, .stk, .sto or .stockholm (+ .gz for gzip)
    """
    name = Path(path).name
    compressed = compressible and name.lower().endswith(".gz")
    if compressed:
        name = name[:-3]
    ext = Path(name).suffix.lower()
    fmt = format.lower() if format else None
    names = _or_list(sorted(allowed)) + (" (+ .gz for gzip)" if compressible else "")
    # "a uclust table": a u read as "you" takes "a"
    article = "an" if what[:1].lower() in "aeio" or what[:2].lower() in ("un", "up") else "a"
    if ext in allowed:
        if fmt is None:
            return allowed[ext][0], compressed
        if fmt in allowed[ext]:
            return fmt, compressed
        fits = [e for e, fmts in sorted(allowed.items()) if fmt in fmts]
        raise ValueError(
            f"{path}: the name says {allowed[ext][0]} but the format asked is {fmt}; "
            + (f"name it {_or_list(fits)}" if fits else f"{what} formats: {names}")
        )
    every = {f for fmts in allowed.values() for f in fmts}
    if ext:
        raise ValueError(f"{path}: {article} {what} is not written as {ext}; name it {names}")
    if fmt is not None:
        if fmt not in every:
            raise ValueError(f"unknown {what} format {format!r}; expected one of {sorted(every)}")
        return fmt, compressed
    if default is None:
        raise ValueError(f"{path}: the name has no extension; {article} {what} is named {names}")
    return default, compressed


def without_negative_zero(values, source=None):
    """``values`` with every -0.0 turned into 0.0 (NaN, Inf and every other value unchanged):
    the one -0.0 rule. Every matrix (``DistanceMatrix``, its condensed form) and every matrix
    writer passes its values through this, so no file, tree or R object holds "-0.0"
    (``-log(1)`` of identical sequences gives -0.0 in several models).

    Worked in row blocks (no temporary of the whole). ``values`` is changed in place only
    when it is not the caller's: pass ``source``, the object the caller gave, and ``values``
    (an array made from it) is written to unless it may share memory with ``source`` or is
    read-only; without ``source`` ``values`` itself is the caller's. A copy is made only when
    there is a -0.0 to clean.

    >>> import numpy as np
    >>> a = np.array([-0.0, 1.0, np.nan])
    >>> b = without_negative_zero(a)
    >>> str(b[0]), str(a[0])
    ('0.0', '-0.0')
    """
    import numpy as np

    if getattr(values, "dtype", None) is None or values.dtype.kind != "f":
        return values
    if not isinstance(values, np.ndarray) or values.ndim == 0:
        return values + values.dtype.type(0)  # a scalar: IEEE -0.0 + 0.0 == +0.0
    source = values if source is None else source
    width = values.shape[1] if values.ndim == 2 else 1
    step = max(1, (1 << 20) // max(1, width))  # row blocks: no n x n temporary
    copied = False
    for r in range(0, values.shape[0], step):
        block = values[r : r + step]
        negative_zero = (block == 0) & np.signbit(block)
        if negative_zero.any():
            if not copied and (np.may_share_memory(values, source) or not values.flags.writeable):
                values, copied = values.copy(), True
                block = values[r : r + step]
            block[negative_zero] = 0.0
    return values


def _or_list(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
