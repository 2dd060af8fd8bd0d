"""``bioaccel admin init`` and ``bioaccel arbiterd``: install, start and run the service.

- The configuration (this host's GPUs, slots per GPU, shares file, policy, limits) is
  written to ``config.json`` in the state folder, made by :func:`.service.secure_dir`.
- Where systemd runs (``/run/systemd/system`` exists), the unit
  ``/etc/systemd/system/bioaccel-arbiterd.service`` is written, enabled and (re)started;
  otherwise ``bioaccel arbiterd`` is started directly (it detaches, logging to
  ``arbiterd.log`` in the state folder) and the message says how to start it at boot.
- A running service is told to reload its shares file, policy and limits (``reload``, root
  only); a change of GPUs or slots needs a restart, which ends running jobs: it is refused
  with the command to run.
- Migration: the old shared run folder ``/tmp/bioaccel`` is removed when no process holds a
  lease in it (without following a symlink in it); while one does, nothing is installed and
  the holders are named (starting the service then would give their GPUs to others).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

from ..devices import discover_devices
from ..errors import ArbiterUnavailableError, SchedulerConfigError
from . import procs
from .admin import DEFAULT_RUN_DIR, MAX_SLOTS
from .display import token_of
from .identity import SHARES_FILE, load_shares, user_name
from .service import SOCKET_DIR, SOCKET_NAME, STATE_DIR, secure_dir

UNIT = Path("/etc/systemd/system/bioaccel-arbiterd.service")
UNIT_TEXT = """[Unit]
Description=bioaccel GPU arbiter (one process decides who gets which GPU)
After=local-fs.target

[Service]
Type=simple
ExecStart={exe} -m bioaccel.cli arbiterd --foreground --state-dir {state} --socket-dir {sock}
Restart=on-failure
RestartSec=1
RuntimeDirectory={runtime}
RuntimeDirectoryMode=0755
RuntimeDirectoryPreserve=yes
StateDirectory={statename}
StateDirectoryMode=0700
{env}
[Install]
WantedBy=multi-user.target
"""


def _systemd() -> bool:
    return os.path.isdir("/run/systemd/system") and shutil.which("systemctl") is not None


def _running(socket_dir: Path) -> dict | None:
    """The service's hello if one answers on ``socket_dir``'s socket."""
    from .client import Connection

    path = socket_dir / SOCKET_NAME
    if not os.path.lexists(path):
        return None
    try:
        conn = Connection(path, connect_timeout=2.0)
    except ArbiterUnavailableError:
        return None
    try:
        return conn.ask({"op": "hello"}, timeout=5.0)
    except (ArbiterUnavailableError, TimeoutError):
        return None
    finally:
        conn.close()


def migrate_old_run_dir(say, path: Path = DEFAULT_RUN_DIR) -> None:
    """Remove the old shared run folder (see the module), or refuse while leases live."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        say(f"removed {str(path)!r} (not a folder; owner {user_name(st.st_uid)})")
        return
    procs.forget_locks()
    takers = procs.lock_takers() or {}
    held = []
    with contextlib.suppress(OSError):
        for name in os.listdir(path):
            if not name.startswith(("slot.", "lease.")):
                continue
            with contextlib.suppress(OSError):
                fst = os.lstat(path / name)
                for pid in takers.get((fst.st_dev, fst.st_ino), []):
                    held.append((pid, name))
    held += procs.deleted_files_open_under(path, "slot.")
    if held:
        pids = sorted({p for p, _ in held})
        raise SchedulerConfigError(
            f"the old shared run directory {str(path)!r} still has live leases (pid(s) "
            + ", ".join(f"{p} ({user_name(procs.uid_of(p) or 0)})" for p in pids[:10])
            + "): the service would give their GPUs to others. Wait for these jobs to end "
            "(or end them), then run `bioaccel admin init` again"
        )
    shutil.rmtree(path)  # fd-based on Linux: a symlink inside is removed, never followed
    say(
        f"removed the old shared run directory {str(path)!r} (owner {user_name(st.st_uid)}; "
        "no job held a lease there): every client uses the service from now on"
    )


