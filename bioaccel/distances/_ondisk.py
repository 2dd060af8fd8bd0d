"""Distance matrices larger than memory: streamed to disk in row tiles, resumable.

:func:`stream_distances` computes the upper triangle in row tiles of about equal work
(sum of len_i * len_j over each tile's pairs; capped so a tile's buffers stay small) and
writes each tile into its place in a condensed binary file (``.cdist``, float32 by default;
the format is in :mod:`bioaccel.distances._matrix`): never a square in memory and never text.

Crash safety and resume: the file is filled as ``PATH.partial``; about once a second (and
when the run stops, however it stops) the data are flushed to disk and only then are the
finished tiles appended to ``PATH.partial.tiles`` (fsync'ed), so the journal never vouches
for data that could be lost, even on power failure.
Re-running the same command with the same input and parameters (checked against
``PATH.partial.json``) skips the finished tiles; the finished file is renamed to ``PATH``
only when every tile is in, so a file at ``PATH`` is always complete. Values do not depend
on the tiling, the threads, or on interruptions.

:func:`open_distances` maps a finished file without reading it: rows, single values and
the condensed vector come from the page cache on demand.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .._core import (
    CONDENSED,
    atomic_output,
    check_threads,
    output_format,
    output_target,
    pairs_before,
    refuse_overwriting_inputs,
    triangle_row_ranges,
    without_negative_zero,
)
from ..errors import BioaccelError, MatrixFormatError
from ..sequences import as_batch
from ._cdist import _cdist_head, cdist_header, load_cdist
from ._checks import to_float32
from ._condensed import CondensedMatrix
from ._matrix import DistanceMatrix

#: pairs per tile at most (a tile's distances and count buffers stay within ~100 MB)
MAX_TILE_PAIRS = 4_000_000
#: seconds between checkpoints (fdatasync of the data, then fsync of the journal): a killed
#: run loses at most this much work
CHECKPOINT_S = 1.0


class CondensedDistances:
    """A ``.cdist`` file mapped read-only: ``len``, ``ids``, ``d[i, j]``, ``row(i)``,
    ``condensed()`` (a memmap), ``to_memory()`` (a :class:`DistanceMatrix`)."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as f:
                width, n, labels, offset = _cdist_head(f, self.path)  # the one header reader
        except OSError as exc:
            raise MatrixFormatError(f"{self.path}: {exc.strerror}") from None
        self.ids = labels
        self.n = n
        m = n * (n - 1) // 2
        self._offset = offset
        self.dtype = np.dtype("<f4" if width == 4 else "<f8")
        self._values = (
            np.memmap(self.path, dtype=self.dtype, mode="r", offset=offset, shape=(m,))
            if m
            else np.zeros(0, self.dtype)
        )

    def __len__(self) -> int:
        return self.n

    def __repr__(self) -> str:
        return f"<CondensedDistances {self.n} x {self.n} {self.dtype.name} at {str(self.path)!r}>"

    def condensed(self) -> np.ndarray:
        return self._values

    def __getitem__(self, ij: tuple[int, int]) -> float:
        i, j = (int(x) for x in ij)
        if not (0 <= i < self.n and 0 <= j < self.n):
            raise IndexError(f"({i}, {j}) outside a {self.n} x {self.n} matrix")
        if i == j:
            return 0.0
        a, b = min(i, j), max(i, j)
        return float(self._values[pairs_before(a, self.n) + b - a - 1])

    def row(self, i: int) -> np.ndarray:
        """Distances from sequence ``i`` to all (float64, zero at ``i``)."""
        n = self.n
        if isinstance(i, bool) or not 0 <= int(i) < n:
            raise IndexError(f"row {i!r} outside a {n} x {n} matrix")
        i = int(i)
        out = np.zeros(n)
        before = np.arange(i)
        out[:i] = self._values[pairs_before(before, n) + i - before - 1]
        start = pairs_before(i, n)
        out[i + 1 :] = self._values[start : start + n - i - 1]
        return out

    def load(self) -> CondensedMatrix:
        """The values as a :class:`~bioaccel.distances._matrix.CondensedMatrix` (float32, the
        input of the low-memory :func:`bioaccel.nj`), read from the file in blocks into one
        new array: no float64 square, and the file's pages stay in the page cache, out of
        this process's memory (a map would count them)."""
        return load_cdist(self.path)

    def to_memory(self) -> DistanceMatrix:
        return DistanceMatrix.from_condensed(np.asarray(self._values, dtype=np.float64), self.ids)


