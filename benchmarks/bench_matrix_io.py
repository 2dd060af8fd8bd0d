"""PHYLIP matrix text: writing and reading an n x n distance matrix (default 5,000 x 5,000,
about 480 MB of text; 2,000 x 2,000: 77 MB), bioaccel beside scikit-bio.

    python benchmarks/bench_matrix_io.py [--n 5000] [--repeat 3] [--no-before]

What is compared, in this one Python process, one thread each, on the same seeded random
symmetric float64 matrix (values in [0, 1): 17 to 19 significant digits each, the worst
case for text) and the same file:
- write: ``bioaccel.DistanceMatrix.write(path, "phylip", threads=1)`` (square PHYLIP, each
  value as Python's repr, formatted by the compiled core) against scikit-bio 0.7's
  ``skbio.DistanceMatrix.write(path, format="phylip_dm", layout="square")``;
- read: ``bioaccel.DistanceMatrix.read(path, threads=1)`` (layout detection, numbers parsed by the
  compiled core; every check of the matrix included) against
  ``skbio.DistanceMatrix.read(path, format="phylip_dm", layout="square")``, both reading
  bioaccel's file;
- "before" (unless --no-before): bioaccel with its pure-Python text path (the compiled
  formatter and parser switched off), as it was before the compiled formatter and parser: the speed-up of the native
  path.
Times are the best of --repeat runs, the contenders interleaved (this machine's speed
drifts); the CPU seconds of the process are printed beside the wall time (all one-thread
work, so on a shared, loaded machine they are the steadier figure). Ratios are the other
side's time / bioaccel's time, wall and CPU.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._peers import show_compared


@contextlib.contextmanager
def _python_text_path():
    """bioaccel's matrix text without the compiled core (its state before the compiled formatter and parser)."""
    from bioaccel.distances import _text  # allowed in tests/core/test_boundaries.py

    saved = _text._compiled
    _text._compiled = lambda: None
    try:
        yield
    finally:
        _text._compiled = saved


def _timed(call) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) of ``call()``."""
    t0, c0 = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-before", action="store_true", help="skip bioaccel's Python path")
    args = ap.parse_args()

    import skbio

    import bioaccel

    rng = np.random.default_rng(23)
    d = np.triu(rng.random((args.n, args.n)), 1)
    d += d.T
    ids = [f"seq{k}" for k in range(args.n)]
    ours = bioaccel.DistanceMatrix(d, ids)
    theirs = skbio.DistanceMatrix(d, ids)
    tmp = Path(tempfile.mkdtemp(prefix="bioaccel-matrix-io-"))
    path, skbio_path, before_path = tmp / "m.phy", tmp / "skbio.phy", tmp / "before.phy"

    def write_ours():
        ours.write(path, "phylip", threads=1)

    def write_before():
        with _python_text_path():
            ours.write(before_path, "phylip", threads=1)

    def write_skbio():
        theirs.write(str(skbio_path), format="phylip_dm", layout="square")

    got = {}

    def read_ours():
        got["ours"] = bioaccel.DistanceMatrix.read(path, threads=1)

    def read_before():
        with _python_text_path():
            got["before"] = bioaccel.DistanceMatrix.read(path, threads=1)

    def read_skbio():
        got["skbio"] = skbio.DistanceMatrix.read(str(path), format="phylip_dm", layout="square")

    sides = [
        ("write: bioaccel", "DistanceMatrix.write(path, 'phylip', threads=1)", write_ours),
        (
            "write: scikit-bio",
            "skbio.DistanceMatrix.write(path, format='phylip_dm', layout='square')",
            write_skbio,
        ),
        ("read: bioaccel", "DistanceMatrix.read(path, threads=1)", read_ours),
        (
            "read: scikit-bio",
            "skbio.DistanceMatrix.read(path, format='phylip_dm', layout='square')",
            read_skbio,
        ),
    ]
    if not args.no_before:
        sides += [
            ("write: bioaccel before", "the same, pure-Python text path", write_before),
            ("read: bioaccel before", "the same, pure-Python text path", read_before),
        ]
    show_compared(
        f"a {args.n} x {args.n} square PHYLIP distance matrix (seeded random float64), "
        "written and read, one thread each, in one process",
        [(name, call, 1) for name, call, _ in sides],
    )
    times: dict[str, list[tuple[float, float]]] = {name: [] for name, _, _ in sides}
    for _ in range(args.repeat):  # interleaved
        for name, _, call in sides:
            times[name].append(_timed(call))
            got.clear()  # one matrix in memory at a time
    write_ours()
    size = path.stat().st_size
    if not args.no_before:
        write_before()
        assert before_path.read_bytes() == path.read_bytes(), "native and Python text differ"
    read_ours()
    assert np.array_equal(got["ours"].data, d), "the matrix did not read back exactly"
    best = {name: min(w for w, _ in v) for name, v in times.items()}
    cpu = {name: min(c for _, c in v) for name, v in times.items()}
    print(f"file: {size / 1e6:.0f} MB of text")
    for name, v in times.items():
        print(
            f"  {name:24s} best {best[name]:7.2f} s wall, {cpu[name]:7.2f} s CPU  "
            f"(runs {', '.join(f'{w:.2f}' for w, _ in v)})"
        )
    for op in ("write", "read"):
        ratios = []
        for other, label in (
            ("scikit-bio", "scikit-bio / bioaccel"),
            ("bioaccel before", "before / now"),
        ):
            key, ours_key = f"{op}: {other}", f"{op}: bioaccel"
            if key in best:
                ratios.append(
                    f"{label} {best[key] / best[ours_key]:.1f}x wall, "
                    f"{cpu[key] / cpu[ours_key]:.1f}x CPU"
                )
        print(f"  {op}: {'; '.join(ratios)} (best of {args.repeat}, 1 thread each)")


if __name__ == "__main__":
    main()
