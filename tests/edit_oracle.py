"""The edit-distance oracle (edlib, in each mode bioaccel names) and the seeded mutator that
makes related DNA for it: shared by the in-process tests and the per-kernel-level lanes."""

from __future__ import annotations

import numpy as np

from bioaccel.backends.bitmasks import build_peq
from bioaccel.sequences import SeqBatch
from tests import nvcc_host
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


def run_host(exe, queries: SeqBatch, targets: SeqBatch, mode: int, max_distance: int):
    """Edit distances by kernels/edit_distance.cu built for the CPU by nvcc (tests/cuda_host)."""
    alpha = queries.alphabet.size
    peq, word_off = build_peq(np, queries.codes, queries.offsets, alpha)
    total_words = int(word_off[-1])
    peq = peq[: total_words * alpha]
    parts = [
        np.array([alpha, mode, max_distance, len(queries), len(targets)], np.int64),
        queries.offsets.astype(np.int64),
        targets.offsets.astype(np.int64),
        np.array([total_words], np.int64),
        word_off.astype(np.int64),
        peq.astype(np.uint64),
        np.array([targets.codes.size], np.int64),
        targets.codes.astype(np.uint8),
    ]
    return nvcc_host.run(exe, parts, (len(queries), len(targets)))
