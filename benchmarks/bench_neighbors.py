"""Pairs within an edit distance at sequencing scale: ``bioaccel neighbors -d D`` beside
``swarm -d D`` (Debian's swarm 3.1, which clusters: the nearest peer that looks at every
pair within d), on simulated dereplicated 16S V4 amplicon sets (benchmarks/amplicon_sim.py).

    python benchmarks/bench_neighbors.py [--sizes 10000,100000,1000000] [--d 1,2,3]
                                         [--repeat 3] [--max-seconds 900] [--keep DIR]

Both run as programs, one thread each (``-t 1``), best of --repeat runs, interleaved
(bioaccel, swarm, bioaccel, swarm, ...), wall time and peak RSS from GNU time
(``/usr/bin/time``; ``apt-get install time`` when it is missing). bioaccel writes every pair
within d to a TSV (its whole job); swarm writes its OTU list (``-z`` for the ``;size=``
annotations, ``-o``). A size x d whose first bioaccel or swarm run takes longer than
--max-seconds is run once and not repeated; one that would exceed it by the growth seen at
the smaller sizes is skipped and said so. Ratios: swarm time / bioaccel time (> 1: bioaccel
faster) and bioaccel RSS / swarm RSS.

Goals: d = 1 no slower than swarm -d 1; d = 2, 3 at least 10x faster than swarm's;
memory no more than swarm's.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._peers import (  # noqa: E402
    bioaccel_cli,
    checkout_env,
    command_line,
    run_program,
    show_compared,
)
from benchmarks.amplicon_sim import simulate, write_fasta  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument("--d", default="1,2,3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--max-seconds", type=float, default=900.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--keep", default=None, help="folder for the simulated sets (reused)")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sizes.split(",")]
    ds = [int(x) for x in args.d.split(",")]
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-nb-"))
    folder.mkdir(parents=True, exist_ok=True)
    env = checkout_env()
    show_compared(
        "every pair within d edits (bioaccel) / swarm's clustering at d (swarm)",
        [
            (
                "bioaccel",
                command_line(
                    [*bioaccel_cli(), "neighbors", "IN.fa", "-d", "D", "-t", "1", "-o", "pairs.tsv"]
                ),
                1,
            ),
            ("swarm", "swarm -z -d D -t 1 -o otus.txt IN.fa", 1),
        ],
    )
    rows = []
    last_time: dict[tuple[str, int], tuple[int, float]] = {}
    for n in sizes:
        fasta = folder / f"amplicons_{n}_s{args.seed}.fa"
        if not fasta.exists():
            write_fasta(fasta, *simulate(n, seed=args.seed))
        for d in ds:
            skip = None
            for tool in ("bioaccel", "swarm"):
                prev = last_time.get((tool, d))
                if prev is not None:
                    grown = prev[1] * (n / prev[0]) ** 2  # quadratic at worst
                    if grown > 4 * args.max_seconds:
                        skip = (
                            f"{tool} would take ~{grown:.0f} s (from {prev[1]:.1f} s at {prev[0]})"
                        )
            if skip:
                print(f"n={n} d={d}: skipped: {skip}", flush=True)
                rows.append((n, d, None, None, None, None, skip))
                continue
            out = folder / f"pairs_{n}_{d}.tsv"
            otus = folder / f"otus_{n}_{d}.txt"
            ours = [
                *bioaccel_cli(),
                "neighbors",
                str(fasta),
                "-d",
                str(d),
                "-t",
                "1",
                "-o",
                str(out),
            ]
            peer = ["swarm", "-z", "-d", str(d), "-t", "1", "-o", str(otus), str(fasta)]
            best = {"bioaccel": (float("inf"), 0.0), "swarm": (float("inf"), 0.0)}
            for rep in range(args.repeat):
                for tool, cmd in (("bioaccel", ours), ("swarm", peer)):
                    wall, rss = run_program(cmd, env=env)
                    if wall < best[tool][0]:
                        best[tool] = (wall, rss)
                    print(
                        f"  n={n} d={d} {tool} run {rep + 1}: {wall:.2f} s, {rss:.0f} MiB",
                        flush=True,
                    )
                if max(best["bioaccel"][0], best["swarm"][0]) > args.max_seconds:
                    break
            pairs = sum(1 for _ in open(out))
            for tool in best:
                last_time[(tool, d)] = (n, best[tool][0])
            (tb, mb), (ts, ms) = best["bioaccel"], best["swarm"]
            rows.append((n, d, tb, mb, ts, ms, f"{pairs} pairs"))
            print(
                f"n={n} d={d}: bioaccel {tb:.2f} s {mb:.0f} MiB, swarm {ts:.2f} s {ms:.0f} MiB: "
                f"speed ratio (swarm/bioaccel) {ts / tb:.2f}, memory ratio {mb / ms:.2f}; {pairs} pairs",
                flush=True,
            )
    print(
        "\n| uniques | d | bioaccel s | bioaccel MiB | swarm s | swarm MiB | swarm/bioaccel time | bioaccel/swarm memory | note |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for n, d, tb, mb, ts, ms, note in rows:
        if tb is None:
            print(f"| {n} | {d} | - | - | - | - | - | - | {note} |")
        else:
            print(
                f"| {n} | {d} | {tb:.2f} | {mb:.0f} | {ts:.2f} | {ms:.0f} | {ts / tb:.2f} | {mb / ms:.2f} | {note} |"
            )


if __name__ == "__main__":
    main()
