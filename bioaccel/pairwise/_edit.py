"""Edit (Levenshtein) distances between unaligned sequences, all-vs-all or queries x targets.

Modes, as edlib's: ``global`` (NW: whole against whole), ``infix`` (HW: the query against
the best-matching substring of the target), ``prefix`` (SHW: the query against the best
prefix of the target). Unit costs; letters match when they are the same code, so IUPAC
codes are plain letters here (``N`` matches only ``N``), case folded, U read as T.

``max_distance=k`` lets a pair stop as soon as its distance is certain to exceed k; such
pairs are reported as ``k + 1`` (a sentinel: "more than k"). ``normalize=True`` divides by
the longer length (global) or the query length (infix, prefix), giving float64 in [0, 1].

On the ``cpu`` backend, global distances of queries longer than 128 letters are computed in
Ukkonen's band: only the diagonals i - j that a path of cost <= k can use, in 64-row blocks,
for k = 64, 128, ... until the distance is found (a query's later targets, grouped by
length, start at the largest of its first sixteen targets' distances, doubled while a
distance is larger), or up to ``max_distance``. The results are
the same as without the band (tested against edlib and the plain DP).
"""

from __future__ import annotations

import numpy as np

from .._core import check_threads
from ._dispatch import pairwise
from ._scoring import parse_mode

EDIT_MODES = {"global": 0, "nw": 0, "infix": 1, "hw": 1, "prefix": 2, "shw": 2}


def edit_distances(
    queries,
    targets=None,
    *,
    mode: str = "global",
    max_distance: int | None = None,
    normalize: bool = False,
    backend: str = "auto",
    threads: int = 0,
    devices=None,
    alphabet="auto",
) -> np.ndarray:
    """Edit distances of every query to every target (Myers/Hyyrö bit-parallel on the CPU).

    Parameters
    ----------
    queries, targets : SeqBatch, path, or sequence of str
        ``targets=None``: all-vs-all of ``queries`` (``global`` only; each pair once).
    mode : {"global", "infix", "prefix"}
    max_distance : int, optional
        Early exit; distances above it are reported as ``max_distance + 1``.
    normalize : bool
        Divide by the longer length (global) or the query length (infix/prefix).
    devices : None, "all", int, list of int or str such as "0,2"
        Spread tiles of pairs over these GPUs, with failover; see
        :mod:`bioaccel.devices._multigpu`.

    Returns
    -------
    numpy.ndarray, int32 (float64 when normalized), shape (len(queries), len(targets))

    Examples
    --------
    >>> edit_distances(["kitten"], ["sitting", "kitten"], backend="cpu").tolist()
    [[3, 0]]
    >>> edit_distances(["ACGT"], ["TTACGTTT"], mode="infix", backend="cpu").tolist()
    [[0]]
    """
    from ..sequences import as_batch_pair

    threads = check_threads(threads)
    mode_id = parse_mode(mode, EDIT_MODES, "edit-distance")
    key = str(mode).lower()
    if max_distance is not None and (
        isinstance(max_distance, bool) or int(max_distance) != max_distance or max_distance < 0
    ):
        raise ValueError(f"max_distance must be a non-negative integer, got {max_distance!r}")
    q, t = as_batch_pair(queries, targets, alphabet)
    symmetric = targets is None
    if symmetric and mode_id != 0:
        raise ValueError(f"{key} distances are not symmetric: give targets explicitly")
    k = -1 if max_distance is None else int(max_distance)
    d = pairwise(
        q,
        t,
        symmetric,
        operation="edit_distances",
        dtype=np.int32,
        backend=backend,
        devices=devices,
        threads=threads,
        kernel=lambda engine, qb, tb, sym, th: engine.edit_distances(qb, tb, mode_id, k, sym, th),
    )
    if not normalize:
        return d
    lq = q.lengths.astype(np.float64)[:, None]
    lt = t.lengths.astype(np.float64)[None, :]
    denom = np.maximum(lq, lt) if mode_id == 0 else np.broadcast_to(lq, d.shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = d / denom
    out[denom == 0] = 0.0
    return out
