"""The client side of the arbiter service (:mod:`.arbiterd`): leases, nested leases, the
snapshot ``bioaccel gpus`` prints and the policy view of the Snakemake plugin.

Every call fails closed: a service that refuses connections, dies or closes the connection
raises :class:`~bioaccel.errors.ArbiterUnavailableError` (one line naming the socket), never
a fallback to another mode.
"""

from __future__ import annotations

import json
import os
import select
import socket
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ..devices import Device, discover_devices
from ..errors import (
    AccountError,
    ArbiterUnavailableError,
    LeaseTimeoutError,
    QueueLimitError,
    SchedulerConfigError,
)
from .display import token_of
from .held import ENV_HELD, ENV_LEASE, Lease
from .identity import SharesConfig
from .service import MAX_LINE, START_HINT, find_socket

_ERRORS = {
    "ValueError": ValueError,
    "TypeError": ValueError,
    "KeyError": ValueError,
    "AccountError": AccountError,
    "QueueLimitError": QueueLimitError,
    "SchedulerConfigError": SchedulerConfigError,
}


class Connection:
    """One connection to the service (one lease at most)."""

    def __init__(self, path: Path, connect_timeout: float = 10.0):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        self.sock.settimeout(connect_timeout)
        try:
            self.sock.connect(str(path))
        except (ConnectionRefusedError, FileNotFoundError) as exc:
            self.sock.close()
            raise ArbiterUnavailableError(
                f"the bioaccel arbiter service is not running (its socket {str(path)!r} "
                f"refuses connections: {exc.strerror}); no GPU can be leased until it runs: "
                f"{START_HINT}"
            ) from None
        except TimeoutError:
            self.sock.close()
            raise ArbiterUnavailableError(
                f"the bioaccel arbiter service at {str(path)!r} did not accept the connection "
                f"within {connect_timeout:g} s"
            ) from None
        self.buf = bytearray()

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, obj: dict) -> None:
        try:
            self.sock.settimeout(30.0)
            self.sock.sendall((json.dumps(obj) + "\n").encode())
        except OSError as exc:
            raise self.lost(exc) from None

    def lost(self, exc: Exception | None = None) -> ArbiterUnavailableError:
        why = f" ({exc})" if exc else ""
        return ArbiterUnavailableError(
            f"the bioaccel arbiter service at {str(self.path)!r} closed the connection{why}: "
            "it stopped or restarted; no GPU is leased"
        )

    def recv(self, timeout: float | None = None) -> dict:
        """The next answer; :class:`LeaseTimeoutError` after ``timeout`` seconds (None:
        wait)."""
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line = bytes(self.buf[:nl])
                del self.buf[: nl + 1]
                return json.loads(line)
            self.sock.settimeout(timeout)
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                raise LeaseTimeoutError("timed out") from None
            except OSError as exc:
                raise self.lost(exc) from None
            if not data:
                raise self.lost()
            self.buf += data
            if len(self.buf) > 64 * MAX_LINE:
                raise self.lost(ValueError("an answer too long"))

    def ask(self, obj: dict, timeout: float | None = 30.0) -> dict:
        self.send(obj)
        return _checked(self.recv(timeout))

    def closed_by_peer(self) -> bool:
        """The service closed this connection (it died): checked without blocking."""
        try:
            ready, _, _ = select.select([self.sock], [], [], 0)
            if not ready:
                return False
            self.sock.settimeout(0)
            data = self.sock.recv(65536, socket.MSG_PEEK)
            return not data
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            return True

    def close(self) -> None:
        self.sock.close()


def _checked(answer: dict) -> dict:
    if not isinstance(answer, dict):
        raise ArbiterUnavailableError(f"the arbiter service answered {answer!r:.80}")
    if answer.get("ok"):
        return answer
    kind = _ERRORS.get(answer.get("type"), SchedulerConfigError)
    raise kind(str(answer.get("error", "refused by the arbiter service")))


def connect(path: Path | None = None) -> Connection:
    path = path or find_socket()
    if path is None:
        raise SchedulerConfigError(f"no arbiter service is in force here: {START_HINT}")
    return Connection(path)


