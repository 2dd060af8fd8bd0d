"""Phylogeny workflow scheduling: gene families of very different sizes on 4 GPUs, in
Snakemake's default order versus bioaccel's (largest predicted first).

    python benchmarks/bench_phylogeny.py [--families 24] [--gpus 4] [--seeds 0,1,2] [--real] [--out FILE]

1. A mixed set of simulated gene families (benchmarks/family_sim.py, seeded): sizes
   (sequences x length) spanning ~100x, FASTA files as they come from databases: UniProt-
   style headers of different lengths, a third of them gzipped. Each family's alignment
   (``bioaccel msa``, one thread) is timed once, and each is recorded in a run history.
2. Those measured times on N GPUs (bioaccel's simulator, no other load), for the orders:
   - ``snakemake``: Snakemake's default greedy scheduler: among ready jobs of equal
     priority, the largest input files (bytes) first;
   - ``fifo``: file-name order (Snakemake with ``--scheduler-greedy-omit-prioritize-by-temp-and-input``,
     a job array, a shell loop);
   - ``bioaccel``: the bioaccel scheduler plugin's ``largest`` policy on the predicted
     runtime (the history's model of runtime against sequences x length).
   Makespan and average family completion time, side by side, with the lower bound
   max(longest family, total / N).
3. ``--real``: the workflow itself (workflows/phylogeny, alignments only) on N virtual GPUs
   with ``--cores N``, once with Snakemake's default scheduler and once with
   ``--scheduler bioaccel --scheduler-bioaccel-policy largest``; makespan and average
   completion time of the alignment jobs from their lease records. Meaningful on a machine
   with N free cores (the MSA engine runs on the CPU so far).

What is compared: job orders (Snakemake's, file order, bioaccel's) over the same measured
alignment times and the same N GPUs; in --real, Snakemake with the same --cores N both ways.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from benchmarks.family_sim import simulate_family
from bioaccel.devices import Topology
from bioaccel.sched import History, Job, Run, RuntimePredictor, current_user, simulate

REPO = Path(__file__).resolve().parents[1]
SPECIES = [
    "Homo sapiens",
    "Mus musculus",
    "Drosophila melanogaster",
    "Arabidopsis thaliana",
    "Saccharomyces cerevisiae (strain ATCC 204508 / S288c)",
    "Danio rerio",
    "Gallus gallus",
]


@dataclass
class FamilyFile:
    name: str
    path: Path
    n: int
    length: float
    bytes: int
    seconds: float = 0.0

    @property
    def cells(self) -> float:
        return self.n * self.length


def make_families(
    out: Path, count: int = 24, seed: int = 0, max_n: int = 240, max_len: int = 500
) -> list[FamilyFile]:
    """``count`` families, sizes (n x L) spread log-uniformly over ~100x; UniProt-style
    headers whose length varies by family; every third file gzipped."""
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    fams = []
    for k in range(count):
        n = int(round(np.exp(rng.uniform(np.log(6), np.log(max_n)))))
        length = int(round(np.exp(rng.uniform(np.log(max_len / 5), np.log(max_len)))))
        fam = simulate_family(n, length, "protein", seed * 1000 + k, depth=0.8)
        name = f"OG{k:04d}"
        desc = " ".join(["Uncharacterized protein"] + ["family member"] * int(rng.integers(0, 12)))
        lines = []
        for i, (ident, seq) in enumerate(zip(fam.ids, fam.sequences)):
            sp = SPECIES[(i + k) % len(SPECIES)]
            lines.append(
                f">tr|A{k:03d}{i:05d}|{name}_{ident} {desc} OS={sp} OX={9606 + i} "
                f"GN={name.lower()}{i} PE=4 SV=1\n"
            )
            lines += [seq[j : j + 60] + "\n" for j in range(0, len(seq), 60)]
        text = "".join(lines).encode()
        path = out / f"{name}.fa"
        if k % 3 == 2:
            path = out / f"{name}.fa.gz"
            text = gzip.compress(text, mtime=0)
        path.write_bytes(text)
        fams.append(FamilyFile(name, path, n, sum(map(len, fam.sequences)) / n, len(text)))
    return fams


def time_alignments(fams: list[FamilyFile], history: History) -> None:
    """Align each family once (one thread) and record it as a ``msa`` run."""
    from bioaccel import msa

    for f in fams:
        start = time.time()
        msa(f.path, threads=1)
        end = time.time()
        f.seconds = end - start
        history.record(
            Run(
                "msa",
                current_user(),
                "cpu",
                1,
                f.cells,
                f.n,
                start,
                end,
                0,
                f"bench_phylogeny {f.name}",
            )
        )


def orders(fams: list[FamilyFile], predictor: RuntimePredictor) -> dict[str, list[FamilyFile]]:
    return {
        "snakemake": sorted(fams, key=lambda f: (-f.bytes, f.name)),
        "fifo": sorted(fams, key=lambda f: f.name),
        "bioaccel": sorted(
            fams, key=lambda f: (-(predictor.predict("msa", f.cells) or f.cells), f.name)
        ),
    }


def simulate_order(order: list[FamilyFile], gpus: int) -> dict[str, float]:
    """All families ready at t=0, started in ``order`` as GPUs free up (FCFS on submit
    ticks that encode the order)."""
    jobs = [Job(f.name, 1, k * 1e-9, f.seconds) for k, f in enumerate(order)]
    res = simulate(jobs, Topology.identical(gpus), "fcfs")
    return {"makespan": res.makespan, "avg_completion": res.avg_jct}


def simulated_table(
    fams: list[FamilyFile], gpus: int, history: History, durations: str = "measured"
) -> tuple[str, dict]:
    """``durations``: ``measured`` (each family's timed alignment) or ``predicted`` (the
    history model's prediction: exact predictions, which isolates the order)."""
    predictor = RuntimePredictor(history.runs("msa"))
    if durations == "predicted":
        for f in fams:
            f.seconds = predictor.predict("msa", f.cells)
    results = {name: simulate_order(o, gpus) for name, o in orders(fams, predictor).items()}
    bound = max(max(f.seconds for f in fams), sum(f.seconds for f in fams) / gpus)
    rows = ratio_table(results, "order")
    rows.append(
        f"| lower bound | {bound:.2f} | {bound / results['bioaccel']['makespan']:.3f} | | |"
    )
    return "\n".join(rows), results


def ratio_table(results: dict, first: str, wall: bool = False) -> list[str]:
    """Markdown rows: makespan and average completion of each entry and their ratios to
    bioaccel's, with the Snakemake wall time when ``wall``."""
    best = results["bioaccel"]
    extra = " snakemake wall (s) |" if wall else ""
    rows = [
        f"| {first} | makespan (s) | makespan / bioaccel | avg completion (s) | "
        f"avg completion / bioaccel |{extra}",
        "|---|---|---|---|---|" + ("---|" if wall else ""),
    ]
    for name, r in results.items():
        rows.append(
            f"| {name} | {r['makespan']:.2f} | {r['makespan'] / best['makespan']:.3f} | "
            f"{r['avg_completion']:.2f} | "
            f"{r['avg_completion'] / best['avg_completion']:.3f} |"
            + (f" {r['wall']:.1f} |" if wall else "")
        )
    return rows


def real_runs(fams: list[FamilyFile], gpus: int, workdir: Path) -> tuple[str, dict]:
    """The workflow's alignment jobs, Snakemake's default scheduler vs bioaccel's."""
    exe = shutil.which("snakemake")
    if exe is None:
        raise SystemExit("--real needs snakemake (pip install '.[workflows]')")
    results = {}
    for label, extra in (
        ("snakemake", []),
        ("bioaccel", ["--scheduler", "bioaccel", "--scheduler-bioaccel-policy", "largest"]),
    ):
        wd = workdir / label
        shutil.rmtree(wd, ignore_errors=True)
        for part in ("workflow", "config"):
            shutil.copytree(REPO / "workflows/phylogeny" / part, wd / part)
        (wd / "bench.yaml").write_text(
            f"families: {fams[0].path.parent}\nreport: {{enabled: false, heatmap_family: null}}\n"
        )
        env = dict(os.environ, BIOACCEL_VIRTUAL_GPUS=str(gpus), BIOACCEL_RUN_DIR=str(wd / "run"))
        env.pop("CUDA_VISIBLE_DEVICES", None)
        # the bioaccel scheduler predicts from the history of the timing pass
        shutil.copytree(workdir / "history", wd / "run")
        targets = [f"results/msa/{f.name}.fa" for f in fams]
        start = time.time()
        proc = subprocess.run(
            [exe, *targets, "--cores", str(gpus), "--configfile", "bench.yaml", *extra],
            cwd=wd,
            env=env,
            capture_output=True,
            text=True,
        )
        wall = time.time() - start
        if proc.returncode != 0:
            raise SystemExit(f"{label}: snakemake failed:\n{proc.stderr[-3000:]}")
        stats = [json.loads((wd / f"results/msa/{f.name}.json").read_text()) for f in fams]
        t0 = min(s["start"] for s in stats)
        ends = [s["end"] - t0 for s in stats]
        results[label] = {
            "makespan": max(ends),
            "avg_completion": float(np.mean(ends)),
            "wall": wall,
        }
    return "\n".join(ratio_table(results, "scheduler", wall=True)), results


def one_seed(work: Path, args, seed: int) -> tuple[str, dict]:
    fams = make_families(work / "families", args.families, seed, args.max_n, args.max_len)
    history = History(work / "history")
    time_alignments(fams, history)
    sizes = sorted(f.cells for f in fams)
    head = (
        f"seed {seed}: {len(fams)} families, sequences x length {sizes[0]:.0f} .. "
        f"{sizes[-1]:.0f} ({sizes[-1] / sizes[0]:.0f}x), alignment times "
        f"{min(f.seconds for f in fams):.2f} .. {max(f.seconds for f in fams):.2f} s "
        f"(one thread, total {sum(f.seconds for f in fams):.1f} s), {args.gpus} GPUs"
    )
    table, sim = simulated_table(fams, args.gpus, history, args.durations)
    text = f"{head}\n\n{table}\n"
    out = {"simulated": sim}
    if args.real:
        real_table, real = real_runs(fams, args.gpus, work)
        text += (
            f"\nThe workflow itself, {args.gpus} virtual GPUs, --cores {args.gpus} "
            f"({os.cpu_count()} CPUs here):\n\n{real_table}\n"
        )
        out["real"] = real
    return text, out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--families", type=int, default=24)
    ap.add_argument("--gpus", type=int, default=4)
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated family-set seeds")
    ap.add_argument("--max-n", type=int, default=240)
    ap.add_argument("--max-len", type=int, default=500)
    ap.add_argument(
        "--durations",
        choices=["measured", "predicted"],
        default="measured",
        help="simulate with the measured alignment times or the history's predictions of them",
    )
    ap.add_argument("--real", action="store_true", help="also run the workflow both ways")
    ap.add_argument("--workdir", default=None, help="keep the families and runs here")
    ap.add_argument("--out", default=None, help="also write the tables (Markdown) here")
    args = ap.parse_args(argv)
    text, results = "## Gene families on GPUs: Snakemake's default order vs bioaccel's\n", {}
    for seed in (int(x) for x in args.seeds.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            work = Path(args.workdir) / f"seed{seed}" if args.workdir else Path(tmp)
            part, results[seed] = one_seed(work, args, seed)
        text += "\n" + part
        print(part, flush=True)
    for kind in ("simulated", "real"):
        for other in ("snakemake", "fifo"):
            ratios = [
                r[kind][other]["makespan"] / r[kind]["bioaccel"]["makespan"]
                for r in results.values()
                if kind in r and other in r[kind]
            ]
            if ratios:
                line = (
                    f"{kind}: makespan {other} / bioaccel per seed "
                    f"{', '.join(f'{x:.3f}' for x in ratios)}; geometric mean "
                    f"{float(np.exp(np.mean(np.log(ratios)))):.3f}"
                )
                text += "\n" + line + "\n"
                print(line)
    if args.out:
        Path(args.out).write_text(text)
    return results


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main()