def install(
    *,
    slots_per_gpu: int | None = None,
    shares_file: str | None = None,
    max_waiting: int | None = None,
    max_connections: int | None = None,
    policy: str | None = None,
    state_dir: str | None = None,
    socket_dir: str | None = None,
    start: bool = True,
    say=print,
) -> dict:
    """What ``bioaccel admin init`` does (see the module). Returns the configuration."""
    from .arbiterd import CONFIG, read_config, write_config

    if os.getuid() != 0:
        raise SchedulerConfigError(
            "bioaccel admin init must run as root (sudo): the service's state must belong to "
            "nobody but root"
        )
    if slots_per_gpu is not None and not 1 <= slots_per_gpu <= MAX_SLOTS:
        raise SchedulerConfigError(
            f"--slots-per-gpu {slots_per_gpu}: expected a whole number 1..{MAX_SLOTS}"
        )
    state = Path(os.path.abspath(state_dir)) if state_dir else STATE_DIR
    sock = Path(os.path.abspath(socket_dir)) if socket_dir else SOCKET_DIR
    shares = shares_file or os.environ.get("BIOACCEL_SHARES_FILE") or str(SHARES_FILE)
    shares = os.path.abspath(shares)
    if os.path.lexists(shares):
        load_shares(0, {"BIOACCEL_SHARES_FILE": shares})  # refused now, not at every request
    if state_dir is None and socket_dir is None:
        migrate_old_run_dir(say)
    fd = secure_dir(state, 0o700, say)
    try:
        old = read_config(state) if os.path.lexists(state / CONFIG) else None
        config = dict(old or {"version": 1})
        devices = [
            {"token": token_of(d), "name": d.name, "memory_gb": d.memory_gb}
            for d in discover_devices()
        ]
        if old is not None:
            known = {d["token"] for d in old["devices"]}
            devices = old["devices"] + [d for d in devices if d["token"] not in known]
        config["devices"] = devices
        config["slots_per_gpu"] = int(slots_per_gpu or config.get("slots_per_gpu", 1))
        for key, value in (
            ("max_waiting", max_waiting),
            ("max_connections", max_connections),
            ("policy", policy),
        ):
            if value is not None or key not in config:
                config[key] = value if value is not None else config.get(key)
        config["shares_file"] = shares
        config = {k: v for k, v in config.items() if v is not None or k == "policy"}
        write_config(fd, config)
        config = read_config(state)
    finally:
        os.close(fd)
    say(
        f"{state}/{CONFIG}: {len(config['devices'])} GPU(s) "
        f"({', '.join(d['token'] for d in config['devices']) or 'none'}) x "
        f"{config['slots_per_gpu']} slot(s), policy {config['policy'] or 'from the shares file'}, "
        f"shares file {config['shares_file']}, at most {config['max_waiting']} waiting "
        f"request(s) and {config['max_connections']} connection(s) per user"
    )
    if not start:
        say(
            f"not started (--no-start): run `bioaccel arbiterd --state-dir {state} "
            f"--socket-dir {sock}` as root"
        )
        return config
    hello = _running(sock)
    if hello is not None:
        changed = old is not None and (
            old["devices"] != config["devices"] or old["slots_per_gpu"] != config["slots_per_gpu"]
        )
        if changed:
            raise SchedulerConfigError(
                f"the service (pid {hello.get('pid')}) runs with other GPUs or slots: restart "
                "it to apply them (`systemctl restart bioaccel-arbiterd`, or stop pid "
                f"{hello.get('pid')} and run `bioaccel arbiterd`); running jobs are ended"
            )
        from .client import Connection

        conn = Connection(sock / SOCKET_NAME)
        try:
            conn.ask({"op": "reload"})
        finally:
            conn.close()
        say(f"the service (pid {hello.get('pid')}) reloaded its shares file, policy and limits")
        return config
    env = "".join(
        f"Environment={k}={os.environ[k]}\n"
        for k in ("BIOACCEL_VIRTUAL_GPUS",)
        if os.environ.get(k)
    )
    if _systemd():
        UNIT.write_text(
            UNIT_TEXT.format(
                exe=sys.executable,
                state=state,
                sock=sock,
                runtime=sock.relative_to("/run") if sock.is_relative_to("/run") else "bioaccel",
                statename=state.relative_to("/var/lib")
                if state.is_relative_to("/var/lib")
                else "bioaccel",
                env=env,
            )
        )
        subprocess.run(["systemctl", "daemon-reload"], check=True)
        subprocess.run(["systemctl", "enable", "--now", UNIT.stem], check=True)
        say(f"wrote {UNIT} and started it (systemctl enable --now {UNIT.stem})")
    else:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bioaccel.cli",
                "arbiterd",
                "--state-dir",
                str(state),
                "--socket-dir",
                str(sock),
            ],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        say(
            "this host has no systemd: started `bioaccel arbiterd` directly (it detached; log "
            f"{state}/arbiterd.log). Start it at boot the same way (e.g. from rc.local), or "
            "run `bioaccel arbiterd --foreground` under a supervisor"
        )
    deadline = time.monotonic() + 15
    while (hello := _running(sock)) is None:
        if time.monotonic() > deadline:
            raise SchedulerConfigError(
                f"the service did not answer on {sock / SOCKET_NAME} within 15 s: see "
                f"{state}/arbiterd.log"
            )
        time.sleep(0.05)
    say(f"the service answers on {sock / SOCKET_NAME} (pid {hello.get('pid')})")
    return config


def run_daemon(state_dir: str | None, socket_dir: str | None, foreground: bool) -> None:
    """``bioaccel arbiterd``: checks it can start (root, configuration), then detaches
    (unless ``foreground``) and serves until SIGTERM."""
    from .arbiterd import Arbiter

    if os.getuid() != 0:
        raise SchedulerConfigError(
            "bioaccel arbiterd must run as root: it alone reads its state and ends jobs"
        )
    state = Path(os.path.abspath(state_dir)) if state_dir else STATE_DIR
    sock = Path(os.path.abspath(socket_dir)) if socket_dir else SOCKET_DIR
    if foreground:
        Arbiter(state, sock).serve()
        return
    r, w = os.pipe()
    if os.fork():  # the caller returns once the service listens (or says why not)
        os.close(w)
        with os.fdopen(r, "rb") as f:
            status = f.read()
        if status != b"ok":
            raise SchedulerConfigError(status.decode(errors="replace") or "arbiterd failed")
        return
    os.close(r)
    os.setsid()
    if os.fork():
        os._exit(0)
    try:
        fd = secure_dir(state, 0o700)
        log = os.open(
            "arbiterd.log",
            os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=fd,
        )
        os.close(fd)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir("/")
        sys.stdout = open(1, "w", buffering=1, closefd=False)
        sys.stderr = open(2, "w", buffering=1, closefd=False)
        arbiter = Arbiter(state, sock)
    except BaseException as exc:  # noqa: BLE001 -- told to the caller, then exit
        os.write(w, f"bioaccel arbiterd: {exc}".encode())
        os._exit(2)
    os.write(w, b"ok")
    os.close(w)
    try:
        arbiter.serve()
    finally:
        os._exit(0)
