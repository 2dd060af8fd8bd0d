"""Foundation benchmarks: K80 matrices and NJ trees, bioaccel beside its peers, one run.

    python benchmarks/bench_foundation.py [--threads 2] [--repeat 3] [--big]

What is compared: the same in-memory work on one thread each. Every peer here runs on one
thread (none of them has a thread option), so the ratios use bioaccel on one thread too;
the ``bioaccel Nt`` column (--threads, default 2) is bioaccel alone on N threads, not a ratio.
- K80 matrix: ape::dist.dna(x, "K80") timed inside R (through rpy2, the alignment read before
  the clock starts), scikit-bio's ``align_dists(msa, "k2p")`` on a TabularMSA built
  beforehand, FastTree ``-nt -makematrix`` as a program (its time includes reading the FASTA);
  bioaccel: ``distance_matrix(batch, "k80", backend="cpu", threads=1)`` on a SeqBatch.
- NJ tree: ape::nj(d) inside R, scikit-bio's ``nj(dm)`` (a TreeNode), bioaccel's
  ``nj(dm, threads=1)`` (a Tree), all from a matrix already in memory.
Data: a seeded synthetic 2,000 x 1,000 alignment evolved down a random tree
(benchmarks/simulate.py) and mothur's 599 x 1,701 influenza HA alignment (fetched as in
the tests). ``--big`` adds the n = 20,000 NJ run (about 3 GB of working memory). Each timing
is the best of ``--repeat`` runs, bioaccel and the peers interleaved. Ratios are peer time /
bioaccel time. For NJ at scale against QuickTree and Clearcut, see bench_nj.py.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bioaccel  # noqa: E402
from benchmarks._peers import show_compared  # noqa: E402
from benchmarks.simulate import tree_alignment  # noqa: E402
from bioaccel import _native  # noqa: E402


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def interleaved(fns: dict, repeat: int) -> dict:
    """Best time of each callable (None entries stay None), the callables run in turn."""
    best = {k: (None if f is None else float("inf")) for k, f in fns.items()}
    for _ in range(repeat):
        for k, f in fns.items():
            if f is not None:
                t = f()
                best[k] = min(best[k], t)
    return best


def write_fasta(batch: bioaccel.SeqBatch, path: Path) -> None:
    path.write_text("".join(f">{i}\n{batch.sequence(k)}\n" for k, i in enumerate(batch.ids)))


class R:
    """ape timed inside R; None when rpy2/ape are missing."""

    def __init__(self):
        try:
            import rpy2.robjects as ro

            ro.r("suppressMessages(library(ape))")
            self.ro = ro
        except Exception as exc:  # noqa: BLE001 - any failure means "no R peer"
            print(f"  (R peer unavailable: {exc})")
            self.ro = None

    def dist_dna(self, fasta: Path):
        """A callable timing one ape::dist.dna run (seconds), or None."""
        if self.ro is None:
            return None
        self.ro.globalenv["bench_path"] = str(fasta)
        self.ro.r("bench_x <- read.dna(bench_path, format='fasta')")
        return lambda: float(self.ro.r("system.time(dist.dna(bench_x, 'K80'))[['elapsed']]")[0])

    def nj(self, dm: bioaccel.DistanceMatrix):
        """A callable timing one ape::nj run (seconds), or None."""
        if self.ro is None:
            return None
        n = len(dm)
        self.ro.globalenv["bench_d"] = self.ro.r["matrix"](
            self.ro.FloatVector(dm.data.ravel()), nrow=n
        )
        return lambda: float(self.ro.r("system.time(nj(bench_d))[['elapsed']]")[0])


def skbio_k80(batch: bioaccel.SeqBatch):
    try:
        import skbio
        from skbio.alignment import TabularMSA, align_dists
    except ImportError:
        return None
    msa = TabularMSA([skbio.DNA(batch.sequence(k).replace("?", "N")) for k in range(len(batch))])
    return lambda: best_of(lambda: align_dists(msa, "k2p"), 1)


def skbio_nj(dm: bioaccel.DistanceMatrix):
    try:
        from skbio.tree import nj
    except ImportError:
        return None
    sk = dm.to_skbio()
    return lambda: best_of(lambda: nj(sk), 1)


def fasttree_exe() -> str | None:
    return shutil.which("FastTree") or shutil.which("fasttree")


def fasttree_matrix(fasta: Path):
    exe = fasttree_exe()
    if exe is None:
        return None

    def run():
        subprocess.run(
            [exe, "-nt", "-makematrix", str(fasta)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )

    return lambda: best_of(run, 1)


def ratio(peer: float | None, ours: float) -> str:
    return "n/a" if peer is None else f"{peer / ours:7.1f}x"


def fmt(t: float | None) -> str:
    return "     n/a" if t is None else f"{t:8.3f}s"


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--threads", type=int, default=2, help="bioaccel's extra column (peers: 1 thread)"
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also time NJ for n = 20,000")
    args = ap.parse_args()
    r = R()
    tmp = Path(tempfile.mkdtemp(prefix="bioaccel-bench-"))

    datasets = {
        "synthetic 2000x1000": bioaccel.SeqBatch.from_strings(tree_alignment(2000, 1000, seed=0))
    }
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from tests.datasets import flu_ha

        ha = flu_ha()
        plain = tmp / "HA.fasta"
        plain.write_bytes(gzip.decompress(ha.read_bytes()))
        datasets["flu HA 599x1701"] = bioaccel.read_sequences(plain)
    except BaseException as exc:  # pytest.skip raises BaseException subclasses
        print(f"  (flu HA unavailable: {exc})")

    show_compared(
        "K80 matrices and NJ trees, in memory, one thread each (ratios); bioaccel "
        f"also alone on {args.threads} threads",
        [
            (
                "bioaccel",
                (
                    "bioaccel.distance_matrix(batch, 'k80', backend='cpu', threads=1); "
                    "bioaccel.nj(dm, threads=1)"
                ),
                1,
            ),
            ("ape", "dist.dna(x, 'K80'); nj(d)  (R, timed with system.time)", 1),
            ("scikit-bio", "align_dists(msa, 'k2p'); nj(dm)", 1),
            ("FastTree", f"{fasttree_exe() or 'FastTree'} -nt -makematrix in.fasta", 1),
        ],
    )
    nt = f"{args.threads}t"
    print(
        f"\nK80 distance matrix, bioaccel cpu backend (OpenMP {'on' if _native.openmp_enabled() else 'off'})"
    )
    print(
        f"{'data':22s} {'bioaccel':>9s} {'ape':>9s} {'ratio':>8s} {'skbio':>9s} {'ratio':>8s} "
        f"{'FastTree':>9s} {'ratio':>8s} {'bioaccel ' + nt:>12s}"
    )
    matrices = {}
    for name, batch in datasets.items():
        fasta = tmp / (name.split()[0] + ".fasta")
        write_fasta(batch, fasta)
        matrices[name] = bioaccel.distance_matrix(batch, "k80", pairwise_deletion=True)
        t = interleaved(
            {
                "ours": lambda b=batch: best_of(
                    lambda: bioaccel.distance_matrix(b, "k80", backend="cpu", threads=1), 1
                ),
                "ape": r.dist_dna(fasta),
                "skbio": skbio_k80(batch),
                "ft": fasttree_matrix(fasta),
                "ours_n": lambda b=batch: best_of(
                    lambda: bioaccel.distance_matrix(b, "k80", backend="cpu", threads=args.threads),
                    1,
                ),
            },
            args.repeat,
        )
        ours = t["ours"]
        print(
            f"{name:22s} {fmt(ours)} {fmt(t['ape'])} {ratio(t['ape'], ours):>8s} {fmt(t['skbio'])} "
            f"{ratio(t['skbio'], ours):>8s} {fmt(t['ft'])} {ratio(t['ft'], ours):>8s} {fmt(t['ours_n']):>12s}"
        )

    print("\nNJ tree")
    print(
        f"{'data':22s} {'bioaccel':>9s} {'skbio':>9s} {'ratio':>8s} {'ape::nj':>9s} {'ratio':>8s} "
        f"{'bioaccel ' + nt:>12s}"
    )
    for name, dm in matrices.items():
        t = interleaved(
            {
                "ours": lambda d=dm: best_of(lambda: bioaccel.nj(d, threads=1), 1),
                "skbio": skbio_nj(dm),
                "ape": r.nj(dm),
                "ours_n": lambda d=dm: best_of(lambda: bioaccel.nj(d, threads=args.threads), 1),
            },
            args.repeat,
        )
        ours = t["ours"]
        print(
            f"{name:22s} {fmt(ours)} {fmt(t['skbio'])} {ratio(t['skbio'], ours):>8s} {fmt(t['ape'])} "
            f"{ratio(t['ape'], ours):>8s} {fmt(t['ours_n']):>12s}"
        )

    if args.big:
        import resource

        batch = bioaccel.SeqBatch.from_strings(tree_alignment(20000, 1000, seed=1))
        t0 = time.perf_counter()
        dm = bioaccel.distance_matrix(batch, "k80", pairwise_deletion=True, threads=args.threads)
        t_dist = time.perf_counter() - t0
        t0 = time.perf_counter()
        bioaccel.nj(dm, threads=args.threads)
        t_nj = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(
            f"\nn = 20,000 x 1,000: K80 matrix {t_dist:.1f}s, NJ {t_nj:.1f}s, peak RSS {rss:.1f} GB"
        )
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
