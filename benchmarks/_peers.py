"""What every peer benchmark shares: timing a program as a user runs it, and saying what is
compared (each side's command line or call and its thread count, printed side by side).

The rule of benchmarks/: both sides get the same threads and the same work, best of >= 3 runs,
bioaccel and the peer interleaved (this machine is shared and its speed drifts).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def show_compared(what: str, sides: list[tuple[str, str, int]]) -> None:
    """Print ``what`` is compared and, for each (name, command or call, threads), one line."""
    print(f"compared: {what}")
    width = max(len(name) for name, _, _ in sides)
    for name, cmd, threads in sides:
        print(f"  {name:{width}s}  [{threads} thread{'s' if threads != 1 else ''}]  {cmd}")


def command_line(cmd: list[str], stdout: str | os.PathLike | None = None) -> str:
    """The shell form of ``cmd`` (``python`` for this interpreter), with ``> stdout``."""
    words = ["python" if w == sys.executable else w for w in map(str, cmd)]
    text = shlex.join(words)
    return f"{text} > {stdout}" if stdout is not None else text


def run_program(
    cmd: list[str], stdout: str | os.PathLike | None = None, env: dict | None = None
) -> tuple[float, float]:
    """Run ``cmd`` to completion: (wall seconds, peak RSS of the process in MiB).

    The peak comes from GNU time (``/usr/bin/time -f %M``) when it is there: a child forked
    from this Python process would inherit its high-water mark through exec, so wait4's
    figure is never below the benchmark's own RSS. Raises ``RuntimeError`` naming the command
    and its stderr tail when it fails."""
    gnu_time = Path("/usr/bin/time")
    with tempfile.NamedTemporaryFile(suffix=".rss") as rss_file:
        full = [str(c) for c in cmd]
        if gnu_time.exists():
            full = [str(gnu_time), "-f", "%M", "-o", rss_file.name, *full]
        with open(stdout if stdout is not None else os.devnull, "wb") as out:
            t0 = time.perf_counter()
            proc = subprocess.Popen(full, stdout=out, stderr=subprocess.PIPE, env=env)
            err = proc.stderr.read()
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - t0
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            raise RuntimeError(
                f"{command_line(cmd)} failed (exit {code}): {err.decode(errors='replace')[-500:]}"
            )
        text = Path(rss_file.name).read_text().split() if gnu_time.exists() else []
        peak_kib = float(text[-1]) if text else float(usage.ru_maxrss)
    return wall, peak_kib / 1024


def bioaccel_cli() -> list[str]:
    """``python -m bioaccel.cli`` of this checkout (its directory first on PYTHONPATH)."""
    return [sys.executable, "-m", "bioaccel.cli"]


def checkout_env(**extra: str) -> dict:
    """The environment with this checkout first on PYTHONPATH (children import this bioaccel)."""
    root = str(Path(__file__).resolve().parents[1])
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
