"""Recorded job history (SQLite in the run directory) and runtime prediction from it.

Every ``bioaccel gpu-run`` records one row: what ran (``kind``, e.g. ``align``), its cost
features (``cells`` = sum of len_i * len_j over its pairs, sequence count), the device kind,
the user, start/end and the exit code. Snakemake ``benchmark:`` files can be imported.

The runtime model, per (kind, device kind): ``runtime = overhead + cells / throughput``,
fitted by least squares over the successful runs (both terms kept non-negative); with one
run only, the overhead is zero. A device kind with no history borrows the kind's model
pooled over all devices.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import SchedulerConfigError
from .policies import decay

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
    """The run history of one run directory (``history.sqlite``)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # switching the journal mode takes an exclusive lock that ignores the busy timeout:
        # do it once, with the creators serialised by a lock file
        fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            db = sqlite3.connect(self.path, timeout=60)
            try:
                if db.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    db.execute("PRAGMA journal_mode=WAL")
                with db:
                    db.execute(_SCHEMA)
            finally:
                db.close()
        finally:
            os.close(fd)

    def _connect(self) -> sqlite3.Connection:
        return sqlite3.connect(self.path, timeout=60)

    def record(self, run: Run) -> None:
        with contextlib.closing(self._connect()) as db, db:
            db.execute("INSERT INTO runs (kind, user, device_kind, gpus, cells, n_seqs, start, end,"
                       " exit_code, command) VALUES (?,?,?,?,?,?,?,?,?,?)",
                       (run.kind, run.user, run.device_kind, run.gpus, run.cells, run.n_seqs,
                        run.start, run.end, run.exit_code, run.command))

    def runs(self, kind: str | None = None) -> list[Run]:
        with contextlib.closing(self._connect()) as db:
            rows = db.execute("SELECT kind, user, device_kind, gpus, cells, n_seqs, start, end, "
                              "exit_code, command FROM runs" + (" WHERE kind = ?" if kind else "")
                              + " ORDER BY id", (kind,) if kind else ()).fetchall()
        return [Run(*r) for r in rows]

    def usage(self, now: float | None = None, half_life_s: float = 7 * 86400) -> dict[str, float]:
        """Decayed GPU-seconds per user (for the fair-share policy)."""
        now = time.time() if now is None else now
        out: dict[str, float] = {}
        for r in self.runs():
            out[r.user] = out.get(r.user, 0.0) + decay(r.gpus * r.runtime_s, now - r.end, half_life_s)
        return out

    def import_snakemake_benchmark(self, path: str | Path, *, kind: str, cells: float | None = None,
                                   n_seqs: int | None = None, device_kind: str = "unknown",
                                   user: str = "snakemake", gpus: int = 1) -> int:
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
