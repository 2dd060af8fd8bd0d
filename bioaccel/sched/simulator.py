"""Discrete-event simulation of GPU jobs under a queue policy and a placement.

Events are job arrivals and completions. After each instant's events, the waiting jobs are
ranked by the policy (:mod:`bioaccel.sched.policies`) and started first-fit in that order
(a job that does not fit lets smaller ones behind it start: backfilling without
reservations, the same for every policy).

Which free GPUs a job gets (``placement``):

- ``first-free`` (default): the lowest-numbered free GPUs, blind to speed and data;
- ``locality``: the free GPUs on which the job finishes first (speed, then data transfer);
- an optimizer of :mod:`bioaccel.sched.placement` (``greedy``, ``lpt``, ``local``, ``ga``,
  ``aco``, ``pso``): the single-GPU jobs of the batch are placed offline on the predicted
  times, then each GPU serves its own jobs in policy order; a job of several GPUs takes the
  lowest-numbered free GPUs when its turn comes (as with ``first-free``), so every
  workload runs with every placement.

A job of ``num_gpu`` GPUs runs for ``duration / min(speed of its GPUs)`` plus the time to
move its input from where it sits (``bytes``, ``data``) to the slowest-linked of them.
Fair-share usage is the exponentially decayed GPU-seconds each user has received.

Metrics: makespan, average and 95th-percentile job completion time (end - submit), average
wait (start - submit), GPU utilization (busy GPU-seconds / (GPUs x makespan)), Jain's
fairness index over users of their mean *service ratio* (run time / completion time, 1 =
never waited), and the bytes moved.
"""

from __future__ import annotations

import csv
import heapq
import math
import numbers
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..devices import Topology
from ..errors import SchedulerConfigError
from .placement import ALGORITHMS, check_budget, place
from .policies import Policy, Request, decay, make_policy

PLACEMENTS = ("first-free", "locality") + ALGORITHMS


@dataclass(frozen=True)
class Job:
    id: str
    num_gpu: int
    submit_time: float
    duration: float  # seconds on speed-1.0 GPUs
    user: str = "default"
    priority: float = 0.0
    predicted_s: float | None = None
    bytes: float = 0.0
    data: str | None = None


@dataclass
class JobRecord:
    job: Job
    start: float
    end: float
    gpus: tuple[int, ...]
    moved_bytes: float

    @property
    def jct(self) -> float:
        return self.end - self.job.submit_time

    @property
    def wait(self) -> float:
        return self.start - self.job.submit_time


@dataclass
class SimResult:
    policy: str
    placement: str
    records: list[JobRecord] = field(default_factory=list)
    n_gpus: int = 1

    @property
    def makespan(self) -> float:
        return max(r.end for r in self.records) - min(r.job.submit_time for r in self.records)

    @property
    def avg_jct(self) -> float:
        return float(np.mean([r.jct for r in self.records]))

    @property
    def p95_jct(self) -> float:
        return float(np.percentile([r.jct for r in self.records], 95))

    @property
    def avg_wait(self) -> float:
        return float(np.mean([r.wait for r in self.records]))

    @property
    def utilization(self) -> float:
        busy = sum((r.end - r.start) * len(r.gpus) for r in self.records)
        return busy / (self.n_gpus * self.makespan) if self.makespan > 0 else 0.0

    @property
    def jain(self) -> float:
        per_user: dict[str, list[float]] = {}
        for r in self.records:
            per_user.setdefault(r.job.user, []).append(
                (r.end - r.start) / r.jct if r.jct > 0 else 1.0
            )
        x = np.array([np.mean(v) for v in per_user.values()])
        return float(x.sum() ** 2 / (len(x) * (x**2).sum())) if len(x) else 1.0

    @property
    def bytes_moved(self) -> float:
        return float(sum(r.moved_bytes for r in self.records))

    def metrics(self) -> dict[str, float]:
        return {
            "makespan_s": self.makespan,
            "avg_jct_s": self.avg_jct,
            "p95_jct_s": self.p95_jct,
            "avg_wait_s": self.avg_wait,
            "utilization": self.utilization,
            "jain": self.jain,
            "bytes_moved": self.bytes_moved,
        }


