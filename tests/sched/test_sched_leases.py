"""GPU leases across threads and processes: exclusivity, capacity, SIGKILL, policy order."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from functools import partial

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bioaccel.devices._discover import discover_devices
from bioaccel.errors import LeaseTimeoutError, SchedulerConfigError
from bioaccel.sched import GpuBroker, lease
from tests.cli_runner import COMMAND, run_process
from tests.datasets import child_env


@pytest.fixture
def gpus4(monkeypatch, tmp_path):
    for var in (
        "CUDA_VISIBLE_DEVICES",
        "SLURM_JOB_GPUS",
        "SLURM_STEP_GPUS",
        "BIOACCEL_GPU_TOPOLOGY",
        "BIOACCEL_LEASED_GPUS",
        "BIOACCEL_POLICY",
        "BIOACCEL_SLOTS_PER_GPU",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "4")
    monkeypatch.setenv("BIOACCEL_RUN_DIR", str(tmp_path / "run"))
    return tmp_path / "run"


def overlapping(intervals):
    """Pairs of (start, end, gpu_set) that overlap in time and share a GPU."""
    bad = []
    for a in range(len(intervals)):
        for b in range(a + 1, len(intervals)):
            s1, e1, g1 = intervals[a]
            s2, e2, g2 = intervals[b]
            if s1 < e2 and s2 < e1 and g1 & g2:
                bad.append((intervals[a], intervals[b]))
    return bad


def run_threads(run_dir, requests, slots_per_gpu=1):
    """Each request (gpus, slots, hold_s) in its own thread and broker; returns intervals."""
    devices = discover_devices()
    intervals, errors = [], []
    lock = threading.Lock()

    def one(gpus, slots, hold):
        try:
            broker = GpuBroker(run_dir, devices, slots_per_gpu=slots_per_gpu, poll_s=0.005)
            held = broker.acquire(gpus, slots, timeout=60)
            start = time.monotonic()
            time.sleep(hold)
            end = time.monotonic()
            with lock:
                intervals.append((start, end, frozenset(d.index for d in held.devices), slots))
            held.release()
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=one, args=r) for r in requests]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert not errors, errors
    assert not any(t.is_alive() for t in threads), "a waiting request was never served"
    assert len(intervals) == len(requests)
    return intervals


@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.tuples(st.integers(1, 4), st.floats(0.0, 0.03)), min_size=2, max_size=10))
def test_exclusive_leases_never_share_a_gpu(gpus4, reqs):
    intervals = run_threads(gpus4, [(g, 1, h) for g, h in reqs])
    assert not overlapping([(s, e, g) for s, e, g, _ in intervals])
    for _s, _e, g, _ in intervals:
        assert len(g) in range(1, 5)


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(1, 2), st.integers(1, 3), st.floats(0.0, 0.03)),
        min_size=2,
        max_size=10,
    )
)
def test_shared_slots_never_exceed_capacity(gpus4, reqs):
    intervals = run_threads(gpus4, reqs, slots_per_gpu=3)
    events = sorted(
        [(s, +k) for s, _, g, k in intervals for _ in g]
        + [(e, -k) for _, e, g, k in intervals for _ in g]
    )
    for gpu in range(4):
        use = sorted(
            [(s, k) for s, _, g, k in intervals if gpu in g]
            + [(e, -k) for _, e, g, k in intervals if gpu in g],
            key=lambda x: (x[0], x[1]),
        )
        level = 0
        for _, delta in use:
            level += delta
            assert level <= 3, f"GPU {gpu} over capacity"
    assert events


CHILD = r"""
import json, os, sys, time
from bioaccel.sched import GpuBroker
broker = GpuBroker(poll_s=0.005)
held = broker.acquire(int(sys.argv[1]), timeout=60)
with open(sys.argv[2], "a") as f:
    f.write(json.dumps({"pid": os.getpid(), "start": time.time(),
                        "gpus": [d.index for d in held.devices]}) + "\n")
    f.flush()
time.sleep(float(sys.argv[3]))
with open(sys.argv[2], "a") as f:
    f.write(json.dumps({"pid": os.getpid(), "end": time.time()}) + "\n")