def open_distances(path: str | os.PathLike) -> CondensedDistances:
    """Map a ``.cdist`` file without reading it (see :class:`CondensedDistances`)."""
    return CondensedDistances(path)


def _row_computer(
    batch,
    model: str,
    *,
    backend: str,
    threads: int,
    single: bool,
    pairwise_deletion: bool,
    matrix,
    gap_open,
    gap_extend,
    k,
    sketch_size,
    seed,
):
    """(ids, per-row work, function (i0, i1) -> condensed distances of rows [i0, i1))."""
    from ._models import prepare

    pm = prepare(
        batch,
        model,
        backend=backend,
        threads=threads,
        pairwise_deletion=pairwise_deletion,
        matrix=matrix,
        gap_open=gap_open,
        gap_extend=gap_extend,
        k=k,
        sketch_size=sketch_size,
        seed=seed,
    )
    return pm.ids, pm.work(), lambda i0, i1: pm.rows(i0, i1, single=single)


def _fingerprint(batch, model: str, dtype: str, params: dict) -> str:
    from ..sequences import input_fingerprint

    h = hashlib.sha256(input_fingerprint(batch).encode())
    h.update(
        json.dumps({"model": model, "dtype": dtype, **params}, sort_keys=True, default=str).encode()
    )
    return h.hexdigest()


