"""Two Unix users sharing one server's (virtual) GPUs through the host-wide arbiter.

Used by ``bench_sched.py`` (the two-user table) and ``tests/sched/test_sched_multiuser.py``.

The users' processes are forks of this one that switch to the user's uid (``setgroups``,
``setgid``, ``setuid``): the kernel sees them as that user, and nothing has to execute an
interpreter the user may not be able to read (it may live under root's home). Users are
created with ``useradd`` when this runs as root and they are missing.

Without root, :func:`fair_share_run` falls back to two fair-share *accounts* of the one Unix
user (the shares file lists that user in both).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

USERS = ("alice", "bob")


def preload() -> None:
    """Import here, as the invoking user, what the forked users' code imports lazily (they
    may not be able to read this interpreter's library)."""
    import io

    import click  # noqa: F401
    import rich.console
    import rich.table
    import rich.text

    from bioaccel.cli import main
    from bioaccel.devices import discover_devices
    from bioaccel.sched import admin, broker, held, history, procs, run  # noqa: F401

    main.get_command(None, "gpu-run")  # the scheduling commands' module

    # rich imports some modules on first render (emoji codes, cells): render once here
    table = rich.table.Table(title="t")
    table.add_column("c")
    table.add_row(rich.text.Text("[x] :smile:"))
    rich.console.Console(file=io.StringIO(), width=80).print(table, "[b]x[/b] :smile:")
    discover_devices({"BIOACCEL_VIRTUAL_GPUS": "1"})


