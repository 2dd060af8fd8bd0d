"""Recorded job history (SQLite, one file per user in the run directory) and runtime
prediction from it.

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
from .rundir import RECORD_MODE, describe, publish, warn

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


class History:
    """The run history of one run directory: one SQLite file per Unix user
    (``history.<uid>.sqlite``, mode 0644). A user writes only their own file and reads
    everyone's, so nobody can delete or rewrite another user's records. A record is the file
    owner's, whatever it says: the account it names is charged only if the shares file lets
    the owner charge it (else the owner's own account, with a warning). A file that is not
    its owner's, not SQLite or a symlink is skipped with a warning."""

    def __init__(self, directory: str | Path, shares: SharesConfig | None = None):
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.shares = shares or SharesConfig()

    @property
    def path(self) -> Path:
        """This user's own file."""
        return self.dir / f"history.{os.getuid()}.sqlite"

    def _own(self) -> sqlite3.Connection:
        with contextlib.suppress(FileExistsError):
            publish(self.path, b"", RECORD_MODE)
        st = os.lstat(self.path)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid():
            raise SchedulerConfigError(
                f"history file {describe(self.path, st)} is not a regular file of "
                f"{current_user()}: it cannot hold their runs (an administrator should remove it)")
        db = sqlite3.connect(self.path, timeout=60)
        with db:
            db.execute(_SCHEMA)
        return db

    def record(self, run: Run) -> None:
        with contextlib.closing(self._own()) as db, db:
            db.execute("INSERT INTO runs (kind, user, device_kind, gpus, cells, n_seqs, start, end,"
                       " exit_code, command) VALUES (?,?,?,?,?,?,?,?,?,?)",
                       (run.kind, run.user, run.device_kind, run.gpus, run.cells, run.n_seqs,
                        run.start, run.end, run.exit_code, run.command))

    def runs(self, kind: str | None = None) -> list[Run]:
        """Every user's runs (of ``kind``), each charged to the account it may charge."""
        out = []
        for path in sorted(self.dir.glob("history.*.sqlite")):
            out.extend(self._runs_of(path, kind))
        return out

    def _runs_of(self, path: Path, kind: str | None) -> list[Run]:
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            return []
        uid = path.name[len("history."):-len(".sqlite")]
        if not stat.S_ISREG(st.st_mode) or uid != str(st.st_uid):
            warn(f"skipping history file {describe(path, st)}: expected a regular file owned by "
                 f"uid {uid}")
            return []
        if st.st_size == 0:
            return []  # being created
        try:
            db = sqlite3.connect(f"file:{urllib.parse.quote(str(path))}?mode=ro", uri=True,
                                 timeout=60)
            with contextlib.closing(db):
                rows = db.execute(
                    "SELECT kind, user, device_kind, gpus, cells, n_seqs, start, end, exit_code, "
                    "command FROM runs" + (" WHERE kind = ?" if kind else "") + " ORDER BY id",
                    (kind,) if kind else ()).fetchall()
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
                warn(f"skipping a malformed record in history file {describe(path, st)}: "
                     f"{r!r:.120}")
                continue
            account, honoured = self.shares.charged(owner, run.user)
            if not honoured:
                refused.add(str(run.user))
            out.append(dataclasses.replace(run, user=account))
        if refused:
            warn(f"history file {describe(path, st)} charges account(s) {sorted(refused)} that "
                 f"{owner} may not charge: charged to {owner}")
        return out

    def usage(self, now: float | None = None, half_life_s: float = 7 * 86400) -> dict[str, float]:
        """Decayed GPU-seconds per account (for the fair-share policy)."""
        now = time.time() if now is None else now
        out: dict[str, float] = {}
        for r in self.runs():
            out[r.user] = out.get(r.user, 0.0) + decay(r.gpus * r.runtime_s, now - r.end, half_life_s)
        return out

    def import_snakemake_benchmark(self, path: str | Path, *, kind: str, cells: float | None = None,
                                   n_seqs: int | None = None, device_kind: str = "unknown",
                                   user: str | None = None, gpus: int = 1) -> int:
        """Add the runs of a Snakemake ``benchmark:`` TSV (one row per repeat; its ``s``
        column is the wall time). Returns the number of rows imported."""
        path = Path(path)
        try:
            with open(path, newline="") as f:
                rows = list(csv.DictReader(f, delimiter="\t"))
        except OSError as exc:
            raise SchedulerConfigError(f"cannot read benchmark file {str(path)!r}: {exc.strerror}") from None
        if not rows or "s" not in rows[0]:
            raise SchedulerConfigError(f"{path}: not a Snakemake benchmark file (no 's' column)")
        end = path.stat().st_mtime
        user = self.shares.check_account(current_user(), user)
        for k, row in enumerate(rows, start=2):
            try:
                seconds = float(row["s"])
            except (TypeError, ValueError):
                raise SchedulerConfigError(f"{path}: line {k}: 's' = {row['s']!r} is not a number") from None
            self.record(Run(kind, user, device_kind, gpus, cells, n_seqs, end - seconds, end, 0,
                            f"benchmark:{path.name}"))
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
            self._models[key] = self._fit(np.array([r.cells for r in rs]),
                                          np.array([r.runtime_s for r in rs]))

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
