"""Edit-distance benchmark: 300 DNA sequences of ~1 kb (descendants of one ancestor),
all-vs-all, single thread, bioaccel beside stringzillas-cpus, edlib, rapidfuzz and pywfa.

    python benchmarks/bench_edit.py [--repeat 3] [--data simulated|16s] [--n 300]

Cells = len(a) x len(b) summed over the full 300 x 300 (no symmetry shortcut for anyone:
bioaccel is given queries and targets), so GCUPS are effective ones: bioaccel and edlib
compute only Ukkonen's band for these global distances, the others every cell. Timings are the best of --repeat, interleaved.
Ratios are bioaccel speed / peer speed. Slow peers run on the first queries only and are
scaled by cells.

What is compared: distances only, the same pairs, in process, one thread each: bioaccel
``edit_distances(batch, batch, threads=1)``; stringzillas ``LevenshteinDistances(
capabilities=DeviceScope(cpu_cores=1))`` called with ``device=`` that scope over the same two
``Strs`` (its default SIMD kernels, AVX-512 here, on one core);
``edlib.align(a, b, task="distance")``; rapidfuzz ``cdist(..., workers=1)``; pywfa's
``WavefrontAligner`` (score only). The 2-thread figure is bioaccel alone (not a ratio).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bioaccel  # noqa: E402
from benchmarks._peers import show_compared  # noqa: E402
from benchmarks.simulate import dna_descendants  # noqa: E402
from bioaccel.pairwise import edit_distances  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument(
        "--data",
        choices=["simulated", "16s"],
        default="simulated",
        help="simulated: 300 descendants of one 1 kb ancestor; 16s: the first --n of "
        "dada2's 16S sequences (fetched as the tests do)",
    )
    ap.add_argument("--n", type=int, default=300, help="sequences with --data 16s")
    args = ap.parse_args()
    if args.data == "16s":
        from tests.datasets import dada2_16s

        batch16 = bioaccel.read_sequences(dada2_16s())
        seqs = [batch16.sequence(k) for k in range(min(args.n, len(batch16)))]
    else:
        seqs = dna_descendants(300, 1000, seed=1)
    batch = bioaccel.SeqBatch.from_strings(seqs)
    lens = np.array([len(s) for s in seqs], dtype=float)
    cells = float(lens.sum() ** 2)
    peers = {}
    try:
        import stringzilla as sz
        import stringzillas as szs

        # its best SIMD kernels (AVX-512 here) on one core; capabilities=("serial",) would be
        # its portable C loop, 3x slower than what a user gets by default
        one_core = szs.DeviceScope(cpu_cores=1)
        engine = szs.LevenshteinDistances(capabilities=one_core)
        strs = sz.Strs(seqs)
        peers["stringzillas-cpus"] = (lambda: engine(strs, strs, device=one_core), cells)
    except ImportError:
        pass
    try:
        import edlib

        nq = 30
        peers["edlib"] = (
            lambda: [edlib.align(a, b, task="distance") for a in seqs[:nq] for b in seqs],
            float(lens[:nq].sum() * lens.sum()),
        )
    except ImportError:
        pass
    try:
        from rapidfuzz.distance import Levenshtein
        from rapidfuzz.process import cdist

        peers["rapidfuzz cdist"] = (
            lambda: cdist(seqs, seqs, scorer=Levenshtein.distance, workers=1),
            cells,
        )
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
    calls = {
        "stringzillas-cpus": "LevenshteinDistances(capabilities=DeviceScope(cpu_cores=1))"
        "(strs, strs, device=DeviceScope(cpu_cores=1))",
        "edlib": "edlib.align(a, b, task='distance') per pair",
        "rapidfuzz cdist": "cdist(seqs, seqs, scorer=Levenshtein.distance, workers=1)",
        "pywfa": "WavefrontAligner(a, distance='levenshtein', scope='score').wavefront_align(b)",
    }
    what = (
        f"{len(seqs)} dada2 16S sequences" if args.data == "16s" else "300 DNA descendants (~1 kb)"
    )
    show_compared(
        f"Levenshtein distances of {what}, all x all, in process",
        [
            ("bioaccel", "edit_distances(batch, batch, backend='cpu', threads=1)", 1),
            *[(name, calls[name], 1) for name in peers],
        ],
    )
    ours = lambda: edit_distances(batch, batch, backend="cpu", threads=1)  # noqa: E731
    t_ours = float("inf")
    t_peer = {k: float("inf") for k in peers}
    for _ in range(args.repeat):
        t_ours = min(t_ours, timed(ours))
        for name, (fn, _) in peers.items():
            t_peer[name] = min(t_peer[name], timed(fn))
    t_two = min(
        timed(lambda: edit_distances(batch, batch, backend="cpu", threads=2))
        for _ in range(args.repeat)
    )
    g_ours = cells / t_ours / 1e9
    from bioaccel import _native

    print(
        f"bioaccel kernels: {_native.cpu_features()['isa']} "
        "(16 targets per query per step on avx512, 8 below; BIOACCEL_NO_AVX512=1 / "
        "BIOACCEL_NO_AVX2=1 force lower)"
    )
    print(
        f"{what}, all-vs-all, single thread: bioaccel {g_ours:.1f} GCUPS "
        f"({t_ours:.3f}s; 2 threads {cells / t_two / 1e9:.1f} GCUPS)"
    )
    for name, (_fn, c) in peers.items():
        g = c / t_peer[name] / 1e9
        print(f"  {name:20s} {g:8.2f} GCUPS   bioaccel / {name}: {g_ours / g:6.2f}x")


if __name__ == "__main__":
    main()
