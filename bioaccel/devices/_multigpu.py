"""Data parallelism over several GPUs inside one call (``devices=``).

Split -> launch -> gather: the pair space is cut into rectangular tiles of about equal
*work* (sum of len_i * len_j over the tile's pairs, not the pair count), the tiles are
handed out largest first to one worker thread per device (each bound to its device), and
the caller's thread writes each result into its place (tiles are disjoint, so arrival
order does not matter) through a bounded queue. Every tile is computed by the same
kernel a single-device run uses, so the result is identical whatever the split.

Failures:

- a worker's ordinary exception (bad input, a bug) sets the kill switch and is re-raised
  in the caller;
- a device failure (:class:`~bioaccel.errors.DeviceError`, CUDA runtime/driver errors)
  retires that device; its tile goes back to the queue for the others, and the run fails
  only when no device is left;
- out of device memory: the tile is split in two and both halves are queued again; a
  single pair that does not fit moves to another device (one that has not run out of
  memory on it, as failover moves a failed device's tiles), and raises MemoryError only
  when no device left can take it (devices of different memory: the pair too large for
  one GPU runs on a larger one).

Virtual devices (``BIOACCEL_VIRTUAL_GPUS``) run their tiles on the CPU backend.

The runner does not look backends up (``sched`` and ``backends`` are sibling layers, see
``tests/core/test_layering.py``): the caller hands it the engine, chosen by
:func:`bioaccel.backends.backend_for_devices`.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .._core import balanced_cuts
from ..errors import DeviceError
from ._discover import Device

log = logging.getLogger("bioaccel")


@dataclass(frozen=True)
class Tile:
    """Rows [i0, i1) x columns [j0, j1); ``diagonal``: a symmetric block of an all-vs-all."""

    i0: int
    i1: int
    j0: int
    j1: int
    work: float
    diagonal: bool = False
    #: slots (positions in the device list) that ran out of memory on this single pair
    excluded: frozenset = frozenset()

    def halves(self, q_len: np.ndarray, t_len: np.ndarray) -> list[Tile]:
        """Split in two along the longer side (diagonal blocks into 3 blocks: 2 diagonal
        + 1 rectangular)."""
        if self.diagonal:
            if self.i1 - self.i0 < 2:
                return []
            m = (self.i0 + self.i1) // 2
            return [
                make_tile(self.i0, m, self.i0, m, q_len, t_len, True),
                make_tile(m, self.i1, m, self.i1, q_len, t_len, True),
                make_tile(self.i0, m, m, self.i1, q_len, t_len, False),
            ]
        if self.i1 - self.i0 >= self.j1 - self.j0 and self.i1 - self.i0 >= 2:
            m = (self.i0 + self.i1) // 2
            return [
                make_tile(self.i0, m, self.j0, self.j1, q_len, t_len),
                make_tile(m, self.i1, self.j0, self.j1, q_len, t_len),
            ]
        if self.j1 - self.j0 >= 2:
            m = (self.j0 + self.j1) // 2
            return [
                make_tile(self.i0, self.i1, self.j0, m, q_len, t_len),
                make_tile(self.i0, self.i1, m, self.j1, q_len, t_len),
            ]
        return []


def make_tile(i0, i1, j0, j1, q_len, t_len, diagonal=False) -> Tile:
    rows = float(np.sum(q_len[i0:i1], dtype=np.float64))
    cols = float(np.sum(t_len[j0:j1], dtype=np.float64))
    work = rows * cols
    if diagonal:  # each unordered pair once
        sq = float(np.sum(q_len[i0:i1].astype(np.float64) ** 2))
        work = (work - sq) / 2 + sq
    return Tile(i0, i1, j0, j1, work, diagonal)


def _run_cuts(lengths: np.ndarray, parts: int) -> list[int]:
    """Boundaries of at most ``parts`` non-empty runs of about equal total length."""
    n = len(lengths)
    if n <= 1:
        return [0, n]
    cuts = balanced_cuts(np.asarray(lengths, dtype=np.float64) + 1.0, max(1, min(parts, n)))
    return sorted({0, n, *[min(max(c, 1), n - 1) for c in cuts[1:-1]]})


def partition(
    q_len: np.ndarray, t_len: np.ndarray | None, n_devices: int, tiles_per_device: int = 6
) -> list[Tile]:
    """Tiles covering the pair space (``t_len=None``: all-vs-all, upper triangle with the
    diagonal blocks), cut by cumulative length so tiles carry about equal work; largest
    first."""
    target = max(1, n_devices * tiles_per_device)
    if t_len is None:
        # b row-blocks give b (b + 1) / 2 upper blocks of about equal work
        b = max(1, int(np.ceil((np.sqrt(8 * target + 1) - 1) / 2)))
        cuts = _run_cuts(q_len, b)
        tiles = [
            make_tile(cuts[a], cuts[a + 1], cuts[c], cuts[c + 1], q_len, q_len, a == c)
            for a in range(len(cuts) - 1)
            for c in range(a, len(cuts) - 1)
        ]
    else:
        rb = max(1, int(np.ceil(np.sqrt(target * len(q_len) / max(1, len(t_len))))))
        cb = max(1, -(-target // rb))
        rc, cc = _run_cuts(q_len, rb), _run_cuts(t_len, cb)
        tiles = [
            make_tile(rc[a], rc[a + 1], cc[c], cc[c + 1], q_len, t_len)
            for a in range(len(rc) - 1)
            for c in range(len(cc) - 1)
        ]
    tiles = [t for t in tiles if t.i1 > t.i0 and t.j1 > t.j0]
    return sorted(tiles, key=lambda t: -t.work)


def is_device_failure(exc: BaseException, engine=None) -> bool:
    """True when ``exc`` means a device failed: a :class:`DeviceError`, or what the backend
    running the tiles says is its stack's device failure (:meth:`Backend.is_device_failure`);
    out of memory is not (the tile is split instead)."""
    if isinstance(exc, DeviceError):
        return True
    return engine is not None and engine.is_device_failure(exc) and not is_out_of_memory(exc)


def is_out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError):  # includes cupy.cuda.memory.OutOfMemoryError
        return True
    text = str(exc)
    return "CUDA_ERROR_OUT_OF_MEMORY" in text or "cudaErrorMemoryAllocation" in text


def device_scope(device: Device, engine):
    """A context in which ``engine`` (a backend of :mod:`bioaccel.backends`) runs on
    ``device`` in this thread: the one device dispatch. Virtual GPUs select nothing; a real
    one is selected by the backend itself (:meth:`Backend.device_scope`), so this runner
    knows no backend by name and imports no GPU stack."""
    return contextlib.nullcontext() if device.virtual else engine.device_scope(device)


_DONE = object()


def run_tiles(
    tiles: Sequence[Tile],
    devices: Sequence[Device],
    engine,
    compute: Callable[[Tile], object],
    gather: Callable[[Tile, object], None],
    q_len: np.ndarray,
    t_len: np.ndarray,
    max_inflight: int | None = None,
) -> None:
    """Compute every tile on ``devices`` and ``gather`` each result in the caller's thread.
    See the module docstring for failover and splitting."""
    if not callable(getattr(engine, "device_scope", None)):
        # checked here, not where a real GPU first needs it: virtual devices never call it
        raise TypeError(f"run_tiles needs a backend object for engine, not {engine!r}")
    lock = threading.Condition()
    pending = list(tiles)  # a stack of work: largest first -> reversed
    pending.reverse()
    outstanding = [len(tiles)]
    alive = set(range(len(devices)))
    kill = threading.Event()
    results: queue.Queue = queue.Queue(maxsize=max_inflight or 2 * len(devices) + 2)
    fatal: list[BaseException] = []
    done_per_device = [0] * len(devices)

    def worker(slot: int, device: Device) -> None:
        try:
            with device_scope(device, engine):
                while not kill.is_set():
                    with lock:
                        while True:  # the next tile this device may take
                            if kill.is_set() or outstanding[0] == 0:
                                return
                            k = next(
                                (
                                    k
                                    for k in range(len(pending) - 1, -1, -1)
                                    if slot not in pending[k].excluded
                                ),
                                None,
                            )
                            if k is not None:
                                tile = pending.pop(k)
                                break
                            lock.wait(0.1)
                    try:
                        if (
                            device.fail_after_tiles is not None
                            and done_per_device[slot] >= device.fail_after_tiles
                        ):
                            raise DeviceError(
                                f"{device} failed (fail_after_tiles="
                                f"{device.fail_after_tiles}, a failover drill)"
                            )
                        if device.max_tile_work is not None and tile.work > device.max_tile_work:
                            raise MemoryError(
                                f"{device}: tile of work {tile.work:.3g} exceeds "
                                f"max_tile_work={device.max_tile_work:.3g}"
                            )
                        value = compute(tile)
                    except BaseException as exc:
                        if is_out_of_memory(exc):
                            parts = tile.halves(q_len, t_len)
                            if not parts:  # one pair: to a device that may hold it
                                moved = replace(tile, excluded=tile.excluded | {slot})
                                with lock:
                                    if not alive - moved.excluded:
                                        raise MemoryError(
                                            f"{device}: out of memory on a single pair (rows "
                                            f"{tile.i0}, columns {tile.j0}), and no other device "
                                            f"can take it: {exc}"
                                        ) from exc
                                    pending.append(moved)
                                    lock.notify_all()
                                log.info(
                                    "bioaccel: %s out of memory on the pair (%d, %d); moved "
                                    "to another device",
                                    device,
                                    tile.i0,
                                    tile.j0,
                                )
                                continue
                            log.info(
                                "bioaccel: %s out of memory on a tile; split in %d",
                                device,
                                len(parts),
                            )
                            with lock:
                                pending.extend(reversed(parts))
                                outstanding[0] += len(parts) - 1
                                lock.notify_all()
                            continue
                        if is_device_failure(exc, engine):
                            with lock:
                                alive.discard(slot)
                                pending.append(tile)
                                lock.notify_all()
                                last = not alive
                                stuck = next(
                                    (t for t in pending if alive and not alive - t.excluded), None
                                )
                            log.warning("bioaccel: %s; its tiles go to the other devices", exc)
                            if last:
                                raise DeviceError(f"every device failed; last: {exc}") from exc
                            if stuck is not None:
                                raise MemoryError(
                                    f"the pair (rows {stuck.i0}, columns {stuck.j0}) "
                                    "is too large for every device left"
                                ) from exc
                            return
                        raise
                    done_per_device[slot] += 1
                    while not kill.is_set():
                        try:
                            results.put((tile, value), timeout=0.1)
                            break
                        except queue.Full:
                            continue
                    with lock:
                        outstanding[0] -= 1
                        lock.notify_all()
        except BaseException as exc:
            fatal.append(exc)
            kill.set()
        finally:
            with lock:
                lock.notify_all()

    threads = [
        threading.Thread(target=worker, args=(k, d), daemon=True, name=f"bioaccel-{d.visible_id}")
        for k, d in enumerate(devices)
    ]
    for t in threads:
        t.start()

    def watcher() -> None:
        for t in threads:
            t.join()
        results.put(_DONE)

    threading.Thread(target=watcher, daemon=True).start()
    try:
        while True:
            item = results.get()
            if item is _DONE:
                break
            gather(*item)
    except BaseException:
        kill.set()
        raise
    if fatal:
        raise fatal[0]
    if outstanding[0] != 0:  # cannot happen: every tile is either gathered or re-queued
        raise RuntimeError(f"{outstanding[0]} tile(s) were lost")


def _worker_threads(devices: Sequence[Device], threads: int) -> int:
    """CPU threads per worker of virtual devices (they share the cores of the one team
    ``threads`` means: :func:`bioaccel._core.resolve_threads`)."""
    from .._core import resolve_threads

    total = resolve_threads(threads)
    return max(1, total // len(devices)) if all(d.virtual for d in devices) else int(threads)


def pairwise_on_devices(
    queries,
    targets,
    symmetric: bool,
    devices: Sequence[Device],
    engine,
    kernel,
    dtype,
    threads: int = 0,
) -> np.ndarray:
    """All query x target values of ``kernel(engine, q_block, t_block, diagonal, threads)``
    computed tile by tile on ``devices``; symmetric runs compute each unordered pair once.
    ``engine``: the backend the devices run (the caller picks it:
    :func:`bioaccel.backends.backend_for_devices`)."""
    per_worker = _worker_threads(devices, threads)
    q_len = queries.lengths
    t_len = q_len if symmetric else targets.lengths
    out = np.zeros((len(queries), len(targets)), dtype=dtype)
    tiles = partition(q_len, None if symmetric else t_len, len(devices))

    def compute(tile: Tile):
        qb = queries.slice(tile.i0, tile.i1)
        tb = qb if tile.diagonal else targets.slice(tile.j0, tile.j1)
        return kernel(engine, qb, tb, tile.diagonal, per_worker)

    def gather(tile: Tile, block) -> None:
        out[tile.i0 : tile.i1, tile.j0 : tile.j1] = block
        if symmetric and not tile.diagonal:
            out[tile.j0 : tile.j1, tile.i0 : tile.i1] = np.asarray(block).T

    log.info(
        "bioaccel: %d tiles on %d device(s) with backend %r", len(tiles), len(devices), engine.name
    )
    run_tiles(tiles, devices, engine, compute, gather, q_len, t_len)
    return out


def dna_counts_on_devices(
    data, n: int, table: bool, devices: Sequence[Device], engine, to_distances, threads: int = 0
) -> np.ndarray:
    """Aligned-DNA distances of all pairs, tiles of pair counts of ``engine`` on ``devices``;
    ``to_distances(counts)`` turns a tile's counts into distances (global base frequencies)."""
    per_worker = _worker_threads(devices, threads)
    lengths = np.ones(n)
    out = np.zeros((n, n))
    tiles = partition(lengths, None, len(devices))

    def compute(tile: Tile):
        counts = engine.dna_counts(
            data,
            tile.i0,
            tile.i1,
            tile.j0,
            tile.j1,
            table=table,
            upper_only=False,
            threads=per_worker,
        )
        return to_distances(counts)

    def gather(tile: Tile, block) -> None:
        if tile.diagonal:  # the upper triangle, mirrored, as the single-device path does
            block = np.triu(block, 1)
            block = block + block.T
        out[tile.i0 : tile.i1, tile.j0 : tile.j1] = block
        if not tile.diagonal:
            out[tile.j0 : tile.j1, tile.i0 : tile.i1] = block.T

    run_tiles(tiles, devices, engine, compute, gather, lengths, lengths)
    return out
