"""GPU benchmark (run by scripts/gpu-check.sh on a GPU machine): K80 matrices on the
cupy and numba-cuda backends beside the cpu backend, neighbour joining on cupy beside the
C++ core, edit distances on numba-cuda (GCUPS), and the MSA profile-profile DP stage on
cupy beside the C++ engine (cells/s), the MSA guide tree's LCS distances on every GPU beside
the CPU engine, the MSA end to end, and the accurate mode's pair-HMM posteriors on every GPU
beside the CPU engine; one run, ratios printed. ``--neighbours``: only the neighbours of
200,000 simulated amplicons at d = 1, verified by every backend beside the cpu's.

What is compared: bioaccel with itself, the same call and data on a GPU backend and on the cpu
backend; the cpu backend runs on all cores of the machine (threads=0, printed at the start)
except where a line says "1 thread". No external peer runs here.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bioaccel  # noqa: E402
from benchmarks.simulate import tree_alignment  # noqa: E402


def timed(fn, repeat=3):
    fn()  # warm-up: kernel compilation, device transfer paths
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    import os

    print(
        f"compared: GPU backends against bioaccel's cpu backend on all {os.cpu_count()} cores "
        "(threads=0) unless a line says otherwise; no external peer"
    )
    for n, sites in ((2000, 1000), (10000, 1500)):
        batch = bioaccel.SeqBatch.from_strings(tree_alignment(n, sites, seed=3))
        cpu = timed(
            lambda: bioaccel.distance_matrix(batch, "k80", pairwise_deletion=True, backend="cpu"), 1
        )
        line = f"K80 {n}x{sites}: cpu {cpu:.3f}s"
        for backend in ("cupy", "numba-cuda"):
            why = bioaccel.available_backends()[backend]
            if why:
                line += f", {backend} unavailable ({why})"
                continue
            t = timed(
                lambda: bioaccel.distance_matrix(
                    batch, "k80", pairwise_deletion=True, backend=backend
                )
            )
            pairs = n * (n - 1) / 2
            line += f", {backend} {t:.3f}s ({cpu / t:.1f}x cpu, {pairs * sites / t / 1e9:.1f} G site-pairs/s)"
        print(line, flush=True)
    if bioaccel.available_backends()["cupy"] is None:
        import numpy as np

        # up to 4,000 taxa: on an H200 cupy's NJ (one argmin round trip per join) took 4.9 s
        # at 4,000 against the C++ core's 2.8 s, and 10,000 ran past the check's time limit
        for n in (2000, 4000):
            rng = np.random.default_rng(1)
            x = rng.normal(size=(n, 8))
            d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
            cpu = timed(lambda: bioaccel.nj(d), 1)
            gpu = timed(lambda: bioaccel.nj(d, backend="cupy"), 1)
            print(f"NJ n={n}: cpu {cpu:.2f}s, cupy {gpu:.2f}s ({cpu / gpu:.1f}x)", flush=True)
    from benchmarks.simulate import protein_families

    prots = protein_families(seed=1)  # 30 families x 10: 300 proteins of 190-400 aa
    cells = sum(len(a) for a in prots) ** 2
    for backend in ("cupy", "numba-cuda"):
        if bioaccel.available_backends()[backend] is None:
            for mode in ("global", "local"):
                t = timed(
                    lambda: bioaccel.align_scores(prots, prots, mode=mode, backend=backend), 1
                )
                print(
                    f"align {mode} protein 300 x 300 BLOSUM62 11/1, {backend}: {t:.3f}s, "
                    f"{cells / t / 1e12:.3f} TCUPS",
                    flush=True,
                )
    if bioaccel.available_backends()["cupy"] is None:
        # throughput at scale: 1,000 x 10,000 proteins (one pair per thread), and long pairs
        # (one pair per warp)
        import numpy as np

        rng = np.random.default_rng(4)
        aa = list("ACDEFGHIKLMNPQRSTVWY")
        many = ["".join(rng.choice(aa, rng.integers(190, 400))) for _ in range(10_000)]
        long = ["".join(rng.choice(aa, 30_000)) for _ in range(72)]
        for name, q, t in (
            ("1,000 x 10,000 proteins 190-400 aa", many[:1000], many),
            ("8 x 64 proteins of 30,000 aa", long[:8], long[8:]),
        ):
            cells = sum(map(len, q)) * sum(map(len, t))
            for mode in ("local", "global"):
                sec = timed(
                    lambda q=q, t=t, mode=mode: bioaccel.align_scores(
                        q, t, mode=mode, backend="cupy"
                    ),
                    1,
                )
                print(
                    f"align {mode} {name}, BLOSUM62 11/1, cupy: {sec:.3f}s, "
                    f"{cells / sec / 1e12:.3f} TCUPS",
                    flush=True,
                )
    import numpy as np

    rng = np.random.default_rng(2)
    reads = ["".join(rng.choice(list("ACGT"), 1000)) for _ in range(2000)]
    cells = sum(len(a) * len(b) for a in reads for b in reads[:1]) * len(reads) / 2
    for backend in ("cupy", "numba-cuda"):
        if bioaccel.available_backends()[backend] is None:
            t = timed(lambda backend=backend: bioaccel.edit_distances(reads, backend=backend), 1)
            print(
                f"edit distance 2000 x 1 kb all-vs-all, {backend}: {t:.2f}s, "
                f"{cells / t / 1e12:.3f} TCUPS",
                flush=True,
            )
    if bioaccel.available_backends()["cupy"] is None:
        msa_profile_stage()
        msa_guide_distances()
        msa_end_to_end()
        msa_posteriors()


def _dp_args(rows_a, rows_b, sc):
    """msa_profile_pair's arguments for two gapped sub-alignments (B's columns after A's)."""
    import numpy as np

    rows = list(rows_a) + list(rows_b)
    batch = bioaccel.SeqBatch.from_strings([r.replace("-", "") for r in rows], alphabet="protein")
    cols = np.concatenate(
        [
            [c + (len(rows_a[0]) if k >= len(rows_a) else 0) for c, x in enumerate(r) if x != "-"]
            for k, r in enumerate(rows)
        ]
    )
    return (
        batch.codes,
        batch.offsets,
        sc.letter_of,
        sc.sub,
        sc.gaps,
        np.ones(len(rows)),
        cols.astype(np.int32),
        np.arange(len(rows_a)),
        np.arange(len(rows_a), len(rows)),
    )


