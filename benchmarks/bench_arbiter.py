"""The host-wide GPU arbiter's costs and its behaviour under load (hostile users, many holders).

    python benchmarks/bench_arbiter.py [--rows 1000000] [--repeats 5] [--skip-load]

1. The fair-share pass (what every waiter computes under the arbiter lock: every user's
   usage, the queue ranked by the policy, the plan) with a history of ``--rows`` rows, and,
   for scale, one plain scan of that history (what the pass cost when usage was summed from
   all history rows). Best and median of ``--repeats``.
2. The load run: 3 users (real Unix users alice, bob, eve as root; else accounts of the
   invoking user) x 30 jobs (5 streams of 6 each, 0.25 s per job) on 4 virtual GPUs, fair policy, shares 2/1/1: jobs run, overlaps
   on a GPU, utilization, each account's share of the GPU-seconds while all had work waiting,
   and the hand-over gap between consecutive leases of a GPU (one job's release to the next
   job's start on that GPU), median and p90.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def pass_time(rows: int, repeats: int) -> dict:
    from bioaccel.devices import discover_devices
    from bioaccel.sched import GpuBroker, History, Run

    work = Path(tempfile.mkdtemp(prefix="bioaccel-bench-arbiter-"))
    run = work / "run"
    os.mkdir(run, 0o700)
    os.environ.pop("BIOACCEL_SHARES_FILE", None)
    devices = discover_devices({"BIOACCEL_VIRTUAL_GPUS": "4"})
    broker = GpuBroker(run, devices, policy="fair")
    history = History(run)
    now = time.time()
    history.record(
        Run(
            "k",
            history.shares.check_account(
                __import__("bioaccel.sched.identity", fromlist=["current_user"]).current_user(),
                None,
            ),
            "x",
            1,
            1e6,
            None,
            now - 10,
            now,
            0,
        )
    )
    with sqlite3.connect(history.path) as db:
        db.executemany(
            "INSERT INTO runs (kind, user, device_kind, gpus, cells, start, end, "
            "exit_code) VALUES ('k', 'u', 'x', 1, 1e6, ?, ?, 0)",
            ((now - 1e6 + i, now - 1e6 + i + 0.5) for i in range(rows - 1)),
        )
    # a queue of 12 live waiting requests (this process holds their locks, as waiters do)
    from bioaccel.sched import procs, rundir

    fds = []
    for k in range(12):
        body = {
            "priority": 0,
            "gpus": 1 + k % 4,
            "slots": 1,
            "mem_gb": None,
            "submit_time": now,
            "predicted_s": None,
            "label": f"waiter {k}",
            "account": None,
            "pid": os.getpid(),
            "host": None,
            "devices": None,
        }
        fds.append(
            rundir.publish(
                run / f"queue.{now:.6f}-{os.getpid()}-{k:08x}.json",
                json.dumps(body).encode(),
                lock=True,
                keep_fd=True,
            )
        )
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        procs.forget_locks()  # as a pass under the arbiter lock starts
        t = time.time()
        ranked = broker.policy.order(broker.queue(), t, broker._usage(t))
        broker._plan(ranked, t)
        times.append(time.perf_counter() - t0)
    scans = []
    for _ in range(min(repeats, 3)):
        t0 = time.perf_counter()
        with sqlite3.connect(history.path) as db:
            n = len(db.execute("SELECT gpus, start, end, user FROM runs").fetchall())
        scans.append(time.perf_counter() - t0)
    for fd in fds:
        os.close(fd)
    os.system(f"rm -rf {work}")
    return {
        "rows": n,
        "waiting": len(fds),
        "pass_best_ms": min(times) * 1e3,
        "pass_median_ms": statistics.median(times) * 1e3,
        "scan_best_s": min(scans),
    }


def load_run() -> dict:
    from benchmarks.two_users import fair_share_run

    shares = {"alice": 2, "bob": 1, "eve": 1}
    r = fair_share_run(shares, gpus=4, workers=5, jobs=6, hold_s=0.25)
    jobs = sorted(r["jobs"], key=lambda j: j["start"])
    overlaps = sum(
        1
        for a in jobs
        for b in jobs
        if a is not b and a["gpu"] == b["gpu"] and a["start"] < b["start"] < a["end"]
    )
    t0, t1 = jobs[0]["start"], max(j["end"] for j in jobs)
    busy = sum(j["end"] - j["start"] for j in jobs)
    gaps = []
    for gpu in {j["gpu"] for j in jobs}:
        mine = [j for j in jobs if j["gpu"] == gpu]
        gaps += [
            b["start"] - a["end"]
            for a, b in itertools.pairwise(mine)
            if b["start"] < t0 + r["window_s"]
        ]  # while others still waited
    gaps.sort()
    return {
        "mode": r["mode"],
        "jobs": len(jobs),
        "overlaps": overlaps,
        "utilization": busy / (4 * (t1 - t0)),
        "makespan_s": t1 - t0,
        "accounts": r["accounts"],
        "gap_median_ms": statistics.median(gaps) * 1e3,
        "gap_p90_ms": gaps[int(0.9 * (len(gaps) - 1))] * 1e3,
        "gaps": len(gaps),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--skip-load", action="store_true")
    args = ap.parse_args()
    p = pass_time(args.rows, args.repeats)
    print(
        f"fair-share pass with {p['rows']:,} history rows and {p['waiting']} waiting "
        f"requests: best {p['pass_best_ms']:.2f} ms, "
        f"median {p['pass_median_ms']:.2f} ms (one plain scan of those rows: "
        f"{p['scan_best_s']:.2f} s)"
    )
    if args.skip_load:
        return
    r = load_run()
    print(
        f"load ({r['mode']}): {r['jobs']}/90 jobs, {r['overlaps']} overlaps, utilization "
        f"{r['utilization']:.0%}, makespan {r['makespan_s']:.1f} s"
    )
    for name, acc in r["accounts"].items():
        print(
            f"  {name}: {acc['fraction']:.1%} of the contested GPU-seconds "
            f"(configured {acc['configured']:.1%})"
        )
    print(
        f"hand-over gap between consecutive leases of a GPU ({r['gaps']} hand-overs): "
        f"median {r['gap_median_ms']:.1f} ms, p90 {r['gap_p90_ms']:.1f} ms"
    )
    print(json.dumps({k: v for k, v in r.items() if k != "accounts"}))


if __name__ == "__main__":
    main()
