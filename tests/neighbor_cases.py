"""Inputs and checks the neighbour tests share: mutated families of random parents, and a
:class:`~bioaccel.neighbors.Neighbors` table as a dict of pairs (checked sorted and i < j)."""

from __future__ import annotations

import numpy as np

from bioaccel.neighbors import Neighbors


def mutate(rng, s: str, edits: int, alphabet: str) -> str:
    x = list(s)
    for _ in range(edits):
        r, p = rng.random(), int(rng.integers(len(x) + 1))
        if r < 0.5 and p < len(x):
            x[p] = str(rng.choice(list(alphabet)))
        elif r < 0.75 and p < len(x):
            del x[p]
        else:
            x.insert(p, str(rng.choice(list(alphabet))))
    return "".join(x)


def families(seed: int, count: int, size: int, length: int, max_edits: int, alphabet="ACGT"):
    """Families of mutated copies of random parents (plus a few exact copies)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        parent = "".join(rng.choice(list(alphabet), length))
        out += [
            mutate(rng, parent, int(rng.integers(0, max_edits + 1)), alphabet) for _ in range(size)
        ]
    return out


def as_dict(nb: Neighbors):
    assert np.all(nb.i < nb.j)
    order = np.lexsort((nb.j, nb.i))
    assert np.array_equal(order, np.arange(len(nb))), "pairs not sorted by (i, j)"
    assert nb.i.dtype == np.int64 and nb.j.dtype == np.int64 and nb.distance.dtype == np.int32
    return dict(zip(zip(nb.i.tolist(), nb.j.tolist()), nb.distance.tolist()))