def msa_profile_stage() -> None:
    """Profile-stage throughput: one batch (as one guide-tree level) of 150 sequence pairs
    and 30 pairs of 5-row profiles of 190-400 aa, the CuPy kernel (packing and transfers
    included) beside the C++ engine's DP pair by pair on one thread; checks they agree."""
    import cupy
    import numpy as np

    from benchmarks.simulate import protein_families
    from bioaccel import _native
    from bioaccel.backends import profile_dp_batch
    from bioaccel.msa_engine import msa_scoring

    sc = msa_scoring(bioaccel.PROTEIN)
    prots = protein_families(seed=5)
    pairs = [(_dp_args([prots[k]], [prots[k + 1]], sc), True) for k in range(0, 300, 2)]
    for f in range(30):
        rows = bioaccel.msa(prots[10 * f : 10 * f + 10], threads=1).sequences
        pairs.append((_dp_args(rows[:5], rows[5:], sc), False))
    inputs = [_native.msa_dp_inputs(*a, as_sequences=s) for a, s in pairs]
    cells = sum((d["sa"].shape[0] + 1) * (d["occ_b"].shape[0] + 1) for d in inputs)
    want = []
    t0 = time.perf_counter()
    for a, s in pairs:
        want.append(_native.msa_profile_pair(*a, as_sequences=s))
    cpu = time.perf_counter() - t0
    gpu = timed(lambda: profile_dp_batch(inputs, cupy), 3)
    paths, scores = profile_dp_batch(inputs, cupy)
    same = all(
        np.array_equal(p, w[0]) and np.float32(w[1]) == sc_
        for p, sc_, w in zip(paths, scores, want)
    )
    print(
        f"MSA profile DP, {len(pairs)} pairs ({cells / 1e6:.1f} M cells): cpu 1 thread "
        f"{cpu:.3f}s ({cells / cpu / 1e6:.0f} M cells/s), cupy {gpu:.3f}s "
        f"({cells / gpu / 1e6:.0f} M cells/s, {cpu / gpu:.1f}x cpu), "
        f"{'identical' if same else 'DIFFERENT'} paths and scores",
        flush=True,
    )


def msa_guide_distances(n: int = 10000) -> None:
    """The guide tree's LCS distance stage: single linkage over all pairs of a simulated
    10,000 x 250 aa family, CPU engine (all cores, 8 pairs per vector) versus the CUDA
    kernel through the tile runner on every visible GPU; same merges or not."""
    import numpy as np

    from benchmarks.family_sim import simulate_family
    from bioaccel.msa_engine import GuideDistances

    fam = simulate_family(n, 250, seed=1)
    batch = bioaccel.SeqBatch.from_strings(fam.sequences, ids=fam.ids, alphabet="protein")
    out = {}

    def run(key, **kw):
        out[key] = GuideDistances(batch, 0, **kw).single_linkage()

    pairs = n * (n - 1) / 2
    t_cpu = timed(lambda: run("cpu"), repeat=1)
    t_gpu = timed(lambda: run("cupy", backend="cupy", devices="all"), repeat=2)
    same = np.array_equal(out["cpu"], out["cupy"])
    print(
        f"MSA guide tree distances, {n} x 250 aa ({pairs / 1e6:.0f} M LCS pairs): cpu "
        f"{t_cpu:.2f} s ({pairs / t_cpu / 1e6:.1f} M pairs/s), cupy on all GPUs {t_gpu:.2f} s "
        f"({pairs / t_gpu / 1e6:.1f} M pairs/s, {t_cpu / t_gpu:.2f}x), "
        f"{'identical' if same else 'DIFFERENT'} merges",
        flush=True,
    )


