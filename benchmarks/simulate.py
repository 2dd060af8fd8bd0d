"""Seeded synthetic alignments that look like real ones: sequences evolved down a random
binary tree (Yule-like splits) under K80-style substitutions, with N's and gap runs."""

from __future__ import annotations

import numpy as np


def tree_alignment(
    n: int,
    sites: int,
    seed: int = 0,
    *,
    depth: float = 0.15,
    kappa: float = 4.0,
    missing: float = 2e-5,
    gapped: float = 0.02,
) -> list[str]:
    """``n`` aligned DNA sequences of ``sites`` columns evolved down a random tree.

    Each split mutates a lineage at rate ``depth / log2(n)``; transitions are ``kappa``
    times as likely as each transversion. A few N's and short gap runs are added.
    """
    rng = np.random.default_rng(seed)
    transition = np.array([2, 3, 0, 1], dtype=np.uint8)  # A<->G, C<->T in ACGT codes
    root = rng.integers(0, 4, sites, dtype=np.uint8)
    lineages = [root]
    rate = depth / max(1.0, np.log2(n))
    while len(lineages) < n:
        k = int(rng.integers(len(lineages)))
        parent = lineages.pop(k)
        for _ in range(2):
            child = parent.copy()
            hit = rng.random(sites) < rate * rng.uniform(0.5, 1.5)
            ts = hit & (rng.random(sites) < kappa / (kappa + 2))
            child[ts] = transition[child[ts]]
            tv = hit & ~ts
            child[tv] = (
                child[tv] + rng.choice(np.array([1, 3], dtype=np.uint8), int(tv.sum()))
            ) % 4
            lineages.append(child)
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    out = []
    for seq in lineages[:n]:
        s = letters[seq].copy()
        s[rng.random(sites) < missing] = ord("N")
        if rng.random() < gapped:
            start = int(rng.integers(0, sites))
            s[start : start + int(rng.integers(1, 12))] = ord("-")
        out.append(s.tobytes().decode())
    return out


AMINO_ACIDS = np.frombuffer(b"ARNDCQEGHILKMFPSTWYV", dtype=np.uint8)


def _mutate(rng, seq: np.ndarray, letters: np.ndarray, rate: float, indels: int) -> np.ndarray:
    s = seq.copy()
    hit = rng.random(len(s)) < rate
    s[hit] = rng.choice(letters, int(hit.sum()))
    parts = list(s)
    for _ in range(int(rng.integers(0, indels + 1))):
        p = int(rng.integers(0, len(parts) + 1))
        if rng.random() < 0.5:
            del parts[p : p + int(rng.integers(1, 6))]
        else:
            parts[p:p] = list(rng.choice(letters, int(rng.integers(1, 6))))
    return np.array(parts, dtype=np.uint8)


def protein_families(
    n_families: int = 30,
    per_family: int = 10,
    lo: int = 190,
    hi: int = 400,
    seed: int = 0,
    divergence: float = 0.35,
) -> list[str]:
    """``n_families * per_family`` proteins: each family descends from one random ancestor
    of ``lo..hi`` residues with substitutions and a few short indels."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_families):
        anc = rng.choice(AMINO_ACIDS, int(rng.integers(lo, hi + 1)))
        for _ in range(per_family):
            child = _mutate(rng, anc, AMINO_ACIDS, divergence * rng.random(), 4)
            out.append(child.tobytes().decode())
    return out


def dna_descendants(
    n: int = 300, length: int = 1000, seed: int = 0, divergence: float = 0.15
) -> list[str]:
    """``n`` descendants of one random DNA ancestor of ``length`` bases."""
    rng = np.random.default_rng(seed)
    letters = np.frombuffer(b"ACGT", dtype=np.uint8)
    anc = rng.choice(letters, length)
    return [
        _mutate(rng, anc, letters, divergence * rng.random(), 6).tobytes().decode()
        for _ in range(n)
    ]
