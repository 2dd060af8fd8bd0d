"""GPU leases across threads and processes: exclusivity, capacity, SIGKILL, policy order."""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bioaccel.errors import LeaseTimeoutError, SchedulerConfigError
from bioaccel.sched.devices import discover_devices
from bioaccel.sched.leases import GpuBroker, lease
from tests.datasets import child_env


@pytest.fixture
def gpus4(monkeypatch, tmp_path):
    for var in ("CUDA_VISIBLE_DEVICES", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "BIOACCEL_GPU_TOPOLOGY",
                "BIOACCEL_LEASED_GPUS", "BIOACCEL_POLICY", "BIOACCEL_SLOTS_PER_GPU"):
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


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 4), st.floats(0.0, 0.03)), min_size=2, max_size=10))
def test_exclusive_leases_never_share_a_gpu(gpus4, reqs):
    intervals = run_threads(gpus4, [(g, 1, h) for g, h in reqs])
    assert not overlapping([(s, e, g) for s, e, g, _ in intervals])
    for s, e, g, _ in intervals:
        assert len(g) in range(1, 5)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 2), st.integers(1, 3), st.floats(0.0, 0.03)),
                min_size=2, max_size=10))
def test_shared_slots_never_exceed_capacity(gpus4, reqs):
    intervals = run_threads(gpus4, reqs, slots_per_gpu=3)
    events = sorted([(s, +k) for s, _, g, k in intervals for _ in g] +
                    [(e, -k) for _, e, g, k in intervals for _ in g])
    for gpu in range(4):
        use = sorted([(s, k) for s, _, g, k in intervals if gpu in g] +
                     [(e, -k) for _, e, g, k in intervals if gpu in g], key=lambda x: (x[0], x[1]))
        level = 0
        for _, delta in use:
            level += delta
            assert level <= 3, f"GPU {gpu} over capacity"
    assert events


CHILD = r"""
import json, os, sys, time
from bioaccel.sched.leases import GpuBroker
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


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.integers(1, 3), st.floats(0.05, 0.4), st.booleans(),
                          st.floats(0.0, 0.3)), min_size=3, max_size=7))
@pytest.mark.slow
def test_sigkilled_holders_free_their_gpus_and_capacity_holds(gpus4, tmp_path, reqs):
    log = tmp_path / f"events-{time.monotonic_ns()}.jsonl"
    env = child_env()
    procs = [(subprocess.Popen([sys.executable, "-c", CHILD, str(g), str(log), str(h)], env=env),
              kill, delay) for g, h, kill, delay in reqs]
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
        with lease(gpus=1, timeout=1) as inner:
            assert inner.inherited and inner.devices[0].visible_id in held.visible.split(",")
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
    b = broker.acquire(1, slots=1, mem_gb=30, timeout=1)     # 50 + 30 <= 80
    a.release()
    b.release()


def test_gpu_run_binds_returns_exit_code_and_records_history(gpus4, tmp_path):
    out = tmp_path / "seen"
    script = f"import os; open({str(out)!r}, 'w').write(os.environ['CUDA_VISIBLE_DEVICES']); raise SystemExit(7)"
    proc = subprocess.run([sys.executable, "-m", "bioaccel.cli", "gpu-run", "--gpus", "2", "--kind",
                           "align", "--cells", "1e6", "--", sys.executable, "-c", script],
                          env={**child_env(), "BIOACCEL_VIRTUAL_GPUS": "4",
                               "BIOACCEL_RUN_DIR": str(gpus4)}, capture_output=True, text=True)
    assert proc.returncode == 7, proc.stderr
    assert len(out.read_text().split(",")) == 2
    from bioaccel.sched.history import History
    runs = History(gpus4).runs("align")
    assert len(runs) == 1 and runs[0].exit_code == 7 and runs[0].cells == 1e6 and runs[0].gpus == 2


def test_gpu_run_inside_gpu_run_uses_the_parent_lease(gpus4):
    inner = f"{sys.executable} -m bioaccel.cli gpu-run -- {sys.executable} -c " \
            "\"import os; print('inner', os.environ['CUDA_VISIBLE_DEVICES'])\""
    proc = subprocess.run([sys.executable, "-m", "bioaccel.cli", "gpu-run", "--gpus", "4",
                           "--timeout", "20", "--", "sh", "-c", inner],
                          env={**child_env(), "BIOACCEL_VIRTUAL_GPUS": "4",
                               "BIOACCEL_RUN_DIR": str(gpus4)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "inner 0,1,2,3" in proc.stdout  # no deadlock on its own parent's GPUs
