"""The host-wide GPU arbiter used by two real Unix users, alice and bob (created here when
the tests run as root, as in CI; skipped otherwise). Their code runs in forks of this process
that switch uid (benchmarks/two_users.py), so the kernel sees them as alice and bob."""

import contextlib
import itertools
import json
import os
import pwd
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks.two_users import (
    USERS,
    fair_share_run,
    kill_marked,
    owner_mode,
    preload,
    run_as,
    shared_dir,
    spawn_as,
    users_unavailable,
    wait,
)
from bioaccel.cli import main as cli_main
from bioaccel.errors import LeaseTimeoutError
from bioaccel.sched import DEFAULT_RUN_DIR, GpuBroker, init_run_dir, run_dir
from bioaccel.sched.history import History, Run
from tests.cli_runner import COMMAND
from tests.datasets import child_env, require, unavailable


@pytest.fixture(scope="module")
def users():
    why = users_unavailable()
    if why:
        unavailable(why)
    preload()
    return USERS


@pytest.fixture
def shared(users, monkeypatch):
    for var in (
        "CUDA_VISIBLE_DEVICES",
        "SLURM_JOB_ID",
        "SLURM_JOB_GPUS",
        "SLURM_STEP_GPUS",
        "BIOACCEL_GPU_TOPOLOGY",
        "BIOACCEL_LEASED_GPUS",
        "BIOACCEL_POLICY",
        "BIOACCEL_SHARES",
        "BIOACCEL_SHARES_FILE",
        "BIOACCEL_RUN_DIR",
        "BIOACCEL_SLOTS_PER_GPU",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "1")
    path = shared_dir("bioaccel-test-")
    yield path
    subprocess.run(["rm", "-rf", str(path)], check=False)


def base_env(**extra) -> dict:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/",
        "BIOACCEL_VIRTUAL_GPUS": "1",
    }
    env.update(extra)
    return env


def gpu_run(*args) -> None:
    """``bioaccel gpu-run ARGS`` in this (forked, other-user) process."""
    cli_main(["gpu-run", *args])


def stamp(path: Path) -> str:
    return f"date +%s.%N > {path}"


