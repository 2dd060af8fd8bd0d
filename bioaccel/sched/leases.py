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
import pwd
import random
import re
import socket
import stat
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from ..devices import Device, discover_devices
from ..errors import LeaseTimeoutError, QueueLimitError, SchedulerConfigError
from . import procs, rundir
from .history import History
from .identity import SHARES_FILE, SharesConfig, current_user, load_shares, user_name
from .policies import Request, make_policy, parse_shares

ENV_HELD = "BIOACCEL_LEASED_GPUS"
ENV_LEASE = "BIOACCEL_LEASE"
#: The host-wide run directory (see the module docstring).
DEFAULT_RUN_DIR = Path("/tmp/bioaccel")
CONFIG = "config.json"
#: Slots per GPU a run directory may have (each is a lock file probed on every pass).
MAX_SLOTS = 64
DEFAULT_MAX_WAITING = 32
_ID = re.compile(r"^[0-9]+\.[0-9]{6}-[0-9]+-[0-9a-f]{8}$")
_TOKEN = re.compile(r"^v?gpu-[A-Za-z0-9_-]{1,80}$")

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


def run_dir(env=None) -> Path:
    """The run directory of this process's leases (see the module docstring). The host-wide
    one must exist (``bioaccel admin init``; root may make it); a missing ``BIOACCEL_RUN_DIR``
    is made private (0700: its maker's alone; ``bioaccel admin init --run-dir`` makes a
    shared one)."""
    env = os.environ if env is None else env
    if env.get("SLURM_JOB_ID") and not env.get("BIOACCEL_RUN_DIR"):
        private = Path(tempfile.gettempdir()) / f"bioaccel-{os.getuid()}"
        rundir.ensure_dir(private, rundir.PRIVATE_DIR_MODE)
        base = private / f"slurm-{env['SLURM_JOB_ID']}"
        rundir.ensure_dir(base, rundir.PRIVATE_DIR_MODE)
        return base
    base = Path(env["BIOACCEL_RUN_DIR"]) if env.get("BIOACCEL_RUN_DIR") else DEFAULT_RUN_DIR
    root = os.getuid() == 0
    if base == DEFAULT_RUN_DIR:
        if not os.path.lexists(base) and not root:
            raise SchedulerConfigError(
                f"the host-wide run directory {str(base)!r} does not exist: {rundir.ADMIN_HINT}"
            )
        rundir.ensure_dir(base, rundir.SHARED_DIR_MODE)
    else:
        rundir.ensure_dir(base, rundir.PRIVATE_DIR_MODE)
    return base


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


def token_of(device: Device) -> str:
    """The host-wide name of a GPU in the run directory (virtual GPUs never block real ones)."""
    text = "".join(c if c.isalnum() or c in "-_" else "_" for c in device.visible_id)
    return f"{'vgpu' if device.virtual else 'gpu'}-{text}"


def login_users() -> list[tuple[str, int, int]]:
    """(name, uid, gid) of the password database's login users (uid 1000..60000)."""
    return sorted(
        {(p.pw_name, p.pw_uid, p.pw_gid) for p in pwd.getpwall() if 1000 <= p.pw_uid <= 60000},
        key=lambda u: u[1],
    )


def _write_config(path: Path, config: dict) -> None:
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, (json.dumps(config, indent=1) + "\n").encode())
        os.fchmod(fd, rundir.RECORD_MODE)
    finally:
        os.close(fd)
    os.rename(tmp, path)


