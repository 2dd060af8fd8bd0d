"""The file-based arbiter (a run directory of ``flock``ed files: the private mode, and the
legacy shared folder) against hostile local users (the findings S1-S3, H1-H6, D1-D3, M1-M4 and
the lower items); the arbiter service's answers to the same findings and the newer ones are in
``test_sched_arbiterd.py``. As real Unix users alice, bob and eve (created when the tests run
as root, as in CI; skipped otherwise). Each test sets up the attack or mistake as it was
reported and shows that it is now refused, survived or shown correctly; README
('For administrators') states the threat model these tests check."""

import contextlib
import json
import os
import pwd
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchmarks.two_users import (
    kill_marked,
    preload,
    run_as,
    shared_dir,
    spawn_as,
    users_unavailable,
    wait,
)
from bioaccel.cli import main as cli_main
from bioaccel.devices._discover import discover_devices
from bioaccel.sched import GpuBroker, init_run_dir
from bioaccel.sched.history import History, Run
from tests.cli_runner import COMMAND
from tests.datasets import child_env, unavailable

USERS = ("alice", "bob", "eve")


@pytest.fixture(scope="module")
def users():
    why = users_unavailable(USERS)
    if why:
        unavailable(why)
    preload()
    return {u: pwd.getpwnam(u).pw_uid for u in USERS}


@pytest.fixture
def host(users, monkeypatch):
    """A run directory made by the administrator (``bioaccel admin init``) with 4 virtual
    GPUs, a shares file, and a scratch folder every user may write."""
    for var in (
        "CUDA_VISIBLE_DEVICES",
        "SLURM_JOB_ID",
        "SLURM_JOB_GPUS",
        "SLURM_STEP_GPUS",
        "BIOACCEL_GPU_TOPOLOGY",
        "BIOACCEL_LEASED_GPUS",
        "BIOACCEL_LEASE",
        "BIOACCEL_POLICY",
        "BIOACCEL_SHARES",
        "BIOACCEL_SLOTS_PER_GPU",
    ):
        monkeypatch.delenv(var, raising=False)
    scratch = shared_dir("bioaccel-threats-")
    shares = scratch / "shares"
    shares.write_text("policy fcfs\nalice 1\nbob 1\neve 1\n")
    os.chmod(shares, 0o644)
    run = scratch / "run"
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "4")
    monkeypatch.setenv("BIOACCEL_RUN_DIR", str(run))
    monkeypatch.setenv("BIOACCEL_SHARES_FILE", str(shares))
    init_run_dir(run, discover_devices(), shares_file=str(shares))
    yield scratch, run
    for user in USERS:  # jobs may outlive their wrappers on purpose
        kill_marked(user, f"BIOACCEL_RUN_DIR={run}")
    subprocess.run(["rm", "-rf", str(scratch)], check=False)


def env_of(run: Path, **extra) -> dict:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": "/",
        "BIOACCEL_VIRTUAL_GPUS": "4",
        "BIOACCEL_RUN_DIR": str(run),
        "BIOACCEL_SHARES_FILE": os.environ["BIOACCEL_SHARES_FILE"],
    }
    env.update(extra)
    return env