def check_job(j: Job, where: str = "") -> None:
    """A whole number of GPUs >= 1; finite times, sizes and priority (an Inf duration would
    make every metric Inf, and JSON has no Inf): :class:`SchedulerConfigError` naming the
    job and the field."""
    name = f"{where}job {j.id!r}"
    if (
        isinstance(j.num_gpu, bool)
        or not isinstance(j.num_gpu, numbers.Real)
        or not math.isfinite(j.num_gpu)
        or j.num_gpu != int(j.num_gpu)
        or j.num_gpu < 1
    ):
        raise SchedulerConfigError(
            f"{name}: num_gpu = {j.num_gpu!r}; expected a whole number of GPUs >= 1"
        )
    for field_, value, lo in (
        ("submit_time", j.submit_time, 0.0),
        ("duration", j.duration, 0.0),
        ("bytes", j.bytes, 0.0),
        ("priority", j.priority, -math.inf),
        ("predicted_s", j.predicted_s, 0.0),
    ):
        if value is None and field_ == "predicted_s":
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, numbers.Real)
            or not math.isfinite(value)
            or value < lo
        ):
            need = "a finite number" + (" >= 0" if lo == 0 else "")
            raise SchedulerConfigError(f"{name}: {field_} = {value!r}; expected {need}")


def _run_time(job: Job, gpus: list[int], topo: Topology) -> tuple[float, float]:
    specs = [topo.gpus[g] for g in gpus]
    src = topo.location_of(job.data)
    transfer = max(topo.transfer_s(job.bytes, src, g) for g in specs)
    moved = job.bytes if transfer > 0 else 0.0
    return job.duration / min(g.speed for g in specs) + transfer, moved


