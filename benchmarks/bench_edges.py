"""The sharded path of amplicon clustering: the pair search in shards, then the OTUs grown on
their pairs, beside the growth that searches, as whole programs.

    python benchmarks/bench_edges.py [--size 100000] [-d 2] [--shards 4] [--threads 2]

On the 16S V4 simulator's set of --size uniques (benchmarks/amplicon_sim.py, seed 1):
``bioaccel neighbors amplicons.fa -d D --shard k/N -o partk.npz`` for every shard, then
``bioaccel cluster amplicons.fa -d D --differences swarm --edges part1.npz ...``, then
``bioaccel cluster amplicons.fa -d D --differences swarm`` (one thread: the growth that
searches); wall time and peak RSS of each process (GNU time), the pairs, and whether the two
OTU lists are the same (they must be). The README's figures on ``--edges`` (Clustering
amplicons, Pairs already found) come from this script.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._peers import bioaccel_cli, checkout_env, run_program  # noqa: E402
from benchmarks.bench_cluster import data  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=100000)
    ap.add_argument("-d", type=int, default=2)
    ap.add_argument("--shards", type=int, default=4)
    ap.add_argument("--threads", type=int, default=2, help="of the shards and the --edges run")
    ap.add_argument("--data", default=None, help="folder for the simulated set (kept)")
    args = ap.parse_args(argv)
    env = checkout_env()
    folder = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="bench_edges_"))
    folder.mkdir(parents=True, exist_ok=True)
    fasta = data(args.size, folder)
    cli, d, t = bioaccel_cli(), str(args.d), str(args.threads)
    with tempfile.TemporaryDirectory(prefix="bench_edges_") as tmp:
        tmp = Path(tmp)
        parts, pairs = [], 0
        print("| step | s | MiB |\n|---|---|---|")
        for k in range(1, args.shards + 1):
            part = tmp / f"part{k}.npz"
            cmd = [*cli, "neighbors", fasta, "-d", d, "--shard", f"{k}/{args.shards}", "-t", t]
            wall, rss = run_program([*cmd, "-o", part], env=env)
            with np.load(part) as z:
                pairs += len(z["i"])
            parts.append(part)
            print(f"| neighbors shard {k}/{args.shards} ({t} threads) | {wall:.2f} | {rss:.0f} |")
        edges = [a for p in parts for a in ("--edges", p)]
        grown = tmp / "edges.txt"
        wall, rss = run_program(
            [
                *cli,
                "cluster",
                fasta,
                "-d",
                d,
                "--differences",
                "swarm",
                *edges,
                "-t",
                t,
                "-o",
                grown,
            ],
            env=env,
        )
        print(f"| cluster --edges, {pairs:,} pairs ({t} threads) | {wall:.2f} | {rss:.0f} |")
        searched = tmp / "search.txt"
        wall, rss = run_program(
            [*cli, "cluster", fasta, "-d", d, "--differences", "swarm", "-t", "1", "-o", searched],
            env=env,
        )
        print(f"| cluster, the growth that searches (1 thread) | {wall:.2f} | {rss:.0f} |")
        same = grown.read_bytes() == searched.read_bytes()
        print(
            f"\n{args.size:,} uniques, d = {args.d}: the OTU lists are {'the same' if same else 'DIFFERENT'}"
        )
        if not same:
            sys.exit(1)


if __name__ == "__main__":
    main()