held.release()
"""


@settings(
    max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.integers(1, 3), st.floats(0.05, 0.4), st.booleans(), st.floats(0.0, 0.3)),
        min_size=3,
        max_size=7,
    )
)
@pytest.mark.slow
def test_sigkilled_holders_free_their_gpus_and_capacity_holds(gpus4, tmp_path, reqs):
    log = tmp_path / f"events-{time.monotonic_ns()}.jsonl"
    env = child_env()
    procs = [
        (
            subprocess.Popen([sys.executable, "-c", CHILD, str(g), str(log), str(h)], env=env),
            kill,
            delay,
        )
        for g, h, kill, delay in reqs
    ]
    kills = {}
    t0 = time.time()
    for p, kill, delay in sorted(procs, key=lambda x: x[2]):
        if kill:
            time.sleep(max(0.0, t0 + delay - time.time()))
            kills[p.pid] = time.time()  # recorded before the signal: never later than the death
            p.send_signal(signal.SIGKILL)
    for p, _, _ in procs:
        p.wait(120)
    starts, ends = {}, {}
    if log.exists():
        for line in log.read_text().splitlines():
            e = json.loads(line)
            (starts if "start" in e else ends)[e["pid"]] = e
    intervals = []
    for pid, s in starts.items():
        end = ends[pid]["end"] if pid in ends else kills[pid]
        intervals.append((s["start"], end, frozenset(s["gpus"])))
    assert not overlapping(intervals)
    # every GPU is free again: one request can take all four at once
    with lease(gpus=4, timeout=10) as held:
        assert len(held.devices) == 4


def test_waiting_requests_are_served_in_priority_order(gpus4, monkeypatch):
    monkeypatch.setenv("BIOACCEL_POLICY", "priority")
    devices = discover_devices()
    blocker = GpuBroker(devices=devices, poll_s=0.005).acquire(4)
    order = []

    def wait_for(priority, name):
        held = GpuBroker(devices=devices, poll_s=0.005).acquire(4, priority=priority, timeout=30)
        order.append(name)
        time.sleep(0.05)
        held.release()

    threads = []
    for prio, name in ((0, "low"), (5, "high"), (1, "mid")):
        t = threading.Thread(target=wait_for, args=(prio, name))
        t.start()
        threads.append(t)
        time.sleep(0.1)  # all three queue while the GPUs are held, low first
    blocker.release()
    for t in threads:
        t.join(30)
    assert order == ["high", "mid", "low"]


def test_fcfs_serves_in_arrival_order(gpus4):
    devices = discover_devices()
    blocker = GpuBroker(devices=devices, poll_s=0.005).acquire(4)
    order = []

    def wait_for(name):
        held = GpuBroker(devices=devices, poll_s=0.005).acquire(3, timeout=30)
        order.append(name)
        time.sleep(0.05)
        held.release()

    threads = []
    for name in "abc":
        t = threading.Thread(target=wait_for, args=(name,))
        t.start()
        threads.append(t)
        time.sleep(0.1)
    blocker.release()
    for t in threads:
        t.join(30)
    assert order == ["a", "b", "c"]


def test_timeout_names_the_holders(gpus4):
    with lease(gpus=4, label="the blocker"):
        pass
    broker = GpuBroker(poll_s=0.01)
    held = broker.acquire(4, label="the blocker")
    try:
        with pytest.raises(LeaseTimeoutError, match="the blocker"):
            GpuBroker(poll_s=0.01).acquire(1, timeout=0.2)
    finally:
        held.release()


def test_lease_sets_cuda_visible_devices_and_nests(gpus4, monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3")
    with lease(gpus=2) as held:
        assert os.environ["CUDA_VISIBLE_DEVICES"] == held.visible
        assert len(held.visible.split(",")) == 2
        # a child started by gpu-run inherits the lease: a lease inside it returns at once
        monkeypatch.setenv("BIOACCEL_LEASED_GPUS", held.visible)
        monkeypatch.setenv("BIOACCEL_LEASE", held.request_id)
        with lease(gpus=1, timeout=1) as inner:
            assert inner.inherited and inner.devices[0].visible_id in held.visible.split(",")
        # without a lease this process is verifiably inside, the variable is ignored (D2)
        monkeypatch.setenv("BIOACCEL_LEASE", "1.000000-1-00000000")
        with (
            pytest.warns(UserWarning, match="not backed by a live lease"),
            pytest.raises(LeaseTimeoutError),
        ):
            with lease(gpus=2, timeout=0.3):
                pass
        monkeypatch.delenv("BIOACCEL_LEASED_GPUS")
    assert os.environ["CUDA_VISIBLE_DEVICES"] == "0,1,2,3"


def test_bad_requests_and_inconsistent_sharing(gpus4):
    broker = GpuBroker(slots_per_gpu=2)
    with pytest.raises(ValueError, match="only 4 GPU"):
        broker.acquire(5)
    with pytest.raises(ValueError, match=r"slots=3: expected 1..2"):
        broker.acquire(1, slots=3)
    with pytest.raises(SchedulerConfigError, match="shares each GPU 2 way"):
        GpuBroker(slots_per_gpu=4)


def test_memory_budget_limits_sharing(gpus4, monkeypatch):
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "1")  # one 80 GB virtual GPU
    broker = GpuBroker(slots_per_gpu=4, poll_s=0.01)
    a = broker.acquire(1, slots=1, mem_gb=50)
    with pytest.raises(LeaseTimeoutError):
        broker.acquire(1, slots=1, mem_gb=40, timeout=0.2)  # 50 + 40 > 80
    b = broker.acquire(1, slots=1, mem_gb=30, timeout=1)  # 50 + 30 <= 80
    a.release()
    b.release()


def test_gpu_run_binds_returns_exit_code_and_records_history(gpus4, tmp_path):
    out = tmp_path / "seen"
    script = f"import os; open({str(out)!r}, 'w').write(os.environ['CUDA_VISIBLE_DEVICES']); raise SystemExit(7)"
    proc = subprocess.run(
        [
            *COMMAND,
            "gpu-run",
            "--gpus",
            "2",
            "--kind",
            "align",
            "--cells",
            "1e6",
            "--",
            sys.executable,
            "-c",
            script,
        ],
        env={**child_env(), "BIOACCEL_VIRTUAL_GPUS": "4", "BIOACCEL_RUN_DIR": str(gpus4)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 7, proc.stderr
    assert len(out.read_text().split(",")) == 2
    from bioaccel.sched.history import History

    runs = History(gpus4).runs("align")
    assert len(runs) == 1 and runs[0].exit_code == 7 and runs[0].cells == 1e6 and runs[0].gpus == 2


def test_gpu_run_inside_gpu_run_uses_the_parent_lease(gpus4):
    inner = (
        f"{sys.executable} -m bioaccel.cli gpu-run -- {sys.executable} -c "
        "\"import os; print('inner', os.environ['CUDA_VISIBLE_DEVICES'])\""
    )
    proc = subprocess.run(
        [
            *COMMAND,
            "gpu-run",
            "--gpus",
            "4",
            "--timeout",
            "20",
            "--",
            "sh",
            "-c",
            inner,
        ],
        env={**child_env(), "BIOACCEL_VIRTUAL_GPUS": "4", "BIOACCEL_RUN_DIR": str(gpus4)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "inner 0,1,2,3" in proc.stdout  # no deadlock on its own parent's GPUs


# -- bioaccel gpus / gpu-run output: what holds each GPU, and the exit code passed through ------
#: ``bioaccel ...`` as a child process that sees four virtual GPUs
cli = partial(run_process, timeout=120, BIOACCEL_VIRTUAL_GPUS="4")


def test_gpus_without_a_gpu_says_so_and_how_to_get_virtual_ones(gpus4):
    env = {k: v for k, v in child_env().items() if k != "BIOACCEL_VIRTUAL_GPUS"}
    env.update(CUDA_VISIBLE_DEVICES="", BIOACCEL_RUN_DIR=str(gpus4))
    for args in ((), ("--json",)):
        proc = subprocess.run(
            [*COMMAND, "gpus", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        assert "no GPU is visible" in proc.stdout and "BIOACCEL_VIRTUAL_GPUS=N" in proc.stdout
    assert json.loads(proc.stdout)["devices"] == []


def test_gpus_lists_a_holder_of_two_slots_once_with_its_age_and_label(gpus4):
    held = GpuBroker(slots_per_gpu=2).acquire(1, slots=2, label="two-slot job")
    try:
        view = json.loads(cli("gpus", "--json", BIOACCEL_RUN_DIR=str(gpus4)).stdout)
        text = cli("gpus", BIOACCEL_RUN_DIR=str(gpus4)).stdout
    finally:
        held.release()
    (gpu,) = [d for d in view["devices"] if d["holders"]]
    (holder,) = gpu["holders"]
    assert holder["slots"] == [0, 1] and gpu["held_slots"] == 2
    assert holder["label"] == "two-slot job" and holder["age_s"] >= 0
    assert text.count("two-slot job") == 1 and "2/2" in text


def test_gpu_run_exits_127_and_126_like_a_shell(gpus4, tmp_path):
    plain = tmp_path / "not-executable"
    plain.write_text("echo hi\n")
    for cmd, code, message in (
        ("no-such-command-xyz", 127, "command not found"),
        (str(plain), 126, "permission denied"),
        (str(tmp_path), 126, "is a directory"),
    ):
        proc = cli("gpu-run", "--", cmd, BIOACCEL_RUN_DIR=str(gpus4))
        assert proc.returncode == code, proc.stderr
        assert proc.stderr.strip() == f"bioaccel gpu-run: {cmd}: {message}"


def test_gpu_run_prints_lease_times_for_people(gpus4):
    proc = cli("gpu-run", "--", "true", BIOACCEL_RUN_DIR=str(gpus4))
    assert proc.returncode == 0, proc.stderr
    stamp = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d"
    assert re.search(rf"leased at {stamp} after waiting \d+\.\d s", proc.stderr), proc.stderr
    assert re.search(rf"released at {stamp} after \d+\.\d s, exit status 0", proc.stderr)
    assert not re.search(r"\d{9,}\.\d", proc.stderr), "an epoch float is printed"


def test_human_durations():
    from bioaccel.sched import human_duration

    seconds = (0.04, 59.94, 61, 3599, 3600 * 2 + 180, 86400 * 3 + 3600 * 4)
    assert [human_duration(s) for s in seconds] == [
        "0.0 s",
        "59.9 s",
        "1 min 01 s",
        "59 min 59 s",
        "2 h 03 min",
        "3 d 04 h",
    ]


# -- run directory and shares file, one user ----------------------------------------------------
def test_run_directory_is_made_sticky_whatever_the_umask_and_never_through_a_symlink(tmp_path):
    from bioaccel.sched.rundir import ensure_dir

    old = os.umask(0o077)
    try:
        ensure_dir(tmp_path / "a" / "run")
    finally:
        os.umask(old)
    assert (tmp_path / "a" / "run").stat().st_mode & 0o7777 == 0o1777
    (tmp_path / "link").symlink_to(tmp_path / "a" / "run")
    with pytest.raises(SchedulerConfigError, match="is a symlink"):
        ensure_dir(tmp_path / "link")
    (tmp_path / "open").mkdir()
    os.chmod(tmp_path / "open", 0o777)
    with pytest.raises(SchedulerConfigError, match="without the sticky bit"):
        ensure_dir(tmp_path / "open")


def test_shares_file_format_trust_and_accounts(tmp_path, monkeypatch):
    from bioaccel.errors import AccountError
    from bioaccel.sched.identity import load_shares

    path = tmp_path / "shares"
    monkeypatch.setenv("BIOACCEL_SHARES_FILE", str(path))
    path.write_text("# comment\npolicy fair\nalice 2\nbob 1 # trailing\nlab 3 alice,carol\n")
    os.chmod(path, 0o644)
    cfg = load_shares()
    assert cfg.policy == "fair" and cfg.shares == {"alice": 2, "bob": 1, "lab": 3}
    assert cfg.check_account("carol", "lab") == "lab" and cfg.check_account("bob", None) == "bob"
    assert cfg.accounts_of("alice") == ["alice", "lab"]
    with pytest.raises(AccountError, match="'bob' may not charge account 'lab'"):
        cfg.check_account("bob", "lab")
    for text, match in (
        ("alice two\n", "line 1.*not a positive number"),
        ("alice 1\nalice 2\n", "line 2.*listed twice"),
        ("policy best\n", "line 1.*policy NAME"),
        ("a 1 b c\n", "line 1.*account share"),
    ):
        path.write_text(text)
        with pytest.raises(SchedulerConfigError, match=match):
            load_shares()
    path.write_text("alice 1\n")
    os.chmod(path, 0o666)
    with pytest.raises(SchedulerConfigError, match="not trusted"):
        load_shares()
    monkeypatch.setenv("BIOACCEL_SHARES_FILE", str(tmp_path / "missing"))
    with pytest.raises(SchedulerConfigError, match="no such file"):
        load_shares()
