"""swarm's count of differences at high d, beside bioaccel's, on seeded random amplicon sets.

    python benchmarks/swarm_high_d.py [--sets 450] [--seed 1] [--lengths 5,150]

Each set: 2-60 dereplicated amplicons from 1-4 random parents of the given lengths, 0-12
substitutions and indels each, abundances 1-10 (``;size=N``). For d = 2 to 6 (swarm's
8-bit search with its default scores: 255 // 37 = 6) it counts the sets whose OTU list from
``bioaccel.cluster(..., differences="swarm")`` equals ``swarm -z -d D``'s. For d = 7 to 10
(swarm's 16-bit search) it also takes every link swarm makes (``-i``: parent, member,
differences) and compares its count with the differences of swarm's own alignment of the
pair, parent as query (``bioaccel.clusters.swarm_alignments``, a port of swarm's nw.cc,
tested against it): how many links swarm counts above or below that alignment. The README's
note on swarm past d = 6 (Differences) quotes this script's output, for Debian's swarm and for
``--swarm`` a swarm 3.1.2 built from its source with ``-fno-strict-aliasing`` added to the
Makefile's COMMON flags (then every set's OTU list is equal at every d, and no link miscounted).
"""

from __future__ import annotations

import argparse
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bioaccel.clusters import cluster, read_amplicons, swarm_alignments  # noqa: E402

LOW_D = (2, 3, 4, 5, 6)
HIGH_D = (7, 8, 9, 10)


def random_set(rng: random.Random, lo: int, hi: int) -> str:
    """One set as FASTA text (see the module docstring)."""
    parents = [
        "".join(rng.choice("ACGT") for _ in range(rng.randint(lo, hi)))
        for _ in range(rng.randint(1, 4))
    ]
    n, seqs = rng.randint(2, 60), set()
    while len(seqs) < n:
        s = list(rng.choice(parents))
        for _ in range(rng.randint(0, 12)):
            r = rng.random()
            if r < 0.4 and s:
                s[rng.randrange(len(s))] = rng.choice("ACGT")
            elif r < 0.7 and len(s) > 1:
                del s[rng.randrange(len(s))]
            else:
                s.insert(rng.randrange(len(s) + 1), rng.choice("ACGT"))
        seqs.add("".join(s))
    return "".join(
        f">s{k};size={rng.choice([1, 1, 2, 3, 5, 10])}\n{s}\n" for k, s in enumerate(sorted(seqs))
    )


def swarm(binary: str, fasta: Path, d: int, *extra: str) -> str:
    return subprocess.run(
        [binary, "-z", "-t", "1", "-d", str(d), *extra, str(fasta)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def partition(otu_lines) -> list[tuple[str, ...]]:
    return sorted(tuple(sorted(x.split(";")[0] for x in line.split())) for line in otu_lines)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sets", type=int, default=450)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lengths", default="5,150", help="parents' lengths: lo,hi")
    ap.add_argument("--swarm", default=shutil.which("swarm") or "swarm")
    args = ap.parse_args(argv)
    lo, hi = (int(x) for x in args.lengths.split(","))
    rng = random.Random(args.seed)
    same = dict.fromkeys(LOW_D + HIGH_D, 0)
    links = above = below = 0
    with tempfile.TemporaryDirectory() as tmp:
        fasta = Path(tmp) / "set.fa"
        for _ in range(args.sets):
            fasta.write_text(random_set(rng, lo, hi))
            amp = read_amplicons(fasta, differences="swarm")
            node = {i: k for k, i in enumerate(amp.ids)}
            for d in LOW_D + HIGH_D:
                ours = cluster(amp, max_distance=d, differences="swarm", threads=1)
                out = Path(tmp) / "ours.txt"
                ours.write_otus(out)
                theirs = swarm(args.swarm, fasta, d, "-o", "-")
                same[d] += partition(out.read_text().splitlines()) == partition(theirs.splitlines())
                if d not in HIGH_D:
                    continue
                rows = [
                    line.split("\t")[:3]
                    for line in swarm(
                        args.swarm, fasta, d, "-i", "-", "-o", "/dev/null"
                    ).splitlines()
                ]
                if not rows:
                    continue
                q = np.array([node[a.split(";")[0]] for a, _, _ in rows])
                t = np.array([node[b.split(";")[0]] for _, b, _ in rows])
                diffs = swarm_alignments(amp, q, t, threads=1)[0]
                counted = np.array([int(c) for _, _, c in rows])
                links += len(rows)
                above += int((counted > diffs).sum())
                below += int((counted < diffs).sum())
    print(f"{args.sets} random sets, parents of {lo}-{hi} nt, seed {args.seed}, {args.swarm}")
    print("| d | OTU lists equal to swarm's |")
    print("|---|---|")
    for d, k in same.items():
        print(f"| {d} | {k} / {args.sets} |")
    print(
        f"d = {HIGH_D[0]}-{HIGH_D[-1]}: {links} links by swarm; its count above its own "
        f"alignment's differences on {above}, below on {below}"
    )


if __name__ == "__main__":
    main()
