"""``bioaccel arbiterd``: the host's GPU arbiter as one root-owned process.

One process decides. Its state (``config.json``, the leases, the run history and the decayed
usage per account, in SQLite) lies in a folder only root can read (:data:`.service.STATE_DIR`);
clients talk to it over a Unix stream socket (:data:`.service.SOCKET_DIR`), and who they are
comes from the kernel (``SO_PEERCRED``: uid, gid, pid at connect), never from what they send.

Protocol: one JSON object per line, each way. A connection carries at most one request for
GPUs; its lease lives exactly as long as the connection::

    -> {"op": "acquire", "gpus": 1, "slots": null, "mem_gb": null, "priority": 0,
        "account": null, "predicted_s": null, "kind": "command", "cells": null,
        "label": "...", "devices": ["vgpu-0", ...] | null}
    <- {"ok": true, "event": "queued", "id": "..."}
    <- {"ok": true, "event": "granted", "id": "...", "gpus": ["vgpu-2"], "slots": 1}
    -> {"op": "job", "pid": 1234}      the job (a child of the client, stopped before exec)
    <- {"ok": true, "event": "job"}
    -> {"op": "release", "exit": 0}
    <- {"ok": true, "event": "released", "left": [{"pid", "how", "cmd"}]}

``{"op": "status"}`` answers the snapshot of :mod:`.snapshot`; ``{"op": "inside", "lease":
id}`` whether the asking process belongs to that lease of its own user (a nested
``gpu-run``/``lease()``); ``{"op": "predict", "kind", "cells"}`` a runtime from the history;
``{"op": "policy"}`` the policy, shares and usage (the Snakemake plugin). A refusal is
``{"ok": false, "error": "one line", "type": "ValueError" | ...}``.

The lease ends when its connection closes or is released; then the service ends what is left
of the job: every live process it tracks for the lease (the job, its descendants by the
parent tree seen every tick, its session and process group when the job leads them, and any
process of that user whose environment names the lease) gets SIGTERM, and SIGKILL
:data:`KILL_AFTER_S` later; the GPUs are free only when none is left (shown meanwhile as
``ending`` with those processes). Signals go through pidfds where Linux has them, so a reused
pid is never hit; only processes of the lease's user are ever signalled.

Bounds: a request line over :data:`~.service.MAX_LINE` bytes, a line not finished within
:data:`LINE_TIMEOUT_S`, a connection silent for :data:`IDLE_TIMEOUT_S` with nothing pending,
or a client that does not read its answers (over :data:`MAX_OUTBUF` bytes unread) is dropped;
each user has at most ``max_connections`` connections and ``max_waiting`` waiting requests
and a rate of :data:`RATE_PER_S` requests per second (what is over waits unread on that
user's connections only): a flood costs the flooder. The loop is single-threaded
(``selectors``); no request blocks it.

Restart: the leases table in SQLite names each lease's processes (pid and start time); on
start, the service reads the kernel's view (``/proc``): leases whose processes still run stay
booked (``recovered``) and are ended as above (their connections are gone), the others are
closed and charged; nothing is double-booked.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import resource
import selectors
import signal
import socket
import sqlite3
import struct
import sys
import time
import uuid
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import BioaccelError, QueueLimitError, SchedulerConfigError
from . import procs, snapshot
from .admin import _TOKEN, DEFAULT_MAX_WAITING, MAX_SLOTS
from .history import HALF_LIFE_S, Run, RuntimePredictor
from .identity import SHARES_FILE, SharesConfig, load_shares, user_name
from .policies import Request, make_policy
from .service import MAX_LINE, PROTOCOL, SOCKET_NAME, secure_dir

LINE_TIMEOUT_S = 5.0
#: Requests a connection may have sent and not yet had answered.
MAX_PIPELINED = 8192
IDLE_TIMEOUT_S = 30.0
MAX_OUTBUF = 4 << 20
RATE_PER_S = 200.0
RATE_BURST = 400.0
#: What a request costs of its user's rate (a snapshot or the policy view is the costly one).
OP_COST = {"status": 10.0, "policy": 20.0, "inside": 2.0, "predict": 5.0}
KILL_AFTER_S = 0.5
TICK_S = 0.1
DEFAULT_MAX_CONNECTIONS = 256
#: A lease tracks at most this many processes (a fork bomb is ended, not tracked forever).
MAX_TRACKED = 4096
#: pidfds open at once, all leases together (the rest are signalled by pid + start time).
MAX_PIDFDS = 4096
CONFIG = "config.json"
DB = "arbiter.sqlite"

STATE_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL, user TEXT NOT NULL,
    uid INTEGER NOT NULL, device_kind TEXT NOT NULL, gpus INTEGER NOT NULL, cells REAL,
    start REAL NOT NULL, end REAL NOT NULL, exit_code INTEGER NOT NULL, command TEXT);
CREATE INDEX IF NOT EXISTS runs_kind ON runs (kind, id);
CREATE TABLE IF NOT EXISTS usage (account TEXT PRIMARY KEY, gpu_s REAL NOT NULL,
    at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS leases (id TEXT PRIMARY KEY, body TEXT NOT NULL);
"""


def _peercred(sock: socket.socket) -> tuple[int, int, int]:
    data = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", data)  # pid, uid, gid