def read_config(directory: Path, owners: set[int]) -> dict | None:
    """The run directory's ``config.json`` (checked), or None if it has none."""
    path = directory / CONFIG
    if not os.path.lexists(path):
        return None
    fd = rundir.open_lock(path, owners)
    try:
        st = os.fstat(fd)
        if st.st_size > rundir.MAX_RECORD_BYTES:
            raise SchedulerConfigError(
                f"{rundir.describe(path, st)}: {st.st_size} bytes; "
                f"expected at most {rundir.MAX_RECORD_BYTES}"
            )
        try:
            config = json.loads(os.pread(fd, rundir.MAX_RECORD_BYTES, 0).decode())
        except (UnicodeDecodeError, ValueError) as exc:
            raise SchedulerConfigError(
                f"{rundir.describe(path, st)} is not JSON ({exc}): {rundir.ADMIN_HINT}"
            ) from None
    finally:
        os.close(fd)
    k = config.get("slots_per_gpu") if isinstance(config, dict) else None
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SLOTS:
        raise SchedulerConfigError(
            f"{str(path)!r}: slots_per_gpu = {k!r:.40}; expected a whole number 1..{MAX_SLOTS}"
        )
    waiting = config.get("max_waiting", DEFAULT_MAX_WAITING)
    if isinstance(waiting, bool) or not isinstance(waiting, int) or not 1 <= waiting <= 10000:
        raise SchedulerConfigError(
            f"{str(path)!r}: max_waiting = {waiting!r:.40}; expected 1..10000"
        )
    devices = config.get("devices")
    if not isinstance(devices, list) or not all(
        isinstance(d, dict)
        and isinstance(d.get("token"), str)
        and _TOKEN.match(d["token"])
        and isinstance(d.get("memory_gb"), (int, float))
        and d["memory_gb"] > 0
        for d in devices
    ):
        raise SchedulerConfigError(
            f"{str(path)!r}: 'devices' must list GPUs as {{token, name, memory_gb}}"
        )
    if not isinstance(config.get("shares_file"), (str, type(None))):
        raise SchedulerConfigError(f"{str(path)!r}: 'shares_file' must be a path or null")
    return config


def init_run_dir(
    directory: str | Path | None = None,
    devices: list[Device] | None = None,
    slots_per_gpu: int | None = None,
    shares_file: str | None = None,
    max_waiting: int | None = None,
    group: str | None = None,
    users: bool = True,
) -> dict:
    """Make (or extend) a run directory: what ``bioaccel admin init`` does as root for the
    host (and what the owner of a private one does on first use). Creates the folder, its
    ``config.json``, the arbiter lock and K slot lock files per GPU (readable by all, written
    by nobody), ``users/`` and, as root in a shared folder, a folder of each login user
    (theirs, 0755). Returns the configuration.

    Raises
    ------
    SchedulerConfigError
        A shared folder by an ordinary user; a wiped folder's locks still held by live
        processes (they would be given to others); K differs from the folder's; a bad value.
    """
    root = os.getuid() == 0
    path = (
        Path(directory)
        if directory is not None
        else Path(os.environ.get("BIOACCEL_RUN_DIR") or DEFAULT_RUN_DIR)
    )
    if group is not None:
        import grp

        try:
            gid = grp.getgrnam(group).gr_gid
        except KeyError:
            raise SchedulerConfigError(f"--group {group!r}: no such group") from None
    st = rundir.ensure_dir(
        path, 0o3770 if group else rundir.SHARED_DIR_MODE if root else rundir.PRIVATE_DIR_MODE
    )
    if group is not None:
        os.chown(path, 0, gid)
        os.chmod(path, 0o3770)
        st = os.stat(path)
    shared = rundir.is_shared(st)
    if shared and not root:
        raise SchedulerConfigError(
            f"run directory {rundir.describe(path, st)} is shared: only "
            f"root may set it up; {rundir.ADMIN_HINT}"
        )
    if root:
        orphans = [(pid, name) for pid, name in procs.deleted_files_open_under(path, "slot.")]
        if orphans:
            raise SchedulerConfigError(
                f"the run directory {str(path)!r} was wiped while jobs held GPUs: "
                + "; ".join(
                    f"pid {pid} ({user_name(procs.uid_of(pid) or 0)}) holds deleted {name}"
                    for pid, name in orphans[:8]
                )
                + ". New lock files would give the same GPUs to others: wait for these "
                "processes to end (or kill them), then run this again"
            )
    owners = rundir.trusted_owners(st)
    # one set-up at a time (jobs of one private folder may add their GPUs at once)
    dfd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        deadline = time.monotonic() + 10
        while not rundir.try_lock(dfd):
            if time.monotonic() > deadline:
                raise SchedulerConfigError(
                    f"the run directory {str(path)!r} stayed locked "
                    "for 10 s (another set-up, or a process holding it)"
                )
            time.sleep(0.01)
        return _init_locked(
            path, st, owners, root, shared, devices, slots_per_gpu, shares_file, max_waiting, users
        )
    finally:
        os.close(dfd)


