"""What the kernel says about locks and processes (Linux ``/proc``), so that the arbiter and
``bioaccel gpus`` never take a record's word for who holds a GPU.

- :func:`lock_takers`: every ``flock`` lock of the host (``/proc/locks``) as
  ``(device, inode) -> pids``; the pid is the process that *took* the lock, which may have
  exited while a process that inherited the descriptor still holds it
  (:func:`processes_holding` finds those, as ``fuser`` does).
- :func:`start_time`, :func:`uid_of`, :func:`alive`, :func:`group_members`, :func:`ancestors`:
  facts about a process from ``/proc/<pid>``, which nobody but the kernel writes.

Every function answers ``None`` (or an empty list) where ``/proc`` says nothing (another
operating system, a hidden ``/proc``); callers then fall back to probing the locks.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from pathlib import Path

PROC = Path("/proc")


_TAKERS: tuple[float, dict | None] = (-1.0, None)
#: One reading of ``/proc/locks`` serves a pass (a pass starts with :func:`forget_locks`).
TAKERS_TTL_S = 0.02


def lock_takers() -> dict[tuple[int, int], list[int]] | None:
    """``(st_dev, st_ino) -> [pid, ...]`` of every granted lock (waiters are left out), or
    None if ``/proc/locks`` cannot be read (read at most every :data:`TAKERS_TTL_S`)."""
    global _TAKERS
    now = time.monotonic()
    if 0 <= now - _TAKERS[0] < TAKERS_TTL_S:
        return _TAKERS[1]
    _TAKERS = (now, _read_locks())
    return _TAKERS[1]


def forget_locks() -> None:
    """The next :func:`lock_takers` reads ``/proc/locks`` afresh (a pass starts)."""
    global _TAKERS
    _TAKERS = (-1.0, None)


def _read_locks() -> dict[tuple[int, int], list[int]] | None:
    try:
        text = (PROC / "locks").read_text()
    except OSError:
        return None
    out: dict[tuple[int, int], list[int]] = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 6 or parts[1] == "->":  # "N: -> FLOCK ...": a blocked waiter
            continue
        try:
            pid = int(parts[4])
            major, minor, ino = parts[5].split(":")
            key = (os.makedev(int(major, 16), int(minor, 16)), int(ino))
        except ValueError:
            continue
        out.setdefault(key, []).append(pid)
    return out


def _stat_fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state first)."""
    try:
        text = (PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    return text[text.rfind(")") + 2 :].split()


def alive(pid: int) -> bool:
    """``pid`` exists and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def uid_of(pid: int) -> int | None:
    try:
        return os.stat(PROC / str(pid)).st_uid
    except OSError:
        return None


@functools.lru_cache(maxsize=1)
def _boot_time() -> float | None:
    try:
        for line in (PROC / "stat").read_text().splitlines():
            if line.startswith("btime "):
                return float(line.split()[1])
    except OSError:
        pass
    return None


def start_time(pid: int) -> float | None:
    """When ``pid`` started (seconds since the epoch), from the kernel."""
    fields = _stat_fields(pid)
    boot = _boot_time()
    if fields is None or boot is None or len(fields) < 20:
        return None
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def parent_of(pid: int) -> int | None:
    fields = _stat_fields(pid)
    return int(fields[1]) if fields else None


def ancestors(pid: int | None = None) -> list[int]:
    """``pid``'s parent, grandparent, ... up to pid 1 (default: this process's)."""
    pid = os.getpid() if pid is None else pid
    out = []
    for _ in range(4096):
        parent = parent_of(pid)
        if not parent or parent in out:
            break
        out.append(parent)
        pid = parent
    return out


def _pids() -> list[int]:
    try:
        return [int(n) for n in os.listdir(PROC) if n.isdigit()]
    except OSError:
        return []


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes of process group ``pgid``."""
    out = []
    for pid in _pids():
        fields = _stat_fields(pid)
        if fields and len(fields) > 2 and fields[2] == str(pgid) and fields[0] not in ("Z", "X"):
            out.append(pid)
    return sorted(out)


def processes_holding(dev: int, ino: int) -> list[int]:
    """Processes with a descriptor open on file ``(dev, ino)`` (as ``fuser``; only those this
    user may inspect: all of them for root)."""
    out = []
    for pid in _pids():
        with contextlib.suppress(OSError):
            for fd in os.listdir(PROC / str(pid) / "fd"):
                with contextlib.suppress(OSError):
                    st = os.stat(PROC / str(pid) / "fd" / fd)
                    if (st.st_dev, st.st_ino) == (dev, ino):
                        out.append(pid)
                        break
    return sorted(out)


def has_open(pid: int, dev: int, ino: int) -> bool:
    """Process ``pid`` has a descriptor open on file ``(dev, ino)``."""
    base = PROC / str(pid) / "fd"
    with contextlib.suppress(OSError):
        for fd in os.listdir(base):
            with contextlib.suppress(OSError):
                st = os.stat(base / fd)
                if (st.st_dev, st.st_ino) == (dev, ino):
                    return True
    return False


def deleted_files_open_under(folder: Path, prefix: str) -> list[tuple[int, str]]:
    """``(pid, name)`` of files named ``prefix*`` in ``folder`` that were deleted while a
    process keeps them open (a wiped run folder; root sees every process)."""
    out = []
    base = str(folder).rstrip("/") + "/"
    for pid in _pids():
        with contextlib.suppress(OSError):
            for fd in os.listdir(PROC / str(pid) / "fd"):
                with contextlib.suppress(OSError):
                    target = os.readlink(PROC / str(pid) / "fd" / fd)
                    if target.startswith(base) and target.endswith(" (deleted)"):
                        name = target[len(base) : -len(" (deleted)")]
                        if "/" not in name and name.startswith(prefix):
                            out.append((pid, name))
    return sorted(set(out))