def stream_distances(
    seqs,
    model: str,
    path: str | os.PathLike,
    *,
    dtype: str = "float32",
    backend: str = "auto",
    threads: int = 0,
    resume: bool = True,
    progress: Callable[[int, int], None] | None = None,
    pairwise_deletion: bool = False,
    matrix=None,
    gap_open: int | None = None,
    gap_extend: int | None = None,
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
    tiles: int | None = None,
    alphabet="auto",
) -> CondensedDistances:
    """All-vs-all distances of ``seqs`` written to ``path`` (``.cdist``), tile by tile.

    Same models and options as :func:`bioaccel.distance_matrix`; the values equal its
    matrix (rounded to float32 unless ``dtype="float64"``). See the module docstring for
    resuming. Returns the finished file, mapped.

    Examples
    --------
    >>> import tempfile, os
    >>> out = os.path.join(tempfile.mkdtemp(), "d.cdist")
    >>> d = stream_distances(["ACGTACGTAC", "ACGTACGTAT", "ACGAACGTAC"], "raw", out,
    ...                      dtype="float64", backend="cpu")
    >>> d.row(0).tolist(), d[1, 2]
    ([0.0, 0.1, 0.1], 0.2)
    """
    from ._kmers import Sketches

    output_format(path, CONDENSED, "streamed distance matrix", default="cdist")
    threads = check_threads(threads)
    if dtype not in ("float32", "float64"):
        raise ValueError(f"dtype must be 'float32' or 'float64', got {dtype!r}")
    refuse_overwriting_inputs({"path": path}, [seqs])
    target, through = output_target(path)
    if through:
        raise OSError(
            errno.EINVAL,
            f"cannot stream distances to {str(path)!r}: it is a device "
            "or FIFO, and a streamed .cdist resumes from files beside it; "
            "give a regular file name",
        )
    batch = seqs if isinstance(seqs, Sketches) else as_batch(seqs, alphabet)
    n = len(batch.ids)
    if n < 2:
        raise ValueError(f"need at least 2 sequences for a distance matrix, got {n}")
    single = dtype == "float32"
    params = dict(
        pairwise_deletion=pairwise_deletion,
        matrix=matrix,
        gap_open=gap_open,
        gap_extend=gap_extend,
        k=k,
        sketch_size=sketch_size,
        seed=seed,
    )
    ids, work, compute = _row_computer(
        batch, model, backend=backend, threads=threads, single=single, **params
    )
    m = n * (n - 1) // 2
    if tiles is None:  # ~250,000 pairs a tile at least (parallel work), 16 to 256 tiles
        tiles = int(min(256, max(16, m // 250_000)))
    plan = triangle_row_ranges(work, rows=n - 1, parts=tiles, max_pairs=MAX_TILE_PAIRS)
    path = target  # a symlink's file: the link stays, its file is written
    partial = Path(str(path) + ".partial")
    journal = Path(str(partial) + ".tiles")
    meta = Path(str(partial) + ".json")
    fingerprint = _fingerprint(batch, str(model).lower(), dtype, params)
    width = 4 if single else 8
    header = cdist_header(list(ids), width)
    try:
        done: set[tuple[int, int]] = set()
        if resume and partial.exists() and meta.exists() and journal.exists():
            try:
                info = json.loads(meta.read_text())
            except ValueError:
                info = {}
            if (
                info.get("fingerprint") == fingerprint
                and info.get("tiles") == [list(t) for t in plan]
                and partial.stat().st_size == len(header) + m * width
            ):
                for line in journal.read_text().splitlines():
                    parts = line.split()
                    if len(parts) == 2:
                        done.add((int(parts[0]), int(parts[1])))
        if not done:
            for f in (partial, journal, meta):
                f.unlink(missing_ok=True)
            with open(partial, "wb") as f:
                f.write(header)
                f.truncate(len(header) + m * width)
            with atomic_output(meta) as f:
                json.dump(
                    {
                        "fingerprint": fingerprint,
                        "model": str(model),
                        "dtype": dtype,
                        "n": n,
                        "tiles": [list(t) for t in plan],
                    },
                    f,
                )
            journal.write_text("")
        # positioned writes rather than a writable map: the output's pages then belong to the
        # page cache, not to this process's resident memory
        out_dtype = np.dtype("<f4" if single else "<f8")
        fd = os.open(partial, os.O_RDWR)
        finished = sum(pairs_before(i1, n) - pairs_before(i0, n) for i0, i1 in done)
        if progress is not None:
            progress(finished, m)
        pending: list[tuple[int, int]] = []
        last_sync = time.monotonic()

        def checkpoint(jf) -> None:
            """Data to disk first, then the journal lines that vouch for them."""
            if not pending:
                return
            os.fdatasync(fd)
            jf.write("".join(f"{i0} {i1}\n" for i0, i1 in pending))
            jf.flush()
            os.fsync(jf.fileno())
            pending.clear()

        with open(journal, "a") as jf:
            try:
                for i0, i1 in plan:
                    if (i0, i1) in done:
                        continue
                    a, b = pairs_before(i0, n), pairs_before(i1, n)
                    seg = compute(i0, i1)
                    if seg.shape != (b - a,):
                        raise RuntimeError(
                            f"tile rows {i0}:{i1} gave {seg.shape} values, not {b - a}"
                        )
                    seg = without_negative_zero(
                        (to_float32(seg) if single else seg).astype(out_dtype, copy=False)
                    )
                    os.pwrite(fd, seg.tobytes(), len(header) + a * width)
                    pending.append((i0, i1))
                    finished += b - a
                    if time.monotonic() - last_sync >= CHECKPOINT_S:
                        checkpoint(jf)
                        last_sync = time.monotonic()
                    if progress is not None:
                        progress(finished, m)
            finally:
                checkpoint(jf)  # the tiles computed so far stay done, whatever stopped us
                os.close(fd)
        os.replace(partial, path)
        journal.unlink(missing_ok=True)
        meta.unlink(missing_ok=True)
    except OSError as exc:
        if isinstance(exc, BioaccelError) or not exc.strerror:
            raise
        # the work files (PATH.partial, .tiles, .json) are ours: lead with the user's file
        reason = exc.strerror[:1].lower() + exc.strerror[1:]
        work = {str(f) for f in (partial, journal, meta)}
        if exc.filename is not None and str(exc.filename) in work:
            reason = f"its work file {str(exc.filename)!r}: {reason}"
        raise OSError(exc.errno, f"cannot write {str(path)!r}: {reason}") from None
    return CondensedDistances(path)
