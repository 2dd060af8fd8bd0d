"""Seeded amplicon sets for the clustering tests: a few parents, and descendants reached by
chains of random substitutions and indels (so swarms grow over several generations), with
power-law abundances, dereplicated, written with ``;size=N`` annotations."""

from __future__ import annotations

import numpy as np


def simulate(
    n: int, seed: int, parents: int = 8, length: int = 120, max_edits: int = 3, iupac: bool = False
) -> list[tuple[str, str]]:
    rng = np.random.default_rng(seed)
    letters = np.array(list("ACGT"))
    pool = [
        "".join(rng.choice(letters, size=int(length + rng.integers(-5, 6)))) for _ in range(parents)
    ]
    seqs = list(dict.fromkeys(pool))
    seen = set(seqs)
    while len(seqs) < n:
        base = list(
            seqs[int(rng.integers(len(seqs)))]
            if rng.random() < 0.7
            else pool[int(rng.integers(len(pool)))]
        )
        for _ in range(int(rng.integers(1, max_edits + 1))):
            p = int(rng.integers(len(base)))
            r = rng.random()
            if r < 0.6:
                base[p] = str(rng.choice(letters))
            elif r < 0.8 and len(base) > 10:
                del base[p]
            else:
                base.insert(p, str(rng.choice(letters)))
        s = "".join(base)
        if s not in seen:
            seen.add(s)
            seqs.append(s)
    # power-law abundances; parents heavy; many ties and singletons
    ab = np.maximum(1, (rng.pareto(1.2, size=len(seqs)) * 2).astype(np.int64))
    ab[: len(pool)] += rng.integers(50, 500, size=len(pool))[: min(len(pool), len(seqs))]
    order = rng.permutation(len(seqs))
    out = []
    for k, idx in enumerate(order):
        s = seqs[idx]
        if iupac and rng.random() < 0.05:
            s = s[:5] + "N" + s[6:]
        out.append((f"amp{k}_{idx};size={int(ab[idx])}", s))
    return out


def write_fasta(records, path) -> None:
    with open(path, "w") as f:
        for h, s in records:
            f.write(f">{h}\n{s}\n")
