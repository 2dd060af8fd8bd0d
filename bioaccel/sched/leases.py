"""Exclusive (or K-way shared) GPU leases across the processes of one server.

Every GPU has K slot lock files in a run directory shared by the jobs of the server
(``BIOACCEL_RUN_DIR``; by default ``$TMPDIR/bioaccel-<uid>``, and a subdirectory per Slurm
job inside an allocation, since Slurm renumbers each job's GPUs from 0). A lease holds
``flock`` locks on its slots: the kernel drops them when the holder dies, even by SIGKILL,
so a crashed job never leaves a GPU taken.

Waiting requests sit in ``queue/`` (each entry locked by its live waiter). Whenever a
waiter looks, it takes the arbiter lock, ranks every live waiting request with the
configured policy (``BIOACCEL_POLICY``: fcfs, priority, fair, predicted), and hands free
slots out in that order, first fit: a request that does not fit lets smaller ones behind
it go, unless it has waited longer than ``starve_after_s`` -- then nothing behind it starts
until it has its GPUs. A waiter takes its slots only when the plan gives them to it, so
requests are served in policy order, not in the order they happen to poll.

K (``slots_per_gpu``) is fixed for a run directory by its first user; a request with
``slots=K`` has its GPUs to itself. ``mem_gb`` keeps the sum of the holders' budgets on a
GPU within its memory.

Leases nest: a process started by ``bioaccel gpu-run`` inherits its parent's lease
(``BIOACCEL_LEASED_GPUS``) and a ``lease()`` inside it returns at once with those GPUs.
"""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import json
import os
import random
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LeaseTimeoutError, SchedulerConfigError
from .devices import Device, discover_devices
from .history import History
from .policies import Request, make_policy, parse_shares

ENV_HELD = "BIOACCEL_LEASED_GPUS"


def run_dir(env=None) -> Path:
    """The run directory shared by the jobs of this server (see the module docstring)."""
    env = os.environ if env is None else env
    if env.get("BIOACCEL_RUN_DIR"):
        base = Path(env["BIOACCEL_RUN_DIR"])
    else:
        base = Path(tempfile.gettempdir()) / f"bioaccel-{os.getuid()}"
        if env.get("SLURM_JOB_ID"):
            base = base / f"slurm-{env['SLURM_JOB_ID']}"
    for sub in ("gpus", "queue"):
        (base / sub).mkdir(parents=True, exist_ok=True)
    return base


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o666)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False


def _is_free(path: Path) -> bool:
    """Nobody holds the lock on ``path`` (probed by taking and dropping it)."""
    fd = _open(path)
    try:
        if not _try_lock(fd):
            return False
        fcntl.flock(fd, fcntl.LOCK_UN)
        return True
    finally:
        os.close(fd)


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}


@dataclass
class Lease:
    """GPUs held by this process. ``visible`` is the ``CUDA_VISIBLE_DEVICES`` value."""

    devices: list[Device]
    slots: int
    request_id: str
    inherited: bool = False
    _fds: list[int] = field(default_factory=list, repr=False)
    _saved_env: str | None = field(default=None, repr=False)

    @property
    def visible(self) -> str:
        return ",".join(d.visible_id for d in self.devices)

    @property
    def lock_fds(self) -> list[int]:
        """The slot locks' descriptors: pass them to a child (``pass_fds``) and the GPUs stay
        held while either process lives."""
        return list(self._fds)

    def release(self) -> None:
        for fd in self._fds:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._fds.clear()

    def __enter__(self) -> Lease:
        self._saved_env = os.environ.get("CUDA_VISIBLE_DEVICES")
        os.environ["CUDA_VISIBLE_DEVICES"] = self.visible
        return self

    def __exit__(self, *exc) -> None:
        if self._saved_env is None:
            os.environ.pop("CUDA_VISIBLE_DEVICES", None)
        else:
            os.environ["CUDA_VISIBLE_DEVICES"] = self._saved_env
        if not self.inherited:
            self.release()