def msa_end_to_end(sizes=(1000, 10000)) -> None:
    """bioaccel.msa with the progressive stage on the GPU beside the CPU engine (all cores),
    on simulated protein families of ~250 residues: wall time and whether they agree."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from benchmarks.family_sim import simulate_family

    for n in sizes:
        fam = simulate_family(n, 250, seed=1)
        records = list(zip(fam.ids, fam.sequences))
        out = {}

        def run(backend):
            out[backend] = bioaccel.msa(records, backend=backend).sequences

        t_gpu = timed(lambda: run("cupy"), repeat=1)
        t_cpu = timed(lambda: run("cpu"), repeat=1)
        print(
            f"MSA end to end, {n} x 250 aa: cupy {t_gpu:.2f} s, cpu {t_cpu:.2f} s "
            f"({t_cpu / t_gpu:.2f}x), identical: {out['cupy'] == out['cpu']}",
            flush=True,
        )


def msa_posteriors(n: int = 200, length: int = 300) -> None:
    """The accurate mode's pair-HMM posteriors (forward-backward of every pair): the C++
    engine on all cores versus kernels/posterior.cu on every visible GPU through the tile
    runner; cells/s, and whether the accurate alignments built on each are identical."""
    import numpy as np

    from benchmarks.family_sim import simulate_family
    from bioaccel._core import load_native
    from bioaccel.msa_engine import pair_hmm, posterior_set

    fam = simulate_family(n, length, seed=2)
    batch = bioaccel.SeqBatch.from_strings(fam.sequences, ids=fam.ids, alphabet="protein")
    native = load_native()
    params = pair_hmm(batch.alphabet)
    lengths = batch.lengths.astype(np.float64)
    cells = (lengths.sum() ** 2 - (lengths**2).sum()) / 2
    out = {}

    def run(key, **kw):
        out[key] = posterior_set(native, batch, params, 0, **kw)

    t_cpu = timed(lambda: run("cpu"), repeat=1)
    t_gpu = timed(lambda: run("cupy", backend="cupy", devices="all"), repeat=2)
    same = np.allclose(out["cpu"].accuracy(), out["cupy"].accuracy(), atol=1e-5)
    records = list(zip(fam.ids, fam.sequences))
    a_cpu = bioaccel.msa(records, mode="accurate").sequences
    a_gpu = bioaccel.msa(records, mode="accurate", backend="cupy", devices="all").sequences
    print(
        f"MSA accurate-mode posteriors, {n} x {length} aa ({cells / 1e9:.2f} G cells): cpu "
        f"{t_cpu:.2f} s ({cells / t_cpu / 1e9:.2f} G cells/s), cupy on all GPUs {t_gpu:.2f} s "
        f"({cells / t_gpu / 1e9:.2f} G cells/s, {t_cpu / t_gpu:.2f}x); expected accuracies "
        f"{'agree' if same else 'DIFFER'} (1e-5), alignments "
        f"{'identical' if a_cpu == a_gpu else 'DIFFERENT'}",
        flush=True,
    )


def neighbours(n: int = 200_000, distances=(1,), repeat: int = 2) -> None:
    """The neighbours of n simulated 16S V4 amplicons within d: the filter on the CPU, its
    candidates verified by each backend (and spread over all GPUs by `devices="all"`);
    best of `repeat` after a warm-up, and whether every backend gives the cpu's pairs."""
    from benchmarks.amplicon_sim import simulate
    from bioaccel.neighbors import neighbors

    _, seqs, _ = simulate(n, seed=3)
    seqs = [s.decode() for s in seqs]
    runs = [(name, {"backend": name}) for name in ("cpu", "cupy", "numba-cuda")]
    runs = [r for r in runs if bioaccel.available_backends()[r[0]] is None]
    if len(runs) > 1:  # a GPU backend can run: all GPUs too
        runs.append(("devices=all", {"devices": "all"}))
    for _, kw in runs[1:]:
        neighbors(seqs[:2000], max_distance=2, **kw)  # kernel compilation
    for d in distances:
        want = None
        for name, kw in runs:
            nb = None

            def call(kw=kw):
                nonlocal nb
                nb = neighbors(seqs, max_distance=d, **kw)

            t = timed(call, repeat)
            got = (tuple(nb.i), tuple(nb.j), tuple(nb.distance))
            want = got if want is None else want
            print(
                f"neighbours n={n} d={d} {name}: {t:.2f} s, {len(nb)} pairs, "
                f"{nb.candidates} candidates{'' if got == want else ', pairs DIFFER from cpu'}",
                flush=True,
            )


if __name__ == "__main__":
    if sys.argv[1:] == ["--neighbours"]:
        neighbours()
    elif sys.argv[1:]:
        print(
            f"bench_gpu.py: unknown arguments {sys.argv[1:]}; expected none or --neighbours",
            file=sys.stderr,
        )
        sys.exit(2)
    else:
        main()
