"""Device discovery, ``devices=`` parsing, and multi-device runs with failover."""

import numpy as np
import pytest

from bioaccel.backends import get_backend
from bioaccel.devices._discover import allowed_tokens, discover_devices, select_devices
from bioaccel.devices._multigpu import Tile, partition, run_tiles
from bioaccel.distances._compute import distance_matrix
from bioaccel.errors import BackendUnavailableError, DeviceError, DeviceSelectionError, ModelError
from bioaccel.pairwise._align import align_scores
from bioaccel.pairwise._edit import edit_distances

PROTEIN = "ACDEFGHIKLMNPQRSTVWY"


@pytest.fixture
def virtual4(monkeypatch):
    for var in (
        "CUDA_VISIBLE_DEVICES",
        "SLURM_JOB_GPUS",
        "SLURM_STEP_GPUS",
        "BIOACCEL_GPU_TOPOLOGY",
    ):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "4")


def write_topology(tmp_path, gpus: str) -> str:
    path = tmp_path / "topo.yaml"
    path.write_text(f"nodes:\n  - name: n1\n    virtual: true\n    gpus:\n{gpus}")
    return str(path)


def random_seqs(rng, n, alphabet, lo, hi):
    return ["".join(rng.choice(list(alphabet), rng.integers(lo, hi))) for _ in range(n)]


def test_allowed_tokens_follow_cuda_then_slurm():
    assert allowed_tokens({}) is None
    assert allowed_tokens({"CUDA_VISIBLE_DEVICES": "2,3"}) == ["2", "3"]
    assert allowed_tokens({"CUDA_VISIBLE_DEVICES": ""}) == []
    assert allowed_tokens({"CUDA_VISIBLE_DEVICES": "NoDevFiles"}) == []
    # inside a Slurm step, the step's GPUs win over the job's
    assert allowed_tokens({"SLURM_JOB_GPUS": "0,1,2", "SLURM_STEP_GPUS": "1"}) == ["1"]
    # CUDA_VISIBLE_DEVICES (set by Slurm or a lease) narrows further
    assert allowed_tokens({"SLURM_JOB_GPUS": "0,1", "CUDA_VISIBLE_DEVICES": "1"}) == ["1"]


def test_virtual_devices_respect_the_allocation(virtual4, monkeypatch):
    assert [d.visible_id for d in discover_devices()] == ["0", "1", "2", "3"]
    monkeypatch.setenv("SLURM_JOB_GPUS", "1,3")
    devs = discover_devices()
    assert [(d.index, d.visible_id) for d in devs] == [(0, "1"), (1, "3")]
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "7")
    with pytest.raises(DeviceSelectionError, match=r"\['7'\].*\['0', '1', '2', '3'\]"):
        discover_devices()


def test_select_devices_forms_and_errors(virtual4):
    ids = lambda sel: [d.index for d in select_devices(sel)]  # noqa: E731
    assert select_devices(None) is None
    assert ids("all") == [0, 1, 2, 3]
    assert ids(2) == [2]
    assert ids([0, 2]) == [0, 2]
    assert ids("0,2") == [0, 2]
    with pytest.raises(DeviceSelectionError, match=r"\[5\]; valid ids: \[0, 1, 2, 3\]"):
        select_devices([0, 5])
    with pytest.raises(DeviceSelectionError, match="valid ids"):
        select_devices("zero")
    with pytest.raises(DeviceSelectionError, match="twice"):
        select_devices([1, 1])