# -- configuration -------------------------------------------------------------------------
def read_config(state_dir: Path) -> dict:
    """The service's ``config.json`` (root's, in its state folder), checked."""
    path = state_dir / CONFIG
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except FileNotFoundError:
        raise SchedulerConfigError(
            f"{str(path)!r} is missing: run `sudo bioaccel admin init` first"
        ) from None
    try:
        st = os.fstat(fd)
        if st.st_uid != 0 or st.st_mode & 0o022:
            raise SchedulerConfigError(f"{str(path)!r} is not root's alone: refusing it")
        config = json.loads(os.read(fd, 1 << 20).decode())
    except ValueError as exc:
        raise SchedulerConfigError(f"{str(path)!r} is not JSON: {exc}") from None
    finally:
        os.close(fd)
    k = config.get("slots_per_gpu")
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_SLOTS:
        raise SchedulerConfigError(f"{str(path)!r}: slots_per_gpu = {k!r:.40}; expected 1..64")
    devices = config.get("devices")
    if not isinstance(devices, list) or not all(
        isinstance(d, dict)
        and isinstance(d.get("token"), str)
        and _TOKEN.match(d["token"])
        and isinstance(d.get("memory_gb"), (int, float))
        and d["memory_gb"] > 0
        for d in devices
    ):
        raise SchedulerConfigError(f"{str(path)!r}: 'devices' must list {{token, name, memory_gb}}")
    for name, default, lo, hi in (
        ("max_waiting", DEFAULT_MAX_WAITING, 1, 100000),
        ("max_connections", DEFAULT_MAX_CONNECTIONS, 4, 200000),
    ):
        v = config.setdefault(name, default)
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise SchedulerConfigError(f"{str(path)!r}: {name} = {v!r:.40}; expected {lo}..{hi}")
    config.setdefault("shares_file", str(SHARES_FILE))
    config.setdefault("policy", None)
    config.setdefault("kill_after_s", KILL_AFTER_S)
    config.setdefault("starve_after_s", 300.0)
    return config


def write_config(state_fd: int, config: dict) -> None:
    """``config.json`` in the state folder (by descriptor), atomically, root's 0644."""
    tmp = f".{CONFIG}.{uuid.uuid4().hex}.tmp"
    fd = os.open(
        tmp,
        os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
        0o600,
        dir_fd=state_fd,
    )
    try:
        os.write(fd, (json.dumps(config, indent=1) + "\n").encode())
        os.fchmod(fd, 0o644)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.rename(tmp, CONFIG, src_dir_fd=state_fd, dst_dir_fd=state_fd)


# -- processes -----------------------------------------------------------------------------
@dataclass
class Proc:
    pid: int
    ppid: int
    pgid: int
    sid: int
    uid: int
    start: int  # clock ticks since boot (the kernel's; identifies the process with its pid)
    state: str


def scan() -> dict[int, Proc]:
    """Every process of the host (root sees all), from ``/proc/<pid>/stat``."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                text = f.read().decode("latin-1")
            uid = os.stat(f"/proc/{name}").st_uid
        except OSError:
            continue
        rest = text[text.rfind(")") + 2 :].split()
        if len(rest) < 20:
            continue
        pid = int(name)
        out[pid] = Proc(pid, int(rest[1]), int(rest[2]), int(rest[3]), uid, int(rest[19]), rest[0])
    return out


def _proc(pid: int) -> Proc | None:
    """One process from ``/proc/<pid>/stat``, or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            text = f.read().decode("latin-1")
        uid = os.stat(f"/proc/{pid}").st_uid
    except OSError:
        return None
    rest = text[text.rfind(")") + 2 :].split()
    if len(rest) < 20:
        return None
    return Proc(pid, int(rest[1]), int(rest[2]), int(rest[3]), uid, int(rest[19]), rest[0])


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read(400)
        return raw.replace(b"\0", b" ").strip().decode("utf-8", "surrogateescape")
    return ""


def _environ_has(pid: int, marker: bytes) -> bool:
    with contextlib.suppress(OSError):
        with open(f"/proc/{pid}/environ", "rb") as f:
            return marker in f.read(1 << 20).split(b"\0")
    return False


@dataclass
class Tracked:
    pid: int
    start: int
    how: str
    fd: int | None = None  # pidfd


# -- state ---------------------------------------------------------------------------------
@dataclass
class Lease:
    id: str
    uid: int
    user: str
    account: str
    peer_pid: int
    tokens: list[str]
    slots: int
    slot_ids: dict[str, list[int]]
    mem_gb: float | None
    since: float
    since_mono: float
    label: str
    kind: str
    cells: float | None
    conn: Conn | None
    state: str = "held"  # held | ending | recovered
    root_pid: int | None = None
    root_start: int | None = None
    tracked: dict[int, Tracked] = field(default_factory=dict)
    ending_since: float | None = None
    killed: bool = False
    exit_code: int = -1
    grant_ticks: int = 0
    keep_peer: bool = False
    peer_start: int = -1
    checked: set = field(default_factory=set)

    def body(self) -> str:
        return json.dumps(
            {
                "uid": self.uid,
                "user": self.user,
                "account": self.account,
                "peer_pid": self.peer_pid,
                "tokens": self.tokens,
                "slots": self.slots,
                "slot_ids": self.slot_ids,
                "mem_gb": self.mem_gb,
                "since": self.since,
                "label": self.label,
                "kind": self.kind,
                "cells": self.cells,
                "root_pid": self.root_pid,
                "root_start": self.root_start,
                "grant_ticks": self.grant_ticks,
                "peer_start": self.peer_start,
                "tracked": [[t.pid, t.start, t.how] for t in self.tracked.values()],
            }
        )


@dataclass
class Waiting:
    id: str
    uid: int
    user: str
    account: str
    peer_pid: int
    gpus: int
    slots: int
    mem_gb: float | None
    priority: float
    predicted_s: float | None
    label: str
    kind: str
    cells: float | None
    devices: list[str]
    submit: float
    conn: Conn


class Conn:
    def __init__(self, sock: socket.socket, pid: int, uid: int, gid: int, now: float):
        self.sock = sock
        self.pid, self.uid, self.gid = pid, uid, gid
        p = _proc(pid)
        self.start = p.start if p is not None else -1
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.line_since: float | None = None
        self.last = now
        self.waiting: Waiting | None = None
        self.lease: Lease | None = None
        self.lines: deque[bytes] = deque()
        self.closed = False
        self.paused = False
        self.registered = True
        self.head: dict | None = None