def _init_locked(
    path, st, owners, root, shared, devices, slots_per_gpu, shares_file, max_waiting, users
) -> dict:
    config = read_config(path, owners) or {
        "version": 1,
        "devices": [],
        "generation": uuid.uuid4().hex,
    }
    old = json.dumps(config, sort_keys=True)
    if slots_per_gpu is not None:
        if (
            isinstance(slots_per_gpu, bool)
            or int(slots_per_gpu) != slots_per_gpu
            or not 1 <= slots_per_gpu <= MAX_SLOTS
        ):
            raise SchedulerConfigError(
                f"slots_per_gpu={slots_per_gpu!r}: expected a whole number 1..{MAX_SLOTS}"
            )
        if config.get("slots_per_gpu", slots_per_gpu) != slots_per_gpu:
            raise SchedulerConfigError(
                f"run directory {str(path)!r} shares each GPU {config['slots_per_gpu']} way(s); "
                f"this request asks for {slots_per_gpu}. All jobs of a server must agree "
                "(or use another BIOACCEL_RUN_DIR)"
            )
    config.setdefault("slots_per_gpu", int(slots_per_gpu or 1))
    if max_waiting is not None:
        config["max_waiting"] = int(max_waiting)
    config.setdefault("max_waiting", DEFAULT_MAX_WAITING)
    if shares_file is not None:
        config["shares_file"] = str(Path(shares_file).absolute())
    config.setdefault("shares_file", os.environ.get("BIOACCEL_SHARES_FILE") or str(SHARES_FILE))
    known = {d["token"] for d in config["devices"]}
    for d in discover_devices() if devices is None else devices:
        if token_of(d) not in known:
            config["devices"].append(
                {"token": token_of(d), "name": d.name, "memory_gb": d.memory_gb}
            )
            known.add(token_of(d))
    if json.dumps(config, sort_keys=True) != old:
        _write_config(path / CONFIG, config)
    read_config(path, owners)  # what others will read is valid
    k = config["slots_per_gpu"]
    for name in ["arbiter.lock"] + [
        f"slot.{d['token']}.{s}.lock" for d in config["devices"] for s in range(k)
    ]:
        _replace_planted(path / name, owners)
        os.close(rundir.open_lock(path / name, owners, create=True))
    users_dir = path / "users"
    rundir.ensure_dir(users_dir, rundir.SHARED_DIR_MODE if shared else rundir.PRIVATE_DIR_MODE)
    if root and shared and users:
        for name, uid, gid in login_users():
            folder = users_dir / str(uid)
            if not os.path.lexists(folder):
                os.mkdir(folder, 0o700)
                os.chown(folder, uid, gid)
                os.chmod(folder, 0o755)
            else:
                fst = os.lstat(folder)
                if not stat.S_ISDIR(fst.st_mode) or fst.st_uid != uid:
                    rundir.warn(
                        f"{rundir.describe(folder, fst)} is not {name}'s folder: remove "
                        f"it and run this again ({name}'s runs cannot be recorded)"
                    )
    return config


def host_shares(directory: Path, config: dict | None = None):
    """The shares file of run directory ``directory``: in a shared one, the one its
    ``config.json`` names for every user (``BIOACCEL_SHARES_FILE`` naming another is refused:
    one shares configuration per host); in a private one, ``BIOACCEL_SHARES_FILE`` or
    ``/etc/bioaccel/shares``."""
    st = os.stat(directory)
    if not rundir.is_shared(st):
        return load_shares(st.st_uid)
    config = config if config is not None else read_config(directory, rundir.trusted_owners(st))
    if config is None:
        raise SchedulerConfigError(
            f"the run directory {str(directory)!r} has no configuration: {rundir.ADMIN_HINT}"
        )
    named = os.environ.get("BIOACCEL_SHARES_FILE")
    fixed = config.get("shares_file") or str(SHARES_FILE)
    if named and os.path.abspath(named) != os.path.abspath(fixed):
        raise SchedulerConfigError(
            f"BIOACCEL_SHARES_FILE={named!r}: the run directory {str(directory)!r} uses the "
            f"shares file {fixed!r} for every user (one per host, set by `bioaccel admin init "
            "--shares-file`)"
        )
    if not os.path.lexists(fixed):  # every user sees the same: no shares (equal ones)
        if fixed != str(SHARES_FILE):
            rundir.warn(
                f"the shares file {fixed!r} named by {str(directory / CONFIG)!r} is "
                "missing: no shares file is in force"
            )
        return SharesConfig()
    return load_shares(0, {"BIOACCEL_SHARES_FILE": fixed})


