"""The growth's q-gram test before Landau-Vishkin (csrc/clusters/growth.cpp, edit::GramCounts,
d >= 2) on beside off, on the amplicon sets of ``bench_cluster.py``: what it saves.

    python benchmarks/bench_growth_filters.py [--sizes 100000,300000] [--d 2,3] [--repeat 3]
                                              [--data /tmp/amp]

The search and growth alone (``swarm_grow_search``, one thread, OTU breaking, edit
differences), the amplicons read once; on and off interleaved run by run, best of
``--repeat``. Ratio = off / on: above 1, the test pays. The two results are compared
(they must be the same growth).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_cluster import data  # noqa: E402
from bioaccel._core import load_native  # noqa: E402
from bioaccel.clusters import read_amplicons  # noqa: E402


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100000,300000")
    ap.add_argument("--d", default="2,3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--data", default=None, help="folder for the simulated sets (kept)")
    args = ap.parse_args(argv)
    folder = Path(args.data or "/tmp/bioaccel-bench-cluster")
    folder.mkdir(parents=True, exist_ok=True)
    native = load_native()
    print("| uniques | letters | d | off s | on s | off / on | same growth |")
    print("|---|---|---|---|---|---|---|")
    for n in (int(x) for x in args.sizes.split(",")):
        amp = read_amplicons(data(n, folder))
        ab = np.ascontiguousarray(amp.abundance, dtype=np.uint64)
        letters = int(amp.batch.offsets[-1])
        for d in (int(x) for x in args.d.split(",")):
            best = {0: float("inf"), 1: float("inf")}
            out = {}
            for _ in range(args.repeat):
                for gram_test in (0, 1):
                    t = time.perf_counter()
                    out[gram_test] = native.swarm_grow_search(
                        amp.batch.codes, amp.batch.offsets, ab, d, True, False, gram_test
                    )
                    best[gram_test] = min(best[gram_test], time.perf_counter() - t)
            same = all(np.array_equal(a, b) for a, b in zip(out[0], out[1]))
            print(
                f"| {n:,} | {letters / 1e6:.0f} M | {d} | {best[0]:.2f} | {best[1]:.2f} | "
                f"{best[0] / best[1]:.2f} | {'yes' if same else 'NO'} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
