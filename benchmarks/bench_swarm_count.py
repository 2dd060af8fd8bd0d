"""swarm's count of differences: which pairs skip the dynamic programme, and what knowing the
edit distance saves, on real amplicons and on the simulator's set.

    python benchmarks/bench_swarm_count.py [--sample 5000] [--sim 100000] [--every 10]

Sets: swarm's own test data as Debian ships it (8,096 real 16S amplicons of 250-450 nt,
``_N`` abundances; apt-get install swarm) and the 16S V4 simulator's set of --sim uniques
(benchmarks/amplicon_sim.py, seed 1; every --every-th amplicon, so its pairs stay few).
For d = 2 and 3, every pair within d edits (``bioaccel.neighbors``, edit distance 2 or
more: one edit is always swarm's count) is put in one class, in Python, by the rules of
``swarm_align`` (csrc/clusters/clusters.cpp), on a seeded sample of --sample pairs:
``ungapped`` (one length, at most 4 substitutions), ``one run`` (lengths delta apart, the
edit distance reached by one gap run and at most 5 substitutions: kSingleRunMost), or
``programme`` (the banded dynamic programme). Then all the pairs are recounted with
``swarm_alignments(max_diffs=d)`` without and with ``edits=`` (their edit distances), one
thread, best of 3: the same counts, and the time each way. The README's figures on the
shortcuts (Clustering amplicons) come from this script.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bioaccel import neighbors  # noqa: E402
from bioaccel.clusters import read_amplicons, swarm_alignments  # noqa: E402

SWARM_TEST_DATA = Path("/usr/share/doc/swarm/test-data/input.fasta.gz")
UNGAPPED_MOST, SINGLE_RUN_MOST = 4, 5  # swarm_align's kUngappedMost, kSingleRunMost


def pair_class(a: str, b: str, e: int) -> str:
    """The path swarm_align takes for a pair at edit distance e (see the module docstring)."""
    if len(a) > len(b):
        a, b = b, a
    delta = len(b) - len(a)
    if delta == 0:
        return "ungapped" if sum(x != y for x, y in zip(a, b)) <= UNGAPPED_MOST else "programme"
    m = e - delta
    if not 0 <= m <= SINGLE_RUN_MOST:
        return "programme"
    best = min(
        sum(x != y for x, y in zip(a[:p], b[:p]))
        + sum(x != y for x, y in zip(a[p:], b[p + delta :]))
        for p in range(len(a) + 1)
    )
    return "one run" if best == m else "programme"


def best_time(fn, repeat: int = 3):
    out, best = None, float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return out, best


def measure(name: str, amp, d: int, sample: int, rng) -> str:
    seqs = [amp.sequence(k) for k in range(len(amp))]
    nb = neighbors(seqs, max_distance=d, threads=1)
    i, j, e = np.asarray(nb.i), np.asarray(nb.j), np.asarray(nb.distance)
    keep = e >= 2
    i, j, e = i[keep], j[keep], e[keep]
    if not len(i):
        return f"| {name} | {d} | 0 | | | | | | |"
    picked = rng.choice(len(i), size=min(sample, len(i)), replace=False)
    counts = {"ungapped": 0, "one run": 0, "programme": 0}
    for k in picked:
        counts[pair_class(seqs[i[k]], seqs[j[k]], int(e[k]))] += 1
    plain, t_plain = best_time(lambda: swarm_alignments(amp, i, j, max_diffs=d, threads=1)[0])
    known, t_known = best_time(
        lambda: swarm_alignments(amp, i, j, max_diffs=d, threads=1, edits=e)[0]
    )
    if not np.array_equal(plain, known):
        sys.exit(f"{name}, d = {d}: the counts with edits= differ from those without")
    n = len(picked)
    share = " | ".join(f"{100 * counts[c] / n:.1f} %" for c in counts)
    return (
        f"| {name} | {d} | {len(i):,} | {share} | {t_plain:.3f} | {t_known:.3f} | "
        f"{t_plain / t_known:.2f} |"
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sample", type=int, default=5000, help="pairs classified per set and d")
    ap.add_argument("--sim", type=int, default=100000, help="uniques of the simulator's set")
    ap.add_argument("--every", type=int, default=10, help="keep every n-th simulated amplicon")
    ap.add_argument("--data", default=None, help="folder for the simulated set (kept)")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    sets = []
    if SWARM_TEST_DATA.exists():
        real = read_amplicons(
            SWARM_TEST_DATA, differences="swarm", abundance_annotation="underscore"
        )
        sets.append((f"swarm's test data ({len(real):,} real 16S)", real))
    else:
        print(f"{SWARM_TEST_DATA} is missing (apt-get install swarm): the real set is left out")
    import tempfile

    from benchmarks.bench_cluster import data

    folder = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="bench_count_"))
    folder.mkdir(parents=True, exist_ok=True)
    sim = read_amplicons(data(args.sim, folder), differences="swarm")
    every = np.arange(0, len(sim), args.every)
    text = "".join(f">s{k};size=1\n{sim.sequence(int(x))}\n" for k, x in enumerate(every))
    sub = read_amplicons(text.encode(), differences="swarm")
    sets.append((f"simulator {args.sim:,}, every {args.every}th ({len(every):,})", sub))
    print(
        "| set | d | pairs, 2..d edits | ungapped | one run | programme | recount s | "
        "with edits= s | ratio |\n|---|---|---|---|---|---|---|---|---|"
    )
    for name, amp in sets:
        for d in (2, 3):
            print(measure(name, amp, d, args.sample, rng), flush=True)


if __name__ == "__main__":
    main()
