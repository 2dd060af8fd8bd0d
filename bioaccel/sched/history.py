"""Recorded job history (SQLite, in each user's own folder of the run directory), the
decayed usage that fair share reads, and runtime prediction from the history.

Every ``bioaccel gpu-run`` records one row: what ran (``kind``, e.g. ``align``), its cost
features (``cells`` = sum of len_i * len_j over its pairs, sequence count), the device kind,
the account charged, start/end and the exit code. Snakemake ``benchmark:`` files can be imported.

The runtime model, per (kind, device kind): ``runtime = overhead + cells / throughput``,
fitted by least squares over the successful runs (both terms kept non-negative); with one
run only, the overhead is zero. A device kind with no history borrows the kind's model
pooled over all devices.
"""

from __future__ import annotations

import contextlib
import csv
import dataclasses
import fcntl
import json
import os
import sqlite3
import stat
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import SchedulerConfigError
from .identity import SharesConfig, current_user, user_name
from .policies import decay
from .rundir import (
    ADMIN_HINT,
    PRIVATE_DIR_MODE,
    SHARED_DIR_MODE,
    describe,
    ensure_dir,
    is_shared,
    open_record,
    read_record,
    warn,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL,
    user TEXT NOT NULL,
    device_kind TEXT NOT NULL,
    gpus INTEGER NOT NULL,
    cells REAL,
    n_seqs INTEGER,
    start REAL NOT NULL,
    end REAL NOT NULL,
    exit_code INTEGER NOT NULL,
    command TEXT
)"""


@dataclass(frozen=True)
class Run:
    kind: str
    user: str
    device_kind: str
    gpus: int
    cells: float | None
    n_seqs: int | None
    start: float
    end: float
    exit_code: int
    command: str = ""

    @property
    def runtime_s(self) -> float:
        return self.end - self.start


#: Fair-share usage halves every week of age (Slurm's PriorityDecayHalfLife default).
HALF_LIFE_S = 7 * 86400.0
#: Another user's history is never waited for longer than this (it may be locked forever).
READ_TIMEOUT_S = 0.2
#: Rows of each user's history the runtime predictor reads (the newest ones).
PREDICTOR_ROWS = 20000


class History:
    """The run history and usage of one run directory, one folder per Unix user
    (``users/<uid>/``, the user's own, mode 0755): ``history.sqlite`` (and the journals
    SQLite makes beside it: nobody else can plant one there) and ``usage.json``, the user's
    decayed GPU-seconds per account (Slurm's half-life decay: each run adds
    ``gpus x seconds`` to the sum decayed to its end), which is all a fair-share pass reads.
    A user writes only their own folder and reads everyone's, so nobody can delete or rewrite
    another user's records. A record is the folder owner's, whatever it says: the account it
    names is charged only if the shares file lets the owner charge it (else the owner's own
    account, with a warning). A folder or file that is not its owner's, a symlink, a FIFO,
    hard-linked or not SQLite is skipped with a warning; another user's history locked for
    longer than :data:`READ_TIMEOUT_S` is skipped with a warning, never waited for."""

    def __init__(
        self,
        directory: str | Path,
        shares: SharesConfig | None = None,
        half_life_s: float = HALF_LIFE_S,
    ):
        self.dir = Path(directory)
        self.users = self.dir / "users"
        self.shares = shares or SharesConfig()
        self.half_life_s = float(half_life_s)

    @property
    def folder(self) -> Path:
        """This user's own folder."""
        return self.users / str(os.getuid())

    @property
    def path(self) -> Path:
        """This user's own history file."""
        return self.folder / "history.sqlite"

    def _own_folder(self) -> Path:
        """This user's folder, made if missing; refused if it is not theirs alone."""
        folder = self.folder
        if not os.path.lexists(self.dir):  # a history of one's own (benchmarks, tests): private
            ensure_dir(self.dir, PRIVATE_DIR_MODE)
        if not os.path.lexists(self.users):
            shared = is_shared(os.stat(self.dir))
            if shared and os.getuid() != 0:
                raise SchedulerConfigError(f"{str(self.users)!r} is missing: {ADMIN_HINT}")
            ensure_dir(self.users, SHARED_DIR_MODE if shared else PRIVATE_DIR_MODE)
        if not os.path.lexists(folder):
            with contextlib.suppress(FileExistsError):
                os.mkdir(folder, 0o700)
                os.chmod(folder, 0o755)  # readable by all whatever the umask
        st = os.lstat(folder)
        if (
            not stat.S_ISDIR(st.st_mode)
            or st.st_uid != os.getuid()
            or stat.S_IMODE(st.st_mode) & 0o022
        ):
            raise SchedulerConfigError(
                f"history folder {describe(folder, st)} is not a folder of {current_user()} "
                f"that only they can write: their runs cannot be recorded there ({ADMIN_HINT})"
            )
        return folder

    def _own_file(self, name: str) -> Path:
        path = self._own_folder() / name
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(path)
            if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_nlink != 1:
                raise SchedulerConfigError(
                    f"history file {describe(path, st)} is not a regular file of "
                    f"{current_user()} with one name: it cannot hold their runs"
                )
        return path

    def _own(self) -> sqlite3.Connection:
        path = self._own_file("history.sqlite")
        db = sqlite3.connect(
            f"file:{urllib.parse.quote(str(path))}?nofollow=1", uri=True, timeout=10
        )
        with db:
            db.execute(_SCHEMA)
        return db

    def record(self, run: Run) -> None:
        """Add ``run`` to this user's history and its charge to their usage."""
        with contextlib.closing(self._own()) as db, db:
            db.execute(
                "INSERT INTO runs (kind, user, device_kind, gpus, cells, n_seqs, start, end,"
                " exit_code, command) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    run.kind,
                    run.user,
                    run.device_kind,
                    run.gpus,
                    run.cells,
                    run.n_seqs,
                    run.start,
                    run.end,
                    run.exit_code,
                    run.command,
                ),
            )
        self.charge(run.user, run.gpus * max(0.0, run.runtime_s), run.end)

    def charge(self, account: str, gpu_s: float, at: float | None = None) -> None:
        """Add ``gpu_s`` GPU-seconds (ended at ``at``) to this user's decayed usage."""
        at = time.time() if at is None else at
        lock = self._own_file("usage.lock")
        fd = os.open(lock, os.O_RDONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # only this user's own processes contend here
            old = self._usage_of(self._own_file("usage.json"), os.getuid(), quiet=True)
            now = max(at, old[1]) if old else at
            sums = (
                {a: decay(v, now - old[1], self.half_life_s) for a, v in old[0].items()}
                if old
                else {}
            )
            sums[account] = sums.get(account, 0.0) + decay(gpu_s, now - at, self.half_life_s)
            body = json.dumps({"at": now, "half_life_s": self.half_life_s, "gpu_s": sums})
            path = self.folder / "usage.json"
            tmp = self.folder / f".usage.{os.getpid()}.tmp"
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            wfd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
            try:
                os.write(wfd, body.encode())
            finally:
                os.close(wfd)
            os.rename(tmp, path)
        finally:
            os.close(fd)

    def _usage_of(self, path: Path, uid: int, quiet: bool = False):
        """``({account: decayed GPU-s}, at)`` of one user's ``usage.json``, or None."""
        opened = open_record(path)
        if opened is None:
            return None
        fd, st = opened
        try:
            info = read_record(fd, st, path, {"at": (int, float), "gpu_s": (dict,)})
        finally:
            os.close(fd)
        if info is None or st.st_uid != uid:
            return None
        sums = {}
        for account, value in info["gpu_s"].items():
            if (
                not isinstance(value, (int, float))
                or isinstance(value, bool)
                or not 0 <= value < float("inf")
            ):
                if not quiet:
                    warn(
                        f"skipping account {account!r} of {describe(path, st)}: usage "
                        f"{value!r:.40} is not a finite number >= 0"
                    )
                continue
            sums[str(account)] = float(value)
        return sums, float(info["at"])

    def _user_folders(self):
        """``(uid, folder)`` of every user's folder that is theirs alone (others are skipped
        with a warning)."""
        try:
            names = sorted(os.listdir(self.users))
        except OSError:
            return
        for name in names:
            folder = self.users / name
            try:
                st = os.lstat(folder)
            except FileNotFoundError:
                continue
            if name.startswith("."):
                continue
            if (
                not name.isdigit()
                or not stat.S_ISDIR(st.st_mode)
                or st.st_uid != int(name)
                or stat.S_IMODE(st.st_mode) & 0o022
            ):
                warn(
                    f"skipping {describe(folder, st)}: expected a folder of uid {name} that "
                    "only its owner can write"
                )
                continue
            yield st.st_uid, folder

    def usage(self, now: float | None = None) -> dict[str, float]:
        """Decayed GPU-seconds per account (for the fair-share policy): one small file per
        user, whatever the length of the histories."""
        now = time.time() if now is None else now
        out: dict[str, float] = {}
        for uid, folder in self._user_folders():
            got = self._usage_of(folder / "usage.json", uid)
            if got is None:
                continue
            sums, at = got
            owner = user_name(uid)
            for account, value in sums.items():
                charged, honoured = self.shares.charged(owner, account)
                if not honoured:
                    warn(
                        f"usage of {owner} names account {account!r}, which {owner} may not "
                        f"charge: charged to {charged}"
                    )
                out[charged] = out.get(charged, 0.0) + decay(value, now - at, self.half_life_s)
        return out

    def runs(self, kind: str | None = None) -> list[Run]:
        """Every user's runs (of ``kind``; the newest :data:`PREDICTOR_ROWS` of each user),
        each charged to the account it may charge."""
        out = []
        for uid, folder in self._user_folders():
            out.extend(self._runs_of(folder / "history.sqlite", uid, kind))
        return out

    def _runs_of(self, path: Path, uid: int, kind: str | None) -> list[Run]:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return []
        if not stat.S_ISREG(st.st_mode) or st.st_uid != uid or st.st_nlink != 1:
            warn(
                f"skipping history file {describe(path, st)}: expected a regular file of uid "
                f"{uid} with one name"
            )
            return []
        if st.st_size == 0:
            return []  # being created
        mine = uid == os.getuid()
        try:
            db = sqlite3.connect(
                f"file:{urllib.parse.quote(str(path))}?mode=ro&nofollow=1",
                uri=True,
                timeout=10 if mine else READ_TIMEOUT_S,
            )
            with contextlib.closing(db):
                rows = db.execute(
                    "SELECT kind, user, device_kind, gpus, cells, n_seqs, start, end, exit_code, "
                    "command FROM runs"
                    + (" WHERE kind = ?" if kind else "")
                    + " ORDER BY id DESC LIMIT ?",
                    ((kind,) if kind else ()) + (PREDICTOR_ROWS,),
                ).fetchall()[::-1]
        except sqlite3.Error as exc:
            warn(f"skipping history file {describe(path, st)}: {exc}")
            return []
        owner = user_name(st.st_uid)
        out, refused = [], set()
        for r in rows:
            try:
                run = Run(*r)
                float(run.start), float(run.end), int(run.gpus)
            except (TypeError, ValueError):
                warn(
                    f"skipping a malformed record in history file {describe(path, st)}: {r!r:.120}"
                )
                continue
            account, honoured = self.shares.charged(owner, run.user)
            if not honoured:
                refused.add(str(run.user))
            out.append(dataclasses.replace(run, user=account))
        if refused:
            warn(
                f"history file {describe(path, st)} charges account(s) {sorted(refused)} that "
                f"{owner} may not charge: charged to {owner}"
            )
        return out

    def import_snakemake_benchmark(
        self,
        path: str | Path,
        *,
        kind: str,
        cells: float | None = None,
        n_seqs: int | None = None,
        device_kind: str = "unknown",
        user: str | None = None,
        gpus: int = 1,
    ) -> int:
        """Add the runs of a Snakemake ``benchmark:`` TSV (one row per repeat; its ``s``
        column is the wall time). Returns the number of rows imported."""
        path = Path(path)
        try:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f, delimiter="\t"))
        except OSError as exc:
            raise SchedulerConfigError(
                f"cannot read benchmark file {str(path)!r}: {exc.strerror}"
            ) from None
        if not rows or "s" not in rows[0]:
            raise SchedulerConfigError(f"{path}: not a Snakemake benchmark file (no 's' column)")
        end = path.stat().st_mtime
        user = self.shares.check_account(current_user(), user)
        for k, row in enumerate(rows, start=2):
            try:
                seconds = float(row["s"])
            except (TypeError, ValueError):
                raise SchedulerConfigError(
                    f"{path}: line {k}: 's' = {row['s']!r} is not a number"
                ) from None
            self.record(
                Run(
                    kind,
                    user,
                    device_kind,
                    gpus,
                    cells,
                    n_seqs,
                    end - seconds,
                    end,
                    0,
                    f"benchmark:{path.name}",
                )
            )
        return len(rows)