def _replace_planted(path: Path, owners: set[int]) -> None:
    """Remove a lock file of the wrong owner, kind or link count (planted, or made before
    ``admin init`` existed) unless a live process holds it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(st.st_mode) and st.st_uid in owners and st.st_nlink == 1:
        return
    if stat.S_ISREG(st.st_mode):
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            if rundir.is_locked(fd):
                pids = (procs.lock_takers() or {}).get((st.st_dev, st.st_ino), [])
                raise SchedulerConfigError(
                    f"{rundir.describe(path, st)} is not root's but pid(s) {pids or '?'} hold it "
                    "now: replacing it would give the same GPU to two jobs; run this again when "
                    "they have ended"
                )
        finally:
            os.close(fd)
    os.unlink(path)
    rundir.warn(f"replaced {rundir.describe(path, st)}: lock files must be root's")


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

    def wiped(self) -> bool:
        """The record or a slot lock file of this lease was deleted (the run folder was
        wiped): others no longer see this lease."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
                if os.fstat(fd).st_nlink == 0:
                    return True
        return False

    def release(self) -> None:
        """End the lease now (for every process sharing its descriptors)."""
        if self.record is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.record)
            self.record = None
        for fd in self._fds:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
        self._fds.clear()

    def close(self) -> None:
        """Close this process's descriptors without unlocking: the lease lasts while a
        process that inherited them (a job's leftover) lives."""
        for fd in self._fds:
            with contextlib.suppress(OSError):
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


def inherited_lease(env=None) -> Lease | None:
    """The lease this process inherited from ``bioaccel gpu-run``, if the arbiter can verify
    it: ``BIOACCEL_LEASE`` names a live lease record of this user, and this process holds
    that record's lock descriptor or descends from the process that locked it. Where
    ``BIOACCEL_LEASED_GPUS`` is set without such a lease, it is ignored with a warning
    (None)."""
    env = os.environ if env is None else env
    visible = env.get(ENV_HELD)
    if visible is None:
        return None
    rid = env.get(ENV_LEASE, "")
    why = None
    try:
        directory = run_dir(env)
    except SchedulerConfigError as exc:
        directory, why = None, str(exc)
    if why is None and not _ID.match(rid):
        why = f"{ENV_LEASE} is {'missing' if not rid else repr(rid)}"
    if why is None:
        path = directory / f"lease.{rid}.json"
        opened = rundir.open_record(path)
        if opened is None:
            why = f"no live lease record {str(path)!r}"
        else:
            fd, st = opened
            try:
                takers = (procs.lock_takers() or {}).get((st.st_dev, st.st_ino), [])
                inside = any(
                    p == os.getpid() or p in procs.ancestors() for p in takers
                ) or procs.has_open(os.getpid(), st.st_dev, st.st_ino)
                if st.st_uid != os.getuid():
                    why = f"{rundir.describe(path, st)} is not this user's"
                elif not rundir.is_locked(fd) and not inside:
                    why = f"{str(path)!r} is not held by a live process"
                elif not inside:
                    why = "this process is neither inside that lease nor holds its lock"
            finally:
                os.close(fd)
    if why is not None:
        rundir.warn(
            f"{ENV_HELD}={visible!r} is not backed by a live lease this process is "
            f"inside ({why}): ignored, the GPUs are leased from the arbiter"
        )
        return None
    return Lease(discover_devices(env), 0, rid, inherited=True)


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
    broker = broker or GpuBroker()
    held = broker.acquire(gpus, slots, mem_gb, timeout, priority, user, predicted_s, label)
    with held:
        yield held
