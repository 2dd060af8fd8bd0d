"""MSA guide-tree distance stage: the bit-parallel LCS kernel at every CPU level, and single
linkage over all pairs of a 10,000-sequence family at 1 and 2 threads.

    python benchmarks/bench_guide.py [--n 10000] [--rows 2000] [--repeat 3]

(a) LCS distances of the first --rows sequences of a simulated protein family (~250 residues),
    all pairs, 1 thread, at each CPU level this machine runs (BIOACCEL_NO_AVX512 /
    BIOACCEL_NO_AVX2 in a fresh process, as the dispatcher reads them once): pairs per second,
    best of --repeat, and the ratio to the SSE2 baseline.
(b) single linkage (SLINK fed a block of rows at a time) over all pairs of --n sequences at 1
    and 2 threads: seconds, best of --repeat, and the 1 -> 2 thread speedup; the merges must be
    the same.
What is compared: bioaccel with itself (CPU levels in (a), thread counts in (b)); no external peer.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LEVEL_CHILD = """
import json, sys, time, numpy as np
from bioaccel._core.native import load_native
from bioaccel.sequences._read import read_sequences
native = load_native()
batch = read_sequences(sys.argv[1])
rows = np.arange(int(sys.argv[2]), dtype=np.int64)
best = float("inf")
for _ in range(int(sys.argv[3])):
    t = time.perf_counter()
    native.msa_lcs_distances(batch.codes, batch.offsets, 20, rows, None, 1)
    best = min(best, time.perf_counter() - t)
print(json.dumps({"isa": native.cpu_features()["isa"], "seconds": best}))
"""


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--rows", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import numpy as np

    from benchmarks.family_sim import simulate_family, write_fasta
    from bioaccel.msa_engine import GuideDistances
    from bioaccel.sequences import read_sequences

    fam = simulate_family(args.n, 250, "protein", seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "family.fa"
        write_fasta(path, fam.ids, fam.sequences)
        rows = min(args.rows, args.n)
        pairs = rows * (rows - 1) / 2
        print(
            f"(a) LCS distances, {rows} x ~250 aa ({pairs / 1e6:.1f} M pairs), 1 thread, "
            f"best of {args.repeat}"
        )
        levels = {}
        base_env = {
            k: v
            for k, v in os.environ.items()
            if k not in ("BIOACCEL_NO_AVX2", "BIOACCEL_NO_AVX512")
        }
        for forced in ({}, {"BIOACCEL_NO_AVX512": "1"}, {"BIOACCEL_NO_AVX2": "1"}):
            out = subprocess.run(
                [sys.executable, "-c", LEVEL_CHILD, str(path), str(rows), str(args.repeat)],
                env={**base_env, **forced},
                check=True,
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            got = json.loads(out.stdout)
            levels.setdefault(got["isa"], got["seconds"])
        baseline = levels.get("sse2")
        for isa, seconds in levels.items():
            ratio = f", {baseline / seconds:.2f}x sse2" if baseline else ""
            print(f"  {isa:>7}: {seconds:.3f} s, {pairs / seconds / 1e6:.2f} M pairs/s{ratio}")

        batch = read_sequences(path)
        print(f"(b) single linkage over all pairs of {args.n} x ~250 aa, best of {args.repeat}")
        times, merges = {}, {}
        for threads in (1, 2):
            best = float("inf")
            for _ in range(args.repeat):
                t = time.perf_counter()
                merges[threads] = GuideDistances(batch, threads).single_linkage()
                best = min(best, time.perf_counter() - t)
            times[threads] = best
            print(f"  {threads} thread{'s' if threads > 1 else ''}: {best:.2f} s")
        print(
            f"  1 -> 2 threads: {times[1] / times[2]:.2f}x; merges "
            f"{'identical' if np.array_equal(merges[1], merges[2]) else 'DIFFERENT'}"
        )


if __name__ == "__main__":
    main()
