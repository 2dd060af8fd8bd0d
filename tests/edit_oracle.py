"""The edit-distance oracle (edlib, in each mode bioaccel names) and the seeded mutator that
makes related DNA for it: shared by the in-process tests and the per-kernel-level lanes."""

from __future__ import annotations

from tests.datasets import require

edlib = require("edlib", "edlib is the oracle (pip install edlib)")

EDLIB_MODE = {"global": "NW", "infix": "HW", "prefix": "SHW"}
LETTERS = list("ACGT")


def edlib_distance(q: str, t: str, mode: str) -> int:
    if not q:
        return len(t) if mode == "global" else 0
    if not t:
        return len(q)
    return edlib.align(q, t, mode=EDLIB_MODE[mode], task="distance")["editDistance"]


def mutated(rng, s: str, rate: float) -> str:
    out = []
    for ch in s:
        r = rng.random()
        if r < rate / 3:
            continue  # deletion
        if r < 2 * rate / 3:
            out.append(rng.choice(LETTERS))  # substitution
        elif r < rate:
            out += [ch, rng.choice(LETTERS)]  # insertion
        else:
            out.append(ch)
    return "".join(out)
