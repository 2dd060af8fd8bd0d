"""Streamed, resumable on-disk distance matrices (bioaccel.distances._ondisk, `bioaccel distance -o x.cdist`)."""

import os
import signal
import subprocess
import time

import numpy as np
import pytest

import bioaccel.distances._ondisk as ondisk
from bioaccel._core.tiling import triangle_row_ranges
from bioaccel.distances._compute import distance_matrix
from bioaccel.distances._matrix import DistanceMatrix
from bioaccel.distances._ondisk import open_distances, stream_distances
from bioaccel.errors import MatrixFormatError
from tests.cli_runner import COMMAND
from tests.datasets import child_env


def random_dna(rng, n, lo, hi):
    return ["".join(rng.choice(list("ACGT"), rng.integers(lo, hi))) for _ in range(n)]


@pytest.mark.parametrize(
    "model, kind",
    [
        ("k80", "aligned"),
        ("logdet", "aligned"),
        ("tn93", "aligned"),
        ("edit", "raw"),
        ("jaccard", "raw"),
        ("mash", "raw"),
        ("kmer", "raw"),
        ("identity", "raw"),
    ],
)
def test_streamed_matrix_equals_the_in_memory_one(tmp_path, model, kind):
    rng = np.random.default_rng(7)
    seqs = (
        ["".join(rng.choice(list("ACGT-N"), 240)) for _ in range(90)]
        if kind == "aligned"
        else random_dna(rng, 80, 30, 160)
    )
    full = distance_matrix(seqs, model).data
    d64 = stream_distances(seqs, model, tmp_path / "a.cdist", dtype="float64", tiles=9)
    np.testing.assert_array_equal(d64.to_memory().data, full)
    d32 = stream_distances(seqs, model, tmp_path / "b.cdist", tiles=5)
    assert d32.dtype == np.float32
    np.testing.assert_array_equal(d32.to_memory().data, full.astype(np.float32).astype(np.float64))
    # lazy access reads single rows and values from the map
    for i in (0, 41, 79):
        np.testing.assert_array_equal(d64.row(i), full[i])
        np.testing.assert_equal([d64[i, 3], d64[3, i]], [full[i, 3], full[3, i]])
    n = len(seqs)
    for bad in (-1, n):
        with pytest.raises(IndexError, match=f"row {bad} outside a {n} x {n} matrix"):
            d64.row(bad)
    assert (tmp_path / "b.cdist").stat().st_size < full.nbytes / 3  # condensed float32


def test_plan_balances_work_and_covers_every_row():
    rng = np.random.default_rng(1)
    n = 3000
    lengths = rng.integers(100, 3000, n).astype(float)
    suffix = np.concatenate([np.cumsum(lengths[::-1])[::-1][1:], [0.0]])
    work = lengths * suffix
    tiles = triangle_row_ranges(work, rows=n - 1, parts=64, max_pairs=200_000)
    assert tiles[0][0] == 0 and tiles[-1][1] == n - 1
    assert all(a[1] == b[0] for a, b in zip(tiles, tiles[1:]))
    for i0, i1 in tiles:
        pairs = sum(n - i - 1 for i in range(i0, i1))
        assert pairs <= 200_000 or i1 - i0 == 1
    per_tile = [work[i0:i1].sum() for i0, i1 in tiles]
    assert max(per_tile) <= 2.5 * work.sum() / 64


def crash_on_tile(real, k: int, exc: BaseException):
    """A stand-in for ondisk._row_computer whose k-th tile raises ``exc``."""

    def wrapper(*args, **kw):
        ids, work, compute = real(*args, **kw)
        state = {"n": 0}

        def compute_or_crash(i0, i1):
            state["n"] += 1
            if state["n"] == k:
                raise exc
            return compute(i0, i1)

        return ids, work, compute_or_crash

    return wrapper