class Arbiter:
    def __init__(self, state_dir: Path, socket_dir: Path, say=None):
        self.say = say or (lambda line: print(f"bioaccel arbiterd: {line}", file=sys.stderr))
        self.state_dir = Path(state_dir)
        self.socket_dir = Path(socket_dir)
        self.socket_path = self.socket_dir / SOCKET_NAME
        self.state_fd = secure_dir(self.state_dir, 0o700, self.say)
        self.lock_fd = os.open(
            "arbiterd.lock",
            os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
            0o600,
            dir_fd=self.state_fd,
        )
        try:
            fcntl.flock(self.lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SchedulerConfigError(
                f"another bioaccel arbiterd already serves {str(self.state_dir)!r}"
            ) from None
        self.config = read_config(self.state_dir)
        self.devices = self.config["devices"]
        self.host = {d["token"]: d for d in self.devices}
        self.k = self.config["slots_per_gpu"]
        self.max_waiting = self.config["max_waiting"]
        self.max_connections = self.config["max_connections"]
        self.kill_after_s = float(self.config["kill_after_s"])
        self.starve_after_s = float(self.config["starve_after_s"])
        self.shares = self._load_shares()
        self.policy = make_policy(
            self.config.get("policy") or self.shares.policy or "fcfs", shares=self.shares.shares
        )
        self.db = sqlite3.connect(str(self.state_dir / DB), isolation_level=None)
        self.db.executescript(STATE_SCHEMA)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.usage: dict[str, tuple[float, float]] = {
            a: (v, at) for a, v, at in self.db.execute("SELECT account, gpu_s, at FROM usage")
        }
        self.half_life_s = HALF_LIFE_S
        self.waiting: dict[str, Waiting] = {}
        self.leases: dict[str, Lease] = {}
        self.conns: dict[int, Conn] = {}
        self.per_uid: dict[int, int] = {}
        self.buckets: dict[int, tuple[float, float]] = {}
        self.dirty = True
        self.sel = selectors.DefaultSelector()
        self.clk = os.sysconf("SC_CLK_TCK")
        self.boot = procs._boot_time() or 0.0
        self.predictors: dict[str, RuntimePredictor] = {}
        self.stopping = False
        self.pass_s: deque[float] = deque(maxlen=1000)
        self.passed_over: set[str] = set()
        self.n_pidfds = 0
        self._scanned: tuple[float, dict[int, Proc]] = (-1e9, {})
        self._grouped: tuple[object, dict[int, list[Proc]]] = (None, {})
        self._recover()
        self.listener = self._listen()

    # -- set-up ----------------------------------------------------------------------------
    def _load_shares(self) -> SharesConfig:
        path = self.config.get("shares_file")
        if not path or not os.path.lexists(path):
            return SharesConfig()
        return load_shares(0, {"BIOACCEL_SHARES_FILE": path})

    def _listen(self) -> socket.socket:
        dfd = secure_dir(self.socket_dir, 0o755, self.say)
        os.close(dfd)
        tmp = self.socket_dir / f".{SOCKET_NAME}.{uuid.uuid4().hex[:8]}"
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.bind(str(tmp))
        os.chmod(tmp, 0o666)
        sock.listen(1024)
        os.rename(tmp, self.socket_path)  # atomic: a client sees the old socket or this one
        sock.setblocking(False)
        self.sel.register(sock, selectors.EVENT_READ, None)
        with contextlib.suppress(ValueError, OSError):
            soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return sock

    def _recover(self) -> None:
        """Leases of a previous run of the service, from the kernel's view (see the module)."""
        rows = list(self.db.execute("SELECT id, body FROM leases"))
        if not rows:
            return
        table = self._table()
        for rid, body in rows:
            try:
                b = json.loads(body)
                lease = Lease(
                    rid,
                    b["uid"],
                    b["user"],
                    b["account"],
                    b["peer_pid"],
                    b["tokens"],
                    b["slots"],
                    {k: list(v) for k, v in b["slot_ids"].items()},
                    b["mem_gb"],
                    b["since"],
                    time.monotonic() - max(0.0, time.time() - b["since"]),
                    b["label"],
                    b["kind"],
                    b["cells"],
                    None,
                    state="recovered",
                    root_pid=b["root_pid"],
                    root_start=b["root_start"],
                    grant_ticks=b.get("grant_ticks", 0),
                    peer_start=b.get("peer_start", -1),
                )
                for pid, start, how in b["tracked"]:
                    p = table.get(pid)
                    if p is not None and p.start == start and p.uid == lease.uid:
                        lease.tracked[pid] = Tracked(pid, start, how, self._pidfd(pid))
            except (ValueError, KeyError, TypeError) as exc:
                self.say(f"lease {rid!r} of the previous run is unreadable ({exc}): dropped")
                self.db.execute("DELETE FROM leases WHERE id = ?", (rid,))
                continue
            self.leases[rid] = lease
            self._track(lease, table)
            alive = self._alive(lease, table)
            if alive:
                self.say(
                    f"recovered lease {rid} of {lease.user} on {','.join(lease.tokens)}: "
                    f"{len(alive)} process(es) still run ({', '.join(map(str, alive[:8]))}); "
                    "its connection is gone, so they are ended"
                )
                self._end(lease, "the service restarted")
            else:
                self._finish(lease)

    # -- the loop --------------------------------------------------------------------------
    def serve(self) -> None:
        self.say(
            f"serving {len(self.devices)} GPU(s) x {self.k} slot(s), policy {self.policy.name}, "
            f"on {self.socket_path} (pid {os.getpid()})"
        )
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, self._stop)
        next_tick = 0.0
        while not self.stopping:
            now = time.monotonic()
            try:
                if now >= next_tick:
                    next_tick = now + TICK_S
                    self._tick()
                if self.dirty:
                    self._schedule()
            except Exception as exc:  # noqa: BLE001 -- a bug must not stop the host's arbiter
                self.say(f"internal error in a pass: {exc!r}")
            timeout = max(0.0, min(next_tick - time.monotonic(), TICK_S))
            for key, events in self.sel.select(timeout):
                if key.data is None:
                    self._accept()
                    continue
                conn = key.data
                if events & selectors.EVENT_READ:
                    self._read(conn)
                if events & selectors.EVENT_WRITE and not conn.closed:
                    self._flush(conn)
            self._process_lines()
        self.say("stopping: leases end with their connections")
        for conn in list(self.conns.values()):
            self._close(conn, "the service is stopping")
        # the socket stays: clients find it refusing connections and fail closed

    def _stop(self, *_):
        self.stopping = True

    def _accept(self) -> None:
        for _ in range(256):
            try:
                sock, _ = self.listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:  # out of descriptors: the backlog waits
                self.say(f"accept: {exc.strerror}")
                return
            sock.setblocking(False)
            try:
                pid, uid, gid = _peercred(sock)
            except OSError:
                sock.close()
                continue
            n = self.per_uid.get(uid, 0)
            if n >= self.max_connections:
                with contextlib.suppress(OSError):
                    sock.send(
                        self._line(
                            {
                                "ok": False,
                                "type": "QueueLimitError",
                                "error": f"{user_name(uid)} already has {n} connections to "
                                "the arbiter service, the limit per user",
                            }
                        )
                    )
                sock.close()
                continue
            self.per_uid[uid] = n + 1
            conn = Conn(sock, pid, uid, gid, time.monotonic())
            self.conns[sock.fileno()] = conn
            self.sel.register(sock, selectors.EVENT_READ, conn)

    def _read(self, conn: Conn) -> None:
        try:
            data = conn.sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self._close(conn, None)
            return
        now = time.monotonic()
        conn.last = now
        conn.inbuf += data
        while True:
            nl = conn.inbuf.find(b"\n")
            if nl < 0:
                break
            conn.lines.append(bytes(conn.inbuf[:nl]))
            del conn.inbuf[: nl + 1]
            conn.line_since = None
        if len(conn.inbuf) > MAX_LINE:
            self._send(
                conn,
                {"ok": False, "type": "ValueError", "error": f"a request over {MAX_LINE} bytes"},
            )
            self._close(conn, "a request over the size limit")
            return
        if len(conn.lines) > MAX_PIPELINED:
            self._send(
                conn,
                {
                    "ok": False,
                    "type": "ValueError",
                    "error": f"over {MAX_PIPELINED} requests sent without reading the answers",
                },
            )
            self._close(conn, "too many pipelined requests")
            return
        if conn.inbuf and conn.line_since is None:
            conn.line_since = now
        if conn.lines and not conn.paused:
            self._process(conn)

    def _process_lines(self) -> None:
        for conn in list(self.conns.values()):
            if conn.lines and not conn.closed:
                self._process(conn)

    def _process(self, conn: Conn) -> None:
        now = time.monotonic()
        rate, at = self.buckets.get(conn.uid, (RATE_BURST, now))
        rate = min(RATE_BURST, rate + (now - at) * RATE_PER_S)
        while conn.lines and not conn.closed:
            try:
                if conn.head is None:  # parsed once, even if it waits for the rate
                    req = json.loads(conn.lines[0])
                    if not isinstance(req, dict) or not isinstance(req.get("op"), str):
                        raise ValueError("expected a JSON object with an 'op'")
                    conn.head = req
                req = conn.head
            except (ValueError, UnicodeDecodeError) as exc:
                self._send(
                    conn, {"ok": False, "type": "ValueError", "error": f"bad request: {exc}"}
                )
                self._close(conn, "a malformed request")
                return
            cost = OP_COST.get(req["op"], 1.0)
            if rate < cost:  # over this user's rate: the rest waits, unread
                if not conn.paused:
                    conn.paused = True
                    self._rearm(conn)
                break
            rate -= cost
            conn.lines.popleft()
            conn.head = None
            try:
                self._handle(conn, req)
            except (ValueError, TypeError, KeyError, BioaccelError) as exc:
                self._send(conn, {"ok": False, "type": type(exc).__name__, "error": str(exc)})
            except Exception as exc:  # noqa: BLE001 -- a bug must not stop the host's arbiter
                self.say(f"internal error on a request of {user_name(conn.uid)}: {exc!r}")
                self._send(conn, {"ok": False, "type": "RuntimeError", "error": f"{exc!r}"})
                self._close(conn, "an internal error")
        else:
            if conn.paused:
                conn.paused = False
                self._rearm(conn)
        self.buckets[conn.uid] = (rate, now)

    def _rearm(self, conn: Conn) -> None:
        """Watch ``conn`` for reading (unless paused) and writing (while output waits)."""
        if conn.closed:
            return
        ev = (0 if conn.paused else selectors.EVENT_READ) | (
            selectors.EVENT_WRITE if conn.outbuf else 0
        )
        with contextlib.suppress(KeyError, ValueError):
            if ev == 0:
                if conn.registered:
                    self.sel.unregister(conn.sock)
                    conn.registered = False
            elif conn.registered:
                self.sel.modify(conn.sock, ev, conn)
            else:
                self.sel.register(conn.sock, ev, conn)
                conn.registered = True

    @staticmethod
    def _line(obj: dict) -> bytes:
        return (json.dumps(obj, ensure_ascii=True, allow_nan=False) + "\n").encode()

    def _send(self, conn: Conn, obj: dict) -> None:
        if conn.closed:
            return
        conn.outbuf += self._line(obj)
        if len(conn.outbuf) > MAX_OUTBUF:
            self._close(conn, "a client that does not read its answers")
            return
        self._flush(conn)

    def _flush(self, conn: Conn) -> None:
        try:
            while conn.outbuf:
                n = conn.sock.send(conn.outbuf)
                del conn.outbuf[:n]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError:
            self._close(conn, None)
            return
        self._rearm(conn)

    def _close(self, conn: Conn, why: str | None) -> None:
        if conn.closed:
            return
        conn.closed = True
        if conn.registered:
            with contextlib.suppress(KeyError, ValueError):
                self.sel.unregister(conn.sock)
        self.conns.pop(conn.sock.fileno(), None)
        self.per_uid[conn.uid] = max(0, self.per_uid.get(conn.uid, 1) - 1)
        with contextlib.suppress(OSError):
            if conn.outbuf:
                conn.sock.send(conn.outbuf)
        conn.sock.close()
        if conn.waiting is not None:
            self.waiting.pop(conn.waiting.id, None)
            conn.waiting = None
            self.dirty = True
        if conn.lease is not None:
            lease = conn.lease
            conn.lease = None
            lease.conn = None
            if lease.state == "held":
                self._end(lease, why or "its connection closed")

    # -- requests --------------------------------------------------------------------------
    def _handle(self, conn: Conn, req: dict) -> None:
        op = req["op"]
        if op == "hello":
            self._send(
                conn,
                {
                    "ok": True,
                    "event": "hello",
                    "protocol": PROTOCOL,
                    "pid": os.getpid(),
                    "slots_per_gpu": self.k,
                    "devices": self.devices,
                    "policy": self.policy.name,
                },
            )
        elif op == "acquire":
            self._acquire(conn, req)
        elif op == "job":
            self._job(conn, req)
        elif op == "release":
            self._release(conn, req)
        elif op == "status":
            self._send(conn, {"ok": True, "event": "status", "status": self.snapshot()})
        elif op == "inside":
            self._inside(conn, req)
        elif op == "predict":
            kind, cells = str(req.get("kind", ""))[:200], _num(req, "cells", None)
            pred = self._predictor(kind).predict(kind, cells) if cells is not None else None
            self._send(conn, {"ok": True, "event": "predict", "predicted_s": pred})
        elif op == "policy":
            now = time.time()
            self._send(
                conn,
                {
                    "ok": True,
                    "event": "policy",
                    "policy": self.policy.name,
                    "shares": self.shares.shares,
                    "members": {a: sorted(m) for a, m in self.shares.members.items()},
                    "usage": self._usage(now),
                    "runs": [
                        list(r)
                        for r in self.db.execute(
                            "SELECT kind, user, device_kind, gpus, cells, start, end, exit_code "
                            "FROM runs ORDER BY id DESC LIMIT 20000"
                        )
                    ],
                },
            )
        elif op == "reload":
            if conn.uid != 0:
                raise ValueError("only root may reload the service")
            self._reload()
            self._send(conn, {"ok": True, "event": "reload"})
        else:
            raise ValueError(f"unknown op {op!r:.40}")

    def _reload(self) -> None:
        """The shares file, policy and limits afresh (GPUs and slots need a restart)."""
        config = read_config(self.state_dir)
        self.config.update(
            {k: config[k] for k in ("max_waiting", "max_connections", "shares_file", "policy")}
        )
        self.max_waiting = config["max_waiting"]
        self.max_connections = config["max_connections"]
        self.shares = self._load_shares()
        self.policy = make_policy(
            config.get("policy") or self.shares.policy or "fcfs", shares=self.shares.shares
        )
        self.dirty = True
        self.say(f"reloaded: policy {self.policy.name}, shares file {self.shares.path}")

    def _acquire(self, conn: Conn, req: dict) -> None:
        if conn.waiting is not None or conn.lease is not None:
            raise ValueError("this connection already has a request (one per connection)")
        user = user_name(conn.uid)
        gpus = _int(req, "gpus", 1)
        slots = _int(req, "slots", self.k) if req.get("slots") is not None else self.k
        mem_gb = _num(req, "mem_gb", None)
        priority = _num(req, "priority", 0.0)
        predicted = _num(req, "predicted_s", None)
        cells = _num(req, "cells", None)
        label = req.get("label", "")
        kind = req.get("kind", "command")
        if not isinstance(label, str) or not isinstance(kind, str):
            raise ValueError("label and kind must be text")
        label, kind = label[:1000], kind[:200]
        try:
            kind.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"kind {kind!r:.60} is not UTF-8 text") from None
        account = self.shares.check_account(
            user, req.get("account") if isinstance(req.get("account"), str) else None
        )
        allowed = req.get("devices")
        if allowed is None:
            allowed = list(self.host)
        if not isinstance(allowed, list) or not all(isinstance(t, str) for t in allowed):
            raise ValueError("devices must be a list of GPU tokens")
        unknown = [t for t in allowed if t not in self.host]
        if unknown:
            raise ValueError(
                f"GPU(s) {unknown[:4]} are not GPUs of the service "
                f"({', '.join(self.host) or 'none'}): its configuration lists the host's GPUs"
            )
        allowed = list(dict.fromkeys(allowed))
        if not self.host:
            raise SchedulerConfigError("the arbiter service has no GPU to lease")
        if not 1 <= gpus <= len(allowed):
            raise ValueError(
                f"gpus={gpus} but {len(allowed)} GPU(s) may be used: {', '.join(allowed)}"
            )
        if not 1 <= slots <= self.k:
            raise ValueError(f"slots={slots}: expected 1..{self.k} (each GPU has {self.k} slots)")
        if mem_gb is not None:
            mems = sorted((self.host[t]["memory_gb"] for t in allowed), reverse=True)
            if not 0 < mem_gb <= mems[gpus - 1]:
                raise ValueError(
                    f"mem_gb={mem_gb:g}: expected > 0 and at most the memory of {gpus} GPU(s) "
                    f"({', '.join(f'{m:g}' for m in mems)} GB)"
                )
        mine = sum(1 for w in self.waiting.values() if w.uid == conn.uid)
        if mine >= self.max_waiting:
            raise QueueLimitError(
                f"{user} already has {mine} waiting request(s), the limit per user of the "
                "arbiter service"
            )
        rid = f"{time.time():.6f}-{conn.pid}-{uuid.uuid4().hex[:8]}"
        w = Waiting(
            rid,
            conn.uid,
            user,
            account,
            conn.pid,
            gpus,
            slots,
            mem_gb,
            priority,
            predicted,
            label,
            kind,
            cells,
            allowed,
            time.time(),
            conn,
        )
        self.waiting[rid] = w
        conn.waiting = w
        self.dirty = True
        self._send(conn, {"ok": True, "event": "queued", "id": rid})

    def _job(self, conn: Conn, req: dict) -> None:
        lease = conn.lease
        if lease is None:
            raise ValueError("no lease on this connection")
        if lease.root_pid is not None:
            raise ValueError("this lease already has its job")
        pid = _int(req, "pid", 0)
        table = self._table()
        p = table.get(pid)
        if p is None or p.uid != conn.uid or p.ppid != conn.pid:
            raise ValueError(f"pid {pid} is not a live child of the asking process")
        lease.root_pid, lease.root_start = pid, p.start
        lease.tracked[pid] = Tracked(pid, p.start, "job", self._pidfd(pid))
        self._persist(lease)
        self._send(conn, {"ok": True, "event": "job"})

    def _release(self, conn: Conn, req: dict) -> None:
        lease = conn.lease
        if lease is None:
            raise ValueError("no lease on this connection")
        code = req.get("exit")
        lease.exit_code = code if isinstance(code, int) and not isinstance(code, bool) else -1
        lease.keep_peer = True
        table = self._table()
        self._track(lease, table)
        left = [
            {"pid": pid, "how": lease.tracked[pid].how, "cmd": _cmdline(pid)}
            for pid in self._alive(lease, table)
        ]
        conn.lease = None
        lease.conn = None
        self._send(conn, {"ok": True, "event": "released", "id": lease.id, "left": left})
        self._end(lease, "released")

    def _inside(self, conn: Conn, req: dict) -> None:
        rid = req.get("lease")
        lease = self.leases.get(rid) if isinstance(rid, str) else None
        ok = False
        if lease is not None and lease.uid == conn.uid and lease.state == "held":
            chain, pid = set(), conn.pid
            for _ in range(4096):  # the asking process or one of its ancestors is the job's
                if pid in chain or pid <= 1:
                    break
                chain.add(pid)
                p = _proc(pid)
                if p is None:
                    break
                t = lease.tracked.get(pid)
                if (t is not None and t.start == p.start) or (
                    lease.root_pid is None and pid == lease.peer_pid and p.start == lease.peer_start
                ):
                    ok = p.uid == conn.uid
                    break
                pid = p.ppid
        self._send(
            conn,
            {
                "ok": True,
                "event": "inside",
                "inside": ok,
                "gpus": lease.tokens if ok else [],
                "why": None
                if ok
                else "no live lease of this user by that id"
                if lease is None or lease.uid != conn.uid or lease.state != "held"
                else "this process is not one of that lease's job",
            },
        )

    # -- scheduling ------------------------------------------------------------------------
    def _usage(self, now: float) -> dict[str, float]:
        """Decayed GPU-seconds per account: the aggregate (never a scan of the runs), plus
        what each live lease has used so far."""
        out = {
            a: v * math.pow(0.5, max(0.0, now - at) / self.half_life_s)
            for a, (v, at) in self.usage.items()
        }
        mono = time.monotonic()
        for lease in self.leases.values():
            used = len(lease.tokens) * lease.slots / self.k * max(0.0, mono - lease.since_mono)
            out[lease.account] = out.get(lease.account, 0.0) + used
        return out

    def _schedule(self) -> None:
        """One pass: rank the waiting requests by the policy and grant first fit."""
        self.dirty = False
        if not self.waiting:
            return
        t0 = time.perf_counter()
        now = time.time()
        plan = self.plan(now)
        self.pass_s.append(time.perf_counter() - t0)
        for rid, (tokens, slot_ids) in plan.items():
            self._grant(self.waiting.pop(rid), tokens, slot_ids)

    def plan(self, now: float) -> dict[str, tuple[list[str], dict[str, list[int]]]]:
        free = {t: list(range(self.k)) for t in self.host}
        mem = dict.fromkeys(self.host, 0.0)
        for lease in self.leases.values():
            for t, ids in lease.slot_ids.items():
                free[t] = [s for s in free[t] if s not in ids]
                mem[t] += lease.mem_gb or 0.0
        requests = [
            Request(w.id, w.account, w.priority, w.gpus, w.submit, w.predicted_s, payload=w)
            for w in self.waiting.values()
        ]
        ranked = self.policy.order(
            requests, now, self._usage(now) if self.policy.name == "fair" else {}
        )
        plan = {}
        for req in ranked:
            w: Waiting = req.payload
            fits = [
                t
                for t in w.devices
                if len(free[t]) >= w.slots
                and (w.mem_gb is None or mem[t] + w.mem_gb <= self.host[t]["memory_gb"] + 1e-9)
            ]
            if len(fits) >= w.gpus and self._stopped(w.peer_pid):
                self.passed_over.add(w.id)  # a stopped waiter holds nothing (H1)
                continue
            if len(fits) >= w.gpus:
                pick = sorted(fits, key=lambda t: (len(free[t]), w.devices.index(t)))[: w.gpus]
                ids = {}
                for t in pick:
                    ids[t], free[t] = free[t][: w.slots], free[t][w.slots :]
                    mem[t] += w.mem_gb or 0.0
                plan[w.id] = (pick, ids)
            elif now - w.submit > self.starve_after_s:
                break  # it has waited long enough: nothing behind it takes its GPUs
        return plan

    @staticmethod
    def _stopped(pid: int) -> bool:
        """The waiting process is stopped (Ctrl-Z, SIGSTOP) or traced: it is passed over."""
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                text = f.read()
        except OSError:
            return False
        return text[text.rfind(b")") + 2 :][:1] in (b"T", b"t")

    def _grant(self, w: Waiting, tokens: list[str], slot_ids: dict[str, list[int]]) -> None:
        conn = w.conn
        conn.waiting = None
        lease = Lease(
            w.id,
            w.uid,
            w.user,
            w.account,
            w.peer_pid,
            tokens,
            w.slots,
            slot_ids,
            w.mem_gb,
            time.time(),
            time.monotonic(),
            w.label,
            w.kind,
            w.cells,
            conn,
        )
        lease.grant_ticks = self._now_ticks()
        lease.peer_start = conn.start
        conn.lease = lease
        self.leases[lease.id] = lease
        self._persist(lease)
        self._send(
            conn,
            {
                "ok": True,
                "event": "granted",
                "id": lease.id,
                "gpus": tokens,
                "slots": w.slots,
                "waited_s": max(0.0, lease.since - w.submit),
            },
        )

    def _now_ticks(self) -> int:
        """Now in the clock ticks since boot that ``/proc/<pid>/stat`` counts starts in
        (``/proc/uptime`` has 10 ms resolution; ``btime`` only whole seconds)."""
        try:
            with open("/proc/uptime", "rb") as f:
                return int(float(f.read().split()[0]) * self.clk)
        except (OSError, ValueError, IndexError):
            return int((time.time() - self.boot) * self.clk)

    # -- processes -------------------------------------------------------------------------
    def _pidfd(self, pid: int) -> int | None:
        """A pidfd of ``pid`` (signals through it never reach a reused pid), while fewer than
        :data:`MAX_PIDFDS` are open (a fork bomb must not take the descriptors that others'
        connections need); else None, and the start time is checked before each signal."""
        if self.n_pidfds >= MAX_PIDFDS:
            return None
        try:
            fd = os.pidfd_open(pid)
        except (OSError, AttributeError):
            return None
        self.n_pidfds += 1
        return fd

    def _close_pidfd(self, t: Tracked) -> None:
        if t.fd is not None:
            with contextlib.suppress(OSError):
                os.close(t.fd)
            t.fd = None
            self.n_pidfds -= 1

    def _track(self, lease: Lease, table: dict[int, Proc]) -> None:
        """Add the lease's job processes the kernel shows (see the module). Only the lease
        user's processes are looked at, and each one's environment once."""
        root = lease.root_pid
        if root is None and lease.keep_peer:
            return
        rp = table.get(root) if root is not None else None
        lead_sid = rp is not None and rp.sid == root
        lead_pgid = rp is not None and rp.pgid == root
        peer = table.get(lease.peer_pid)
        peer_alive = (
            root is None
            and peer is not None
            and peer.uid == lease.uid
            and peer.start == lease.peer_start
        )
        marker = f"BIOACCEL_LEASE={lease.id}".encode()
        mine = self._by_uid(table).get(lease.uid, ())
        changed = False
        for _ in range(3):  # new children of new children within one tick
            grew = False
            for p in mine:
                if p.state in ("Z", "X") or p.pid in lease.tracked:
                    continue
                if root is None and p.start < lease.grant_ticks - 1:
                    continue  # lease() held by a process: only what it started since
                how = None
                if p.ppid in lease.tracked or (peer_alive and p.ppid == lease.peer_pid):
                    how = "descendant"
                elif lead_sid and p.sid == root:
                    how = "session"
                elif lead_pgid and p.pgid == root:
                    how = "group"
                elif p.start >= lease.grant_ticks - 1 and (p.pid, p.start) not in lease.checked:
                    lease.checked.add((p.pid, p.start))
                    if _environ_has(p.pid, marker):
                        how = "environment"
                if how is None:
                    continue
                if len(lease.tracked) >= MAX_TRACKED:
                    break
                lease.tracked[p.pid] = Tracked(p.pid, p.start, how, self._pidfd(p.pid))
                grew = changed = True
            if not grew:
                break
        if len(lease.checked) > 4 * MAX_TRACKED:
            live = {(p.pid, p.start) for p in mine}
            lease.checked &= live
        if changed:
            self._persist(lease)

    def _by_uid(self, table: dict[int, Proc]) -> dict[int, list[Proc]]:
        if self._grouped[0] is not table:
            groups: dict[int, list[Proc]] = {}
            for p in table.values():
                groups.setdefault(p.uid, []).append(p)
            self._grouped = (table, groups)
        return self._grouped[1]

    def _table(self, max_age_s: float = 0.0) -> dict[int, Proc]:
        """The kernel's process table, read afresh unless one younger than ``max_age_s`` is
        at hand (what a user may ask for often -- status, inside -- reuses the tick's)."""
        now = time.monotonic()
        if max_age_s <= 0 or now - self._scanned[0] > max_age_s:
            self._scanned = (now, scan())
        return self._scanned[1]

    def _alive(self, lease: Lease, table: dict[int, Proc]) -> list[int]:
        out = []
        for pid, t in list(lease.tracked.items()):
            p = table.get(pid)
            if p is None or p.start != t.start or p.state in ("Z", "X"):
                self._close_pidfd(t)
                del lease.tracked[pid]
                continue
            if lease.keep_peer and pid == lease.peer_pid:
                continue
            out.append(pid)
        return sorted(out)

    def _signal(self, lease: Lease, sig: int) -> None:
        for pid, t in lease.tracked.items():
            if lease.keep_peer and pid == lease.peer_pid:
                continue
            with contextlib.suppress(OSError):
                if t.fd is not None:
                    signal.pidfd_send_signal(t.fd, sig)
                elif self._start_of(pid) == t.start:
                    os.kill(pid, sig)

    def _end(self, lease: Lease, why: str) -> None:
        """The lease is over: its remaining processes are ended, its GPUs freed after."""
        if lease.state != "recovered":
            lease.state = "ending"
        lease.ending_since = time.monotonic()
        if (
            lease.root_pid is None
            and not lease.keep_peer
            and self._start_of(lease.peer_pid) == lease.peer_start
        ):  # the holder itself (still the same process), as it closed without releasing
            lease.tracked.setdefault(
                lease.peer_pid,
                Tracked(lease.peer_pid, lease.peer_start, "holder", self._pidfd(lease.peer_pid)),
            )
        table = self._table(0.02)
        self._track(lease, table)
        if self._alive(lease, table):
            self._signal(lease, signal.SIGTERM)
            self.say(
                f"lease {lease.id} of {lease.user} ended ({why}): SIGTERM to "
                f"{', '.join(map(str, self._alive(lease, table)[:8]))}"
            )
        else:
            self._finish(lease)

    def _start_of(self, pid: int) -> int:
        with contextlib.suppress(OSError, ValueError, IndexError):
            with open(f"/proc/{pid}/stat", "rb") as f:
                text = f.read().decode("latin-1")
            return int(text[text.rfind(")") + 2 :].split()[19])
        return -1

    def _finish(self, lease: Lease) -> None:
        """No process of the lease is left: free its GPUs and charge it."""
        self.leases.pop(lease.id, None)
        for t in lease.tracked.values():
            self._close_pidfd(t)
        lease.tracked.clear()
        end = time.time()
        held = max(0.0, min(end - lease.since, time.monotonic() - lease.since_mono))
        gpu_s = len(lease.tokens) * lease.slots / self.k * held
        v, at = self.usage.get(lease.account, (0.0, end))
        v = v * math.pow(0.5, max(0.0, end - at) / self.half_life_s) + gpu_s
        self.usage[lease.account] = (v, end)
        name = self.devices[0]["name"] if self.devices else "?"
        for d in self.devices:
            if d["token"] == lease.tokens[0]:
                name = d.get("name", "?")
        with self.db:
            self.db.execute("DELETE FROM leases WHERE id = ?", (lease.id,))
            self.db.execute(
                "INSERT OR REPLACE INTO usage (account, gpu_s, at) VALUES (?, ?, ?)",
                (lease.account, v, end),
            )
            self.db.execute(
                "INSERT INTO runs (kind, user, uid, device_kind, gpus, cells, start, end, "
                "exit_code, command) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    lease.kind,
                    lease.account,
                    lease.uid,
                    name,
                    len(lease.tokens),
                    lease.cells,
                    lease.since,
                    lease.since + held,
                    lease.exit_code,
                    _raw(lease.label),  # any bytes, as given
                ),
            )
        self.predictors.pop(lease.kind, None)
        self.dirty = True

    def _persist(self, lease: Lease) -> None:
        with self.db:
            self.db.execute(
                "INSERT OR REPLACE INTO leases (id, body) VALUES (?, ?)", (lease.id, lease.body())
            )

    def _tick(self) -> None:
        now = time.monotonic()
        for conn in list(self.conns.values()):
            if conn.line_since is not None and now - conn.line_since > LINE_TIMEOUT_S:
                self._close(conn, "a request not finished in time")
            elif (
                conn.waiting is None
                and conn.lease is None
                and not conn.lines
                and now - conn.last > IDLE_TIMEOUT_S
            ):
                self._close(conn, None)
            elif conn.paused:
                self._process(conn)
        if self.passed_over:  # stopped waiters may have resumed
            self.passed_over.clear()
            self.dirty = True
        if not self.leases:
            return
        table = self._table()
        for lease in list(self.leases.values()):
            if lease.state == "held":
                self._track(lease, table)
                if lease.root_pid is not None or lease.conn is None:
                    continue
                peer = table.get(lease.peer_pid)
                if peer is None or peer.state in ("Z", "X") or peer.start != lease.peer_start:
                    # the holder is gone while a process it left keeps the connection
                    self._close(lease.conn, "its holder exited")
                continue
            self._track(lease, table)
            alive = self._alive(lease, table)
            if not alive:
                self._finish(lease)
            elif not lease.killed and now - (lease.ending_since or now) > self.kill_after_s:
                lease.killed = True
                self._signal(lease, signal.SIGKILL)
                self.say(f"lease {lease.id}: SIGKILL to {', '.join(map(str, alive[:8]))}")
            elif lease.killed and now - (lease.ending_since or now) > self.kill_after_s + 2:
                self._signal(lease, signal.SIGKILL)

    def _predictor(self, kind: str) -> RuntimePredictor:
        if kind not in self.predictors:
            rows = self.db.execute(
                "SELECT kind, user, device_kind, gpus, cells, start, end, exit_code FROM runs "
                "WHERE kind = ? ORDER BY id DESC LIMIT 20000",
                (kind,),
            )
            self.predictors[kind] = RuntimePredictor([Run(*r[:5], None, *r[5:]) for r in rows])
        return self.predictors[kind]

    # -- what `bioaccel gpus` shows --------------------------------------------------------
    def snapshot(self) -> dict:
        now = time.time()
        mono = time.monotonic()
        holders: dict[str, list[dict]] = {t: [] for t in self.host}
        table = self._table(TICK_S) if self.leases else {}
        for lease in self.leases.values():
            alive = self._alive(lease, table) if table else []
            for t in lease.tokens:
                holders[t].append(
                    {
                        "lease": lease.id,
                        "user": lease.user,
                        "uid": lease.uid,
                        "account": lease.account,
                        "pid": lease.root_pid or lease.peer_pid,
                        "pid_alive": (lease.root_pid or lease.peer_pid) in table,
                        "verified": True,
                        "host": socket.gethostname(),
                        "since": lease.since,
                        "held_s": max(0.0, mono - lease.since_mono),
                        "label": lease.label,
                        "mem_gb": lease.mem_gb,
                        "slots": lease.slot_ids[t],
                        "state": lease.state,
                        "processes": [
                            {"pid": p, "how": lease.tracked[p].how, "cmd": _cmdline(p)}
                            for p in alive[:64]
                        ],
                    }
                )
        plan = self.plan(now) if self.waiting else {}
        requests = [
            Request(w.id, w.account, w.priority, w.gpus, w.submit, w.predicted_s, payload=w)
            for w in self.waiting.values()
        ]
        usage = self._usage(now)
        ranked = self.policy.order(requests, now, usage if self.policy.name == "fair" else {})
        queue = [
            {
                "id": r.payload.id,
                "user": r.payload.user,
                "uid": r.payload.uid,
                "account": r.payload.account,
                "priority": r.payload.priority,
                "gpus": r.payload.gpus,
                "slots": r.payload.slots,
                "mem_gb": r.payload.mem_gb,
                "pid": r.payload.peer_pid,
                "host": socket.gethostname(),
                "submit_time": r.payload.submit,
                "waited_s": max(0.0, now - r.payload.submit),
                "predicted_s": r.payload.predicted_s,
                "label": r.payload.label,
                "planned": plan[r.id][0] if r.id in plan else None,
                "lapsed": False,
            }
            for r in ranked[:1000]
        ]
        warnings = []
        if len(ranked) > 1000:
            warnings.append(f"{len(ranked) - 1000} more waiting request(s) not listed")
        return snapshot.make(
            mode="service",
            run_dir=None,
            run_dir_owner="root",
            socket=self.socket_path,
            slots_per_gpu=self.k,
            policy=self.policy.name,
            max_waiting=self.max_waiting,
            shares_file=self.shares.path,
            time=now,
            hint=None if self.devices else "the arbiter service has no GPU configured",
            warnings=warnings,
            devices=self.devices,
            holders=holders,
            usage=usage,
            queue=queue,
        )


def _num(req: dict, name: str, default):
    v = req.get(name, default)
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ValueError(f"{name}={v!r:.40}: expected a finite number")
    return float(v)


def _int(req: dict, name: str, default: int) -> int:
    v = req.get(name, default)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ValueError(f"{name}={v!r:.40}: expected a whole number")
    return v


def main(state_dir: Path, socket_dir: Path) -> None:
    """Run the service in the foreground until SIGTERM/SIGINT."""
    if os.getuid() != 0:
        raise SchedulerConfigError(
            "bioaccel arbiterd must run as root: it alone may read its state and end jobs"
        )
    Arbiter(state_dir, socket_dir).serve()


def _raw(text: str) -> bytes:
    """``text`` as bytes, whatever it holds (undecodable bytes back as they were)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogatepass")
