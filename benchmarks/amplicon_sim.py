"""Seeded 16S V4 amplicon sets, dereplicated, as a MiSeq run looks after ``vsearch
--derep_fulllength``: real parents, amplicon-like errors, a power-law abundance.

    python benchmarks/amplicon_sim.py N --out uniques.fa [--seed 1] [--species S]
                                        [--length 240] [--errors 0.6] [--join 1]

writes N unique sequences as FASTA, headers ``>u<k>;size=<abundance>`` (the annotation
swarm and vsearch read), sorted by decreasing abundance (ties by id), one sequence per line.

Model
-----
* Real parents: the forward reads of ``bioaccel/data/dada2`` (MiSeq 2x250 16S V4, mouse gut),
  cut to ``length`` letters (240: the reads' high-quality part) and dereplicated; the uniques
  seen at least twice are real biological sequences (113 of them). With ``join`` > 1 each
  parent is ``join`` of them end to end (the k-th and the next ``join - 1``): long amplicons
  (``join`` 6: about 1.44 kb, as full-length 16S reads), still of real letters.
* Species: ``S`` sequences (default ``max(113, N // 40)``): the real parents, then
  descendants of randomly chosen ones, each with a divergence drawn uniformly from
  0.5-8 % substitutions and, with probability 0.3, one indel of 1-3 letters (16S V4 species
  differ by a few percent). Species abundances follow a power law (Zipf, exponent 1.2 over
  the ranks) -- a few dominant taxa, a long tail.
* Reads: each unique beyond the species themselves is a species copy (drawn by abundance)
  with ``1 + Poisson(0.6)`` errors, at least one: 85 % substitutions, 15 % indels of one letter
  (7.5 % insertions, 7.5 % deletions; homopolymer slips as often as anywhere else). A read
  that repeats an earlier unique is drawn again (the set is dereplicated), so N uniques are
  exactly N distinct sequences.
* Abundances: a species sequence gets ``ceil(total * weight)`` reads (total = 20 N), an
  error variant ``1 + Zipf(2.2)`` -- mostly singletons and doubletons, as dereplicated
  amplicon data.

Speed: a pure-Python generator, ~1 s per 10^5 uniques; 10^7 uniques take a few minutes and
a few GB (the set of sequences seen, for the dereplication).

The functions are meant for reuse: :func:`real_parents`, :func:`species`,
:func:`simulate` (returns (ids, sequences, abundances)), :func:`write_fasta`.
"""

from __future__ import annotations

import argparse
import gzip
import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
READS = [ROOT / "bioaccel" / "data" / "dada2" / f"sam{k}F.fastq.gz" for k in (1, 2)]
BASES = b"ACGT"


def real_parents(length: int = 240, min_count: int = 2) -> list[bytes]:
    """The real V4 sequences of the bundled dada2 reads: cut to ``length``, dereplicated,
    those seen at least ``min_count`` times, most abundant first (ties by sequence)."""
    counts: Counter[bytes] = Counter()
    for path in READS:
        with gzip.open(path, "rb") as f:
            lines = f.read().split(b"\n")
        for s in lines[1::4]:
            if len(s) >= length and b"N" not in s[:length]:
                counts[s[:length]] += 1
    kept = [s for s, c in counts.items() if c >= min_count]
    return sorted(kept, key=lambda s: (-counts[s], s))


def _mutate(rng: np.random.Generator, seq: bytearray, subs: int, indels: int, maxlen: int = 1):
    for _ in range(subs):
        p = int(rng.integers(len(seq)))
        seq[p] = BASES[(BASES.index(seq[p]) + 1 + int(rng.integers(3))) % 4]
    for _ in range(indels):
        size = 1 + int(rng.integers(maxlen))
        if rng.random() < 0.5 and len(seq) > size + 1:
            p = int(rng.integers(len(seq) - size + 1))
            del seq[p : p + size]
        else:
            p = int(rng.integers(len(seq) + 1))
            seq[p:p] = bytes(BASES[int(b)] for b in rng.integers(4, size=size))
    return seq


def species(count: int, rng: np.random.Generator, length: int = 240, join: int = 1) -> list[bytes]:
    """``count`` distinct species sequences: the real parents first (``join`` of them end to
    end each), then mutated copies."""
    parents = real_parents(length)
    if join > 1:
        parents = [
            b"".join(parents[(k + t) % len(parents)] for t in range(join))
            for k in range(len(parents))
        ]
    out = list(parents[:count])
    seen = set(out)
    while len(out) < count:
        base = bytearray(parents[int(rng.integers(len(parents)))])
        div = rng.uniform(0.005, 0.08)
        indel = 1 if rng.random() < 0.3 else 0
        s = bytes(_mutate(rng, base, max(1, round(div * len(base))), indel, maxlen=3))
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out


def simulate(
    n: int,
    seed: int = 1,
    n_species: int | None = None,
    length: int = 240,
    error_rate: float = 0.6,
    join: int = 1,
) -> tuple[list[str], list[bytes], list[int]]:
    """(ids, sequences, abundances) of ``n`` unique amplicons, by decreasing abundance.

    ``error_rate`` is the mean number of errors beyond the first of an error variant."""
    rng = np.random.default_rng(seed)
    s_count = n_species if n_species is not None else max(113, n // 40)
    s_count = min(s_count, n)
    sp = species(s_count, rng, length, join)
    ranks = np.arange(1, len(sp) + 1, dtype=np.float64)
    weight = ranks**-1.2
    weight /= weight.sum()
    cum = np.cumsum(weight)
    total = 20 * n
    seqs = list(sp)
    abund = [max(2, math.ceil(total * w)) for w in weight]
    seen = set(seqs)
    block = 1 << 16
    while len(seqs) < n:
        picks = np.searchsorted(cum, rng.random(block) * cum[-1])
        errors = 1 + rng.poisson(error_rate, size=block)
        extra = rng.zipf(2.2, size=block)
        for p, e, a in zip(picks, errors, extra):
            s = bytearray(sp[int(p)])
            for _ in range(int(e)):
                r = rng.random()
                if r < 0.85:
                    _mutate(rng, s, 1, 0)
                elif r < 0.925:
                    q = int(rng.integers(len(s) + 1))
                    s[q:q] = BASES[int(rng.integers(4))].to_bytes(1, "big")
                elif len(s) > 2:
                    del s[int(rng.integers(len(s)))]
            b = bytes(s)
            if b in seen:
                continue
            seen.add(b)
            seqs.append(b)
            abund.append(int(min(a, 1000)))
            if len(seqs) == n:
                break
    order = sorted(range(n), key=lambda k: (-abund[k], k))
    ids = [f"u{k + 1}" for k in range(n)]
    return ids, [seqs[k] for k in order], [abund[k] for k in order]


def write_fasta(path, ids, seqs, abund) -> None:
    """``>id;size=N`` records, one sequence line each."""
    with open(path, "wb") as f:
        for i, s, a in zip(ids, seqs, abund):
            f.write(b">%s;size=%d\n%s\n" % (i.encode(), a, s))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int)
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--species", type=int, default=None)
    ap.add_argument("--length", type=int, default=240)
    ap.add_argument("--errors", type=float, default=0.6, help="mean extra errors per variant")
    ap.add_argument("--join", type=int, default=1, help="real parents end to end (6: ~1.44 kb)")
    a = ap.parse_args(argv)
    ids, seqs, abund = simulate(a.n, a.seed, a.species, a.length, a.errors, a.join)
    write_fasta(a.out, ids, seqs, abund)
    print(f"wrote {len(ids)} unique amplicons to {a.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
