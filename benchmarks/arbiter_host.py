"""An arbiter service of its own for a test or a benchmark (run as root): state and socket
folders under a fresh root folder, virtual GPUs, and the daemon in the foreground as a child.

Used by ``tests/sched/test_sched_arbiterd.py`` and ``benchmarks/bench_arbiter.py``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


class Service:
    """``bioaccel admin init --no-start`` + ``bioaccel arbiterd --foreground`` in ``base``."""

    def __init__(self, gpus: int = 4, base: Path | None = None, shares: str = "", **config):
        self.base = Path(base or tempfile.mkdtemp(prefix="bioaccel-arbiterd-", dir="/tmp"))
        os.chmod(self.base, 0o755)
        self.state = self.base / "state"
        self.sock_dir = self.base / "run"
        self.socket = self.sock_dir / "arbiter.sock"
        self.shares = self.base / "shares"
        self.shares.write_text(shares)
        os.chmod(self.shares, 0o644)
        self.gpus = gpus
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "PYTHONPATH": str(ROOT),
            "BIOACCEL_VIRTUAL_GPUS": str(gpus),
            "HOME": "/",
        }
        self.log = self.base / "arbiterd.log"
        self.proc: subprocess.Popen | None = None
        args = [
            "admin",
            "init",
            "--state-dir",
            str(self.state),
            "--socket-dir",
            str(self.sock_dir),
            "--shares-file",
            str(self.shares),
            "--no-start",
        ]
        for key, value in config.items():
            args += [f"--{key.replace('_', '-')}", str(value)]
        done = self._cli(args)
        if done.returncode:
            raise RuntimeError(done.stderr)

    def _cli(self, args):
        return subprocess.run(
            [sys.executable, "-m", "bioaccel.cli", *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    def user_env(self, **extra) -> dict:
        """An environment for a user's process that uses this service."""
        env = {
            "PATH": self.env["PATH"],
            "HOME": "/",
            "BIOACCEL_VIRTUAL_GPUS": str(self.gpus),
            "BIOACCEL_ARBITER_SOCKET": str(self.socket),
        }
        env.update(extra)
        return env

    def start(self) -> Service:
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "bioaccel.cli",
                    "arbiterd",
                    "--foreground",
                    "--state-dir",
                    str(self.state),
                    "--socket-dir",
                    str(self.sock_dir),
                ],
                env=self.env,
                stdout=log,
                stderr=log,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 30
        while not self.answers():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"arbiterd did not start: {self.log.read_text()}")
            time.sleep(0.02)
        return self

    def answers(self) -> bool:
        import socket as so

        s = so.socket(so.AF_UNIX, so.SOCK_STREAM)
        s.settimeout(2)
        try:
            s.connect(str(self.socket))
            s.sendall(b'{"op": "hello"}\n')
            return b'"ok": true' in s.recv(65536)
        except OSError:
            return False
        finally:
            s.close()

    def ask(self, request: dict) -> dict:
        """One request as root, its answer."""
        import socket as so

        s = so.socket(so.AF_UNIX, so.SOCK_STREAM)
        s.settimeout(10)
        try:
            s.connect(str(self.socket))
            s.sendall((json.dumps(request) + "\n").encode())
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 20)
                if not chunk:
                    break
                buf += chunk
            return json.loads(buf)
        finally:
            s.close()

    def status(self) -> dict:
        return self.ask({"op": "status"})["status"]

    def held(self) -> list[dict]:
        return [h for d in self.status()["devices"] for h in d["holders"]]

    def kill(self, sig=signal.SIGKILL) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(10)

    def close(self) -> None:
        self.kill(signal.SIGTERM)
        subprocess.run(["rm", "-rf", str(self.base)], check=False)