class RuntimePredictor:
    """``runtime = overhead + cells / throughput`` per (kind, device kind); see the module."""

    def __init__(self, runs: list[Run]):
        self._models: dict[tuple[str, str], tuple[float, float]] = {}
        groups: dict[tuple[str, str], list[Run]] = {}
        for r in runs:
            if r.exit_code == 0 and r.cells is not None and r.cells > 0 and r.runtime_s > 0:
                groups.setdefault((r.kind, r.device_kind), []).append(r)
                groups.setdefault((r.kind, "*"), []).append(r)
        for key, rs in groups.items():
            self._models[key] = self._fit(
                np.array([r.cells for r in rs]), np.array([r.runtime_s for r in rs])
            )

    @staticmethod
    def _fit(cells: np.ndarray, t: np.ndarray) -> tuple[float, float]:
        if len(cells) >= 2 and np.ptp(cells) > 0:
            a = np.stack([np.ones_like(cells), cells], axis=1)
            (c0, c1), *_ = np.linalg.lstsq(a, t, rcond=None)
            if c0 >= 0 and c1 > 0:
                return float(c0), float(c1)
        return 0.0, float(np.sum(t) / np.sum(cells))  # through the origin

    def predict(self, kind: str, cells: float, device_kind: str = "*") -> float | None:
        """Predicted seconds, or None with no history for ``kind``."""
        model = self._models.get((kind, device_kind)) or self._models.get((kind, "*"))
        if model is None:
            return None
        return model[0] + model[1] * float(cells)

    def throughput(self, kind: str, device_kind: str = "*") -> float | None:
        """Cells per second of the fitted model."""
        model = self._models.get((kind, device_kind)) or self._models.get((kind, "*"))
        return None if model is None else 1.0 / model[1]