@contextlib.contextmanager
def shown_warnings():
    """Print warnings on stderr in a forked user process (pytest's recorder is inherited)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = lambda m, *a, **k: print(f"warning: {m}", file=sys.stderr)
        yield


def gpu_run(*args) -> None:
    cli_main(["gpu-run", *args])


def stamp(path: Path) -> str:
    return f"date +%s.%N > {path}"


def until(cond, timeout=30.0, what="condition"):
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def view(run: Path, as_user: str | None = None, scratch: Path | None = None, text: bool = False):
    """``bioaccel gpus [--json]`` by root (as an administrator) or by ``as_user``."""
    if as_user is None:
        proc = subprocess.run(
            [*COMMAND, "gpus"] + ([] if text else ["--json"]),
            env=child_env(
                BIOACCEL_VIRTUAL_GPUS="4",
                BIOACCEL_RUN_DIR=str(run),
                COLUMNS="400",
                BIOACCEL_SHARES_FILE=os.environ["BIOACCEL_SHARES_FILE"],
            ),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        return proc.stdout if text else json.loads(proc.stdout)
    out = scratch / f"gpus-{as_user}.txt"
    out.unlink(missing_ok=True)
    code = run_as(
        as_user,
        cli_main,
        ["gpus"] + ([] if text else ["--json"]),
        env=env_of(run, COLUMNS="400"),
        output=out,
    )
    assert code == 0, out.read_text()
    return out.read_text() if text else json.loads(out.read_text())


def holders(v: dict) -> list[dict]:
    return [h for d in v["devices"] for h in d["holders"]]


# -- S: state no other user can touch ----------------------------------------------------------
def test_s1_a_planted_sqlite_journal_cannot_reach_alices_history(host, users):
    scratch, run = host
    alice_dir = run / "users" / str(users["alice"])
    assert (alice_dir.stat().st_uid, alice_dir.stat().st_mode & 0o7777) == (users["alice"], 0o755)

    def plant():  # where the reported attack put it, and where the history lives now
        failed = []
        for target in (
            run / f"history.{users['alice']}.sqlite-journal",
            alice_dir / "history.sqlite-journal",
        ):
            try:
                target.write_bytes(b"\xd9\xd5\x05\xf9\x20\xa1\x63\xd7" + b"\0" * 504)
            except PermissionError:
                failed.append(target.name)
        (scratch / "eve.json").write_text(json.dumps(failed))

    assert run_as("eve", plant, env=env_of(run)) == 0
    assert json.loads((scratch / "eve.json").read_text()) == ["history.sqlite-journal"]
    assert run_as("alice", gpu_run, "--kind", "k", "--", "sleep", "0.3", env=env_of(run)) == 0
    runs = History(run).runs("k")
    assert len(runs) == 1 and runs[0].user == "alice" and 0.25 < runs[0].runtime_s < 5
    used = History(run).usage()
    assert set(used) == {"alice"} and 0.25 <= used["alice"] < 5  # 1 GPU x ~0.3 s
    # a folder squatted under a new user's uid is not theirs: their runs are refused there,
    # and everyone's usage pass skips it with a warning
    subprocess.run(["rm", "-rf", str(run / "users" / str(users["bob"]))], check=True)
    assert run_as("eve", os.mkdir, run / "users" / str(users["bob"]), env=env_of(run)) == 0
    log = scratch / "bob.log"
    assert run_as("bob", gpu_run, "--", "true", env=env_of(run), output=log) == 0
    assert (
        "not recorded in the history" in log.read_text()
        and "not a folder of bob" in log.read_text()
    )
    with pytest.warns(UserWarning, match=f"users/{users['bob']}'.*expected a folder of uid"):
        History(run).usage()


def test_s2_lock_files_planted_before_first_use_are_refused_and_replaced(host, users):
    scratch, _ = host
    run = scratch / "fresh"
    os.mkdir(run)
    os.chmod(run, 0o1777)  # made by root after a reboot, not yet set up

    def plant():
        for k in range(4):
            for name in (f"slot.vgpu-{k}.0.lock", "arbiter.lock"):
                with contextlib.suppress(FileExistsError):
                    os.close(os.open(run / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))

    assert run_as("eve", plant, env=env_of(run)) == 0
    log = scratch / "alice.log"
    assert run_as("alice", gpu_run, "--", "true", env=env_of(run), output=log) == 2
    assert "has no configuration" in log.read_text() and "bioaccel admin init" in log.read_text()
    with pytest.warns(UserWarning, match="replaced .*owner eve"):
        init_run_dir(run, discover_devices(), shares_file=os.environ["BIOACCEL_SHARES_FILE"])
    assert all(p.stat().st_uid == 0 for p in run.glob("*.lock"))
    # alice leases all four; eve can no longer delete the locks; bob cannot get them
    alice = spawn_as(
        "alice",
        gpu_run,
        "--gpus",
        "4",
        "--",
        "sh",
        "-c",
        f"{stamp(scratch / 'a.start')}; sleep 30",
        env=env_of(run),
    )
    until(lambda: (scratch / "a.start").exists(), what="alice's lease")

    def delete():
        gone = 0
        for p in run.glob("slot.*.lock"):
            with contextlib.suppress(PermissionError):
                p.unlink()
                gone += 1
        (scratch / "gone").write_text(str(gone))

    assert run_as("eve", delete, env=env_of(run)) == 0
    assert (scratch / "gone").read_text() == "0"
    assert (
        run_as(
            "bob",
            gpu_run,
            "--gpus",
            "4",
            "--timeout",
            "1",
            "--",
            "true",
            env=env_of(run),
            output=log,
        )
        != 0
    )
    v = view(run)
    assert [d["held_slots"] for d in v["devices"]] == [1, 1, 1, 1]
    assert {h["user"] for h in holders(v)} == {"alice"}
    os.killpg(alice, signal.SIGTERM)
    wait(alice)


def test_s3_a_run_directory_owned_by_an_ordinary_user_is_refused(host, users):
    scratch, _ = host
    squat = scratch / "squat"
    assert run_as("eve", lambda: (os.mkdir(squat), os.chmod(squat, 0o1777)), env=env_of(squat)) == 0
    log = scratch / "alice.log"
    assert run_as("alice", gpu_run, "--", "true", env=env_of(squat), output=log) == 2
    (line,) = log.read_text().splitlines()
    assert "is shared but belongs to eve" in line and "bioaccel admin init" in line
    # the host-wide default is never made by an ordinary user
    missing = scratch / "no-such-default"

    def default_dir():
        from bioaccel.sched import admin

        admin.DEFAULT_RUN_DIR = missing
        env = {k: v for k, v in os.environ.items() if k != "BIOACCEL_RUN_DIR"}
        admin.run_dir(env)

    assert run_as("alice", default_dir, env=env_of(squat), output=log) == 1
    assert "does not exist" in log.read_text() and not missing.exists()


# -- H: waiting does not hold GPUs; bounded cost -------------------------------------------------
def test_h1_a_stopped_waiter_holds_nothing_and_gets_back_in_line(host, users):
    scratch, run = host
    blocker = GpuBroker(run).acquire(1, label="root's blocker")
    eve = spawn_as(
        "eve", gpu_run, "--gpus", "4", "--", "sh", "-c", stamp(scratch / "e.start"), env=env_of(run)
    )
    try:
        until(lambda: any(q["user"] == "eve" for q in view(run)["queue"]), what="eve queued")
        os.killpg(eve, signal.SIGSTOP)  # Ctrl-Z while waiting
        blocker.release()  # all four GPUs are free now, and eve's request ranks first
        t0 = time.time()
        assert (
            run_as(
                "alice",
                gpu_run,
                "--timeout",
                "30",
                "--",
                "sh",
                "-c",
                stamp(scratch / "a.start"),
                env=env_of(run),
            )
            == 0
        )
        assert float((scratch / "a.start").read_text()) - t0 < 15
        (entry,) = [q for q in view(run)["queue"] if q["user"] == "eve"]
        assert entry["lapsed"] and not (scratch / "e.start").exists()
        os.killpg(eve, signal.SIGCONT)  # back in line, and served
        assert wait(eve, 60) == 0 and (scratch / "e.start").exists()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(eve, signal.SIGKILL)


def test_h1_queue_entries_per_user_are_bounded(host, users):
    scratch, run = host
    blocker = GpuBroker(run).acquire(1, label="root's blocker")

    def flood():  # 2,000 waiting entries of 4 GPUs, held open by one process, forged as old
        import fcntl

        fds = []
        for k in range(2000):
            path = run / f"queue.1.{k:06d}-{os.getpid()}-0000abcd.json"
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            os.write(
                fd,
                json.dumps(
                    {
                        "priority": 0,
                        "gpus": 4,
                        "slots": 1,
                        "mem_gb": None,
                        "submit_time": 0.0,
                        "predicted_s": None,
                        "label": "flood",
                        "account": None,
                    }
                ).encode(),
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
            fds.append(fd)
        (scratch / "flooded").write_text("")
        while True:
            for fd in fds[:40]:
                os.utime(fd)  # renewed, so not lapsed
            time.sleep(1)

    eve = spawn_as("eve", flood, env=env_of(run))
    try:
        until(lambda: (scratch / "flooded").exists(), 60, what="the flood")
        log = scratch / "alice.log"
        assert (
            run_as("alice", gpu_run, "--timeout", "30", "--", "true", env=env_of(run), output=log)
            == 0
        )
        assert "eve has 2000 queue files; only the first 32" in log.read_text()

        def one_too_many():
            from bioaccel.errors import QueueLimitError

            broker = GpuBroker()
            try:
                broker.acquire(4, timeout=1)
            except QueueLimitError as exc:
                (scratch / "limit").write_text(str(exc))

        assert run_as("eve", one_too_many, env=env_of(run)) == 0
        assert "already has 32 waiting request(s)" in (scratch / "limit").read_text()
    finally:
        os.killpg(eve, signal.SIGKILL)
        wait(eve)
        blocker.release()


def test_h2_h3_a_locked_or_huge_history_never_stalls_anothers_pass(host, users, monkeypatch):
    scratch, run = host
    shares = scratch / "shares"
    shares.write_text("policy fair\nalice 1\nbob 1\neve 1\n")
    eve_db = run / "users" / str(users["eve"]) / "history.sqlite"

    def eve_locks():
        History(run).record(Run("k", "eve", "x", 1, 1e6, None, time.time() - 10, time.time(), 0))
        db = sqlite3.connect(eve_db, timeout=1)
        db.execute("BEGIN EXCLUSIVE")
        (scratch / "locked").write_text("")
        time.sleep(120)

    def alice_rows():  # a long history: 10^5 rows (the benchmark measures 10^6)
        History(run).record(Run("k", "alice", "x", 1, 1e6, None, time.time() - 10, time.time(), 0))
        with (
            contextlib.closing(
                sqlite3.connect(run / "users" / str(users["alice"]) / "history.sqlite")
            ) as db,
            db,
        ):
            db.executemany(
                "INSERT INTO runs (kind, user, device_kind, gpus, cells, start, end,"
                " exit_code) VALUES ('k', 'alice', 'x', 1, 1e6, ?, ?, 0)",
                [(float(i), float(i) + 1) for i in range(100_000)],
            )

    assert run_as("alice", alice_rows, env=env_of(run)) == 0
    eve = spawn_as("eve", eve_locks, env=env_of(run))
    try:
        until(lambda: (scratch / "locked").exists(), what="eve's lock")
        log = scratch / "bob.log"
        t0 = time.monotonic()
        assert (
            run_as(
                "bob",
                gpu_run,
                "--kind",
                "k",
                "--cells",
                "1e6",
                "--",
                "true",
                env=env_of(run),
                output=log,
            )
            == 0
        )
        assert time.monotonic() - t0 < 20, "bob's gpu-run waited on eve's history lock"
        assert "history.sqlite" in log.read_text() and "locked" in log.read_text()
        t0 = time.monotonic()
        view(run)
        assert time.monotonic() - t0 < 20
        # the fair-share pass reads one small usage file per user, never a history
        broker = GpuBroker(run)

        def no_sqlite(*a, **k):
            raise AssertionError("the fair-share pass opened a history database")

        monkeypatch.setattr(sqlite3, "connect", no_sqlite)
        used = broker.history.usage()
        assert set(used) == {"alice", "bob", "eve"}
        assert used["alice"] > 0 and used["eve"] > 0
    finally:
        os.killpg(eve, signal.SIGKILL)
        wait(eve)


def test_h4_one_shares_file_per_host(host, users):
    scratch, run = host
    other = scratch / "other-shares"
    other.write_text("policy fair\nalice 100\n")
    os.chmod(other, 0o644)  # root's, trusted as a file: still not this host's
    log = scratch / "alice.log"
    assert (
        run_as(
            "alice",
            gpu_run,
            "--",
            "true",
            env=env_of(run, BIOACCEL_SHARES_FILE=str(other)),
            output=log,
        )
        == 2
    )
    assert "uses the shares file" in log.read_text()


def test_h5_requests_limited_by_cuda_visible_devices_are_planned_on_their_own_gpus(host, users):
    scratch, run = host
    blocker = GpuBroker(run, devices=discover_devices()[:1]).acquire(1, label="root on GPU 0")
    alice = spawn_as(
        "alice",
        gpu_run,
        "--",
        "sh",
        "-c",
        stamp(scratch / "a.start"),
        env=env_of(run, CUDA_VISIBLE_DEVICES="0"),
    )
    try:
        until(lambda: any(q["user"] == "alice" for q in view(run)["queue"]), what="alice queued")
        t0 = time.monotonic()
        assert (
            run_as(
                "bob",
                gpu_run,
                "--timeout",
                "5",
                "--",
                "true",
                env=env_of(run, CUDA_VISIBLE_DEVICES="1"),
            )
            == 0
        )
        assert time.monotonic() - t0 < 5
        assert not (scratch / "a.start").exists()
        blocker.release()
        assert wait(alice, 30) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(alice, signal.SIGKILL)


def test_h6_unsatisfiable_requests_are_refused_and_forged_ages_ignored(host, users):
    scratch, run = host
    log = scratch / "alice.log"
    assert (
        run_as("alice", gpu_run, "--mem-gb", "1000", "--", "true", env=env_of(run), output=log) == 2
    )
    assert "mem_gb=1000.0" in log.read_text()

    def plant():  # a live entry no GPU can serve, and a fitting one claiming a huge age
        import fcntl

        fds = []
        for k, (gpus, mem) in enumerate(((1, 1000.0), (4, None))):
            fd = os.open(run / f"queue.1.00000{k}-1-0000000{k}.json", os.O_RDWR | os.O_CREAT, 0o644)
            os.write(
                fd,
                json.dumps(
                    {
                        "priority": 0,
                        "gpus": gpus,
                        "slots": 1,
                        "mem_gb": mem,
                        "submit_time": 0.0,
                        "predicted_s": None,
                        "label": "old",
                        "account": None,
                    }
                ).encode(),
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
            fds.append(fd)
        (scratch / "planted").write_text("")
        while True:
            for fd in fds:
                os.utime(fd)
            time.sleep(0.5)

    blocker = GpuBroker(run).acquire(1, label="root's blocker")
    eve = spawn_as("eve", plant, env=env_of(run))
    try:
        until(lambda: (scratch / "planted").exists(), what="eve's entries")

        # starve_after_s=60: eve's 4-GPU entry claims to have waited since 1970, but its
        # waiter process is seconds old, so it may not block alice's 1-GPU request
        def alice_waits():
            with shown_warnings():
                GpuBroker(poll_s=0.01, starve_after_s=60).acquire(1, timeout=20).release()

        assert run_as("alice", alice_waits, env=env_of(run), output=log) == 0
        assert "of 1000 GB is impossible" in log.read_text()
        (entry,) = [q for q in view(run)["queue"] if q["gpus"] == 4]
        assert entry["waited_s"] < 60
    finally:
        os.killpg(eve, signal.SIGKILL)
        wait(eve)
        blocker.release()


# -- D: leases match reality -----------------------------------------------------------------
def test_d1_what_a_job_leaves_behind_keeps_the_gpu_until_it_ends(host, users):
    scratch, run = host
    log = scratch / "alice.log"
    # a background process left in the job's group: waited for (grace), then killed
    job = f"(sleep 1; {stamp(scratch / 'bg.end')}; sleep 60) & echo started"
    alice = spawn_as(
        "alice",
        gpu_run,
        "--gpus",
        "4",
        "--grace",
        "2",
        "--",
        "sh",
        "-c",
        job,
        env=env_of(run),
        output=log,
    )
    until(
        lambda: "process(es) in its process group" in log.read_text() if log.exists() else False,
        what="alice's leftover",
    )
    assert (
        run_as(
            "bob",
            gpu_run,
            "--timeout",
            "20",
            "--",
            "sh",
            "-c",
            stamp(scratch / "b.start"),
            env=env_of(run),
        )
        == 0
    )
    assert wait(alice) == 0
    text = log.read_text()
    assert "sent SIGTERM" in text and "released" in text
    assert float((scratch / "b.start").read_text()) > float((scratch / "bg.end").read_text())
    # a process that leaves the group (setsid) keeps the lease while it lives, and is named
    log.unlink()
    job = f"setsid sh -c 'sleep 3; {stamp(scratch / 'esc.end')}' & sleep 0.2"
    assert (
        run_as("alice", gpu_run, "--gpus", "4", "--", "sh", "-c", job, env=env_of(run), output=log)
        == 0
    )
    assert "stay leased until it exits" in log.read_text()
    assert (
        run_as(
            "bob",
            gpu_run,
            "--timeout",
            "20",
            "--",
            "sh",
            "-c",
            stamp(scratch / "b2.start"),
            env=env_of(run),
        )
        == 0
    )
    assert float((scratch / "b2.start").read_text()) > float((scratch / "esc.end").read_text())


def test_d2_an_inherited_leased_gpus_variable_without_a_lease_is_ignored(host, users):
    scratch, run = host
    bob = spawn_as(
        "bob",
        gpu_run,
        "--gpus",
        "4",
        "--",
        "sh",
        "-c",
        f"{stamp(scratch / 'b.start')}; sleep 30",
        env=env_of(run),
    )
    try:
        until(lambda: (scratch / "b.start").exists(), what="bob's lease")
        log = scratch / "alice.log"
        code = run_as(
            "alice",
            gpu_run,
            "--timeout",
            "1",
            "--",
            "sh",
            "-c",
            stamp(scratch / "a.start"),
            env=env_of(run, BIOACCEL_LEASED_GPUS="0", BIOACCEL_LEASE="1.000000-1-00000000"),
            output=log,
        )
        assert code != 0 and not (scratch / "a.start").exists()
        assert "not backed by a live lease" in log.read_text()
    finally:
        os.killpg(bob, signal.SIGKILL)
        kill_marked("bob", f"BIOACCEL_RUN_DIR={run}")


def test_d3_a_wiped_run_directory_is_detected(host, users):
    scratch, run = host
    log = scratch / "alice.log"
    alice = spawn_as(
        "alice",
        gpu_run,
        "--gpus",
        "4",
        "--",
        "sh",
        "-c",
        f"{stamp(scratch / 'a.start')}; sleep 4",
        env=env_of(run),
        output=log,
    )
    until(lambda: (scratch / "a.start").exists(), what="alice's lease")
    subprocess.run(["rm", "-rf", str(run)], check=True)  # a cleaner, or a careless admin
    with pytest.raises(Exception, match="was wiped while jobs held GPUs: pid"):
        init_run_dir(run, discover_devices(), shares_file=os.environ["BIOACCEL_SHARES_FILE"])
    proc = subprocess.run(
        [*COMMAND, "gpus"],
        env=child_env(BIOACCEL_VIRTUAL_GPUS="4", BIOACCEL_RUN_DIR=str(run)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )  # the administrator's view says so too
    assert proc.returncode == 2 and "holds deleted slot.vgpu-" in proc.stderr, proc.stderr
    until(lambda: "was wiped" in log.read_text(), what="alice's warning")
    assert wait(alice) == 0
    init_run_dir(run, discover_devices(), shares_file=os.environ["BIOACCEL_SHARES_FILE"])


# -- M: monitoring ---------------------------------------------------------------------------
def test_m1_labels_are_printed_literally(host, users):
    scratch, run = host
    label = "[/oops] [red]x[/red]"
    alice = spawn_as(
        "alice",
        gpu_run,
        "--",
        "sh",
        "-c",
        f"echo '{label}'; {stamp(scratch / 'a.start')}; sleep 30",
        env=env_of(run),
    )
    try:
        until(lambda: (scratch / "a.start").exists(), what="alice's lease")
        for who in (None, "bob"):
            text = view(run, who, scratch, text=True)
            assert label in text, text
    finally:
        os.killpg(alice, signal.SIGKILL)


def test_m2_a_planted_lease_record_cannot_frame_anyone(host, users):
    scratch, run = host
    alice = spawn_as(
        "alice",
        gpu_run,
        "--",
        "sh",
        "-c",
        f"{stamp(scratch / 'a.start')}; sleep 30",
        env=env_of(run),
    )
    try:
        until(lambda: (scratch / "a.start").exists(), what="alice's lease")
        (real,) = holders(view(run))
        token = real["gpu"]

        def plant():
            import fcntl

            fd = os.open(run / "lease.1.000000-1-0000beef.json", os.O_RDWR | os.O_CREAT, 0o644)
            os.write(
                fd,
                json.dumps(
                    {
                        "since": 0.0,
                        "label": "eve's job",
                        "mem_gb": None,
                        "slots": {token: [0]},
                        "account": None,
                        "pid": real["pid"],
                        "host": None,
                    }
                ).encode(),
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
            (scratch / "planted").write_text("")
            time.sleep(60)

        eve = spawn_as("eve", plant, env=env_of(run))
        until(lambda: (scratch / "planted").exists(), what="eve's record")
        v = view(run)
        (shown,) = holders(v)
        assert shown["user"] == "alice" and shown["pid"] == real["pid"]
        assert any("claims slot 0" in w and "eve" in w for w in v["warnings"])
        os.killpg(eve, signal.SIGKILL)
        wait(eve)
    finally:
        os.killpg(alice, signal.SIGKILL)


def test_m4_a_user_can_erase_only_her_own_usage(host, users):
    scratch, run = host
    assert run_as("alice", gpu_run, "--", "sleep", "0.2", env=env_of(run)) == 0
    assert run_as("bob", gpu_run, "--", "sleep", "0.2", env=env_of(run)) == 0
    alice_usage = run / "users" / str(users["alice"]) / "usage.json"

    def erase(path):
        try:
            path.unlink()
            (scratch / f"erased-{os.getuid()}").write_text("yes")
        except PermissionError:
            (scratch / f"erased-{os.getuid()}").write_text("no")

    assert run_as("bob", erase, alice_usage, env=env_of(run)) == 0
    assert (scratch / f"erased-{users['bob']}").read_text() == "no"
    assert run_as("alice", erase, alice_usage, env=env_of(run)) == 0
    # her own record is hers to erase (README: only Slurm accounting enforces usage)
    assert (scratch / f"erased-{users['alice']}").read_text() == "yes"
    assert set(History(run).usage()) == {"bob"}


# -- lower items -----------------------------------------------------------------------------
def test_gpus_works_on_a_full_disk(users, monkeypatch):
    scratch = shared_dir("bioaccel-full-")
    mnt = scratch / "mnt"
    mnt.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k,mode=1777", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    ).returncode:
        # root without mount rights (a container without CAP_SYS_ADMIN): the test needs
        # a small file system to fill; CI as root has it
        unavailable("cannot mount a small tmpfs here (no mount permission)")
    try:
        for var in ("CUDA_VISIBLE_DEVICES", "BIOACCEL_LEASED_GPUS", "BIOACCEL_SHARES_FILE"):
            monkeypatch.delenv(var, raising=False)
        monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "4")
        run = mnt / "run"
        init_run_dir(run, discover_devices())
        with contextlib.suppress(OSError), open(mnt / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
        out = scratch / "gpus.txt"
        env = {
            "PATH": os.environ["PATH"],
            "HOME": "/",
            "BIOACCEL_VIRTUAL_GPUS": "4",
            "BIOACCEL_RUN_DIR": str(run),
        }
        for who in ("alice", None):
            out.unlink(missing_ok=True)
            assert run_as(who, cli_main, ["gpus"], env=env, output=out) == 0, out.read_text()
            assert "queue: empty" in out.read_text()
    finally:
        subprocess.run(["umount", "-l", str(mnt)], check=False)
        subprocess.run(["rm", "-rf", str(scratch)], check=False)


def test_slots_and_shares_out_of_range_get_clear_errors(users, tmp_path, monkeypatch):
    from bioaccel.errors import SchedulerConfigError
    from bioaccel.sched.identity import parse_shares_file
    from bioaccel.sched.policies import FairShare

    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "1")
    with pytest.raises(
        SchedulerConfigError,
        match=r"slots_per_gpu=2000: expected a whole "
        r"number 1\.\.64",
    ):
        init_run_dir(tmp_path / "run", slots_per_gpu=2000)
    init_run_dir(tmp_path / "run2")
    cfg = json.loads((tmp_path / "run2" / "config.json").read_text())
    cfg["slots_per_gpu"] = 2000  # planted by root's mistake
    (tmp_path / "run2" / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(SchedulerConfigError, match=r"slots_per_gpu = 2000; expected"):
        GpuBroker(tmp_path / "run2")
    for share in ("1e308", "1e-308"):
        with pytest.raises(SchedulerConfigError, match="outside 1e-06..1e\\+06"):
            parse_shares_file(Path("shares"), f"alice {share}\nbob 1\n")
    # the largest and smallest allowed shares, and absurd usage, still rank
    policy = FairShare({"alice": 1e6, "bob": 1e-6})
    f = policy.factors({"alice", "bob"}, {"alice": 1e308, "bob": float("inf")})
    assert all(0 <= v <= 1 for v in f.values())


def test_durations_use_the_monotonic_clock(users, tmp_path, monkeypatch):
    """A backward step of the wall clock during a job records its real duration."""
    from bioaccel.sched import run as run_mod

    for var in ("CUDA_VISIBLE_DEVICES", "BIOACCEL_LEASED_GPUS", "BIOACCEL_SHARES_FILE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "1")
    monkeypatch.setenv("BIOACCEL_RUN_DIR", str(tmp_path / "run"))
    real = time.time
    stepped = {"at": None}

    def clock():
        if stepped["at"] is None:
            return real()
        return real() - 3600.0  # stepped back one hour

    def say(line):
        if "leased at" in line:
            stepped["at"] = real()

    monkeypatch.setattr(run_mod.time, "time", clock)
    code = run_mod.run_leased(["sleep", "0.3"], kind="clock", say=say)
    monkeypatch.setattr(run_mod.time, "time", real)
    assert code == 0
    (r,) = History(tmp_path / "run").runs("clock")
    assert 0.25 < r.runtime_s < 5
    assert 0 < History(tmp_path / "run").usage()["root"] < 5


def test_a_hard_linked_history_is_never_written_through(host, users):
    scratch, run = host
    assert run_as("alice", gpu_run, "--kind", "k", "--", "true", env=env_of(run)) == 0
    mine = run / "users" / str(users["alice"])

    def link_and_run():
        os.link(mine / "history.sqlite", mine / "another-name")
        gpu_run("--kind", "k", "--", "true")

    log = scratch / "alice.log"
    assert run_as("alice", link_and_run, env=env_of(run), output=log) == 0
    assert "with one name" in log.read_text() and "not recorded" in log.read_text()
