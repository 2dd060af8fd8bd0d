"""Exclusive (or K-way shared) GPU leases across the processes and users of one server.

One arbiter per host: every user's jobs share one run directory, ``/tmp/bioaccel``, made by
the administrator (``bioaccel admin init``: root's, sticky and world-writable, like
``/tmp``; ``BIOACCEL_RUN_DIR`` names another one, e.g. a folder of a group, or a private
folder of one's own; inside a Slurm job a private ``$TMPDIR/bioaccel-<uid>/slurm-<job>``,
since Slurm binds and renumbers each job's GPUs). Its ``config.json`` (root's) fixes the
host's GPUs, the slots per GPU, the shares file and the waiting limit per user, so every
user plans alike. The README's administrators' section states the threat model.

Every GPU has K slot lock files (root's, read-only for all). A lease holds ``flock`` locks
on its slots and on its own record (``lease.<id>.json``: who, since when, what for): the
kernel drops them when the last process holding them dies, even by SIGKILL, so a crashed
job never leaves a GPU taken; nobody can release another's lease. Who holds a slot is read
from the kernel (:mod:`.procs`, ``/proc/locks``), never from a record: a record claiming
slots its own locker does not hold is ignored.

Waiting requests are ``queue.<id>.json`` entries, each locked by its live waiter, which
renews it (its change time, which only the kernel sets) on every pass: an entry not renewed
for ``lapse_s`` (a stopped or hung waiter) is passed over until it is renewed again. Each user
has at most ``max_waiting`` live entries; an entry's age is never older than its waiter
process. Whenever a waiter looks, it takes the arbiter lock, ranks every live waiting request
with the configured policy (fcfs, priority, fair, predicted: the shares file's ``policy``
line, else ``BIOACCEL_POLICY`` in a private folder), and hands free slots out in that order,
first fit, each request only on the GPUs it may use (its ``CUDA_VISIBLE_DEVICES``): a request
that does not fit lets smaller ones behind it go, unless it has waited longer than
``starve_after_s`` -- then nothing behind it starts until it has its GPUs. A waiter takes its
slots only when the plan gives them to it, so requests are served in policy order.

Whose request it is comes from the kernel (:mod:`.identity`): the real uid of the waiter,
the owner of the entry's file for everyone else. A record file that is malformed, a
symlink, too large or not a file is skipped with a warning.

Leases nest: a process started by ``bioaccel gpu-run`` inherits its parent's lease
(``BIOACCEL_LEASE``, ``BIOACCEL_LEASED_GPUS``) and a ``lease()`` inside it returns at once
with those GPUs -- only when the arbiter verifies that the process is inside that live
lease (it holds the lease's lock descriptor, or descends from its holder).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import socket
import stat
import time
import uuid
from pathlib import Path

from ..devices import Device, discover_devices
from ..errors import LeaseTimeoutError, QueueLimitError, SchedulerConfigError
from . import client, procs, rundir, snapshot
from .admin import DEFAULT_MAX_WAITING, MAX_SLOTS, host_shares, init_run_dir, read_config, run_dir
from .display import human_duration, token_of
from .held import _ID, ENV_HELD, Lease, inherited_lease
from .history import History
from .identity import SHARES_FILE, current_user, user_name
from .policies import Request, make_policy, parse_shares
from .service import find_socket

_QUEUE_FIELDS = {
    "priority": (int, float),
    "gpus": (int,),
    "slots": (int,),
    "mem_gb": (int, float, type(None)),
    "submit_time": (int, float),
    "predicted_s": (int, float, type(None)),
    "label": (str,),
    "account": (str, type(None)),
    "pid": (int, type(None)),
    "host": (str, type(None)),
    "devices": (list, type(None)),
}
_LEASE_FIELDS = {
    "since": (int, float),
    "label": (str,),
    "mem_gb": (int, float, type(None)),
    "slots": (dict,),
    "account": (str, type(None)),
    "pid": (int, type(None)),
    "host": (str, type(None)),
}


class GpuBroker:
    """Grants leases on the devices of this process through the run directory.

    ``policy``/``shares`` given here win; else the shares file (:mod:`.identity`) decides,
    else -- only in a run directory of the caller's own -- ``BIOACCEL_POLICY`` and
    ``BIOACCEL_SHARES`` (in a shared one they would make this user's plan differ from the
    others', so they are ignored with a warning)."""

    def __init__(
        self,
        directory: str | Path | None = None,
        devices: list[Device] | None = None,
        slots_per_gpu: int | None = None,
        policy: str | None = None,
        shares: dict[str, float] | None = None,
        starve_after_s: float = 300.0,
        poll_s: float = 0.05,
        lapse_s: float = 5.0,
    ):
        if directory is None:
            self.dir = run_dir()
        else:
            self.dir = Path(directory)
            rundir.ensure_dir(self.dir, rundir.PRIVATE_DIR_MODE)
        st = os.stat(self.dir)
        self.dir_uid = st.st_uid
        self.shared = rundir.is_shared(st)
        self.owners = rundir.trusted_owners(st)
        self.may_init = os.getuid() == 0 or (not self.shared and st.st_uid == os.getuid())
        self.devices = discover_devices() if devices is None else devices
        self.host = self._host_config(slots_per_gpu)
        self.slots_per_gpu = self.host["slots_per_gpu"]
        self.max_waiting = self.host.get("max_waiting", DEFAULT_MAX_WAITING)
        self.config = self._shares()
        self.policy = make_policy(
            policy or self.config.policy or self._env("BIOACCEL_POLICY") or "fcfs",
            shares=shares
            if shares is not None
            else (
                self.config.shares
                if self.config.path
                else parse_shares(self._env("BIOACCEL_SHARES"))
            ),
        )
        self.starve_after_s = starve_after_s
        self.poll_s = poll_s
        self.lapse_s = lapse_s
        self.arbiter_wait_s = 1.0
        self._arbiter_stuck = False
        self._history: History | None = None

    def _host_config(self, wanted: int | None) -> dict:
        if wanted is None and os.environ.get("BIOACCEL_SLOTS_PER_GPU"):
            try:
                wanted = int(os.environ["BIOACCEL_SLOTS_PER_GPU"])
            except ValueError:
                raise SchedulerConfigError(
                    f"BIOACCEL_SLOTS_PER_GPU={os.environ['BIOACCEL_SLOTS_PER_GPU']!r}: expected "
                    "a whole number"
                ) from None
        if wanted is not None and (
            isinstance(wanted, bool) or int(wanted) != wanted or not 1 <= wanted <= MAX_SLOTS
        ):
            raise SchedulerConfigError(
                f"slots_per_gpu must be a whole number 1..{MAX_SLOTS}, got {wanted!r}"
            )
        config = read_config(self.dir, self.owners)
        tokens = [token_of(d) for d in self.devices]
        missing = [
            t for t in tokens if config is None or t not in {d["token"] for d in config["devices"]}
        ]
        if config is None or missing:
            if not self.may_init:
                what = (
                    "has no configuration"
                    if config is None
                    else f"has no lock files for GPU(s) {missing}"
                )
                raise SchedulerConfigError(
                    f"the run directory {str(self.dir)!r} {what}: {rundir.ADMIN_HINT}"
                )
            config = (
                init_run_dir(self.dir, self.devices, wanted, users=False)
                if config is None or missing
                else config
            )
        if wanted is not None and int(wanted) != config["slots_per_gpu"]:
            raise SchedulerConfigError(
                f"run directory {str(self.dir)!r} shares each GPU {config['slots_per_gpu']} "
                f"way(s); this request asks for {wanted}. All jobs of a server must agree "
                "(or use another BIOACCEL_RUN_DIR)"
            )
        return config

    def _shares(self):
        return host_shares(self.dir, self.host)

    def _env(self, name: str) -> str | None:
        value = os.environ.get(name)
        if value and self.shared:
            rundir.warn(
                f"{name}={value!r} is ignored: the run directory {str(self.dir)!r} is "
                f"shared; the shares file {self.config.path or SHARES_FILE} sets it "
                "for every user"
            )
            return None
        return value

    @property
    def history(self) -> History:
        if self._history is None:
            self._history = History(self.dir, self.config)
        return self._history

    # -- run-directory layout -------------------------------------------------------------
    @property
    def host_devices(self) -> list[dict]:
        """The GPUs of the run directory (all users'), as ``config.json`` lists them."""
        return self.host["devices"]

    def _slot_path(self, token: str, slot: int) -> Path:
        return self.dir / f"slot.{token}.{slot}.lock"

    def _open_lock(self, name: str) -> int:
        return rundir.open_lock(self.dir / name, self.owners, create=self.may_init)

    @contextlib.contextmanager
    def _arbiter(self, deadline: float | None = None):
        """Hold the arbiter lock for one pass -- or, when a process has held it for
        ``arbiter_wait_s`` (stopped, hung or hostile), plan without it (with a warning naming
        it): the lock only keeps the policy's order; exclusion is the slot locks', so a pass
        without it can never double-book a GPU."""
        fd = self._open_lock("arbiter.lock")
        got = False
        try:
            until = time.monotonic() + (0.0 if self._arbiter_stuck else self.arbiter_wait_s)
            while not (got := rundir.try_lock(fd)):
                if time.monotonic() >= until or (deadline is not None and time.time() >= deadline):
                    break
                time.sleep(0.002)
            if not got and not self._arbiter_stuck:
                rundir.warn(
                    f"the arbiter lock {str(self.dir / 'arbiter.lock')!r} has been held "
                    f"for over {self.arbiter_wait_s:g} s by "
                    f"{self._describe_pids(self._takers_of(fd))}: planning without it"
                )
            self._arbiter_stuck = not got
            procs.forget_locks()  # the pass sees every lock taken before it
            yield
        finally:
            if got:
                with contextlib.suppress(OSError):
                    fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    @staticmethod
    def _takers_of(fd: int) -> list[int]:
        st = os.fstat(fd)
        return (procs.lock_takers() or {}).get((st.st_dev, st.st_ino), [])

    @staticmethod
    def _describe_pids(pids: list[int]) -> str:
        if not pids:
            return "an unknown process"
        return ", ".join(
            f"pid {p} ({user_name(procs.uid_of(p)) if procs.uid_of(p) is not None else 'exited'})"
            for p in pids
        )

    def arbiter_busy(self, wait_s: float = 1.0) -> list[int] | None:
        """The pids holding the arbiter lock if it stayed held for ``wait_s`` (a process may
        hold it forever), else None."""
        fd = self._open_lock("arbiter.lock")
        try:
            deadline = time.monotonic() + wait_s
            while rundir.is_locked(fd):
                if time.monotonic() >= deadline:
                    return self._takers_of(fd)
                time.sleep(0.02)
            return None
        finally:
            os.close(fd)

    def _slot_state(self) -> dict[tuple[str, int], int]:
        """Held slots ``(token, slot) -> pid`` of the process that took the lock (the kernel's
        word; -1 where ``/proc/locks`` cannot say and the lock was probed)."""
        takers = procs.lock_takers()
        held: dict[tuple[str, int], int] = {}
        for d in self.host_devices:
            for s in range(self.slots_per_gpu):
                name = f"slot.{d['token']}.{s}.lock"
                if takers is not None:
                    try:
                        st = os.lstat(self.dir / name)
                    except FileNotFoundError:
                        st = None
                    if (
                        st is not None
                        and stat.S_ISREG(st.st_mode)
                        and st.st_nlink == 1
                        and st.st_uid in self.owners
                    ):
                        pids = takers.get((st.st_dev, st.st_ino))
                        if pids:  # 0: a process outside this pid namespace
                            held[(d["token"], s)] = pids[0] if pids[0] > 0 else -1
                        continue
                fd = self._open_lock(name)  # refuses a planted or missing file
                try:
                    if rundir.is_locked(fd):
                        held[(d["token"], s)] = -1
                finally:
                    os.close(fd)
        return held

    # -- state ----------------------------------------------------------------------------
    def _records(
        self, prefix: str, fields: dict, cap: int | None = None
    ) -> list[tuple[str, dict, os.stat_result, int | None]]:
        """Live records ``<prefix>.<id>.json`` as (id, content, stat, pid of the process that
        locked it); a dead owner's are removed where allowed, and bad ones are skipped with a
        warning."""
        out = []
        takers = procs.lock_takers()
        paths = sorted(self.dir.glob(f"{prefix}.*.json"))
        if cap is not None:  # read at most ``cap`` files per owner (the oldest ids)
            per_uid: dict[int, list[Path]] = {}
            for path in paths:
                with contextlib.suppress(OSError):
                    per_uid.setdefault(os.lstat(path).st_uid, []).append(path)
            for uid, mine in per_uid.items():
                if len(mine) > cap and uid != os.getuid():
                    rundir.warn(
                        f"{user_name(uid)} has {len(mine)} {prefix} files; only the first "
                        f"{cap} (the limit per user) are read"
                    )
            paths = sorted(
                p
                for uid, mine in per_uid.items()
                for p in (mine if uid == os.getuid() else mine[:cap])
            )
        for path in paths:
            rid = path.name[len(prefix) + 1 : -len(".json")]
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
                    rundir.warn(
                        f"skipping {rundir.describe(path, st)}: {rid!r} is not a request id"
                    )
                    continue
                info = rundir.read_record(fd, st, path, fields)
            finally:
                os.close(fd)
            if info is not None:
                pids = (takers or {}).get((st.st_dev, st.st_ino))
                out.append((rid, info, st, pids[0] if pids and pids[0] > 0 else None))
        return out

    def _who(self, path_kind: str, rid: str, info: dict, st: os.stat_result) -> dict:
        user = user_name(st.st_uid)
        account, honoured = self.config.charged(user, info.get("account"))
        if not honoured:
            rundir.warn(
                f"{path_kind}.{rid}.json of {user} names account "
                f"{info.get('account')!r}, which {user} may not charge: charged to "
                f"{account}"
            )
        return {"user": user, "uid": st.st_uid, "account": account}

    def leases(self) -> list[dict]:
        """Every live lease record of every user: id, user, uid, account, pid (the process
        that locked the record, from the kernel where it can say; else the record's), host,
        since, held_s, label, mem_gb, slots ({GPU token: [slot, ...]})."""
        out = []
        now_mono = time.monotonic()
        for rid, info, st, taker in self._records("lease", _LEASE_FIELDS):
            slots = {
                str(k): sorted({s for s in v if isinstance(s, int) and not isinstance(s, bool)})
                for k, v in info["slots"].items()
                if isinstance(v, list)
            }
            mono = info.get("since_mono")
            held_s = (
                now_mono - mono
                if isinstance(mono, (int, float)) and 0 <= mono <= now_mono
                else time.time() - info["since"]
            )
            out.append(
                {
                    "lease": rid,
                    **self._who("lease", rid, info, st),
                    "pid": taker if taker is not None else info.get("pid"),
                    "verified": taker is not None,
                    "host": info.get("host"),
                    "since": info["since"],
                    "held_s": max(0.0, held_s),
                    "label": info["label"],
                    "mem_gb": info["mem_gb"],
                    "slots": slots,
                }
            )
        return out

    def holders(self, state: dict | None = None) -> dict[str, list[dict]]:
        """Per GPU token, its live holders (one entry per lease, with the slots it holds
        there). A record's claim counts only where the process that locked the record also
        took the slot's lock (the kernel says so); held slots no record rightly claims appear
        with the kernel's pid and its user, label ``held without a lease record``."""
        if state is None:
            procs.forget_locks()
            state = self._slot_state()
        leases = self.leases()
        out: dict[str, list[dict]] = {}
        for d in self.host_devices:
            token = d["token"]
            held = {s: pid for (t, s), pid in state.items() if t == token}
            out[token] = []
            claimed: set[int] = set()
            for rec in leases:
                mine = []
                for s in rec["slots"].get(token, []):
                    if s not in held or s in claimed:
                        continue
                    if rec["verified"] and held[s] not in (-1, rec["pid"]):
                        rundir.warn(
                            f"lease.{rec['lease']}.json of {rec['user']} claims slot {s} "
                            f"of {token}, which pid {held[s]} holds, not its own pid "
                            f"{rec['pid']}: claim ignored"
                        )
                        continue
                    mine.append(s)
                if mine:
                    claimed.update(mine)
                    out[token].append({**rec, "slots": mine})
            rest = sorted(s for s in held if s not in claimed)
            by_pid: dict[int, list[int]] = {}
            for s in rest:
                by_pid.setdefault(held[s], []).append(s)
            for pid, slots in by_pid.items():
                uid = procs.uid_of(pid) if pid > 0 else None
                out[token].append(
                    {
                        "lease": None,
                        "user": user_name(uid) if uid is not None else "?",
                        "uid": uid,
                        "account": None,
                        "pid": pid if pid > 0 else None,
                        "verified": pid > 0,
                        "host": None,
                        "since": None,
                        "held_s": None,
                        "label": "held without a lease record",
                        "mem_gb": None,
                        "slots": slots,
                    }
                )
        return out

    def queue(self, lapsed: list | None = None) -> list[Request]:
        """Live waiting requests of every user (the entries of dead waiters are removed by
        their owner); identity from the entry file's owner. Entries not renewed for
        ``lapse_s`` go to ``lapsed`` (if given) instead; at most ``max_waiting`` per user."""
        out = []
        now = time.time()
        host = {d["token"]: d for d in self.host_devices}
        per_user: dict[int, list] = {}
        born_of: dict[int, float | None] = {}
        for rid, info, st, taker in self._records("queue", _QUEUE_FIELDS, self.max_waiting):
            who = self._who("queue", rid, info, st)
            allowed = [
                t
                for t in (info["devices"] if info.get("devices") is not None else host)
                if isinstance(t, str) and t in host
            ]
            mems = sorted((host[t]["memory_gb"] for t in allowed), reverse=True)
            mem_gb = info["mem_gb"]
            if not (
                1 <= info["gpus"] <= len(allowed)
                and 1 <= info["slots"] <= self.slots_per_gpu
                and (mem_gb is None or 0 < mem_gb <= mems[info["gpus"] - 1])
            ):
                # it could never be served here: left in, it would block the queue once it
                # had waited starve_after_s
                rundir.warn(
                    f"skipping queue.{rid}.json of {who['user']}: {info['gpus']} GPU(s) "
                    f"x {info['slots']} slot(s)"
                    + (f" of {mem_gb:g} GB" if mem_gb is not None else "")
                    + f" is impossible on its {len(allowed)} GPU(s) of "
                    f"{self.slots_per_gpu} slot(s)"
                    + (f" ({', '.join(f'{m:g}' for m in mems)} GB)" if mems else "")
                )
                continue
            # an entry is no older than the process that waits on it (the kernel's word)
            if taker and taker not in born_of:
                born_of[taker] = procs.start_time(taker)
            born = born_of.get(taker) if taker else None
            submit = float(info["submit_time"])
            if born is not None:
                submit = max(submit, born - 1.0)
            payload = {
                **info,
                **who,
                "id": rid,
                "submit_time": submit,
                "devices": allowed,
                "pid": taker if taker else info.get("pid"),
                "renewed": st.st_ctime,
            }
            req = Request(
                rid,
                who["account"],
                info["priority"],
                info["gpus"],
                submit,
                info["predicted_s"],
                payload=payload,
            )
            if now - st.st_ctime > self.lapse_s:
                if lapsed is not None:
                    lapsed.append(req)
                continue
            per_user.setdefault(st.st_uid, []).append(req)
        for uid, reqs in per_user.items():
            reqs.sort(key=lambda r: (r.submit_time, r.id))
            if len(reqs) > self.max_waiting:
                rundir.warn(
                    f"{user_name(uid)} has {len(reqs)} waiting requests; only the first "
                    f"{self.max_waiting} (the limit per user) are considered"
                )
            out.extend(reqs[: self.max_waiting])
        return out

    def _plan(
        self, ranked: list[Request], now: float, holders: dict[str, list[dict]] | None = None
    ) -> dict[str, list[str]]:
        held_by = self.holders() if holders is None else holders
        host = {d["token"]: d for d in self.host_devices}
        free = {}
        mem = {}
        for token in host:
            taken = [s for h in held_by[token] for s in h["slots"]]
            free[token] = [s for s in range(self.slots_per_gpu) if s not in taken]
            mem[token] = sum(float(h["mem_gb"]) for h in held_by[token] if h["mem_gb"])
        plan: dict[str, list[str]] = {}
        for req in ranked:
            info = req.payload or {}
            slots, mem_gb = info.get("slots", self.slots_per_gpu), info.get("mem_gb")
            allowed = info.get("devices") or list(host)
            fits = [
                t
                for t in allowed
                if len(free[t]) >= slots
                and (mem_gb is None or mem[t] + mem_gb <= host[t]["memory_gb"] + 1e-9)
            ]
            if len(fits) >= req.gpus:
                pick = sorted(fits, key=lambda t: (len(free[t]), allowed.index(t)))[: req.gpus]
                plan[req.id] = pick
                for t in pick:
                    free[t] = free[t][slots:]
                    mem[t] += mem_gb or 0.0
            elif now - req.submit_time > self.starve_after_s:
                break  # it has waited long enough: nothing behind it may take its GPUs
        return plan

    def status(self) -> dict:
        """What ``bioaccel gpus`` shows: the run directory, every GPU with its holders (the
        kernel's pids; for a taker that exited, the processes that still hold its lock, as
        far as this user may look), the waiting requests in policy order with the GPUs the
        plan gives them now, lapsed entries, usage, and notes. Creates no file (it may remove records of dead processes it owns)."""
        now = time.time()
        procs.forget_locks()
        state = self._slot_state()
        holders = self.holders(state)
        lapsed: list[Request] = []
        waiting = self.queue(lapsed)
        usage = self._usage(now)
        ranked = self.policy.order(waiting, now, usage)
        plan = self._plan(ranked, now, holders)
        for token, hs in holders.items():
            for h in hs:
                h["pid_alive"] = bool(h["pid"]) and procs.alive(h["pid"])
                h["held_by"] = []
                if h["pid"] and not h["pid_alive"]:
                    s = h["slots"][0]
                    with contextlib.suppress(OSError):
                        st = os.lstat(self._slot_path(token, s))
                        h["held_by"] = procs.processes_holding(st.st_dev, st.st_ino)
        notes = []
        if self.dir_uid != 0 and self.shared:
            notes.append(
                f"the run directory {self.dir} belongs to {user_name(self.dir_uid)}: "
                f"{rundir.ADMIN_HINT}"
            )
        busy = self.arbiter_busy()
        if busy is not None:
            notes.append(
                "the arbiter lock has been held for over 1 s by "
                f"{self._describe_pids(busy)}: no waiting request can be served while "
                "it holds it"
            )
        if os.getuid() == 0:
            for pid, name in procs.deleted_files_open_under(self.dir, "slot."):
                notes.append(
                    f"pid {pid} ({user_name(procs.uid_of(pid) or 0)}) holds the deleted "
                    f"lock file {name}: the run directory was wiped under a running job"
                )
        return {
            "run_dir": self.dir,
            "run_dir_owner": user_name(self.dir_uid),
            "shared": self.shared,
            "slots_per_gpu": self.slots_per_gpu,
            "policy": self.policy.name,
            "max_waiting": self.max_waiting,
            "shares_file": self.config.path,
            "time": now,
            "holders": holders,
            "queue": ranked,
            "plan": plan,
            "lapsed": lapsed,
            "usage": usage,
            "notes": notes,
        }

    def snapshot(self, warnings: list[str] = ()) -> dict:
        """:meth:`status` in the schema of :mod:`.snapshot` (what ``bioaccel gpus --json``
        prints); ``warnings``: lines to show besides the status' notes."""
        st = self.status()
        now = st["time"]
        hint = None
        if not self.devices and not self.host_devices:
            hint = (
                "no GPU is visible here: CuPy, numba-cuda and nvidia-smi found none "
                f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')!r}); "
                "set BIOACCEL_VIRTUAL_GPUS=N for N virtual GPUs"
            )
        queue = []
        for r in st["queue"] + st["lapsed"]:
            info = r.payload
            queue.append(
                {
                    **info,
                    "priority": r.priority,
                    "gpus": r.gpus,
                    "submit_time": r.submit_time,
                    "waited_s": max(0.0, now - r.submit_time),
                    "predicted_s": r.predicted_s,
                    "planned": st["plan"].get(r.id),
                    "lapsed": r in st["lapsed"],
                }
            )
        return snapshot.make(
            mode="slurm"
            if os.environ.get("SLURM_JOB_ID")
            else "shared-folder"
            if self.shared
            else "private",
            run_dir=st["run_dir"],
            run_dir_owner=st["run_dir_owner"],
            socket=None,
            slots_per_gpu=st["slots_per_gpu"],
            policy=st["policy"],
            max_waiting=st["max_waiting"],
            shares_file=st["shares_file"],
            time=now,
            hint=hint,
            warnings=list(dict.fromkeys([*warnings, *st["notes"]])),
            devices=self.host_devices,
            holders=st["holders"],
            usage=st["usage"],
            queue=queue,
        )

    # -- acquiring ------------------------------------------------------------------------
    def acquire(
        self,
        gpus: int = 1,
        slots: int | None = None,
        mem_gb: float | None = None,
        timeout: float | None = None,
        priority: float = 0,
        user: str | None = None,
        predicted_s: float | None = None,
        label: str = "",
    ) -> Lease:
        """Wait for ``gpus`` GPU(s). ``user``: the fair-share account to charge (default:
        the real user's own; another one only if the shares file lists the user in it:
        :class:`~bioaccel.errors.AccountError` otherwise).

        Raises
        ------
        ValueError
            A request no GPU set of this process could ever serve (refused at once).
        QueueLimitError
            This user already has ``max_waiting`` live waiting requests.
        LeaseTimeoutError
            Not served within ``timeout`` seconds.
        """
        slots = self.slots_per_gpu if slots is None else slots
        self._check(gpus, slots, mem_gb)
        account = self.config.check_account(current_user(), user)
        mine = [r for r in self.queue([]) if r.payload["uid"] == os.getuid()]
        if len(mine) >= self.max_waiting:
            raise QueueLimitError(
                f"{current_user()} already has {len(mine)} waiting request(s), "
                f"the limit per user of the run directory {str(self.dir)!r}"
            )
        req_id = f"{time.time():.6f}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        entry = self.dir / f"queue.{req_id}.json"
        now = time.time()
        info = {
            "priority": priority,
            "gpus": gpus,
            "slots": slots,
            "mem_gb": mem_gb,
            "submit_time": now,
            "predicted_s": predicted_s,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "label": label,
            "account": account,
            "devices": [token_of(d) for d in self.devices],
        }
        qfd = rundir.publish(entry, json.dumps(info).encode(), lock=True, keep_fd=True)
        deadline = None if timeout is None else now + timeout
        try:
            while True:
                os.utime(qfd)  # renewed: a stopped waiter's entry lapses
                with self._arbiter(deadline):
                    t = time.time()
                    ranked = self.policy.order(self.queue(), t, self._usage(t))
                    plan = self._plan(ranked, t)
                    if req_id in plan:
                        held = self._take(plan[req_id], slots, req_id, info)
                        if held is not None:
                            return held
                if deadline is not None and time.time() >= deadline:
                    raise LeaseTimeoutError(self._timeout_message(gpus, slots, timeout))
                time.sleep(self.poll_s * (0.5 + random.random()))
        finally:
            with contextlib.suppress(OSError):
                os.unlink(entry)
            os.close(qfd)

    def _usage(self, now: float) -> dict[str, float]:
        """Decayed GPU-seconds per account: the recorded runs, plus what each live lease has
        used so far (as Slurm charges running jobs), so fair share reacts while jobs run."""
        if self.policy.name != "fair":
            return {}
        used = self.history.usage(now)
        for rec in self.leases():
            gpus = sum(len(v) for v in rec["slots"].values()) / self.slots_per_gpu
            used[rec["account"]] = used.get(rec["account"], 0.0) + gpus * rec["held_s"]
        return used

    def _take(self, tokens: list[str], slots: int, req_id: str, info: dict) -> Lease | None:
        by_token = {token_of(d): d for d in self.devices}
        chosen = [by_token[t] for t in tokens]
        fds: list[int] = []
        taken_slots: dict[str, list[int]] = {}
        try:
            for t in tokens:
                taken_slots[t] = []
                for s in range(self.slots_per_gpu):
                    if len(taken_slots[t]) == slots:
                        break
                    fd = self._open_lock(f"slot.{t}.{s}.lock")
                    # a `bioaccel gpus` without /proc/locks may be probing the lock now
                    for _ in range(20):
                        if rundir.try_lock(fd):
                            fds.append(fd)
                            taken_slots[t].append(s)
                            break
                        time.sleep(0.002)
                    else:
                        os.close(fd)
                if len(taken_slots[t]) < slots:  # taken meanwhile (a pass without the
                    for fd in fds:  # arbiter lock): plan again
                        os.close(fd)
                    return None
            record = self.dir / f"lease.{req_id}.json"
            body = {
                "pid": info["pid"],
                "host": info["host"],
                "account": info["account"],
                "mem_gb": info["mem_gb"],
                "since": time.time(),
                "since_mono": time.monotonic(),
                "label": info["label"],
                "slots": taken_slots,
                "generation": self.host.get("generation"),
            }
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
            raise SchedulerConfigError(
                "no GPU is visible to lease (set BIOACCEL_VIRTUAL_GPUS=N for virtual GPUs)"
            )
        if gpus > len(self.devices):
            raise ValueError(
                f"gpus={gpus} but only {len(self.devices)} GPU(s) are visible: "
                f"{[str(d) for d in self.devices]}"
            )
        if isinstance(slots, bool) or int(slots) != slots or not 1 <= slots <= self.slots_per_gpu:
            raise ValueError(
                f"slots={slots!r}: expected 1..{self.slots_per_gpu} "
                f"(this run directory shares each GPU {self.slots_per_gpu} way(s))"
            )
        if mem_gb is not None:
            small = [d for d in self.devices if mem_gb > d.memory_gb]
            if not mem_gb > 0 or len(small) > len(self.devices) - gpus:
                raise ValueError(
                    f"mem_gb={mem_gb!r}: expected > 0 and at most the memory of "
                    f"{gpus} GPU(s) ({sorted(d.memory_gb for d in self.devices)} GB)"
                )

    def _timeout_message(self, gpus, slots, timeout) -> str:
        held = {
            t: [
                f"{h['user']} pid {h.get('pid')} for "
                f"{human_duration(h['held_s']) if h['held_s'] is not None else '?'} "
                f"({h.get('label') or 'no label'})"
                for h in hs
            ]
            for t, hs in self.holders().items()
            if hs
        }
        return (
            f"no lease on {gpus} GPU(s) x {slots} slot(s) within {timeout} s; "
            f"holders: {held or 'none'}; waiting: {len(self.queue())} request(s)"
        )


def gpus_snapshot() -> dict:
    """What ``bioaccel gpus`` shows, in the schema of :mod:`.snapshot`: the arbiter service's
    answer where it is in force, else this user's run directory's (with the warnings met
    while reading it)."""
    import warnings

    from ..errors import ArbiterWarning

    path = find_socket()
    if path is not None:
        return client.status(path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ArbiterWarning)
        snap = GpuBroker().snapshot()
    snap["warnings"] = list(dict.fromkeys([*(str(w.message) for w in caught), *snap["warnings"]]))
    return snap


@contextlib.contextmanager
def lease(
    gpus: int = 1,
    slots: int | None = None,
    mem_gb: float | None = None,
    timeout: float | None = None,
    *,
    priority: float = 0,
    user: str | None = None,
    predicted_s: float | None = None,
    label: str = "",
    broker: GpuBroker | None = None,
):
    """Hold ``gpus`` GPU(s) for the ``with`` block; sets ``CUDA_VISIBLE_DEVICES``.

    Where the host's arbiter service runs (:mod:`.service`), the lease is the service's and
    lives as long as this process's connection to it (a dead service raises
    :class:`~bioaccel.errors.ArbiterUnavailableError`); otherwise it is this user's private
    run directory's (inside a Slurm job: the job's).

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
    path = find_socket() if broker is None else None
    if path is not None:
        inherited = client.inherited() if os.environ.get(ENV_HELD) is not None else None
    else:
        inherited = inherited_lease() if broker is None else None
    if inherited is not None:
        devices = inherited.devices
        if len(devices) < gpus:
            raise ValueError(
                f"this process inherited a lease on {len(devices)} GPU(s) "
                f"({os.environ.get(ENV_HELD)}); it cannot lease {gpus}"
            )
        held = Lease(devices[:gpus], slots or 1, inherited.request_id, inherited=True)
        with held:
            yield held
        return
    if path is not None:
        held = client.acquire(gpus, slots, mem_gb, timeout, priority, user, predicted_s, label)
    else:
        broker = broker or GpuBroker()
        held = broker.acquire(gpus, slots, mem_gb, timeout, priority, user, predicted_s, label)
    with held:
        yield held
