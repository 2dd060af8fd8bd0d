"""Ctrl-C reaches the long C++ stages while they run without the GIL (the one stop flag,
csrc/include/bioaccel/stop.hpp): the clustering, the neighbour search, the all-vs-all edit
distances and alignment scores. Before, SIGINT waited for the whole stage (4-5 s at 10^5
amplicons, hours at 10^7; `bioaccel distance -m edit` on 10^4 reads: 80 s). Each stage is
given work for many seconds and interrupted after half a second: it must raise
KeyboardInterrupt (what the CLI turns into exit 130, nothing written) well within a second.
(The MSA engine's own test: tests/msa/test_msa_options.py.)"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

from bioaccel._core import load_native


def family(n: int, length: int, seed: int, parents: int = 40, edits: int = 4):
    """n sequences (codes 0-3): substitution variants of a few random parents (not
    dereplicated: the C++ stages do not need it)."""
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 4, size=(parents, length), dtype=np.uint8)
    rows = base[rng.integers(0, parents, size=n)]
    for _ in range(edits):
        hit = rng.random(n) < 0.8
        pos = rng.integers(0, length, size=n)
        rows[hit, pos[hit]] = (rows[hit, pos[hit]] + rng.integers(1, 4, size=hit.sum())) % 4
    offsets = np.arange(len(rows) + 1, dtype=np.int64) * length
    return np.ascontiguousarray(rows.ravel()), offsets


def interrupted_within(call, after: float = 0.5) -> float:
    """Seconds from SIGINT to KeyboardInterrupt out of call()."""
    sent = []
    timer = threading.Timer(
        after, lambda: (sent.append(time.monotonic()), os.kill(os.getpid(), signal.SIGINT))
    )
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
            time.sleep(5)  # a call that ended before the signal: let the signal arrive and fail
    finally:
        timer.cancel()
    assert sent, "the call ended before SIGINT was sent: give it more work"
    return time.monotonic() - sent[0]


def test_a_sigint_ignored_when_a_stage_starts_stays_ignored(amplicons):
    # a process started with SIGINT ignored (a script's `bioaccel cluster ... &`, where the
    # terminal's Ctrl-C is for the script): the stage must not install its own handler over it
    codes, offsets = amplicons
    abundance = np.ones(len(offsets) - 1, dtype=np.uint64)
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    timer = threading.Timer(0.2, lambda: os.kill(os.getpid(), signal.SIGINT))
    try:
        timer.start()
        started = time.monotonic()
        order = load_native().swarm_grow_search(codes, offsets, abundance, 2, True, False, -1)[0]
        took = time.monotonic() - started
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, old)
    assert took > 0.2, "the growth ended before SIGINT was sent: give it more work"
    assert len(order) == len(abundance)


@pytest.fixture(scope="module")
def amplicons():
    return family(100_000, 250, seed=1)


def test_ctrl_c_stops_the_growth(amplicons):
    codes, offsets = amplicons
    abundance = np.ones(len(offsets) - 1, dtype=np.uint64)
    native = load_native()
    took = interrupted_within(
        lambda: native.swarm_grow_search(codes, offsets, abundance, 3, True, False, -1)
    )
    assert took < 1.0, took


def test_ctrl_c_stops_the_greedy_search():
    codes, offsets = family(60_000, 100, seed=2, parents=60_000, edits=0)  # all centroids
    native = load_native()
    took = interrupted_within(lambda: native.greedy_search(codes, offsets, 9, 10, 1))
    assert took < 1.0, took


def test_ctrl_c_stops_the_neighbour_search(amplicons):
    codes, offsets = amplicons
    native = load_native()
    took = interrupted_within(lambda: native.edit_neighbors(codes, offsets, 4, 4, threads=2))
    assert took < 1.0, took


def test_ctrl_c_stops_the_all_vs_all_edit_distances():
    from bioaccel.pairwise import edit_distances

    codes, offsets = family(12_000, 250, seed=3)
    seqs = ["".join("ACGT"[c] for c in codes[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    took = interrupted_within(lambda: edit_distances(seqs, backend="cpu", threads=1))
    assert took < 1.0, took


def test_ctrl_c_stops_the_all_vs_all_alignment_scores():
    from bioaccel.pairwise import align_scores

    codes, offsets = family(6_000, 250, seed=4)
    seqs = ["".join("ACGT"[c] for c in codes[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]
    took = interrupted_within(lambda: align_scores(seqs, backend="cpu", threads=1))
    assert took < 1.0, took
