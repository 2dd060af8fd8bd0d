"""A brute-force stand-in for :func:`bioaccel.neighbors.neighbors` (every pair within d by
all-vs-all ``edit_distances``), installed as ``bioaccel.neighbors`` only while that package
is not in this checkout. It follows the branch's contract: ``i < j`` sorted, ``distance``
int32, ``ids``, ``n``."""

from __future__ import annotations

import importlib
import sys
import types
from dataclasses import dataclass

import numpy as np


@dataclass
class StandinNeighbors:
    i: np.ndarray
    j: np.ndarray
    distance: np.ndarray
    ids: list
    n: int


def brute_neighbors(seqs, max_distance, model="edit", threads=0, backend="auto"):
    from bioaccel.pairwise import edit_distances
    from bioaccel.sequences import as_batch

    assert model == "edit"
    batch = as_batch(seqs)
    n = len(batch)
    if n < 2:
        z = np.zeros(0, dtype=np.int64)
        return StandinNeighbors(z, z, z.astype(np.int32), list(batch.ids), n)
    d = edit_distances(batch, backend="cpu", max_distance=max_distance, threads=threads)
    i, j = np.triu_indices(n, 1)
    keep = d[i, j] <= max_distance
    return StandinNeighbors(
        i[keep].astype(np.int64),
        j[keep].astype(np.int64),
        d[i, j][keep].astype(np.int32),
        list(batch.ids),
        n,
    )


def install() -> bool:
    """Make ``bioaccel.neighbors`` importable; True when the stand-in was installed."""
    try:
        importlib.import_module("bioaccel.neighbors")
        return False
    except ImportError:
        mod = types.ModuleType("bioaccel.neighbors")
        mod.neighbors = brute_neighbors
        mod.Neighbors = StandinNeighbors
        sys.modules["bioaccel.neighbors"] = mod
        return True
