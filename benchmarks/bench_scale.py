"""All-vs-all at scale, streamed to disk: wall time and peak memory.

    python benchmarks/bench_scale.py dm3 [--model mash] [--threads 2]
    python benchmarks/bench_scale.py synthetic --n 100000 --sites 100 [--model raw] [--kill-at 0.3]

``dm3``: Biostrings' 26,454 Drosophila upstream sequences (2 kb; fetched from Debian
r-bioc-biostrings as the tests do), 350 M pairs, MinHash (k = 21, s = 1000) or k-mer models,
written as condensed float32 (.cdist). ``synthetic``: an aligned DNA set of n sequences
(benchmarks/simulate.py), to show the n = 100,000 path (5 x 10^9 pairs, a 20 GB file);
``--kill-at F`` kills the run once a fraction F of the tiles is in, re-runs it, and checks
the resumed file against an uninterrupted one by checksum.

What is compared: nothing external; bioaccel's own command line (``bioaccel distance -t
--threads``, printed) timed as a child process, wall time and peak RSS.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def run(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (GB) of a child process."""
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True)
    wall = time.perf_counter() - t0
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return wall, peak_kb / 1e6


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 24):
            h.update(chunk)
    return h.hexdigest()


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", choices=["dm3", "synthetic"])
    ap.add_argument("--model", default=None)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--sites", type=int, default=100)
    ap.add_argument("--kill-at", type=float, default=None)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="bioaccel-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    if args.data == "dm3":
        from tests.datasets import dm3_upstream

        inp = dm3_upstream()
        model = args.model or "mash"
        extra = ["-k", "21", "--sketch-size", "1000"] if model == "mash" else []
    else:
        from benchmarks.simulate import tree_alignment

        inp = work / f"synthetic_{args.n}x{args.sites}.fa"
        if not inp.exists():
            seqs = tree_alignment(args.n, args.sites, seed=1)
            with open(inp, "w") as f:
                for i, s in enumerate(seqs):
                    f.write(f">s{i}\n{s}\n")
        model = args.model or "raw"
        extra = []
    out = work / f"{args.data}.{model}.cdist"
    cmd = [
        sys.executable,
        "-m",
        "bioaccel.cli",
        "distance",
        str(inp),
        "-m",
        model,
        "-t",
        str(args.threads),
        *extra,
    ]
    n_pairs = None
    if args.kill_at is None:
        out.unlink(missing_ok=True)
        wall, peak = run(cmd + ["-o", str(out)])
        from bioaccel.distances import open_distances

        d = open_distances(out)
        n_pairs = len(d) * (len(d) - 1) // 2
        print(
            f"{args.data}: n = {len(d):,}, {n_pairs:,} pairs, model {model}, {args.threads} "
            f"threads: {wall:.1f} s wall, peak RSS {peak:.2f} GB, output {out.stat().st_size / 1e9:.2f} GB "
            f"(condensed float32), {n_pairs / wall / 1e6:.1f} M pairs/s"
        )
        return
    clean = work / f"{args.data}.{model}.clean.cdist"
    if not clean.exists():
        wall, peak = run(cmd + ["-o", str(clean)])
        print(f"uninterrupted: {wall:.1f} s, peak RSS {peak:.2f} GB")
    out.unlink(missing_ok=True)
    journal = Path(str(out) + ".partial.tiles")
    meta = Path(str(out) + ".partial.json")
    proc = subprocess.Popen(cmd + ["-o", str(out)])
    while proc.poll() is None:
        if meta.exists() and journal.exists():
            import json

            total = len(json.loads(meta.read_text())["tiles"])
            if len(journal.read_text().splitlines()) >= args.kill_at * total:
                os.kill(proc.pid, signal.SIGKILL)
                break
        time.sleep(0.05)
    proc.wait()
    done = len(journal.read_text().splitlines()) if journal.exists() else 0
    print(f"killed with {done} tiles finished; re-running")
    wall, _ = run(cmd + ["-o", str(out)])
    same = sha256(out) == sha256(clean)
    print(f"resumed run: {wall:.1f} s; identical to the uninterrupted file: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
