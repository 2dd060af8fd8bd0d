"""Scheduling comparison tables: queue policies in the simulator, placement optimizers.

    python benchmarks/bench_sched.py [--budget 1.0] [--out benchmarks/sched_tables.md]
    python benchmarks/bench_sched.py --only two-users    # print that table only

1. Policies (fcfs, priority, fair, predicted) on a heavy-tailed workload (Pareto
   durations, Poisson arrivals, predictions off by a lognormal factor), on a flood workload
   (one user submits 60 jobs at once), and on a workload made from real sequence sets
   (the bundled alignment and the test data sets when present), 4 GPUs.
2. Placement (greedy, lpt, local, ga, aco, pso) under one time budget each: identical GPUs,
   and a heterogeneous two-node topology with NVLink/PCIe/network links and data locality;
   makespan / lower bound and solve time.
3. Two users on one server (real leases, not the simulator): alice and bob (real Unix users
   when run as root, else two accounts of the invoking user) each run job streams on
   virtual GPUs through the host-wide arbiter under the ``fair`` policy; their GPU-seconds
   while both had work waiting, against the shares configured in the shares file.

What is compared: scheduling policies and placement algorithms on the same simulated workloads
and the same (simulated or virtual) GPUs; no tool's computation is timed against another's.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from bioaccel.devices import Topology, parse_topology
from bioaccel.sched import (
    ALGORITHMS,
    POLICIES,
    Stage,
    flood_workload,
    heavy_tailed_workload,
    lower_bound,
    place,
    processing_times,
    simulate,
    workload_from_sequences,
)

HETERO = {
    "nodes": [
        {
            "name": "a",
            "gpus": [
                {"id": 0, "name": "H200", "speed": 2.0},
                {"id": 1, "name": "H200", "speed": 2.0},
                {"id": 2, "name": "A100", "speed": 1.0},
                {"id": 3, "name": "V100", "speed": 0.4},
            ],
        },
        {
            "name": "b",
            "gpus": [
                {"id": 0, "name": "A100", "speed": 1.0},
                {"id": 1, "name": "A100", "speed": 1.0},
                {"id": 2, "name": "T4", "speed": 0.25},
                {"id": 3, "name": "T4", "speed": 0.25},
            ],
        },
    ],
    "links": {"nvlink": 300, "pcie": 25, "network": 3},
    "data": {"runA": "a", "runB": "b", "cacheA": "a:0", "cacheB": "b:1"},
}


def md_table(header, rows) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def policy_tables() -> list[str]:
    repo = Path(__file__).resolve().parents[1]
    seq_files = [
        p
        for p in [
            repo / "bioaccel/data/msx2_mRNA.aln",
            *sorted((repo / "tests/.data").glob("*.fa*")),
        ]
        if p.exists()
    ]
    workloads = {
        "heavy-tailed, 300 jobs (seed 0)": heavy_tailed_workload(300, seed=0, arrival_s=4.0),
        "heavy-tailed, 300 jobs (seed 1)": heavy_tailed_workload(300, seed=1, arrival_s=4.0),
        "flood: 1 user x 60 jobs + 3 users x 5": flood_workload(),
    }
    if seq_files:
        # each real sequence set, all-vs-all, becomes jobs of four users; 1 GCUPS per GPU
        jobs = workload_from_sequences(
            seq_files * 6, cells_per_s=1e9, users=["u0", "u1", "u2", "u3"], arrival_s=0.5
        )
        workloads[f"real sequence sets ({len(jobs)} jobs from {len(seq_files)} files)"] = jobs
    out = []
    for name, jobs in workloads.items():
        rows = []
        base = None
        for pol in POLICIES:
            m = simulate(jobs, Topology.identical(4), pol).metrics()
            base = base or m
            rows.append(
                [
                    pol,
                    f"{m['makespan_s']:.0f}",
                    f"{m['avg_jct_s']:.1f}",
                    f"{m['avg_jct_s'] / base['avg_jct_s']:.3f}",
                    f"{m['p95_jct_s']:.0f}",
                    f"{m['avg_wait_s']:.1f}",
                    f"{m['utilization']:.3f}",
                    f"{m['jain']:.3f}",
                ]
            )
        out.append(
            f"### Policies: {name}, 4 GPUs\n\n"
            + md_table(
                [
                    "policy",
                    "makespan s",
                    "avg JCT s",
                    "JCT / fcfs",
                    "p95 JCT s",
                    "avg wait s",
                    "GPU util",
                    "Jain",
                ],
                rows,
            )
        )
    return out


def placement_tables(budget: float) -> list[str]:
    out = []
    rng = np.random.default_rng(0)
    identical = np.tile(rng.lognormal(0, 1, 300), (8, 1))
    topo = parse_topology(HETERO)
    hetero = []
    for seed in range(3):
        r = np.random.default_rng(seed)
        stages = [
            Stage(
                f"s{k}",
                float(r.lognormal(2, 1)),
                float(r.uniform(0, 40e9)),
                str(r.choice(list(HETERO["data"]))),
            )
            for k in range(150)
        ]
        hetero.append(processing_times(stages, topo))
    for title, instances in (
        ("identical GPUs: 300 stages on 8 GPUs", [identical]),
        (
            "heterogeneous 2 nodes x 4 GPUs (speeds 2-0.25), data locality, 150 stages, 3 seeds",
            hetero,
        ),
    ):
        rows = []
        lbs = [lower_bound(p) for p in instances]
        for alg in ALGORITHMS:
            res = [
                place(p, alg, time_budget_s=budget, seed=k, lb=lb)
                for k, (p, lb) in enumerate(zip(instances, lbs))
            ]
            rows.append(
                [
                    alg,
                    " / ".join(f"{x.makespan:.1f}" for x in res),
                    " / ".join(f"{x.ratio:.4f}" for x in res),
                    f"{max(x.solve_s for x in res):.3f}",
                ]
            )
        out.append(
            f"### Placement: {title}; budget {budget:g} s each\n\n"
            f"Lower bound(s): {' / '.join(f'{lb:.1f}' for lb in lbs)}\n\n"
            + md_table(["algorithm", "makespan", "makespan / LB", "solve s (max)"], rows)
        )
    return out


def two_user_tables(workers: int = 3, jobs: int = 10, hold_s: float = 0.2) -> list[str]:
    from benchmarks.two_users import fair_share_run

    rows = []
    mode = ""
    for shares, gpus in (
        ({"alice": 2, "bob": 1}, 1),
        ({"alice": 2, "bob": 1}, 2),
        ({"alice": 1, "bob": 3}, 2),
        ({"alice": 1, "bob": 1}, 2),
    ):
        r = fair_share_run(shares, gpus=gpus, workers=workers, jobs=jobs, hold_s=hold_s)
        mode = r["mode"]
        acc = r["accounts"]
        rows.append(
            [
                " / ".join(f"{a}={s:g}" for a, s in shares.items()),
                gpus,
                f"{r['window_s']:.1f}",
                " / ".join(f"{acc[a]['gpu_s']:.1f}" for a in shares),
                " / ".join(f"{acc[a]['fraction']:.3f}" for a in shares),
                " / ".join(f"{acc[a]['configured']:.3f}" for a in shares),
            ]
        )
    return [
        f"### Two users, fair share through the host-wide arbiter ({mode}; {workers} job "
        f"streams each of {jobs} jobs x {hold_s:g} s; virtual GPUs)\n\n"
        "GPU-seconds counted until the first user ran out of jobs (both competing).\n\n"
        + md_table(
            [
                "shares (alice / bob)",
                "GPUs",
                "contested s",
                "GPU-s alice / bob",
                "measured share",
                "configured share",
            ],
            rows,
        )
    ]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--out", type=Path, default=Path(__file__).parent / "sched_tables.md")
    ap.add_argument(
        "--only",
        choices=["two-users"],
        default=None,
        help="Print one part only (nothing is written).",
    )
    args = ap.parse_args(argv)
    if args.only == "two-users":
        print("\n\n".join(two_user_tables()))
        return
    text = "\n\n".join(policy_tables() + placement_tables(args.budget) + two_user_tables()) + "\n"
    print(text)
    if args.out:
        from bioaccel._core import atomic_output

        args.out.parent.mkdir(parents=True, exist_ok=True)
        with atomic_output(args.out) as f:
            f.write("# bioaccel scheduling tables (benchmarks/bench_sched.py)\n\n" + text)


if __name__ == "__main__":
    sys.exit(main())