def test_no_gpu_and_all_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("BIOACCEL_VIRTUAL_GPUS", raising=False)
    monkeypatch.delenv("BIOACCEL_GPU_TOPOLOGY", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(DeviceSelectionError, match="BIOACCEL_VIRTUAL_GPUS"):
        select_devices("all")


def test_partition_covers_every_pair_once_balanced_by_work():
    rng = np.random.default_rng(3)
    lengths = rng.integers(10, 2000, 300).astype(float)
    tiles = partition(lengths, None, n_devices=4)
    cover = np.zeros((300, 300), int)
    for t in tiles:
        if t.diagonal:
            assert (t.i0, t.i1) == (t.j0, t.j1)
            cover[t.i0 : t.i1, t.j0 : t.j1] += np.triu(np.ones((t.i1 - t.i0,) * 2, int))
        else:
            assert t.i1 <= t.j0  # strictly above the diagonal
            cover[t.i0 : t.i1, t.j0 : t.j1] += 1
    assert (cover[np.triu_indices(300)] == 1).all() and (np.tril(cover, -1) == 0).all()
    total = (lengths.sum() ** 2 - (lengths**2).sum()) / 2 + (lengths**2).sum()
    assert sum(t.work for t in tiles) == pytest.approx(total)
    offdiag = [t.work for t in tiles if not t.diagonal]
    # cut by cumulative length: off-diagonal tiles carry about the same work though the
    # sequences' lengths vary 200-fold
    assert max(offdiag) / min(offdiag) < 2.0
    rect = partition(lengths, lengths[:50], n_devices=3)
    assert sum(t.work for t in rect) == pytest.approx(lengths.sum() * lengths[:50].sum())


def test_multi_device_equals_single_device(virtual4):
    rng = np.random.default_rng(11)
    prot = random_seqs(rng, 45, PROTEIN, 5, 250)
    np.testing.assert_array_equal(
        align_scores(prot, devices="all"), align_scores(prot, backend="cpu")
    )
    np.testing.assert_array_equal(
        align_scores(prot, prot[:13], mode="local", devices=[1, 3]),
        align_scores(prot, prot[:13], mode="local", backend="cpu"),
    )
    dna = random_seqs(rng, 40, "ACGT", 50, 400)
    np.testing.assert_array_equal(
        edit_distances(dna, devices="0,1,2"), edit_distances(dna, backend="cpu")
    )
    aln = random_seqs(rng, 60, "ACGT-N", 300, 301)
    for model in ("raw", "k80", "tn93", "logdet"):
        np.testing.assert_array_equal(
            distance_matrix(aln, model, devices="all").data,
            distance_matrix(aln, model, backend="cpu").data,
        )
    with pytest.raises(ModelError, match="CPU only"):
        distance_matrix(aln, "jaccard", devices="all")
    with pytest.raises(BackendUnavailableError, match="virtual GPUs run the CPU backend"):
        align_scores(prot, backend="numba-cuda", devices="all")


def test_failing_device_and_out_of_memory_keep_the_result_identical(tmp_path, monkeypatch):
    monkeypatch.delenv("BIOACCEL_VIRTUAL_GPUS", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv(
        "BIOACCEL_GPU_TOPOLOGY",
        write_topology(
            tmp_path,
            (
                "      - {id: 0}\n"
                "      - {id: 1, fail_after_tiles: 2}\n"  # dies mid-run
                "      - {id: 2, max_tile_work: 60000}\n"
            ),
        ),
    )  # "out of memory" on large tiles
    rng = np.random.default_rng(5)
    prot = random_seqs(rng, 50, PROTEIN, 20, 200)
    expected = align_scores(prot, backend="cpu")
    np.testing.assert_array_equal(align_scores(prot, devices="all"), expected)
    np.testing.assert_array_equal(align_scores(prot, devices=[1, 2]), expected)


def test_every_device_failing_raises(tmp_path, monkeypatch):
    monkeypatch.delenv("BIOACCEL_VIRTUAL_GPUS", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv(
        "BIOACCEL_GPU_TOPOLOGY",
        write_topology(
            tmp_path,
            ("      - {id: 0, fail_after_tiles: 1}\n      - {id: 1, fail_after_tiles: 0}\n"),
        ),
    )
    with pytest.raises(DeviceError, match="every device failed"):
        align_scores(random_seqs(np.random.default_rng(1), 40, PROTEIN, 5, 50), devices="all")


def test_worker_exception_is_reraised_in_the_caller(virtual4):
    devices = select_devices("all")
    tiles = [Tile(k, k + 1, 0, 1, 1.0) for k in range(20)]

    def compute(tile):
        if tile.i0 == 7:
            raise ValueError("bad tile 7")
        return tile.i0

    gathered = []
    with pytest.raises(ValueError, match="bad tile 7"):
        run_tiles(
            tiles,
            devices,
            get_backend("cpu"),
            compute,
            lambda t, v: gathered.append(v),
            np.ones(20),
            np.ones(1),
        )
    assert 7 not in gathered


def test_an_engine_that_is_not_a_backend_is_refused_even_on_virtual_devices(virtual4):
    """Virtual GPUs never enter a backend's device_scope, so a caller handing run_tiles a
    backend's name instead of the backend passed every simulated test and broke on the first
    real GPU (neighbors(..., devices="all") did): run_tiles checks before any tile runs."""
    devices = select_devices("all")
    tiles = [Tile(0, 1, 0, 1, 1.0)]
    with pytest.raises(TypeError, match="backend object.*'cpu'"):
        run_tiles(tiles, devices, "cpu", lambda t: 0, lambda t, v: None, np.ones(1), np.ones(1))
