"""The arbiter service's costs and its behaviour under load. Run as root (it
starts services of its own in fresh folders and runs jobs as alice, bob and eve).

    python benchmarks/bench_arbiter.py [--rows 1000000] [--repeats 200] [--skip-load]

1. The fair-share pass (the service ranks every waiting request by the policy with every
   account's decayed usage, and places them) with ``--rows`` rows of accounting in its
   SQLite and 12 waiting requests: best and median of ``--repeats``; for scale, one plain
   scan of those rows (what a pass would cost if it summed the history).
2. A flood: eve keeps 1,000 requests waiting (of 2 GPUs each, which cannot be served while
   alice holds 3 of the 4 GPUs); bob's lease of 1 GPU, from connect to grant, with and
   without the flood (median and max of 20, each from a fresh connection).
3. The load run: 3 users (alice, bob, eve) x 30 jobs (5 streams of 6, 0.25 s each) on 4
   virtual GPUs, fair policy, shares 2/1/1, through ``bioaccel.lease()``: overlaps on a GPU,
   utilization, each user's share of the GPU-seconds while all had work waiting, and the
   hand-over gap between consecutive leases of a GPU (one job's release to the next job's
   start on that GPU), median and p90.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import signal
import socket
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.arbiter_host import Service  # noqa: E402
from benchmarks.two_users import spawn_as, users_unavailable, wait  # noqa: E402

USERS = ("alice", "bob", "eve")


def pass_time(rows: int, repeats: int) -> dict:
    from bioaccel.sched import Arbiter, Waiting

    svc = Service(4, shares="policy fair\nalice 2\nbob 1\neve 1\n")
    try:
        now = time.time()
        db = sqlite3.connect(str(svc.state / "arbiter.sqlite"))
        from bioaccel.sched import STATE_SCHEMA

        db.executescript(STATE_SCHEMA)
        db.executemany(
            "INSERT INTO runs (kind, user, uid, device_kind, gpus, cells, start, end, exit_code) "
            "VALUES ('k', ?, 1000, 'x', 1, 1e6, ?, ?, 0)",
            ((USERS[i % 3], now - 1e6 + i, now - 1e6 + i + 0.5) for i in range(rows)),
        )
        db.executemany(
            "INSERT OR REPLACE INTO usage (account, gpu_s, at) VALUES (?, ?, ?)",
            [(u, 1e5 * (k + 1), now) for k, u in enumerate(USERS)],
        )
        db.commit()
        db.close()
        t0 = time.perf_counter()
        arb = Arbiter(svc.state, svc.sock_dir, say=lambda line: None)
        start_s = time.perf_counter() - t0
        for k in range(12):
            rid = f"{now:.6f}-{k}"
            arb.waiting[rid] = Waiting(
                rid,
                1000 + k % 3,
                USERS[k % 3],
                USERS[k % 3],
                os.getpid(),
                1 + k % 4,
                1,
                None,
                0.0,
                None,
                f"waiter {k}",
                "k",
                None,
                list(arb.host),
                now - k,
                None,
            )
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            arb.plan(time.time())
            times.append(time.perf_counter() - t)
        for k in range(12, 1000):  # and with 1,000 waiting
            rid = f"{now:.6f}-{k}"
            arb.waiting[rid] = Waiting(
                rid,
                1000 + k % 3,
                USERS[k % 3],
                USERS[k % 3],
                os.getpid(),
                1 + k % 4,
                1,
                None,
                0.0,
                None,
                f"waiter {k}",
                "k",
                None,
                list(arb.host),
                now - k,
                None,
            )
        big = []
        for _ in range(max(5, repeats // 10)):
            t = time.perf_counter()
            arb.plan(time.time())
            big.append(time.perf_counter() - t)
        t = time.perf_counter()
        with sqlite3.connect(str(svc.state / "arbiter.sqlite")) as db:
            n = len(db.execute("SELECT gpus, start, end, user FROM runs").fetchall())
        scan_s = time.perf_counter() - t
        arb.listener.close()
        arb.db.close()
    finally:
        svc.close()
    return {
        "rows": n,
        "waiting": 12,
        "pass_best_ms": min(times) * 1e3,
        "pass_median_ms": statistics.median(times) * 1e3,
        "pass_1000_median_ms": statistics.median(big) * 1e3,
        "scan_s": scan_s,
        "startup_s": start_s,
    }


def _grant_latency(svc: Service, n: int) -> list[float]:
    """As bob: ``n`` leases of 1 GPU, each connect -> granted (seconds)."""
    out = svc.base / "bob-latency.json"

    def bob():
        from bioaccel.sched import client

        times = []
        for _ in range(n):
            t = time.perf_counter()
            held = client.acquire(1, timeout=30)
            times.append(time.perf_counter() - t)
            held.release()
        print(json.dumps(times))

    out.unlink(missing_ok=True)
    pid = spawn_as("bob", bob, env=svc.user_env(), output=out)
    if wait(pid, 120):
        raise RuntimeError(f"bob's leases failed: {out.read_text()}")
    return json.loads(out.read_text().splitlines()[-1])


def flood(n_waiting: int = 1000) -> dict:
    svc = Service(4, max_waiting=n_waiting + 10, max_connections=n_waiting + 50).start()
    hold = None
    eve = None
    try:

        def alice():
            from bioaccel.sched import client

            held = client.acquire(3, timeout=30)
            time.sleep(600)
            held.release()

        hold = spawn_as("alice", alice, env=svc.user_env())
        deadline = time.time() + 30
        while len(svc.held()) < 3:
            if time.time() > deadline:
                raise RuntimeError("alice got no GPUs")
            time.sleep(0.02)
        quiet = _grant_latency(svc, 20)

        def eve_flood():
            _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            conns = []
            for _ in range(n_waiting):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                s.connect(str(svc.socket))
                s.sendall(b'{"op": "acquire", "gpus": 2, "label": "flood"}\n')
                conns.append(s)
            time.sleep(600)

        eve = spawn_as("eve", eve_flood, env=svc.user_env())
        deadline = time.time() + 60
        while len(svc.status()["queue"]) < min(n_waiting, 1000):
            if time.time() > deadline:
                raise RuntimeError("eve's requests did not all queue")
            time.sleep(0.1)
        waiting = len(svc.status()["queue"])
        loaded = _grant_latency(svc, 20)
    finally:
        for pid in (hold, eve):
            if pid:
                os.kill(pid, signal.SIGKILL)
                wait(pid)
        svc.close()
    return {
        "waiting": waiting,
        "quiet_median_ms": statistics.median(quiet) * 1e3,
        "quiet_max_ms": max(quiet) * 1e3,
        "flood_median_ms": statistics.median(loaded) * 1e3,
        "flood_max_ms": max(loaded) * 1e3,
    }


def _stream(log: str, jobs: int, hold_s: float) -> None:
    import bioaccel

    with open(log, "a") as out:
        for k in range(jobs):
            with bioaccel.lease(1, timeout=300, label=f"bench job {k}") as held:
                start = time.time()
                time.sleep(hold_s)
                end = time.time()
            user = __import__("pwd").getpwuid(os.getuid()).pw_name
            out.write(json.dumps({"user": user, "gpu": held.visible, "start": start, "end": end}))
            out.write("\n")


def load_run(workers: int = 5, jobs: int = 6, hold_s: float = 0.25) -> dict:
    shares = {"alice": 2, "bob": 1, "eve": 1}
    svc = Service(4, shares="policy fair\n" + "".join(f"{u} {s}\n" for u, s in shares.items()))
    svc.start()
    try:
        pids = []
        for user in shares:
            for w in range(workers):
                log = svc.base / f"{user}-{w}.jsonl"
                log.touch()
                os.chmod(log, 0o666)
                pids.append(spawn_as(user, _stream, str(log), jobs, hold_s, env=svc.user_env()))
        codes = [wait(p, 600) for p in pids]
        if any(codes):
            raise RuntimeError(f"job streams exited with {codes}")
        done = [
            json.loads(line)
            for p in sorted(svc.base.glob("*.jsonl"))
            for line in p.read_text().splitlines()
        ]
        warned = "internal error" in svc.log.read_text()
    finally:
        svc.close()
    jobs_ = sorted(done, key=lambda j: j["start"])
    overlaps = sum(
        1
        for a in jobs_
        for b in jobs_
        if a is not b and a["gpu"] == b["gpu"] and a["start"] < b["start"] < a["end"]
    )
    t0, t1 = jobs_[0]["start"], max(j["end"] for j in jobs_)
    window = min(max(j["end"] for j in done if j["user"] == u) for u in shares)
    used = {
        u: sum(max(0.0, min(j["end"], window) - j["start"]) for j in done if j["user"] == u)
        for u in shares
    }
    total = sum(used.values()) or 1.0
    gaps = []
    for gpu in {j["gpu"] for j in jobs_}:
        mine = [j for j in jobs_ if j["gpu"] == gpu]
        gaps += [b["start"] - a["end"] for a, b in itertools.pairwise(mine) if b["start"] < window]
    gaps.sort()
    return {
        "jobs": len(jobs_),
        "overlaps": overlaps,
        "utilization": sum(j["end"] - j["start"] for j in jobs_) / (4 * (t1 - t0)),
        "makespan_s": t1 - t0,
        "shares": {u: used[u] / total for u in shares},
        "configured": {u: s / sum(shares.values()) for u, s in shares.items()},
        "gap_median_ms": statistics.median(gaps) * 1e3,
        "gap_p90_ms": gaps[int(0.9 * (len(gaps) - 1))] * 1e3,
        "gaps": len(gaps),
        "internal_errors": warned,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--waiting", type=int, default=1000)
    ap.add_argument("--skip-load", action="store_true")
    args = ap.parse_args()
    why = users_unavailable(USERS)
    if why:
        sys.exit(f"bench_arbiter: {why}")
    p = pass_time(args.rows, args.repeats)
    print(
        f"fair-share pass with {p['rows']:,} accounting rows and {p['waiting']} waiting "
        f"requests: best {p['pass_best_ms']:.3f} ms, median {p['pass_median_ms']:.3f} ms "
        f"(1,000 waiting: median {p['pass_1000_median_ms']:.2f} ms) "
        f"(service start-up {p['startup_s']:.2f} s; one plain scan of those rows: "
        f"{p['scan_s']:.2f} s)"
    )
    f = flood(args.waiting)
    print(
        f"bob's grant (connect -> granted, 20 leases): median {f['quiet_median_ms']:.1f} ms "
        f"(max {f['quiet_max_ms']:.1f}) alone; median {f['flood_median_ms']:.1f} ms "
        f"(max {f['flood_max_ms']:.1f}) with {f['waiting']} of eve's requests waiting: "
        f"+{f['flood_median_ms'] - f['quiet_median_ms']:.1f} ms"
    )
    if args.skip_load:
        return
    r = load_run()
    print(
        f"load (alice, bob, eve; fair 2/1/1): {r['jobs']}/90 jobs, {r['overlaps']} overlaps, "
        f"utilization {r['utilization']:.0%}, makespan {r['makespan_s']:.1f} s"
    )
    for u, frac in r["shares"].items():
        print(
            f"  {u}: {frac:.1%} of the contested GPU-seconds (configured "
            f"{r['configured'][u]:.1%}, {100 * (frac - r['configured'][u]):+.1f} points)"
        )
    print(
        f"hand-over gap between consecutive leases of a GPU ({r['gaps']} hand-overs): "
        f"median {r['gap_median_ms']:.1f} ms, p90 {r['gap_p90_ms']:.1f} ms"
    )
    print(json.dumps({**p, **{f"flood_{k}": v for k, v in f.items()}, **r}))


if __name__ == "__main__":
    main()