@dataclass
class ServiceLease(Lease):
    """A lease of the service: held while :attr:`conn` is open."""

    conn: Connection | None = field(default=None, repr=False)
    left: list = field(default_factory=list, repr=False)

    def wiped(self) -> bool:
        return False

    def register_job(self, pid: int) -> None:
        """Tell the service which child of this process is the job (before it runs)."""
        self.conn.ask({"op": "job", "pid": pid})

    def release(self, exit_code: int | None = None) -> list[dict]:
        """End the lease: the service ends what is left of the job and returns what that was
        (``[{"pid", "how", "cmd"}]``)."""
        if self.conn is None:
            return self.left
        try:
            self.left = self.conn.ask(
                {"op": "release", "exit": exit_code if exit_code is not None else 0}
            ).get("left", [])
        finally:
            self.conn.close()
            self.conn = None
        return self.left

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def __enter__(self) -> ServiceLease:
        # what this process starts during the lease names it: the service finds (and ends)
        # it even after this process is gone, and a nested lease() is recognised
        self._marks = {k: os.environ.get(k) for k in (ENV_HELD, ENV_LEASE)}
        os.environ[ENV_HELD] = self.visible
        os.environ[ENV_LEASE] = self.request_id
        return super().__enter__()

    def __exit__(self, *exc) -> None:
        for k, v in getattr(self, "_marks", {}).items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        super().__exit__(*exc)


def acquire(
    gpus: int = 1,
    slots: int | None = None,
    mem_gb: float | None = None,
    timeout: float | None = None,
    priority: float = 0,
    user: str | None = None,
    predicted_s: float | None = None,
    label: str = "",
    *,
    kind: str = "command",
    cells: float | None = None,
    devices: list[Device] | None = None,
    path: Path | None = None,
    on_queued=None,
) -> ServiceLease:
    """Wait for a lease from the service (see :func:`bioaccel.sched.lease`)."""
    if isinstance(gpus, bool) or int(gpus) != gpus or gpus < 1:
        raise ValueError(f"gpus must be a positive integer, got {gpus!r}")
    devices = discover_devices() if devices is None else devices
    by_token = {token_of(d): d for d in devices}
    conn = connect(path)
    try:
        conn.ask(
            {
                "op": "acquire",
                "gpus": int(gpus),
                "slots": slots,
                "mem_gb": mem_gb,
                "priority": priority,
                "account": user,
                "predicted_s": predicted_s,
                "label": label,
                "kind": kind,
                "cells": cells,
                "devices": list(by_token) if devices else None,
            }
        )
        if on_queued is not None:
            on_queued()
        try:
            answer = _checked(conn.recv(timeout))
        except LeaseTimeoutError:
            raise LeaseTimeoutError(
                f"no lease on {gpus} GPU(s) within {timeout} s from the arbiter service "
                "(`bioaccel gpus` shows who holds them)"
            ) from None
        if answer.get("event") != "granted":
            raise ArbiterUnavailableError(f"the arbiter service answered {answer!r:.80}")
    except BaseException:
        conn.close()
        raise
    chosen = [by_token.get(t) or _device_of(t) for t in answer["gpus"]]
    return ServiceLease(chosen, answer["slots"], answer["id"], conn=conn)


def _device_of(token: str) -> Device:
    visible = token.split("-", 1)[1]
    return Device(0, visible, f"GPU {visible}", 0, (0, 0), token.startswith("vgpu-"))


def inherited(env=None) -> Lease | None:
    """The lease of the ``gpu-run`` this process runs under, if the service says this process
    belongs to it (``BIOACCEL_LEASE`` alone proves nothing: a stale or copied value is
    ignored with a warning)."""
    env = os.environ if env is None else env
    visible = env.get(ENV_HELD)
    if visible is None:
        return None
    rid = env.get(ENV_LEASE, "")
    conn = connect()
    try:
        answer = conn.ask({"op": "inside", "lease": rid})
    finally:
        conn.close()
    if not answer.get("inside"):
        warnings.warn(
            f"{ENV_HELD}={visible!r} is not backed by a live lease this process is inside "
            f"({answer.get('why')}): ignored, the GPUs are leased from the arbiter service",
            stacklevel=3,
        )
        return None
    devices = discover_devices(env)
    return Lease(devices, 0, rid, inherited=True)


def status(path: Path | None = None) -> dict:
    conn = connect(path)
    try:
        return conn.ask({"op": "status"})["status"]
    finally:
        conn.close()


def predict(kind: str, cells: float) -> float | None:
    conn = connect()
    try:
        return conn.ask({"op": "predict", "kind": kind, "cells": cells})["predicted_s"]
    finally:
        conn.close()


def policy_view() -> tuple[SharesConfig, str, dict, dict, list]:
    """(shares config, policy name, shares, usage per account, recent runs) of the service."""
    from .history import Run

    conn = connect()
    try:
        a = conn.ask({"op": "policy"})
    finally:
        conn.close()
    shares = SharesConfig(
        Path("(the arbiter service's shares file)"),
        dict(a["shares"]),
        {k: set(v) for k, v in a["members"].items()},
        a["policy"],
    )
    runs = [Run(r[0], r[1], r[2], r[3], r[4], None, r[5], r[6], r[7]) for r in a["runs"]]
    return shares, a["policy"], dict(a["shares"]), dict(a["usage"]), runs