def users_unavailable(names=USERS) -> str | None:
    """None if this process can run code as each of ``names`` (creating them as root);
    else why not."""
    if os.getuid() != 0:
        return (
            f"running as {pwd.getpwuid(os.getuid()).pw_name}, not root: cannot run as "
            f"other Unix users ({', '.join(names)})"
        )
    for name in names:
        try:
            pwd.getpwnam(name)
        except KeyError:
            exe = shutil.which("useradd")
            if exe is None:
                return f"user {name!r} is missing and there is no useradd to create it"
            done = subprocess.run(
                [exe, "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                capture_output=True,
                text=True,
            )
            if done.returncode:
                return f"useradd {name}: {done.stderr.strip()}"
    return None


def shared_dir(prefix: str) -> Path:
    """A fresh folder every user may write in (sticky, like /tmp)."""
    path = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    os.chmod(path, 0o1777)
    return path


def spawn_as(
    user: str | None,
    fn,
    *args,
    env: dict | None = None,
    umask: int = 0o022,
    output: str | os.PathLike | None = None,
) -> int:
    """Fork; the child becomes ``user`` (None: stays who it is), sets ``env`` and ``umask``,
    runs ``fn(*args)`` in a process group of its own and exits 0 (its ``SystemExit`` code if
    it raises one, 1 on another exception); ``output``: a file for its stdout and stderr, opened
    before it changes user. Returns the child's pid."""
    preload()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.setpgid(0, 0)
        if output is not None:
            fd = os.open(output, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            sys.stdout = open(1, "w", buffering=1, closefd=False)
            sys.stderr = open(2, "w", buffering=1, closefd=False)
        if user is not None:
            pw = pwd.getpwnam(user)
            os.setgroups([])
            os.setgid(pw.pw_gid)
            os.setuid(pw.pw_uid)
        os.umask(umask)
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        os.chdir("/")
        fn(*args)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def wait(pid: int, timeout: float = 120.0) -> int:
    """The exit code of child ``pid`` (-N: killed by signal N); kills it after ``timeout``."""
    deadline = time.time() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.time() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise TimeoutError(f"child {pid} still ran after {timeout} s")
        time.sleep(0.01)


def kill_marked(user: str, marker: str) -> None:
    """SIGKILL the processes of ``user`` whose environment holds ``marker`` (e.g.
    ``BIOACCEL_RUN_DIR=<a test's folder>``): what a test started, even jobs that outlived
    their wrappers, and nothing else of that user."""
    uid = pwd.getpwnam(user).pw_uid
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid != uid:
                continue
            with open(f"/proc/{name}/environ", "rb") as f:
                if marker.encode() in f.read().split(b"\0"):
                    os.kill(int(name), signal.SIGKILL)
        except OSError:
            continue


def run_as(
    user: str | None,
    fn,
    *args,
    env: dict | None = None,
    timeout: float = 120.0,
    umask: int = 0o022,
    output: str | os.PathLike | None = None,
) -> int:
    return wait(spawn_as(user, fn, *args, env=env, umask=umask, output=output), timeout)


def _job_stream(log: str, jobs: int, hold_s: float, account: str | None) -> None:
    """Runs as one user: ``jobs`` leases of one GPU, one after another, each held ``hold_s``
    and recorded in the history as ``gpu-run`` records it."""
    from bioaccel.sched import GpuBroker, Run

    broker = GpuBroker(poll_s=0.01)
    with open(log, "a") as out:
        for k in range(jobs):
            held = broker.acquire(1, timeout=300, user=account, label=f"bench job {k}")
            start = time.time()
            time.sleep(hold_s)
            end = time.time()
            held.release()
            charged = broker.config.check_account(pwd.getpwuid(os.getuid()).pw_name, account)
            broker.history.record(
                Run(
                    "bench",
                    charged,
                    held.devices[0].name,
                    1,
                    None,
                    None,
                    start,
                    end,
                    0,
                    f"bench job {k}",
                )
            )
            out.write(
                json.dumps({"account": charged, "gpu": held.visible, "start": start, "end": end})
                + "\n"
            )
            out.flush()


def fair_share_run(
    shares: dict[str, float],
    *,
    gpus: int = 1,
    workers: int = 2,
    jobs: int = 8,
    hold_s: float = 0.15,
    as_users: bool | None = None,
) -> dict:
    """Both users (or accounts) run ``workers`` job streams at once on ``gpus`` virtual GPUs
    under the ``fair`` policy with ``shares`` (from a shares file). Returns per account the
    GPU-seconds used while both still had jobs waiting (the contested window), their
    fraction and the configured fraction, plus every job (for overlap checks)."""
    names = list(shares)
    if as_users is None:
        as_users = users_unavailable(names) is None
    me = pwd.getpwuid(os.getuid()).pw_name
    work = shared_dir("bioaccel-two-users-")
    try:
        run = work / "run"
        shares_file = work / "shares"
        lines = ["policy fair"] + [
            f"{a} {s:g}" + ("" if as_users else f" {me}") for a, s in shares.items()
        ]
        shares_file.write_text("\n".join(lines) + "\n")
        os.chmod(shares_file, 0o644)
        if as_users:  # the administrator's `bioaccel admin init`
            from bioaccel.devices import discover_devices
            from bioaccel.sched import init_run_dir

            init_run_dir(
                run,
                discover_devices({"BIOACCEL_VIRTUAL_GPUS": str(gpus)}),
                shares_file=str(shares_file),
            )
        else:  # a private run directory of this user's
            os.mkdir(run, 0o700)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": "/",
            "BIOACCEL_RUN_DIR": str(run),
            "BIOACCEL_SHARES_FILE": str(shares_file),
            "BIOACCEL_VIRTUAL_GPUS": str(gpus),
        }
        pids = []
        for name in names:
            for w in range(workers):
                log = work / f"{name}-{w}.jsonl"
                pids.append(
                    spawn_as(
                        name if as_users else None,
                        _job_stream,
                        str(log),
                        jobs,
                        hold_s,
                        None if as_users else name,
                        env=env,
                    )
                )
        codes = [wait(pid, 600) for pid in pids]
        if any(codes):
            raise RuntimeError(f"job streams exited with {codes}")
        done = [
            json.loads(line)
            for p in sorted(work.glob("*.jsonl"))
            for line in p.read_text().splitlines()
        ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t0 = min(j["start"] for j in done)
    window = min(max(j["end"] for j in done if j["account"] == a) for a in names)
    used = {
        a: sum(max(0.0, min(j["end"], window) - j["start"]) for j in done if j["account"] == a)
        for a in names
    }
    total_used = sum(used.values()) or 1.0
    total_share = sum(shares.values())
    return {
        "mode": "Unix users" if as_users else f"accounts of {me}",
        "gpus": gpus,
        "window_s": window - t0,
        "jobs": done,
        "accounts": {
            a: {
                "gpu_s": used[a],
                "fraction": used[a] / total_used,
                "configured": shares[a] / total_share,
            }
            for a in names
        },
    }


def owner_mode(path: Path) -> tuple[str, int]:
    st = os.lstat(path)
    return pwd.getpwuid(st.st_uid).pw_name, stat.S_IMODE(st.st_mode)
