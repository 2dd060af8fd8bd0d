"""Devices of different memory: a pair too large for one GPU moves to a
GPU that can hold it, as failover moves a failed device's tiles; only a pair that no
device left can hold fails. Virtual GPUs (BIOACCEL_GPU_TOPOLOGY) with ``max_tile_work``
stand for the memory; the oracle is the single-device CPU result."""

from __future__ import annotations

import numpy as np
import pytest

from bioaccel.errors import DeviceError
from bioaccel.pairwise._align import align_scores
from bioaccel.pairwise._edit import edit_distances
from tests.cli_runner import invoke


def write_topology(tmp_path, gpus: str) -> str:
    path = tmp_path / "topo.yaml"
    path.write_text(f"nodes:\n  - name: n1\n    virtual: true\n    gpus:\n{gpus}")
    return str(path)


def random_seqs(rng, n, alphabet, lo, hi):
    return ["".join(rng.choice(list(alphabet), rng.integers(lo, hi))) for _ in range(n)]


@pytest.fixture
def uneven(tmp_path, monkeypatch):
    """GPU 0 holds tiles of at most 200,000 cells, GPU 1 any; one pair has 600 x 600 cells."""
    monkeypatch.delenv("BIOACCEL_VIRTUAL_GPUS", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv(
        "BIOACCEL_GPU_TOPOLOGY",
        write_topology(
            tmp_path,
            (
                "      - {id: 0, name: small, memory_gb: 16, max_tile_work: 200000}\n"
                "      - {id: 1, name: large, memory_gb: 141}\n"
            ),
        ),
    )
    rng = np.random.default_rng(3)
    seqs = random_seqs(rng, 30, "ACGT", 20, 120) + random_seqs(rng, 2, "ACGT", 600, 601)
    return seqs


def test_a_pair_too_large_for_gpu0_runs_on_gpu1(uneven, tmp_path):
    seqs = uneven
    # before: MemoryError "out of memory on a single pair", the whole run failed
    np.testing.assert_array_equal(
        edit_distances(seqs, devices="all"), edit_distances(seqs, backend="cpu")
    )
    np.testing.assert_array_equal(
        edit_distances(seqs, seqs[-2:], devices="all"),
        edit_distances(seqs, seqs[-2:], backend="cpu"),
    )
    np.testing.assert_array_equal(
        align_scores(seqs, matrix=(2, -3), devices=[0, 1]),
        align_scores(seqs, matrix=(2, -3), backend="cpu"),
    )
    fa = tmp_path / "s.fa"
    fa.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(seqs)))
    res = invoke(
        "distance", str(fa), "-m", "edit", "--devices", "all", "-o", str(tmp_path / "d.npy")
    )
    assert res.exit_code == 0, res.output
    got = np.load(tmp_path / "d.npy")
    assert got.shape == (32, 32) and got[30, 31] == edit_distances(seqs[30:], backend="cpu")[0, 1]


def test_a_pair_no_device_can_hold_fails_naming_it(uneven):
    # GPU 0 alone cannot hold the 600 x 600 pair: the run fails, naming the pair
    with pytest.raises(
        MemoryError,
        match=r"single pair \(rows 30, columns 3[01]\), and no "
        r"other device can take it",
    ):
        edit_distances(uneven, devices=[0])


def test_the_larger_device_failing_leaves_the_pair_stuck(tmp_path, monkeypatch):
    monkeypatch.delenv("BIOACCEL_VIRTUAL_GPUS", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv(
        "BIOACCEL_GPU_TOPOLOGY",
        write_topology(
            tmp_path,
            ("      - {id: 0, max_tile_work: 200000}\n      - {id: 1, fail_after_tiles: 0}\n"),
        ),
    )
    seqs = random_seqs(np.random.default_rng(4), 6, "ACGT", 20, 40) + ["A" * 600, "C" * 600]
    with pytest.raises((MemoryError, DeviceError)):
        edit_distances(seqs, devices="all")
