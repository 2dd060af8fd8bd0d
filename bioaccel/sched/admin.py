"""The run directory of the file-based arbiter (private per user, or the legacy shared
folder): where it is, its ``config.json`` and what ``bioaccel admin init`` makes in it."""

from __future__ import annotations

import json
import os
import pwd
import re
import stat
import tempfile
import time
import uuid
from pathlib import Path

from ..devices import Device, discover_devices
from ..errors import SchedulerConfigError
from . import procs, rundir
from .display import token_of
from .identity import SHARES_FILE, SharesConfig, load_shares, user_name

#: The host-wide run directory (see the module docstring).
DEFAULT_RUN_DIR = Path("/tmp/bioaccel")
CONFIG = "config.json"
#: Slots per GPU a run directory may have (each is a lock file probed on every pass).
MAX_SLOTS = 64
DEFAULT_MAX_WAITING = 32
_TOKEN = re.compile(r"^v?gpu-[A-Za-z0-9_-]{1,80}$")


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
