"""Foundation benchmarks: K80 matrices and NJ trees, bioaccel beside its peers, one run.

    python benchmarks/bench_foundation.py [--threads 2] [--big]

Peers: ape::dist.dna and ape::nj timed inside R (through rpy2, data loaded before the
clock starts), scikit-bio's align_dists and nj, FastTree -makematrix (apt-get install
fasttree). Data: a seeded synthetic 2,000 x 1,000 alignment evolved down a random tree
(benchmarks/simulate.py) and mothur's 599 x 1,701 influenza HA alignment (fetched as in
the tests). ``--big`` adds the n = 20,000 NJ run (about 3 GB of working memory).
Each timing is the best of ``--repeat`` runs. Ratios are peer time / bioaccel time.
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
from bioaccel import _native  # noqa: E402
from benchmarks.simulate import tree_alignment  # noqa: E402


def best_of(fn, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
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

    def dist_dna(self, fasta: Path, repeat: int) -> float | None:
        if self.ro is None:
            return None
        self.ro.globalenv["bench_path"] = str(fasta)
        self.ro.r("bench_x <- read.dna(bench_path, format='fasta')")
        t = self.ro.r(f"min(replicate({repeat}, system.time(dist.dna(bench_x, 'K80'))[['elapsed']]))")
        return float(t[0])

    def nj(self, dm: bioaccel.DistanceMatrix, repeat: int) -> float | None:
        if self.ro is None:
            return None
        n = len(dm)
        self.ro.globalenv["bench_d"] = self.ro.r["matrix"](self.ro.FloatVector(dm.data.ravel()), nrow=n)
        t = self.ro.r(f"min(replicate({repeat}, system.time(nj(bench_d))[['elapsed']]))")
        return float(t[0])


def skbio_k80(batch: bioaccel.SeqBatch, repeat: int) -> float | None:
    try:
        import skbio
        from skbio.alignment import TabularMSA, align_dists
    except ImportError:
        return None
    msa = TabularMSA([skbio.DNA(batch.sequence(k).replace("?", "N")) for k in range(len(batch))])
    return best_of(lambda: align_dists(msa, "k2p"), repeat)


def skbio_nj(dm: bioaccel.DistanceMatrix, repeat: int) -> float | None:
    try:
        from skbio.tree import nj
    except ImportError:
        return None
    sk = dm.to_skbio()
    return best_of(lambda: nj(sk), repeat)


def fasttree_matrix(fasta: Path, repeat: int) -> float | None:
    exe = shutil.which("FastTree") or shutil.which("fasttree")
    if exe is None:
        return None
    def run():
        subprocess.run([exe, "-nt", "-makematrix", str(fasta)], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, check=True)
    return best_of(run, repeat)


def ratio(peer: float | None, ours: float) -> str:
    return "n/a" if peer is None else f"{peer / ours:7.1f}x"


def fmt(t: float | None) -> str:
    return "     n/a" if t is None else f"{t:8.3f}s"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--big", action="store_true", help="also time NJ for n = 20,000")
    args = ap.parse_args()
    r = R()
    tmp = Path(tempfile.mkdtemp(prefix="bioaccel-bench-"))

    datasets = {"synthetic 2000x1000": bioaccel.SeqBatch.from_strings(tree_alignment(2000, 1000, seed=0))}
    try:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
        from tests.datasets import flu_ha
        ha = flu_ha()
        plain = tmp / "HA.fasta"
        plain.write_bytes(gzip.decompress(ha.read_bytes()))
        datasets["flu HA 599x1701"] = bioaccel.read_sequences(plain)
    except BaseException as exc:  # pytest.skip raises BaseException subclasses
        print(f"  (flu HA unavailable: {exc})")

    print(f"\nK80 distance matrix, bioaccel cpu backend, {args.threads} threads "
          f"(OpenMP {'on' if _native.openmp_enabled() else 'off'})")
    print(f"{'data':22s} {'bioaccel':>9s} {'ape':>9s} {'ratio':>8s} {'skbio':>9s} {'ratio':>8s} "
          f"{'FastTree':>9s} {'ratio':>8s}")
    matrices = {}
    for name, batch in datasets.items():
        fasta = tmp / (name.split()[0] + ".fasta")
        write_fasta(batch, fasta)
        ours = best_of(lambda: bioaccel.distance_matrix(batch, "k80", backend="cpu",
                                                        threads=args.threads), args.repeat)
        matrices[name] = bioaccel.distance_matrix(batch, "k80", pairwise_deletion=True)
        ape = r.dist_dna(fasta, args.repeat)
        sk = skbio_k80(batch, 1)
        ft = fasttree_matrix(fasta, 1)
        print(f"{name:22s} {fmt(ours)} {fmt(ape)} {ratio(ape, ours):>8s} {fmt(sk)} {ratio(sk, ours):>8s} "
              f"{fmt(ft)} {ratio(ft, ours):>8s}")

    print(f"\nNJ tree, {args.threads} threads")
    print(f"{'data':22s} {'bioaccel':>9s} {'skbio':>9s} {'ratio':>8s} {'ape::nj':>9s} {'ratio':>8s}")
    for name, dm in matrices.items():
        ours = best_of(lambda: bioaccel.nj(dm, threads=args.threads), args.repeat)
        sk = skbio_nj(dm, 1)
        ape = r.nj(dm, 1)
        print(f"{name:22s} {fmt(ours)} {fmt(sk)} {ratio(sk, ours):>8s} {fmt(ape)} {ratio(ape, ours):>8s}")

    if args.big:
        import resource
        batch = bioaccel.SeqBatch.from_strings(tree_alignment(20000, 1000, seed=1))
        t0 = time.perf_counter()
        dm = bioaccel.distance_matrix(batch, "k80", pairwise_deletion=True, threads=args.threads)
        t_dist = time.perf_counter() - t0
        t0 = time.perf_counter()
        bioaccel.nj(dm, threads=args.threads)
        t_nj = time.perf_counter() - t0
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20
        print(f"\nn = 20,000 x 1,000: K80 matrix {t_dist:.1f}s, NJ {t_nj:.1f}s, peak RSS {rss:.1f} GB")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