def simulate(
    jobs: list[Job],
    cluster: Topology,
    policy: str | Policy = "fcfs",
    placement: str = "first-free",
    *,
    half_life_s: float = 3600.0,
    placement_budget_s: float = 1.0,
    seed: int = 0,
) -> SimResult:
    """Run the jobs to completion; see the module docstring.

    Examples
    --------
    Two GPUs, three 10-second jobs at t=0: two run at once, the third after them.

    >>> jobs = [Job(str(k), 1, 0.0, 10.0) for k in range(3)]
    >>> r = simulate(jobs, Topology.identical(2))
    >>> r.makespan, round(r.avg_jct, 3), round(r.utilization, 3)
    (20.0, 13.333, 0.75)
    """
    pol = make_policy(policy) if isinstance(policy, str) else policy
    key = str(placement).lower()
    if key not in PLACEMENTS:
        raise SchedulerConfigError(
            f"unknown placement {placement!r}; expected one of {list(PLACEMENTS)}"
        )
    m = len(cluster.gpus)
    ids = [j.id for j in jobs]
    if len(set(ids)) != len(ids):
        dup = sorted({i for i in ids if ids.count(i) > 1})[:5]
        raise SchedulerConfigError(f"job ids must be unique; repeated: {dup}")
    placement_budget_s = check_budget(placement_budget_s, "placement_budget_s (--budget)")
    for j in jobs:
        check_job(j)
    jobs = [j if type(j.num_gpu) is int else replace(j, num_gpu=int(j.num_gpu)) for j in jobs]
    for j in jobs:
        if not 1 <= j.num_gpu <= m:
            raise SchedulerConfigError(
                f"job {j.id!r} asks for {j.num_gpu} GPU(s); the cluster has {m}"
            )
    owner = None
    if key in ALGORITHMS:
        single = [j for j in jobs if j.num_gpu == 1]  # jobs of several GPUs: first free
        p = np.array(
            [
                [
                    (j.predicted_s if j.predicted_s is not None else j.duration) / g.speed
                    + cluster.transfer_s(j.bytes, cluster.location_of(j.data), g)
                    for j in single
                ]
                for g in cluster.gpus
            ]
        )
        owner = {
            j.id: int(i)
            for j, i in zip(
                single, place(p, key, time_budget_s=placement_budget_s, seed=seed).assignment
            )
        }
    events: list[tuple[float, int, int, object]] = []  # (time, kind 0=end 1=arrival, seq, data)
    seq = 0
    for j in sorted(jobs, key=lambda j: j.submit_time):
        heapq.heappush(events, (j.submit_time, 1, seq, j))
        seq += 1
    free = set(range(m))
    waiting: dict[str, Request] = {}  # made once per job: rebuilding them at every event
    # was most of a 3,000-job run
    usage: dict[str, float] = {}
    usage_t = 0.0
    result = SimResult(pol.name, key, n_gpus=m)
    running_users: dict[str, int] = {}
    while events:
        now = events[0][0]
        # decayed usage, charged for what ran since the last event (before this instant's
        # completions take their jobs out of the running set)
        dt = now - usage_t
        usage = {u: decay(v, dt, half_life_s) for u, v in usage.items()}
        for u, g in running_users.items():
            if g:
                usage[u] = usage.get(u, 0.0) + g * dt
        usage_t = now
        while events and events[0][0] == now:
            _, kind, _, data = heapq.heappop(events)
            if kind == 1:
                waiting[data.id] = Request(
                    data.id,
                    data.user,
                    data.priority,
                    data.num_gpu,
                    data.submit_time,
                    data.predicted_s,
                    data,
                )
            else:
                rec: JobRecord = data
                free.update(rec.gpus)
                running_users[rec.job.user] -= len(rec.gpus)
        if not waiting or not free:
            continue
        for r in pol.order(list(waiting.values()), now, usage):
            job: Job = r.payload
            if owner is not None and job.id in owner:
                if owner[job.id] not in free:
                    continue
                gpus = [owner[job.id]]
            else:
                if job.num_gpu > len(free):
                    continue
                cands = sorted(free)
                if key == "locality":
                    cands.sort(key=lambda g: _run_time(job, [g], cluster)[0])
                gpus = cands[: job.num_gpu]
            run, moved = _run_time(job, gpus, cluster)
            rec = JobRecord(job, now, now + run, tuple(gpus), moved)
            result.records.append(rec)
            free.difference_update(gpus)
            running_users[job.user] = running_users.get(job.user, 0) + len(gpus)
            del waiting[job.id]
            heapq.heappush(events, (rec.end, 0, seq, rec))
            seq += 1
            if not free:
                break
    return result


# -- workloads ---------------------------------------------------------------------------------
TRACE_COLUMNS = ("job_id", "num_gpu", "submit_time", "duration")


