"""Amplicon clustering: ``bioaccel cluster`` beside swarm 3 and vsearch ``--cluster_size``,
the same dereplicated sets, one thread each, as programs.

    python benchmarks/bench_cluster.py [--sizes 100000,1000000] [--repeat 3]
                                       [--cases d1,f,d2,d3,greedy] [--threads 1]
                                       [--join 1] [--errors 0.6] [--fasta FILE]

Data: ``benchmarks/amplicon_sim.py`` (16S V4, real parents, amplicon-like errors, power-law
abundance, ``;size=N``), seed 1, written once per size. ``--join 6 --errors 1.5``: long
amplicons (six real parents end to end, about 1.44 kb; 1.5 extra errors a read).

Compared, each a fresh process (GNU time: wall seconds and peak RSS), the tools interleaved
run by run, best of ``--repeat``:

- ``d1``: ``swarm -z -t T -d 1 -o otus`` vs ``bioaccel cluster -d 1 -o otus -t T``;
- ``f``: swarm ``-d 1 -f`` vs ``bioaccel cluster -d 1 --fastidious``;
- ``d2``, ``d3``: swarm ``-d 2`` / ``-d 3`` vs ``bioaccel cluster -d D --differences swarm``
  (swarm's own count, for the same OTUs) and ``--differences edit`` (Levenshtein);
- ``greedy``: ``vsearch --cluster_size --id 0.97 --uc`` vs ``bioaccel cluster --method
  greedy --identity 0.97``; the adjusted Rand index of the two partitions is printed (no
  parity is expected: vsearch's identity is matches over alignment columns of its own
  alignment, its centroids are tried in k-mer order and the first acceptable one wins);
  ``greedys``: the same with ``--identity-definition shorter`` (overhangs free, as
  vsearch's terminal gaps: what reads with ragged ends need).

``--fasta FILE`` runs the cases on a dereplicated FASTA of one's own (e.g. dada2's ten_16s
uniques: ``--cases greedy,greedys``) instead of the simulated sizes.

For swarm and bioaccel with ``--differences swarm`` the OTU lists are compared (same file:
``same``). Ratios are swarm's (or vsearch's) time and RSS over bioaccel's: above 1 means
bioaccel is faster / smaller. The goals: d1 and f >= 1, d2 and d3 >= 10, RSS >= 1.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._peers import bioaccel_cli, checkout_env, command_line, run_program, show_compared

CASES = {
    "d1": (["-d", "1"], ["-d", "1"]),
    "f": (["-d", "1", "-f"], ["-d", "1", "--fastidious"]),
    "d2": (["-d", "2"], ["-d", "2", "--differences", "swarm"]),
    "d3": (["-d", "3"], ["-d", "3", "--differences", "swarm"]),
}
EDIT_TOO = ("d2", "d3")


def data(n: int, folder: Path, join: int = 1, errors: float = 0.6) -> Path:
    """The simulator's set of n uniques, seed 1 (``join``, ``errors``: amplicon_sim's)."""
    kind = "" if (join, errors) == (1, 0.6) else f"_join{join}_errors{errors:g}"
    path = folder / f"amplicons_{n}{kind}.fa"
    if not path.exists():
        from benchmarks.amplicon_sim import simulate, write_fasta

        ids, seqs, ab = simulate(n, seed=1, error_rate=errors, join=join)
        write_fasta(path, ids, seqs, ab)
    return path


def ari(a: np.ndarray, b: np.ndarray) -> float:
    """Adjusted Rand index of two labelings (Hubert and Arabie)."""
    _, a = np.unique(a, return_inverse=True)
    _, b = np.unique(b, return_inverse=True)
    n = len(a)
    pairs = a.astype(np.int64) * (int(b.max()) + 1) + b
    _, nij = np.unique(pairs, return_counts=True)

    def c2(x):
        x = np.asarray(x, dtype=np.float64)
        return float((x * (x - 1) / 2).sum())

    sum_ij = c2(nij)
    sa = c2(np.bincount(a))
    sb = c2(np.bincount(b))
    expected = sa * sb / (n * (n - 1) / 2)
    top = (sa + sb) / 2
    return (sum_ij - expected) / (top - expected) if top != expected else 1.0


def otu_labels(path: Path) -> dict[str, int]:
    out = {}
    for k, line in enumerate(path.read_text().splitlines()):
        for h in line.split():
            out[h.split(";size=")[0]] = k
    return out


def uc_labels(path: Path) -> dict[str, int]:
    out = {}
    for line in path.read_text().splitlines():
        f = line.split("\t")
        if f[0] in ("S", "H"):
            out[f[8].split(";size=")[0]] = int(f[1])
    return out


def best(runs):
    return min(t for t, _ in runs), min(r for _, r in runs)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,1000000")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cases", default="d1,f,d2,d3,greedy")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--data", default=None, help="folder for the simulated sets (kept)")
    ap.add_argument("--join", type=int, default=1, help="long amplicons: parents end to end (6)")
    ap.add_argument("--errors", type=float, default=0.6, help="mean extra errors per variant")
    ap.add_argument(
        "--fasta",
        default=None,
        help="a dereplicated FASTA (;size=N) of your own instead of the simulated sizes",
    )
    args = ap.parse_args(argv)
    swarm, vsearch = shutil.which("swarm"), shutil.which("vsearch")
    if swarm is None or vsearch is None:
        sys.exit("swarm and vsearch are needed (apt-get install swarm vsearch)")
    T = str(args.threads)
    env = checkout_env()
    cases = args.cases.split(",")
    folder = Path(args.data) if args.data else Path(tempfile.mkdtemp(prefix="bench_cluster_"))
    folder.mkdir(parents=True, exist_ok=True)
    show_compared(
        "the whole program from a dereplicated FASTA to swarm's OTU list",
        [
            ("swarm", "swarm -z -t T -d D [-f] -o otus.txt amplicons.fa", args.threads),
            (
                "bioaccel",
                "bioaccel cluster amplicons.fa -d D [--fastidious] -o otus.txt -t T",
                args.threads,
            ),
            ("vsearch", "vsearch --cluster_size amplicons.fa --id 0.97 --uc u.uc", args.threads),
        ],
    )
    print("(the machine is shared by several engineers: times are noisy; best of --repeat)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench_cluster_") as tmp:
        tmp = Path(tmp)
        if args.fasta:
            with open(args.fasta) as fh:
                sets = [(sum(line.startswith(">") for line in fh), Path(args.fasta))]
        else:
            sets = [
                (n, data(n, folder, args.join, args.errors))
                for n in (int(s) for s in args.sizes.split(","))
            ]
        for n, fasta in sets:
            for case in cases:
                if case in ("greedy", "greedys"):
                    shorter = ["--identity-definition", "shorter"] if case == "greedys" else []
                    v_cmd = [
                        vsearch,
                        "--cluster_size",
                        fasta,
                        "--sizein",
                        "--id",
                        "0.97",
                        "--threads",
                        T,
                        "--uc",
                        tmp / "v.uc",
                        "--quiet",
                        "--minseqlength",
                        "1",
                    ]
                    b_cmd = [
                        *bioaccel_cli(),
                        "cluster",
                        fasta,
                        "--method",
                        "greedy",
                        "--identity",
                        "0.97",
                        *shorter,
                        "-t",
                        T,
                        "-o",
                        tmp / "b.txt",
                    ]
                    vr, br = [], []
                    for _ in range(args.repeat):
                        vr.append(run_program(v_cmd, env=env))
                        br.append(run_program(b_cmd, env=env))
                    (vt, vm), (bt, bm) = best(vr), best(br)
                    va, ba = uc_labels(tmp / "v.uc"), otu_labels(tmp / "b.txt")
                    keys = sorted(va)
                    score = ari(np.array([va[k] for k in keys]), np.array([ba[k] for k in keys]))
                    label = "greedy 0.97" + (" shorter" if shorter else "")
                    rows.append((n, label, "vsearch", vt, vm, bt, bm, f"ARI {score:.4f}"))
                    print(
                        f"{n:>8} {label}   vsearch {vt:8.2f} s {vm:7.0f} MiB | bioaccel {bt:8.2f} s "
                        f"{bm:7.0f} MiB | time x{vt / bt:5.2f} RSS x{vm / bm:5.2f} | ARI {score:.4f} "
                        f"| OTUs vsearch {len(set(va.values()))} bioaccel {len(set(ba.values()))}",
                        flush=True,
                    )
                    continue
                s_args, b_args = CASES[case]
                s_cmd = [swarm, "-z", "-t", T, *s_args, "-o", tmp / "s.txt", fasta]
                variants = [("swarm" if case in EDIT_TOO else "", b_args)]
                if case in EDIT_TOO:
                    variants.append(("edit", [a if a != "swarm" else "edit" for a in b_args]))
                for label, bargs in variants:
                    b_cmd = [
                        *bioaccel_cli(),
                        "cluster",
                        fasta,
                        *bargs,
                        "-t",
                        T,
                        "-o",
                        tmp / "b.txt",
                    ]
                    sr, br = [], []
                    for _ in range(args.repeat):
                        sr.append(run_program(s_cmd, env=env))
                        br.append(run_program(b_cmd, env=env))
                    (st, sm), (bt, bm) = best(sr), best(br)
                    same = (tmp / "s.txt").read_text() == (tmp / "b.txt").read_text()
                    name = f"-{case}" + (f" ({label})" if label else "")
                    note = "same OTUs" if same else "OTUs differ"
                    rows.append((n, name, "swarm", st, sm, bt, bm, note))
                    print(
                        f"{n:>8} {name:14s} swarm {st:8.2f} s {sm:7.0f} MiB | bioaccel {bt:8.2f} s "
                        f"{bm:7.0f} MiB | time x{st / bt:5.2f} RSS x{sm / bm:5.2f} | {note}",
                        flush=True,
                    )
    print(
        "\n| uniques | case | peer | peer s | peer MiB | bioaccel s | bioaccel MiB | time ratio | RSS ratio | |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for n, name, peer, pt, pm, bt, bm, note in rows:
        print(
            f"| {n:,} | {name} | {peer} | {pt:.2f} | {pm:.0f} | {bt:.2f} | {bm:.0f} | "
            f"{pt / bt:.2f} | {pm / bm:.2f} | {note} |"
        )
    print(
        f"\ncommands: e.g. {command_line([*bioaccel_cli(), 'cluster', 'amplicons.fa', '-d', '1', '-o', 'otus.txt'])}"
    )


if __name__ == "__main__":
    main()
