"""MinHash benchmark: dada2's 3,994 16S sequences, all-vs-all Mash distances end to end
(read, sketch, compare, write), bioaccel beside `mash sketch -i` + `mash triangle`.

    python benchmarks/bench_kmers.py [--repeat 3]

Both use k = 21 and sketch size 1,000. Times are the best of --repeat runs, bioaccel and
mash interleaved (this machine's speed drifts); the spread of each is printed too. bioaccel writes the matrix as binary .npy (Mash can
only write text); the plain-text PHYLIP time is printed too. Needs Debian's mash
(apt-get install mash) for the peer, and fetches the data as the tests do.
"""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bioaccel  # noqa: E402


def main() -> None:
    import argparse
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    from tests.datasets import dada2_16s
    src = dada2_16s()
    tmp = Path(tempfile.mkdtemp(prefix="bioaccel-kmers-"))
    fasta = tmp / "16s.fa"
    fasta.write_bytes(gzip.decompress(src.read_bytes()))
    n = sum(1 for line in fasta.read_text().splitlines() if line.startswith(">"))

    from bioaccel.distances._ondisk import stream_distances
    mash = shutil.which("mash")

    def run_ours():
        t0 = time.perf_counter()
        dm = bioaccel.distance_matrix(bioaccel.read_sequences(fasta), "mash", k=21, sketch_size=1000)
        dm.write(tmp / "d.npy")
        t_square = time.perf_counter() - t0
        t0 = time.perf_counter()
        stream_distances(bioaccel.read_sequences(fasta), "mash", tmp / "d.cdist", k=21,
                         sketch_size=1000)
        return dm, t_square, time.perf_counter() - t0

    def run_mash():
        t0 = time.perf_counter()
        subprocess.run([mash, "sketch", "-i", "-k", "21", "-s", "1000", "-o", str(tmp / "ref"), str(fasta)],
                       check=True, capture_output=True)
        with open(tmp / "tri.txt", "w") as out:
            subprocess.run([mash, "triangle", str(tmp / "ref.msh")], check=True, stdout=out,
                           stderr=subprocess.DEVNULL)
        return time.perf_counter() - t0

    squares, streams, mashes = [], [], []
    for _ in range(args.repeat):  # interleaved
        dm, t_square, t_stream = run_ours()
        squares.append(t_square)
        streams.append(t_stream)
        if mash is not None:
            mashes.append(run_mash())
    t0 = time.perf_counter()
    dm.write(tmp / "d.phy")
    t_text = time.perf_counter() - t0
    t_ours = min(min(squares), min(streams))
    print(f"{n} 16S sequences, k=21, s=1000: bioaccel {min(squares):.2f}s end to end (.npy square "
          f"float64; runs {', '.join(f'{t:.2f}' for t in squares)}), {min(streams):.2f}s streamed "
          f"(.cdist condensed float32; runs {', '.join(f'{t:.2f}' for t in streams)}); PHYLIP text "
          f"would add {t_text:.2f}s")
    if mash is None:
        print("  mash not installed (apt-get install mash): no peer timing")
        return
    t_mash = min(mashes)
    print(f"  mash sketch + triangle: {t_mash:.2f}s (runs {', '.join(f'{t:.2f}' for t in mashes)})   "
          f"ratio mash / bioaccel (best of {args.repeat} each): {t_mash / t_ours:.1f}x")
    # agreement: both estimate the same distances within sketch error
    lines = (tmp / "tri.txt").read_text().splitlines()[1:]
    theirs = np.zeros((n, n))
    for i, line in enumerate(lines):
        vals = line.split("\t")[1:]
        theirs[i, :len(vals)] = [float(v) for v in vals]
    theirs = theirs + theirs.T
    iu = np.triu_indices(n, 1)

    def jaccard(d):  # Mash's D back on the Jaccard scale, where sketch error is uniform
        x = np.exp(-21 * d)
        return x / (2 - x)

    diff = np.abs(jaccard(theirs[iu]) - jaccard(dm.data[iu]))
    print(f"  |bioaccel - mash| on the Jaccard scale: median {np.median(diff):.4f}, 99th "
          f"percentile {np.percentile(diff, 99):.4f} (different hash functions: sketch error)")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