def read_trace(path: str | Path) -> list[Job]:
    """A trace CSV ``job_id,num_gpu,submit_time,duration`` (Tiresias-style simulators);
    optional columns ``user``, ``priority``, ``predicted_s``, ``bytes``, ``data``."""
    path = Path(path)
    try:
        f = open(path, newline="")
    except OSError as exc:
        raise SchedulerConfigError(f"cannot read trace {str(path)!r}: {exc.strerror}") from None
    with f:
        reader = csv.DictReader(f)
        missing = [c for c in TRACE_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise SchedulerConfigError(
                f"{path}: missing column(s) {missing}; expected at least {','.join(TRACE_COLUMNS)}"
            )
        jobs, seen = [], set()
        for line, row in enumerate(reader, start=2):

            def num(col, default=None, row=row, line=line):
                raw = row.get(col)
                if raw in (None, ""):
                    if default is None:
                        raise SchedulerConfigError(f"{path}: line {line}: {col} is empty")
                    return default
                try:
                    return float(raw)
                except ValueError:
                    raise SchedulerConfigError(
                        f"{path}: line {line}: {col} = {raw!r} is not a number"
                    ) from None

            gpus = num("num_gpu")
            job = Job(
                row["job_id"],
                int(gpus) if math.isfinite(gpus) and gpus == int(gpus) else gpus,
                num("submit_time"),
                num("duration"),
                row.get("user") or "default",
                num("priority", 0.0),
                num("predicted_s", -1.0),
                num("bytes", 0.0),
                row.get("data") or None,
            )
            if job.predicted_s == -1.0:
                job = replace(job, predicted_s=None)
            check_job(job, f"{path}: line {line}: ")
            if job.id in seen:
                raise SchedulerConfigError(f"{path}: line {line}: job_id {job.id!r} repeated")
            seen.add(job.id)
            jobs.append(job)
    if not jobs:
        raise SchedulerConfigError(f"{path}: the trace has no jobs")
    return jobs


def write_trace(jobs: list[Job], path: str | Path) -> None:
    from .._core import atomic_output

    with atomic_output(path, "w") as f:
        w = csv.writer(f)
        w.writerow(TRACE_COLUMNS + ("user", "priority", "predicted_s", "bytes", "data"))
        for j in jobs:
            w.writerow(
                [
                    j.id,
                    j.num_gpu,
                    j.submit_time,
                    j.duration,
                    j.user,
                    j.priority,
                    "" if j.predicted_s is None else j.predicted_s,
                    j.bytes,
                    j.data or "",
                ]
            )


def heavy_tailed_workload(
    n: int = 200,
    *,
    users: int = 4,
    seed: int = 0,
    alpha: float = 1.5,
    min_s: float = 10.0,
    arrival_s: float = 2.0,
    gpus=(1, 1, 1, 2),
    prediction_error: float = 0.3,
) -> list[Job]:
    """Pareto durations (shape ``alpha``), Poisson arrivals, predictions off by a lognormal
    factor (sigma ``prediction_error``)."""
    rng = np.random.default_rng(seed)
    dur = min_s * (1 + rng.pareto(alpha, n))
    t = np.cumsum(rng.exponential(arrival_s, n))
    pred = dur * rng.lognormal(0.0, prediction_error, n)
    return [
        Job(
            f"j{k}",
            int(rng.choice(gpus)),
            float(t[k]),
            float(dur[k]),
            f"user{k % users}",
            predicted_s=float(pred[k]),
        )
        for k in range(n)
    ]


def flood_workload(
    *,
    flood_jobs: int = 60,
    other_users: int = 3,
    jobs_each: int = 5,
    seed: int = 0,
    duration_s: float = 30.0,
) -> list[Job]:
    """One user submits ``flood_jobs`` at t=0; the others submit a few jobs just after."""
    rng = np.random.default_rng(seed)
    jobs = [
        Job(f"flood{k}", 1, 0.0, float(duration_s * rng.uniform(0.5, 1.5)), "flooder")
        for k in range(flood_jobs)
    ]
    for u in range(other_users):
        jobs += [
            Job(
                f"u{u}-{k}",
                1,
                float(1.0 + u + k),
                float(duration_s * rng.uniform(0.5, 1.5)),
                f"user{u}",
            )
            for k in range(jobs_each)
        ]
    return jobs


def workload_from_sequences(
    paths: list[str | Path],
    *,
    cells_per_s: float = 5e9,
    users: list[str] | None = None,
    arrival_s: float = 0.0,
    kind: str = "align",
    data: dict[str, str] | None = None,
) -> list[Job]:
    """One all-vs-all job per sequence file: cost = sum over pairs of len_i * len_j,
    duration = cost / ``cells_per_s`` (a GPU's measured throughput), input bytes = the
    file's size; ``data`` maps a file's stem to where it sits (a node or node:gpu)."""
    from ..sequences import read_sequences

    jobs = []
    for k, path in enumerate(paths):
        batch = read_sequences(path)
        lengths = batch.lengths.astype(np.float64)
        cells = (lengths.sum() ** 2 - (lengths**2).sum()) / 2
        jobs.append(
            Job(
                f"{kind}:{Path(path).stem}:{k}",
                1,
                k * arrival_s,
                cells / cells_per_s,
                (users or ["default"])[k % len(users or ["default"])],
                predicted_s=cells / cells_per_s,
                bytes=float(Path(path).stat().st_size),
                data=(data or {}).get(Path(path).stem),
            )
        )
    return jobs