class GpuBroker:
    """Grants leases on the devices of this process through the run directory."""

    def __init__(self, directory: str | Path | None = None, devices: list[Device] | None = None,
                 slots_per_gpu: int | None = None, policy: str | None = None,
                 shares: dict[str, float] | None = None, starve_after_s: float = 300.0,
                 poll_s: float = 0.05):
        self.dir = Path(directory) if directory is not None else run_dir()
        for sub in ("gpus", "queue"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        self.devices = discover_devices() if devices is None else devices
        self.slots_per_gpu = self._fix_slots(slots_per_gpu)
        self.policy = make_policy(policy or os.environ.get("BIOACCEL_POLICY", "fcfs"),
                                  shares=shares if shares is not None
                                  else parse_shares(os.environ.get("BIOACCEL_SHARES")))
        self.starve_after_s = starve_after_s
        self.poll_s = poll_s
        self._history: History | None = None

    @property
    def history(self) -> History:
        if self._history is None:
            self._history = History(self.dir / "history.sqlite")
        return self._history

    # -- run-directory layout -------------------------------------------------------------
    def _fix_slots(self, wanted: int | None) -> int:
        path = self.dir / "slots_per_gpu"
        if wanted is None and os.environ.get("BIOACCEL_SLOTS_PER_GPU"):
            wanted = int(os.environ["BIOACCEL_SLOTS_PER_GPU"])
        if wanted is not None and (int(wanted) != wanted or wanted < 1):
            raise SchedulerConfigError(f"slots_per_gpu must be a positive integer, got {wanted!r}")
        with self._arbiter():
            if path.exists():
                fixed = int(path.read_text().strip())
                if wanted is not None and int(wanted) != fixed:
                    raise SchedulerConfigError(
                        f"run directory {str(self.dir)!r} shares each GPU {fixed} way(s); this "
                        f"request asks for {wanted}. All jobs of a server must agree "
                        "(or use another BIOACCEL_RUN_DIR)")
                return fixed
            fixed = int(wanted or 1)
            path.write_text(f"{fixed}\n")
            return fixed

    def _slot_path(self, device: Device, slot: int) -> Path:
        token = "".join(c if c.isalnum() or c in "-_" else "_" for c in device.visible_id)
        return self.dir / "gpus" / f"gpu-{token}.slot-{slot}.lock"

    @contextlib.contextmanager
    def _arbiter(self):
        fd = _open(self.dir / "arbiter.lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    # -- state ----------------------------------------------------------------------------
    def holders(self) -> dict[int, list[dict]]:
        """Per device index, the live holders' records (one per held slot)."""
        out: dict[int, list[dict]] = {}
        for d in self.devices:
            out[d.index] = []
            for s in range(self.slots_per_gpu):
                path = self._slot_path(d, s)
                if not _is_free(path):
                    out[d.index].append({"slot": s, **_read_json(path)})
        return out

    def queue(self) -> list[Request]:
        """Live waiting requests; entries of dead waiters are removed (call under the arbiter)."""
        out = []
        for path in sorted((self.dir / "queue").glob("*.json")):
            fd = _open(path)
            try:
                if _try_lock(fd):  # nobody waits on it any more
                    path.unlink(missing_ok=True)
                    continue
            finally:
                os.close(fd)
            info = _read_json(path)
            if info:
                out.append(Request(info["id"], info.get("user", "default"), info.get("priority", 0),
                                   info.get("gpus", 1), info.get("submit_time", 0.0),
                                   info.get("predicted_s"), payload=info))
        return out

    def _plan(self, ranked: list[Request], now: float) -> dict[str, list[int]]:
        free = {}
        mem = {}
        for d in self.devices:
            held = [s for s in range(self.slots_per_gpu) if not _is_free(self._slot_path(d, s))]
            free[d.index] = [s for s in range(self.slots_per_gpu) if s not in held]
            budgets = {}
            for s in held:
                info = _read_json(self._slot_path(d, s))
                if info.get("mem_gb"):
                    budgets[info.get("lease")] = float(info["mem_gb"])
            mem[d.index] = sum(budgets.values())
        plan: dict[str, list[int]] = {}
        for req in ranked:
            info = req.payload or {}
            slots, mem_gb = info.get("slots", self.slots_per_gpu), info.get("mem_gb")
            fits = [d for d in self.devices if len(free[d.index]) >= slots and
                    (mem_gb is None or mem[d.index] + mem_gb <= d.memory_gb + 1e-9)]
            if len(fits) >= req.gpus:
                pick = sorted(fits, key=lambda d: (len(free[d.index]), d.index))[:req.gpus]
                plan[req.id] = [d.index for d in pick]
                for d in pick:
                    free[d.index] = free[d.index][slots:]
                    mem[d.index] += mem_gb or 0.0
            elif now - req.submit_time > self.starve_after_s:
                break  # it has waited long enough: nothing behind it may take its GPUs
        return plan

    # -- acquiring ------------------------------------------------------------------------
    def acquire(self, gpus: int = 1, slots: int | None = None, mem_gb: float | None = None,
                timeout: float | None = None, priority: float = 0, user: str | None = None,
                predicted_s: float | None = None, label: str = "") -> Lease:
        slots = self.slots_per_gpu if slots is None else slots
        self._check(gpus, slots, mem_gb)
        req_id = f"{time.time():.6f}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        user = user or _user()
        entry = self.dir / "queue" / f"{req_id}.json"
        now = time.time()
        info = {"id": req_id, "user": user, "priority": priority, "gpus": gpus, "slots": slots,
                "mem_gb": mem_gb, "submit_time": now, "predicted_s": predicted_s,
                "pid": os.getpid(), "host": socket.gethostname(), "label": label}
        with self._arbiter():
            qfd = _open(entry)
            fcntl.flock(qfd, fcntl.LOCK_EX)
            os.write(qfd, json.dumps(info).encode())
        deadline = None if timeout is None else now + timeout
        try:
            while True:
                with self._arbiter():
                    t = time.time()
                    ranked = self.policy.order(self.queue(), t, self._usage(t))
                    plan = self._plan(ranked, t)
                    if req_id in plan:
                        lease = self._take(plan[req_id], slots, req_id, info)
                        entry.unlink(missing_ok=True)
                        return lease
                if deadline is not None and time.time() >= deadline:
                    raise LeaseTimeoutError(self._timeout_message(gpus, slots, timeout))
                time.sleep(self.poll_s * (0.5 + random.random()))
        finally:
            entry.unlink(missing_ok=True)
            os.close(qfd)

    def _usage(self, now: float) -> dict[str, float]:
        return self.history.usage(now) if self.policy.name == "fair" else {}

    def _take(self, indices: list[int], slots: int, req_id: str, info: dict) -> Lease:
        chosen = [d for d in self.devices if d.index in indices]
        fds = []
        record = json.dumps({"lease": req_id, "pid": info["pid"], "user": info["user"],
                             "mem_gb": info["mem_gb"], "since": time.time(),
                             "label": info["label"]}).encode()
        try:
            for d in chosen:
                taken = 0
                for s in range(self.slots_per_gpu):
                    if taken == slots:
                        break
                    fd = _open(self._slot_path(d, s))
                    if _try_lock(fd):
                        os.ftruncate(fd, 0)
                        os.pwrite(fd, record, 0)
                        fds.append(fd)
                        taken += 1
                    else:
                        os.close(fd)
                if taken < slots:  # cannot happen under the arbiter; never hand out less
                    raise RuntimeError(f"GPU {d.index}: planned {slots} free slot(s), found {taken}")
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return Lease(chosen, slots, req_id, _fds=fds)

    def _check(self, gpus, slots, mem_gb) -> None:
        if isinstance(gpus, bool) or int(gpus) != gpus or gpus < 1:
            raise ValueError(f"gpus must be a positive integer, got {gpus!r}")
        if not self.devices:
            raise SchedulerConfigError("no GPU is visible to lease (set BIOACCEL_VIRTUAL_GPUS=N "
                                       "for virtual GPUs)")
        if gpus > len(self.devices):
            raise ValueError(f"gpus={gpus} but only {len(self.devices)} GPU(s) are visible: "
                             f"{[str(d) for d in self.devices]}")
        if isinstance(slots, bool) or int(slots) != slots or not 1 <= slots <= self.slots_per_gpu:
            raise ValueError(f"slots={slots!r}: expected 1..{self.slots_per_gpu} "
                             f"(this run directory shares each GPU {self.slots_per_gpu} way(s))")
        if mem_gb is not None:
            small = [d for d in self.devices if mem_gb > d.memory_gb]
            if not mem_gb > 0 or len(small) > len(self.devices) - gpus:
                raise ValueError(f"mem_gb={mem_gb!r}: expected > 0 and at most the memory of "
                                 f"{gpus} GPU(s) ({sorted(d.memory_gb for d in self.devices)} GB)")

    def _timeout_message(self, gpus, slots, timeout) -> str:
        held = {i: [f"pid {h.get('pid')} ({h.get('user')}, {h.get('label') or 'no label'})"
                    for h in hs] for i, hs in self.holders().items() if hs}
        return (f"no lease on {gpus} GPU(s) x {slots} slot(s) within {timeout} s; "
                f"holders: {held or 'none'}; waiting: {len(self.queue())} request(s)")


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry in some containers
        return str(os.getuid())


@contextlib.contextmanager
def lease(gpus: int = 1, slots: int | None = None, mem_gb: float | None = None,
          timeout: float | None = None, *, priority: float = 0, user: str | None = None,
          predicted_s: float | None = None, label: str = "", broker: GpuBroker | None = None):
    """Hold ``gpus`` GPU(s) for the ``with`` block; sets ``CUDA_VISIBLE_DEVICES``.

    Parameters
    ----------
    gpus : int
    slots : int, optional
        Slots per GPU (of the run directory's K; default all K, i.e. exclusive).
    mem_gb : float, optional
        Memory budget per GPU; holders' budgets on a GPU never exceed its memory.
    timeout : float, optional
        Seconds to wait; :class:`~bioaccel.errors.LeaseTimeoutError` after that.
    priority, user, predicted_s
        What the queue policy ranks by.

    Examples
    --------
    >>> import os, tempfile
    >>> os.environ["BIOACCEL_RUN_DIR"] = tempfile.mkdtemp()
    >>> os.environ["BIOACCEL_VIRTUAL_GPUS"] = "2"
    >>> with lease(gpus=1) as held:
    ...     os.environ["CUDA_VISIBLE_DEVICES"] == held.visible
    True
    >>> for k in ("BIOACCEL_RUN_DIR", "BIOACCEL_VIRTUAL_GPUS"): del os.environ[k]
    """
    inherited = os.environ.get(ENV_HELD)
    if inherited is not None and broker is None:
        devices = discover_devices()
        held = Lease(devices[:gpus] if len(devices) >= gpus else devices, slots or 1,
                     "inherited", inherited=True)
        if len(devices) < gpus:
            raise ValueError(f"this process inherited a lease on {len(devices)} GPU(s) "
                             f"({inherited}); it cannot lease {gpus}")
        with held:
            yield held
        return
    broker = broker or GpuBroker()
    held = broker.acquire(gpus, slots, mem_gb, timeout, priority, user, predicted_s, label)
    with held:
        yield held
