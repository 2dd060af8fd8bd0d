"""MinHash benchmark: dada2's 3,994 16S sequences, all-vs-all Mash distances end to end from
the command line, bioaccel beside Mash, both on the same threads.

    python benchmarks/bench_kmers.py [--threads 2] [--repeat 3] [--first N]

What is compared: the whole job as a user runs it, each side a fresh process given the same
FASTA file and the same --threads (default 2), k = 21, sketch size 1,000: start-up and import,
reading, sketching, comparing and writing the matrix are all timed.
- Mash: ``mash sketch -p T -i -k 21 -s 1000`` then ``mash triangle -p T`` (lower-triangle text
  on stdout, redirected to a file); both commands are timed.
- bioaccel: ``bioaccel distance -m mash -k 21 --sketch-size 1000 -t T``, once writing the
  lower-triangle PHYLIP text (the same output as Mash's) and once the binary condensed
  ``.cdist`` (float32), bioaccel's fastest output.
Times are the best of --repeat runs, the three commands interleaved (this machine's speed
drifts); peak RSS of each process is printed too. Ratios are Mash time / bioaccel time.
Needs Debian's mash (apt-get install mash) and fetches the data as the tests do.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._peers import (
    bioaccel_cli,
    checkout_env,
    command_line,
    run_program,
    show_compared,
)


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--threads", type=int, default=2, help="threads for both tools (default 2)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--first", type=int, default=0, help="only the first N sequences (a quick check)"
    )
    args = ap.parse_args()
    from tests.datasets import dada2_16s

    src = dada2_16s()
    tmp = Path(tempfile.mkdtemp(prefix="bioaccel-kmers-"))
    fasta = tmp / "16s.fa"
    text = gzip.decompress(src.read_bytes()).decode()
    if args.first:
        text = ">" + ">".join(text.split(">")[1 : args.first + 1])
    fasta.write_text(text)
    n = sum(1 for line in fasta.read_text().splitlines() if line.startswith(">"))
    t = str(args.threads)
    mash = shutil.which("mash")
    env = checkout_env()

    common = [
        *bioaccel_cli(),
        "distance",
        str(fasta),
        "-m",
        "mash",
        "-k",
        "21",
        "--sketch-size",
        "1000",
        "-t",
        t,
    ]
    ours_text = [*common, "-o", str(tmp / "d.phy"), "--format", "phylip-lower"]
    ours_bin = [*common, "-o", str(tmp / "d.cdist")]
    mash_sketch = [
        mash or "mash",
        "sketch",
        "-p",
        t,
        "-i",
        "-k",
        "21",
        "-s",
        "1000",
        "-o",
        str(tmp / "ref"),
        str(fasta),
    ]
    mash_tri = [mash or "mash", "triangle", "-p", t, str(tmp / "ref.msh")]
    show_compared(
        f"{n} 16S sequences, all-vs-all Mash distances, k=21, s=1000, from the FASTA file "
        "to the matrix file, each a fresh process",
        [
            ("bioaccel (text)", command_line(ours_text), args.threads),
            ("bioaccel (.cdist)", command_line(ours_bin), args.threads),
            (
                "mash",
                command_line(mash_sketch) + " && " + command_line(mash_tri, tmp / "tri.txt"),
                args.threads,
            ),
        ],
    )

    def run_mash():
        w1, r1 = run_program(mash_sketch)
        w2, r2 = run_program(mash_tri, stdout=tmp / "tri.txt")
        return w1 + w2, max(r1, r2)

    runs = {"bioaccel (text)": [], "bioaccel (.cdist)": [], "mash": []}
    for _ in range(args.repeat):  # interleaved
        runs["bioaccel (text)"].append(run_program(ours_text, env=env))
        runs["bioaccel (.cdist)"].append(run_program(ours_bin, env=env))
        if mash is not None:
            runs["mash"].append(run_mash())
    best = {k: min(w for w, _ in v) for k, v in runs.items() if v}
    for name, v in runs.items():
        if v:
            print(
                f"  {name:18s} best {best[name]:7.2f} s  (runs {', '.join(f'{w:.2f}' for w, _ in v)}), "
                f"peak RSS {max(r for _, r in v):.0f} MiB"
            )
    if mash is None:
        print("  mash not installed (apt-get install mash): no peer timing")
        return
    for name in ("bioaccel (text)", "bioaccel (.cdist)"):
        print(
            f"  mash / {name}: {best['mash'] / best[name]:.1f}x (best of {args.repeat}, "
            f"{args.threads} threads each)"
        )
    # agreement: both estimate the same distances within sketch error
    import bioaccel

    ours = bioaccel.DistanceMatrix.read(tmp / "d.phy").data
    lines = (tmp / "tri.txt").read_text().splitlines()[1:]
    theirs = np.zeros((n, n))
    for i, line in enumerate(lines):
        vals = line.split("\t")[1:]
        theirs[i, : len(vals)] = [float(v) for v in vals]
    theirs = theirs + theirs.T
    iu = np.triu_indices(n, 1)

    def jaccard(d):  # Mash's D back on the Jaccard scale, where sketch error is uniform
        x = np.exp(-21 * d)
        return x / (2 - x)

    diff = np.abs(jaccard(theirs[iu]) - jaccard(ours[iu]))
    print(
        f"  |bioaccel - mash| on the Jaccard scale: median {np.median(diff):.4f}, 99th "
        f"percentile {np.percentile(diff, 99):.4f} (different hash functions: sketch error)"
    )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
