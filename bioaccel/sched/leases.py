"""Exclusive (or K-way shared) GPU leases across the processes and users of one server.

One arbiter per host: every user's jobs share one run directory, ``/tmp/bioaccel`` (sticky
and world-writable, like ``/tmp``; ``BIOACCEL_RUN_DIR`` names another one, e.g. a folder
of a group; inside a Slurm job a private ``$TMPDIR/bioaccel-<uid>/slurm-<job>``, since Slurm
renumbers each job's GPUs from 0). The files in it are made safely for many users
(:mod:`.rundir`): explicit modes, atomic, never following symlinks.

Every GPU has K slot lock files. A lease holds ``flock`` locks on its slots and on its own
record (``lease.<id>.json``: who, since when, what for): the kernel drops them when the
holder dies, even by SIGKILL, so a crashed job never leaves a GPU taken. Nobody can release
another's lease (a lock belongs to the process that took it).

Waiting requests are ``queue.<id>.json`` entries, each locked by its live waiter. Whenever a
waiter looks, it takes the arbiter lock, ranks every live waiting request with the
configured policy (fcfs, priority, fair, predicted: the shares file's ``policy`` line, else
``BIOACCEL_POLICY``), and hands free slots out in that order, first fit: a request that does
not fit lets smaller ones behind it go, unless it has waited longer than ``starve_after_s``
-- then nothing behind it starts until it has its GPUs. A waiter takes its slots only when
the plan gives them to it, so requests are served in policy order, not in the order they
happen to poll.

Whose request it is comes from the kernel (:mod:`.identity`): the real uid of the waiter,
the owner of the entry's file for everyone else. A record file that is malformed, a
symlink, too large or not a file is skipped with a warning.

K (``slots_per_gpu``) is fixed for a run directory by its first user; a request with
``slots=K`` has its GPUs to itself. ``mem_gb`` keeps the sum of the holders' budgets on a
GPU within its memory.

Leases nest: a process started by ``bioaccel gpu-run`` inherits its parent's lease
(``BIOACCEL_LEASED_GPUS``) and a ``lease()`` inside it returns at once with those GPUs.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import re
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import LeaseTimeoutError, SchedulerConfigError
from . import rundir
from ..devices._discover import Device, discover_devices
from .history import History
from .identity import current_user, load_shares, user_name
from .policies import Request, make_policy, parse_shares

ENV_HELD = "BIOACCEL_LEASED_GPUS"
#: The host-wide run directory (see the module docstring).
DEFAULT_RUN_DIR = Path("/tmp/bioaccel")
_ID = re.compile(r"^[0-9]+\.[0-9]{6}-[0-9]+-[0-9a-f]{8}$")

_QUEUE_FIELDS = {"priority": (int, float), "gpus": (int,), "slots": (int,),
                 "mem_gb": (int, float, type(None)), "submit_time": (int, float),
                 "predicted_s": (int, float, type(None)), "label": (str,),
                 "account": (str, type(None)), "pid": (int, type(None)),
                 "host": (str, type(None))}
_LEASE_FIELDS = {"since": (int, float), "label": (str,), "mem_gb": (int, float, type(None)),
                 "slots": (dict,), "account": (str, type(None)), "pid": (int, type(None)),
                 "host": (str, type(None))}


def run_dir(env=None) -> Path:
    """The run directory of this process's leases (see the module docstring), created if
    missing: sticky and world-writable when shared, private inside Slurm."""
    env = os.environ if env is None else env
    if env.get("BIOACCEL_RUN_DIR"):
        base = Path(env["BIOACCEL_RUN_DIR"])
        rundir.ensure_dir(base)
        return base
    if env.get("SLURM_JOB_ID"):
        private = Path(tempfile.gettempdir()) / f"bioaccel-{os.getuid()}"
        rundir.ensure_dir(private, rundir.PRIVATE_DIR_MODE)
        base = private / f"slurm-{env['SLURM_JOB_ID']}"
        rundir.ensure_dir(base, rundir.PRIVATE_DIR_MODE)
        return base
    rundir.ensure_dir(DEFAULT_RUN_DIR)
    return DEFAULT_RUN_DIR


def human_time(t: float) -> str:
    """A local time as ``2026-12-02 00:31:05``."""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t))


def human_duration(seconds: float) -> str:
    """``4.2 s``, ``3 min 05 s``, ``2 h 03 min``, ``3 d 04 h``."""
    s = max(0.0, float(seconds))
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(int(s), 60)
    if m < 60:
        return f"{m} min {sec:02d} s"
    h, m = divmod(m, 60)
    if h < 24:
        return f"{h} h {m:02d} min"
    d, h = divmod(h, 24)
    return f"{d} d {h:02d} h"


@dataclass
class Lease:
    """GPUs held by this process. ``visible`` is the ``CUDA_VISIBLE_DEVICES`` value."""

    devices: list[Device]
    slots: int
    request_id: str
    inherited: bool = False
    record: Path | None = None
    _fds: list[int] = field(default_factory=list, repr=False)
    _saved_env: str | None = field(default=None, repr=False)

    @property
    def visible(self) -> str:
        return ",".join(d.visible_id for d in self.devices)

    @property
    def lock_fds(self) -> list[int]:
        """The slot locks' (and the record's) descriptors: pass them to a child
        (``pass_fds``) and the GPUs stay held while either process lives."""
        return list(self._fds)

    def release(self) -> None:
        if self.record is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.record)
            self.record = None
        for fd in self._fds:
            with contextlib.suppress(OSError):
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
    """Grants leases on the devices of this process through the run directory.

    ``policy``/``shares`` given here win; else the shares file (:mod:`.identity`) decides,
    else -- only in a run directory of the caller's own -- ``BIOACCEL_POLICY`` and
    ``BIOACCEL_SHARES`` (in a shared one they would make this user's plan differ from the
    others', so they are ignored with a warning)."""

    def __init__(self, directory: str | Path | None = None, devices: list[Device] | None = None,
                 slots_per_gpu: int | None = None, policy: str | None = None,
                 shares: dict[str, float] | None = None, starve_after_s: float = 300.0,
                 poll_s: float = 0.05):
        if directory is None:
            self.dir = run_dir()
        else:
            self.dir = Path(directory)
            rundir.ensure_dir(self.dir)
        self.dir_uid = os.stat(self.dir).st_uid
        self.devices = discover_devices() if devices is None else devices
        self.config = load_shares(self.dir_uid)
        self.slots_per_gpu = self._fix_slots(slots_per_gpu)
        self.policy = make_policy(policy or self.config.policy or self._env("BIOACCEL_POLICY")
                                  or "fcfs",
                                  shares=shares if shares is not None else
                                  (self.config.shares if self.config.path else
                                   parse_shares(self._env("BIOACCEL_SHARES"))))
        self.starve_after_s = starve_after_s
        self.poll_s = poll_s
        self._history: History | None = None

    def _env(self, name: str) -> str | None:
        value = os.environ.get(name)
        if value and self.dir_uid != os.getuid():
            rundir.warn(f"{name}={value!r} is ignored: the run directory {str(self.dir)!r} is "
                        f"shared (owner {user_name(self.dir_uid)}); the shares file "
                        f"{self.config.path or '/etc/bioaccel/shares'} sets it for every user")
            return None
        return value

    @property
    def history(self) -> History:
        if self._history is None:
            self._history = History(self.dir, self.config)
        return self._history

    # -- run-directory layout -------------------------------------------------------------
    def _fix_slots(self, wanted: int | None) -> int:
        path = self.dir / "slots_per_gpu"
        if wanted is None and os.environ.get("BIOACCEL_SLOTS_PER_GPU"):
            wanted = int(os.environ["BIOACCEL_SLOTS_PER_GPU"])
        if wanted is not None and (int(wanted) != wanted or wanted < 1):
            raise SchedulerConfigError(f"slots_per_gpu must be a positive integer, got {wanted!r}")
        with contextlib.suppress(FileExistsError):
            rundir.publish(path, f"{int(wanted or 1)}\n".encode())
        fd = rundir.open_shared(path)
        try:
            st = os.fstat(fd)
            text = os.pread(fd, 64, 0).decode(errors="replace").strip()
        finally:
            os.close(fd)
        if not text.isdigit() or int(text) < 1:
            raise SchedulerConfigError(
                f"{rundir.describe(path, st)} holds {text!r}; expected the number of slots per "
                "GPU (an administrator should fix or remove it)")
        fixed = int(text)
        if wanted is not None and int(wanted) != fixed:
            raise SchedulerConfigError(
                f"run directory {str(self.dir)!r} shares each GPU {fixed} way(s); this "
                f"request asks for {wanted}. All jobs of a server must agree "
                "(or use another BIOACCEL_RUN_DIR)")
        return fixed

    def _slot_path(self, device: Device, slot: int) -> Path:
        token = "".join(c if c.isalnum() or c in "-_" else "_" for c in device.visible_id)
        kind = "vgpu" if device.virtual else "gpu"  # virtual GPUs never block real ones
        return self.dir / f"slot.{kind}-{token}.{slot}.lock"

    @contextlib.contextmanager
    def _arbiter(self):
        fd = rundir.open_shared(self.dir / "arbiter.lock")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def arbiter_busy(self, wait_s: float = 1.0) -> bool:
        """The arbiter lock stayed held for ``wait_s`` (a process may hold it forever)."""
        fd = rundir.open_shared(self.dir / "arbiter.lock")
        try:
            deadline = time.time() + wait_s
            while rundir.is_locked(fd):
                if time.time() >= deadline:
                    return True
                time.sleep(0.02)
            return False
        finally:
            os.close(fd)

    def _held_slots(self, device: Device) -> list[int]:
        held = []
        for s in range(self.slots_per_gpu):
            fd = rundir.open_shared(self._slot_path(device, s))
            try:
                if rundir.is_locked(fd):
                    held.append(s)
            finally:
                os.close(fd)
        return held

    # -- state ----------------------------------------------------------------------------
    def _records(self, prefix: str, fields: dict) -> list[tuple[str, dict, os.stat_result]]:
        """Live records ``<prefix>.<id>.json`` as (id, content, stat); a dead owner's are
        removed where allowed, and bad ones are skipped with a warning."""
        out = []
        for path in sorted(self.dir.glob(f"{prefix}.*.json")):
            rid = path.name[len(prefix) + 1:-len(".json")]
            opened = rundir.open_record(path)
            if opened is None:
                continue
            fd, st = opened
            try:
                if not rundir.is_locked(fd):  # its owner is gone
                    if rundir.may_remove(st):
                        with contextlib.suppress(OSError):
                            os.unlink(path)
                    continue
                if not _ID.match(rid):
                    rundir.warn(f"skipping {rundir.describe(path, st)}: {rid!r} is not a "
                                "request id")
                    continue
                info = rundir.read_record(fd, st, path, fields)
            finally:
                os.close(fd)
            if info is not None:
                out.append((rid, info, st))
        return out

    def _who(self, path_kind: str, rid: str, info: dict, st: os.stat_result) -> dict:
        user = user_name(st.st_uid)
        account, honoured = self.config.charged(user, info.get("account"))
        if not honoured:
            rundir.warn(f"{path_kind}.{rid}.json of {user} names account "
                        f"{info.get('account')!r}, which {user} may not charge: charged to "
                        f"{account}")
        return {"user": user, "uid": st.st_uid, "account": account}

    def leases(self) -> list[dict]:
        """Every live lease of every user: id, user, uid, account, pid, host, since, label,
        mem_gb, slots ({GPU token: [slot, ...]})."""
        out = []
        for rid, info, st in self._records("lease", _LEASE_FIELDS):
            slots = {str(k): [s for s in v if isinstance(s, int)] for k, v in info["slots"].items()
                     if isinstance(v, list)}
            out.append({"lease": rid, **self._who("lease", rid, info, st),
                        "pid": info.get("pid"), "host": info.get("host"),
                        "since": info["since"], "label": info["label"], "mem_gb": info["mem_gb"],
                        "slots": slots, "virtual": bool(info.get("virtual"))})
        return out

    def holders(self) -> dict[int, list[dict]]:
        """Per device index, its live holders (one entry per lease, with the slots it holds
        there); held slots that no live lease record claims appear as user ``?``."""
        leases = self.leases()
        out: dict[int, list[dict]] = {}
        for d in self.devices:
            held = self._held_slots(d)
            out[d.index] = []
            claimed: set[int] = set()
            for rec in leases:
                mine = [s for s in rec["slots"].get(d.visible_id, []) if s in held
                        and s not in claimed] if rec["virtual"] == d.virtual else []
                if mine:
                    claimed.update(mine)
                    out[d.index].append({**rec, "slots": mine})
            rest = [s for s in held if s not in claimed]
            if rest:
                out[d.index].append({"lease": None, "user": "?", "uid": None, "account": None,
                                     "pid": None, "host": None, "since": None,
                                     "label": "held without a lease record", "mem_gb": None,
                                     "slots": rest})
        return out

    def queue(self) -> list[Request]:
        """Live waiting requests of every user (the entries of dead waiters are removed by
        their owner); identity from the entry file's owner."""
        out = []
        for rid, info, st in self._records("queue", _QUEUE_FIELDS):
            if not (1 <= info["gpus"] <= max(1, len(self.devices))
                    and 1 <= info["slots"] <= self.slots_per_gpu):
                # it could never be served here: left in, it would block the queue once it
                # had waited starve_after_s
                rundir.warn(f"skipping queue.{rid}.json of {user_name(st.st_uid)}: "
                            f"{info['gpus']} GPU(s) x {info['slots']} slot(s) is impossible on "
                            f"{len(self.devices)} GPU(s) of {self.slots_per_gpu} slot(s)")
                continue
            who = self._who("queue", rid, info, st)
            # the file's change time is the kernel's: nobody queues earlier than it appeared
            submit = max(float(info["submit_time"]), st.st_ctime - 1.0)
            payload = {**info, **who, "id": rid, "submit_time": submit}
            out.append(Request(rid, who["account"], info["priority"], info["gpus"], submit,
                               info["predicted_s"], payload=payload))
        return out

    def _plan(self, ranked: list[Request], now: float) -> dict[str, list[int]]:
        free = {}
        mem = {}
        held_by = self.holders()
        for d in self.devices:
            taken = [s for h in held_by[d.index] for s in h["slots"]]
            free[d.index] = [s for s in range(self.slots_per_gpu) if s not in taken]
            mem[d.index] = sum(float(h["mem_gb"]) for h in held_by[d.index] if h["mem_gb"])
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
        """Wait for ``gpus`` GPU(s). ``user``: the fair-share account to charge (default:
        the real user's own; another one only if the shares file lists the user in it:
        :class:`~bioaccel.errors.AccountError` otherwise)."""
        slots = self.slots_per_gpu if slots is None else slots
        self._check(gpus, slots, mem_gb)
        account = self.config.check_account(current_user(), user)
        req_id = f"{time.time():.6f}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        entry = self.dir / f"queue.{req_id}.json"
        now = time.time()
        info = {"priority": priority, "gpus": gpus, "slots": slots, "mem_gb": mem_gb,
                "submit_time": now, "predicted_s": predicted_s, "pid": os.getpid(),
                "host": socket.gethostname(), "label": label, "account": account}
        qfd = rundir.publish(entry, json.dumps(info).encode(), lock=True, keep_fd=True)
        deadline = None if timeout is None else now + timeout
        try:
            while True:
                with self._arbiter():
                    t = time.time()
                    ranked = self.policy.order(self.queue(), t, self._usage(t))
                    plan = self._plan(ranked, t)
                    if req_id in plan:
                        return self._take(plan[req_id], slots, req_id, info)
                if deadline is not None and time.time() >= deadline:
                    raise LeaseTimeoutError(self._timeout_message(gpus, slots, timeout))
                time.sleep(self.poll_s * (0.5 + random.random()))
        finally:
            with contextlib.suppress(OSError):
                os.unlink(entry)
            os.close(qfd)

    def _usage(self, now: float) -> dict[str, float]:
        return self.history.usage(now) if self.policy.name == "fair" else {}

    def _take(self, indices: list[int], slots: int, req_id: str, info: dict) -> Lease:
        chosen = [d for d in self.devices if d.index in indices]
        fds: list[int] = []
        taken_slots: dict[str, list[int]] = {}
        try:
            for d in chosen:
                taken_slots[d.visible_id] = []
                for s in range(self.slots_per_gpu):
                    if len(taken_slots[d.visible_id]) == slots:
                        break
                    fd = rundir.open_shared(self._slot_path(d, s))
                    # a `bioaccel gpus` may be probing the lock this very moment
                    for _ in range(20):
                        if rundir.try_lock(fd):
                            fds.append(fd)
                            taken_slots[d.visible_id].append(s)
                            break
                        time.sleep(0.002)
                    else:
                        os.close(fd)
                if len(taken_slots[d.visible_id]) < slots:  # cannot happen under the arbiter
                    raise RuntimeError(f"GPU {d.index}: planned {slots} free slot(s), found "
                                       f"{len(taken_slots[d.visible_id])}")
            record = self.dir / f"lease.{req_id}.json"
            body = {"pid": info["pid"], "host": info["host"], "account": info["account"],
                    "mem_gb": info["mem_gb"], "since": time.time(), "label": info["label"],
                    "slots": taken_slots, "virtual": any(d.virtual for d in chosen)}
            fds.append(rundir.publish(record, json.dumps(body).encode(), lock=True, keep_fd=True))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        return Lease(chosen, slots, req_id, record=record, _fds=fds)

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
        now = time.time()
        held = {i: [f"{h['user']} pid {h.get('pid')} for "
                    f"{human_duration(now - h['since']) if h['since'] else '?'} "
                    f"({h.get('label') or 'no label'})" for h in hs]
                for i, hs in self.holders().items() if hs}
        return (f"no lease on {gpus} GPU(s) x {slots} slot(s) within {timeout} s; "
                f"holders: {held or 'none'}; waiting: {len(self.queue())} request(s)")


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
        What the queue policy ranks by; ``user`` is the fair-share account to charge (default:
        the real user's own; another only if the shares file lists the user in it).

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