def until(cond, timeout=30.0, what="condition"):
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def root_view(run: Path | None = None, **env) -> dict:
    """``bioaccel gpus --json`` run by root, as an administrator would."""
    e = child_env(BIOACCEL_VIRTUAL_GPUS="1", **env)
    e.pop("BIOACCEL_RUN_DIR", None)
    if run is not None:
        e["BIOACCEL_RUN_DIR"] = str(run)
    proc = subprocess.run(
        [*COMMAND, "gpus", "--json"],
        env=e,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_default_run_directory_is_one_per_host_and_usable_whatever_the_umask(shared):
    # the default directory is the same for both users
    init_run_dir(DEFAULT_RUN_DIR)  # root (the administrator) makes the host-wide one
    for user in USERS:
        assert (
            run_as(
                user,
                lambda u=user: (shared / f"{u}.dir").write_text(str(run_dir())),
                env=base_env(),
            )
            == 0
        )
    assert (
        (shared / "alice.dir").read_text()
        == (shared / "bob.dir").read_text()
        == str(DEFAULT_RUN_DIR)
    )
    # the administrator makes a run directory under umask 077; both users can use all of it
    run = shared / "run"
    env = base_env(BIOACCEL_RUN_DIR=str(run))
    old = os.umask(0o077)
    try:
        init_run_dir(run)
    finally:
        os.umask(old)

    def lease_once():
        GpuBroker(poll_s=0.01).acquire(1, timeout=20, label="once").release()

    assert run_as("alice", lease_once, env=env, umask=0o077) == 0
    assert run_as("bob", lease_once, env=env, umask=0o077) == 0
    assert owner_mode(run) == ("root", 0o1777)
    for path in run.iterdir():
        if path.name != "users":
            assert owner_mode(path) == ("root", 0o644), path
    for user in USERS:
        assert owner_mode(run / "users" / str(pwd.getpwnam(user).pw_uid)) == (user, 0o755)


def test_alice_lease_excludes_bob_until_it_ends_by_default(shared):
    init_run_dir(DEFAULT_RUN_DIR)  # the administrator (root): bioaccel admin init
    env = base_env()
    alice = spawn_as(
        "alice",
        gpu_run,
        "--",
        "sh",
        "-c",
        f"{stamp(shared / 'a.start')}; sleep 2; {stamp(shared / 'a.end')}",
        env=env,
    )
    until(lambda: (shared / "a.start").exists(), what="alice's lease")
    bob = spawn_as(
        "bob", gpu_run, "--timeout", "60", "--", "sh", "-c", f"{stamp(shared / 'b.start')}", env=env
    )
    assert wait(alice) == 0 and wait(bob) == 0
    a_end = float((shared / "a.end").read_text())
    b_start = float((shared / "b.start").read_text())
    assert b_start >= a_end, f"bob ran at {b_start} while alice held the GPU until {a_end}"
    assert b_start - a_end < 5, "bob was not served when alice's lease ended"


def test_bob_is_served_after_alices_job_is_sigkilled(shared):
    init_run_dir(DEFAULT_RUN_DIR)
    env = base_env(BIOACCEL_TEST_SCRATCH=str(shared))  # marks what this test starts
    alice = spawn_as(
        "alice", gpu_run, "--", "sh", "-c", f"{stamp(shared / 'a.start')}; sleep 120", env=env
    )
    bob = None
    try:
        until(lambda: (shared / "a.start").exists(), what="alice's lease")
        bob = spawn_as(
            "bob",
            gpu_run,
            "--timeout",
            "60",
            "--",
            "sh",
            "-c",
            f"{stamp(shared / 'b.start')}",
            env=env,
        )

        def bob_waits():
            return any(q["user"] == "bob" for q in root_view()["queue"])

        until(bob_waits, what="bob's queue entry")
        # an administrator sees both, by user name, with ages and labels
        view = root_view()
        (held,) = [h for d in view["devices"] for h in d["holders"] if h["user"] == "alice"]
        assert held["uid"] == pwd.getpwnam("alice").pw_uid and "sleep 120" in held["label"]
        assert held["age_s"] >= 0
        (waiter,) = [q for q in view["queue"] if q["user"] == "bob"]
        assert waiter["waited_s"] >= 0 and "b.start" in waiter["label"]
        assert not (shared / "b.start").exists()
        os.killpg(alice, signal.SIGKILL)  # the wrapper only: its job runs on (M3)
        assert wait(alice) == -signal.SIGKILL
        time.sleep(0.5)
        assert not (shared / "b.start").exists(), "bob got the GPU while alice's job still runs"
        (held,) = [h for d in root_view()["devices"] for h in d["holders"]]
        # the kernel's lock owner: the dead wrapper, and the job's processes that hold it now
        assert held["pid"] == alice and not held["pid_alive"] and held["held_by"], held
        job = os.getpgid(held["held_by"][0])
        assert all(os.getpgid(p) == job for p in held["held_by"])
        killed = time.time()
        os.killpg(job, signal.SIGKILL)
        assert wait(bob, 60) == 0
        assert float((shared / "b.start").read_text()) >= killed
    finally:
        for pid in (alice, bob):
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
                with contextlib.suppress(ChildProcessError):
                    os.waitpid(pid, 0)
        kill_marked("alice", f"BIOACCEL_TEST_SCRATCH={shared}")


@pytest.mark.slow
@pytest.mark.parametrize("shares", [{"alice": 2, "bob": 1}, {"alice": 1, "bob": 3}])
def test_fair_share_between_users_follows_the_shares_file(users, shares):
    result = fair_share_run(shares, as_users=True)
    assert result["mode"] == "Unix users"
    for _name, acc in result["accounts"].items():
        assert acc["fraction"] == pytest.approx(acc["configured"], abs=0.08), result["accounts"]
    jobs = sorted(result["jobs"], key=lambda j: j["start"])
    for a, b in zip(jobs, jobs[1:]):  # one GPU: never two jobs at once
        assert b["start"] >= a["end"] - 1e-3


@pytest.mark.slow
def test_load_three_users_thirty_jobs_each_on_four_gpus():
    """The load test: alice, bob and eve each run 30 jobs (5 streams of 6) on 4 virtual GPUs
    under the fair policy with shares 2/1/1: every job runs, never two on a GPU at once, and
    each user's share of the contested GPU-seconds is within 5 points of the configured."""
    why = users_unavailable(("alice", "bob", "eve"))
    if why:
        unavailable(why)
    shares = {"alice": 2, "bob": 1, "eve": 1}
    result = fair_share_run(shares, gpus=4, workers=5, jobs=6, hold_s=0.25, as_users=True)
    jobs = result["jobs"]
    assert len(jobs) == 90
    for gpu in {j["gpu"] for j in jobs}:
        mine = sorted((j for j in jobs if j["gpu"] == gpu), key=lambda j: j["start"])
        for a, b in itertools.pairwise(mine):
            assert b["start"] >= a["end"] - 1e-3, f"two jobs at once on GPU {gpu}"
    for acc in result["accounts"].values():
        assert acc["fraction"] == pytest.approx(acc["configured"], abs=0.05), result["accounts"]


def test_user_variables_change_nothing_and_accounts_are_those_of_the_shares_file(
    shared, monkeypatch
):
    run = shared / "run"
    shares = shared / "shares"
    shares.write_text("policy fair\nalice 1\nbob 1\nlab 2 bob\n")
    monkeypatch.setenv("BIOACCEL_SHARES_FILE", str(shares))
    init_run_dir(run)  # the administrator (root) makes the run directory
    env = base_env(BIOACCEL_RUN_DIR=str(run), BIOACCEL_SHARES_FILE=str(shares))
    spoof = {**env, "USER": "alice", "LOGNAME": "alice"}
    log = shared / "bob.log"
    bob = spawn_as(
        "bob",
        gpu_run,
        "--kind",
        "k",
        "--",
        "sh",
        "-c",
        f"{stamp(shared / 'b.start')}; sleep 1",
        env=spoof,
    )
    until(lambda: (shared / "b.start").exists(), what="bob's lease")
    (held,) = GpuBroker(run).leases()
    assert (held["user"], held["account"]) == ("bob", "bob")
    assert wait(bob) == 0
    assert run_as("bob", gpu_run, "--user", "alice", "--", "true", env=spoof, output=log) != 0
    assert "'bob' may not charge account 'alice'" in log.read_text()
    assert run_as("bob", gpu_run, "--user", "lab", "--kind", "k", "--", "true", env=spoof) == 0

    def forge():  # bob writes his own history file directly, claiming alice's account
        History(run).record(Run("k", "alice", "x", 1, None, None, 0.0, 1e6, 0))

    assert run_as("bob", forge, env=env) == 0
    bob_uid = pwd.getpwnam("bob").pw_uid
    assert owner_mode(run / "users" / str(bob_uid) / "history.sqlite")[0] == "bob"
    with pytest.warns(UserWarning, match="may not charge"):
        runs = History(run, GpuBroker(run).config).runs("k")
    assert sorted(r.user for r in runs) == ["bob", "bob", "lab"]
    # a shares file of bob's own is not trusted
    own = shared / "bob-shares"

    def own_shares():
        own.write_text("alice 1 bob\n")
        os.environ["BIOACCEL_SHARES_FILE"] = str(own)
        GpuBroker()

    assert run_as("bob", own_shares, env=env, output=log) != 0
    assert "uses the shares file" in log.read_text()  # one shares file per host (H4)


def test_bob_cannot_remove_or_rewrite_alices_queue_entry_history_or_lease(shared):
    run = shared / "run"
    env = base_env(BIOACCEL_RUN_DIR=str(run))
    init_run_dir(run)
    blocker = GpuBroker(run).acquire(1, label="root's blocker")
    alice_uid = pwd.getpwnam("alice").pw_uid

    def alice_job():
        broker = GpuBroker(poll_s=0.01)
        broker.history.record(Run("k", "alice", "x", 1, None, None, 0.0, 10.0, 0))
        held = broker.acquire(1, timeout=60, label="alice's job")
        (shared / "a.start").write_text("")
        time.sleep(3)
        held.release()

    alice = spawn_as("alice", alice_job, env=env)
    until(lambda: list(run.glob("queue.*.json")), what="alice's queue entry")
    (entry,) = run.glob("queue.*.json")
    history = run / "users" / str(alice_uid) / "history.sqlite"

    def attacks(targets):
        failed = {}
        for name, action in targets:
            try:
                action()
                failed[name] = False
            except (PermissionError, sqlite3.Error, LeaseTimeoutError):
                failed[name] = True
        (shared / "report.json").write_text(json.dumps(failed))

    def on_queue():
        def rewrite_history():
            with contextlib.closing(sqlite3.connect(history)) as db, db:
                db.execute("DELETE FROM runs")

        attacks(
            [
                ("unlink entry", lambda: os.unlink(entry)),
                ("rewrite entry", lambda: open(entry, "r+").write("{}")),
                ("rename entry", lambda: os.rename(entry, str(entry) + ".x")),
                ("unlink history", lambda: os.unlink(history)),
                ("rewrite history", rewrite_history),
            ]
        )

    assert run_as("bob", on_queue, env=env) == 0
    report = json.loads((shared / "report.json").read_text())
    assert all(report.values()), report
    assert entry.exists() and len(History(run).runs("k")) == 1
    blocker.release()
    until(lambda: (shared / "a.start").exists(), what="alice's lease")
    (record,) = run.glob("lease.*.json")

    def on_lease():
        attacks(
            [
                ("unlink lease record", lambda: os.unlink(record)),
                ("rewrite lease record", lambda: open(record, "r+").write("{}")),
                ("lease anyway", lambda: GpuBroker().acquire(1, timeout=0.5).release()),
            ]
        )

    assert run_as("bob", on_lease, env=env) == 0
    report = json.loads((shared / "report.json").read_text())
    assert all(report.values()), report
    assert [h["user"] for h in GpuBroker(run).holders()["vgpu-0"]] == ["alice"]
    assert wait(alice) == 0


def test_hostile_files_in_the_run_directory_are_skipped_with_a_warning(shared):
    run = shared / "run"
    shares = shared / "shares"
    shares.write_text("policy fair\n")
    env = base_env(BIOACCEL_RUN_DIR=str(run), BIOACCEL_SHARES_FILE=str(shares))
    init_run_dir(run, shares_file=str(shares))  # the administrator makes the directory
    alice_uid = pwd.getpwnam("alice").pw_uid
    ids = [f"1.00000{k}-1-0000000{k}" for k in range(8)]
    planted = {
        f"queue.{ids[0]}.json": b"{not json",
        f"queue.{ids[1]}.json": b" " * (1 << 20),
        f"queue.{ids[2]}.json": b'{"gpus": "all of them"}',
        f"lease.{ids[3]}.json": b"[1, 2]",
        f"users/{alice_uid}.x": b"bob was here",  # users/ is sticky: only a stray file
        # a request no GPU set here can serve, queued first: it must not block the queue
        f"queue.{ids[7]}.json": json.dumps(
            {
                "priority": 0,
                "gpus": 99,
                "slots": 1,
                "mem_gb": None,
                "submit_time": 0.0,
                "predicted_s": None,
                "label": "impossible",
                "account": None,
            }
        ).encode(),
    }

    def plant():
        import fcntl

        fds = []
        for name, data in planted.items():
            fd = os.open(run / name, os.O_RDWR | os.O_CREAT, 0o644)
            os.write(fd, data)
            fcntl.flock(fd, fcntl.LOCK_EX)  # as a live waiter or holder would
            fds.append(fd)
        os.symlink("/etc/passwd", run / f"queue.{ids[4]}.json")
        os.mkfifo(run / f"queue.{ids[5]}.json")
        os.symlink("/etc/passwd", run / f"lease.{ids[6]}.json")
        (shared / "planted").write_text("")
        time.sleep(120)

    bob = spawn_as("bob", plant, env=env)
    try:
        until(lambda: (shared / "planted").exists(), what="bob's files")
        log = shared / "alice.log"
        assert (
            run_as(
                "alice", gpu_run, "--timeout", "30", "--", "true", env=env, output=log, timeout=60
            )
            == 0
        )
        text = log.read_text()
        for name in [*planted, f"queue.{ids[4]}.json", f"queue.{ids[5]}.json"]:
            assert name in text, f"no warning names {name}:\n{text}"

        def starving_queue():  # the impossible request has waited past starve_after_s
            GpuBroker(poll_s=0.01, starve_after_s=0.0).acquire(1, timeout=10).release()

        assert run_as("alice", starving_queue, env=env, output=log) == 0
        assert "is impossible on its 1 GPU(s)" in log.read_text()
        view = root_view(run, BIOACCEL_SHARES_FILE=str(shares))
        assert view["queue"] == [] and all(not d["holders"] for d in view["devices"])
        assert any(f"lease.{ids[6]}.json" in w for w in view["warnings"])
    finally:
        os.killpg(bob, signal.SIGKILL)
        wait(bob)


def test_snakemake_plugin_of_two_users_uses_the_host_wide_arbiter(shared):
    plugin = require("snakemake_scheduler_plugin_bioaccel")
    import logging

    shares = shared / "shares"
    shares.write_text("policy fair\nalice 2\nbob 1\n")
    init_run_dir(DEFAULT_RUN_DIR, shares_file=str(shares))  # the host's one shares file
    env = base_env(BIOACCEL_SHARES_FILE=str(shares))

    def report(name):
        sched = plugin.Scheduler(None, plugin.SchedulerSettings(), logging.getLogger("t"))
        (shared / f"{name}.json").write_text(
            json.dumps(
                {
                    "arbiter": str(sched.arbiter),
                    "policy": sched.policy.name,
                    "shares": sched.policy.shares,
                }
            )
        )

    try:
        for user in USERS:
            assert run_as(user, report, user, env=env) == 0
    finally:
        init_run_dir(DEFAULT_RUN_DIR, shares_file="/etc/bioaccel/shares")
    seen = [json.loads((shared / f"{u}.json").read_text()) for u in USERS]
    assert (
        seen[0]
        == seen[1]
        == {"arbiter": str(DEFAULT_RUN_DIR), "policy": "fair", "shares": {"alice": 2.0, "bob": 1.0}}
    )


def test_a_planted_lock_file_stops_with_an_error_naming_it_and_its_owner(shared):
    run = shared / "run"
    env = base_env(BIOACCEL_RUN_DIR=str(run))
    init_run_dir(run)
    (run / "arbiter.lock").unlink(missing_ok=True)

    def plant():
        os.close(os.open(run / "arbiter.lock", os.O_CREAT | os.O_WRONLY, 0o600))

    assert run_as("bob", plant, env=env) == 0
    log = shared / "alice.log"
    assert run_as("alice", gpu_run, "--", "true", env=env, output=log) != 0
    text = log.read_text()
    assert f"'{run / 'arbiter.lock'}' (owner bob, mode 0600) is not readable by alice" in text
