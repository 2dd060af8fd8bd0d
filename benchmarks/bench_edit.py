"""Edit-distance benchmark: 300 DNA sequences of ~1 kb (descendants of one ancestor),
all-vs-all, single thread, bioaccel beside stringzillas-cpus, edlib, rapidfuzz and pywfa.

    python benchmarks/bench_edit.py [--repeat 3]

Cells = len(a) x len(b) summed over the full 300 x 300 (no symmetry shortcut for anyone:
bioaccel is given queries and targets), so GCUPS are effective ones: bioaccel and edlib
compute only Ukkonen's band for these global distances, the others every cell. Timings are the best of --repeat, interleaved.
Ratios are bioaccel speed / peer speed. Slow peers run on the first queries only and are
scaled by cells.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bioaccel  # noqa: E402
from bioaccel.pairwise._edit import edit_distances  # noqa: E402
from benchmarks.simulate import dna_descendants  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    seqs = dna_descendants(300, 1000, seed=1)
    batch = bioaccel.SeqBatch.from_strings(seqs)
    lens = np.array([len(s) for s in seqs], dtype=float)
    cells = float(lens.sum() ** 2)
    peers = {}
    try:
        import stringzilla as sz
        import stringzillas as szs
        engine = szs.LevenshteinDistances(capabilities=("serial",))
        strs = sz.Strs(seqs)
        peers["stringzillas-cpus"] = (lambda: engine(strs, strs), cells)
    except ImportError:
        pass
    try:
        import edlib
        nq = 30
        peers["edlib"] = (lambda: [edlib.align(a, b, task="distance") for a in seqs[:nq] for b in seqs],
                          float(lens[:nq].sum() * lens.sum()))
    except ImportError:
        pass
    try:
        from rapidfuzz.distance import Levenshtein
        from rapidfuzz.process import cdist
        peers["rapidfuzz cdist"] = (lambda: cdist(seqs, seqs, scorer=Levenshtein.distance, workers=1), cells)
    except ImportError:
        pass
    try:
        from pywfa import WavefrontAligner
        nq = 10
        def wfa():
            for a in seqs[:nq]:
                al = WavefrontAligner(a, span="end-to-end", distance="levenshtein", scope="score")
                for b in seqs:
                    al.wavefront_align(b)
        peers["pywfa"] = (wfa, float(lens[:nq].sum() * lens.sum()))
    except ImportError:
        pass
    ours = lambda: edit_distances(batch, batch, backend="cpu", threads=1)  # noqa: E731
    t_ours = float("inf")
    t_peer = {k: float("inf") for k in peers}
    for _ in range(args.repeat):
        t_ours = min(t_ours, timed(ours))
        for name, (fn, _) in peers.items():
            t_peer[name] = min(t_peer[name], timed(fn))
    t_two = min(timed(lambda: edit_distances(batch, batch, backend="cpu", threads=2)) for _ in range(args.repeat))
    g_ours = cells / t_ours / 1e9
    print(f"300 x ~1 kb DNA, all-vs-all, single thread: bioaccel {g_ours:.1f} GCUPS "
          f"({t_ours:.3f}s; 2 threads {cells / t_two / 1e9:.1f} GCUPS)")
    for name, (fn, c) in peers.items():
        g = c / t_peer[name] / 1e9
        print(f"  {name:20s} {g:8.2f} GCUPS   bioaccel / {name}: {g_ours / g:6.2f}x")


if __name__ == "__main__":
    main()