def test_interrupted_run_resumes_to_the_same_file(tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    seqs = random_dna(rng, 120, 40, 120)
    real = ondisk._row_computer
    computed = []

    def counting(*args, **kw):
        ids, work, compute = real(*args, **kw)
        return ids, work, lambda i0, i1: (computed.append((i0, i1)), compute(i0, i1))[1]

    monkeypatch.setattr(ondisk, "_row_computer", counting)
    clean = stream_distances(seqs, "edit", tmp_path / "clean.cdist", tiles=12)
    all_tiles = list(computed)
    assert len(all_tiles) >= 10
    target = tmp_path / "d.cdist"
    monkeypatch.setattr(
        ondisk, "_row_computer", crash_on_tile(real, 5, KeyboardInterrupt("simulated interruption"))
    )
    with pytest.raises(KeyboardInterrupt):
        stream_distances(seqs, "edit", target, tiles=12)
    assert not target.exists()  # nothing at the final path until every tile is in
    journal = (tmp_path / "d.cdist.partial.tiles").read_text().splitlines()
    assert len(journal) == 4
    computed.clear()
    monkeypatch.setattr(ondisk, "_row_computer", counting)
    seen = []
    done = stream_distances(seqs, "edit", target, tiles=12, progress=lambda a, b: seen.append(a))
    assert computed == all_tiles[4:]  # only the unfinished tiles were computed again
    assert seen[0] > 0  # the progress starts from the finished tiles
    assert target.read_bytes() == (tmp_path / "clean.cdist").read_bytes()
    assert not (tmp_path / "d.cdist.partial").exists()
    np.testing.assert_array_equal(done.to_memory().data, clean.to_memory().data)


def test_changed_parameters_start_over(tmp_path, monkeypatch):
    rng = np.random.default_rng(3)
    seqs = random_dna(rng, 60, 40, 100)
    real = ondisk._row_computer
    monkeypatch.setattr(ondisk, "_row_computer", crash_on_tile(real, 2, RuntimeError("boom")))
    with pytest.raises(RuntimeError):
        stream_distances(seqs, "jaccard", tmp_path / "d.cdist", k=9, tiles=6)
    monkeypatch.setattr(ondisk, "_row_computer", real)
    # another k: the finished tile of k=9 must not be reused
    got = stream_distances(seqs, "jaccard", tmp_path / "d.cdist", k=11, tiles=6, dtype="float64")
    np.testing.assert_array_equal(got.to_memory().data, distance_matrix(seqs, "jaccard", k=11).data)


def test_corrupt_or_truncated_files_are_refused(tmp_path):
    dm = DistanceMatrix([[0, 1, 2], [1, 0, 3], [2, 3, 0]], ["a", "b", "c"])
    dm.write(tmp_path / "x.cdist")
    assert (
        open_distances(tmp_path / "x.cdist").to_memory() == dm
    )  # DistanceMatrix's float64 files too
    raw = (tmp_path / "x.cdist").read_bytes()
    (tmp_path / "t.cdist").write_bytes(raw[:-4])
    with pytest.raises(MatrixFormatError, match="truncated"):
        open_distances(tmp_path / "t.cdist")
    (tmp_path / "n.cdist").write_bytes(b"nonsense" * 10)
    with pytest.raises(MatrixFormatError, match="not a bioaccel .cdist"):
        open_distances(tmp_path / "n.cdist")
    # a label byte that is not UTF-8: named, by the mapped and the loading reader alike
    at = raw.index(b"b\n")
    (tmp_path / "u.cdist").write_bytes(raw[:at] + b"\xff" + raw[at + 1 :])
    want = rf"u.cdist: byte {at} of the header's labels is not UTF-8 \(0xff\)"
    for read in (open_distances, DistanceMatrix.read_condensed):
        with pytest.raises(MatrixFormatError, match=want):
            read(tmp_path / "u.cdist")


@pytest.mark.slow
def test_sigkilled_cli_run_resumes_to_the_uninterrupted_matrix(tmp_path):
    rng = np.random.default_rng(4)
    fasta = tmp_path / "r.fa"
    with open(fasta, "w") as f:
        for i, s in enumerate(random_dna(rng, 3000, 250, 350)):
            f.write(f">r{i}\n{s}\n")
    cmd = [
        *COMMAND,
        "distance",
        str(fasta),
        "-m",
        "jaccard",
        "-k",
        "15",
        "-t",
        "2",
    ]
    env = child_env()
    subprocess.run(
        cmd + ["-o", str(tmp_path / "clean.cdist")], env=env, check=True, capture_output=True
    )
    out = tmp_path / "d.cdist"
    journal = tmp_path / "d.cdist.partial.tiles"
    proc = subprocess.Popen(cmd + ["-o", str(out)], env=env, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:
        if journal.exists() and len(journal.read_text().splitlines()) >= 3:
            break
        time.sleep(0.005)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = len(journal.read_text().splitlines())
    assert not out.exists() and finished >= 3, "killed too late to test resuming"
    rerun = subprocess.run(cmd + ["-o", str(out)], env=env, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert out.read_bytes() == (tmp_path / "clean.cdist").read_bytes()
