"""The checks every distance matrix passes (symmetry, diagonal, negative values, writable ids), the
float32 narrowing and the condensed-pair index: one rule each, used by every reader and writer."""

from __future__ import annotations

import re

import numpy as np

from .._core import condensed_pair
from ..errors import MatrixFormatError

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
            # a finite difference only: Inf against a number is not "within a relative
            # tolerance" of Inf (the float32 triangle stores a value past its range so)
            | (
                (np.abs(a - b) <= SYMMETRY_RTOL * np.maximum(np.abs(a), np.abs(b)))
                & np.isfinite(a - b)
            )
        )


def shown_value(value) -> str:
    """A distance as every message shows it (both tree paths, every reader): the shortest
    text that reads back to the float64 value read (``repr``), never a float32 rounding."""
    return repr(float(value))


def asymmetry_error(ids, i: int, j: int, dij: float, dji: float) -> MatrixFormatError:
    """The error of a pair whose two entries disagree (every reader's words)."""
    return MatrixFormatError(
        f"matrix is not symmetric: {ids[i]!r}/{ids[j]!r} = {shown_value(dij)} but "
        f"{ids[j]!r}/{ids[i]!r} = {shown_value(dji)} (distances must agree to a "
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


def past_float32_error(ids, i: int, j: int, value: float) -> MatrixFormatError:
    """The error of a distance the float32 triangle of the low-memory tree cannot hold
    (the readers' words; the value as read, not the Inf it would become)."""
    return MatrixFormatError(
        f"{ids[i]!r}/{ids[j]!r} = {shown_value(value)} is past float32's range (at most "
        f"{float(np.finfo(np.float32).max)!r}), in which the low-memory tree stores distances; "
        "build the tree without --low-memory (low_memory=False), or scale the distances"
    )


def diagonal_error(ids, k: int, value: float) -> MatrixFormatError:
    return MatrixFormatError(
        f"not a distance matrix: the distance of {ids[k]!r} to itself (row {k + 1} of "
        f"{len(ids)}) is {shown_value(value)}; a distance matrix has 0 on its diagonal "
        "(alignment scores or similarities are not distances)"
    )


def negative_error(ids, i: int, j: int, value: float) -> MatrixFormatError:
    return MatrixFormatError(
        f"not a distance matrix: {ids[i]!r}/{ids[j]!r} = {shown_value(value)} is negative "
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


def to_float32(values, out=None) -> np.ndarray:
    """``values`` rounded to float32 (into ``out`` when given): the one place distances are
    narrowed (the low-memory triangle, float32 ``.cdist`` files). A finite value past
    float32's range becomes Inf without NumPy's overflow warning on the user's terminal (the
    triangle readers refuse it, naming the value read: :func:`past_float32_error`)."""
    with np.errstate(over="ignore"):
        if out is None:
            return np.ascontiguousarray(values, dtype=np.float32)
        out[...] = values
        return out


#: a number as a matrix file holds it: decimal point, exponent, sign, nan/inf; no decimal
#: comma, no digit separators (Python's float() also takes "1_000")
_NUMBER = re.compile(
    r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|infinity|nan)", re.IGNORECASE
)


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


def _first_asymmetry(mirror, k: int, row, asymmetric):
    """The first asymmetric pair so far, given row ``k`` of a square matrix (float64) and
    ``mirror``, d(j, k) for j < k as the float32 triangle stores them: equal within the
    reader's tolerance or one float32 step counts as symmetric (the stored mirror is
    rounded)."""
    lower = row[:k]
    with np.errstate(invalid="ignore"):  # Inf - Inf: NaN, not agreeing (Inf == Inf agrees)
        ok = (
            _agree(lower, mirror.astype(np.float64))
            | (np.abs(lower - mirror) <= np.spacing(np.abs(mirror)))
            | (to_float32(lower) == mirror)  # stored alike (two values past float32: Inf)
        )
    if ok.all():
        return asymmetric
    j = int(np.flatnonzero(~ok)[0])
    if asymmetric is None or (j, k) < asymmetric[:2]:
        return (j, k, float(mirror[j]), float(lower[j]))
    return asymmetric
