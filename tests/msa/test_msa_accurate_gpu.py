"""The accurate MSA mode's posteriors on GPUs, proven without one: the Numba kernel under the
CUDA simulator and the CUDA C kernel built by nvcc as a CPU program, both against the C++
engine; the CUDA C source compiled for an older and a current architecture; the registry
operation and the multi-GPU tile runner (virtual GPUs)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

from bioaccel import PROTEIN, SeqBatch
from bioaccel._core.native import load_native
from bioaccel.backends.posteriors import chunks, posteriors_cpu, work_size
from bioaccel.kernels import KERNEL_DIR
from bioaccel.msa_engine.accurate import all_pairs, letter_map, model_arrays, pair_hmm
from tests import nvcc_host
from tests.datasets import unavailable

native = load_native()
SOURCE = KERNEL_DIR / "posterior.cu"
#: float32 posteriors from double recurrences: the kernels and the C++ agree to float32
#: rounding (relative 2^-24 ~ 6e-8 of values <= 1), checked at 1e-6 absolute
TOL = 1e-6


def small_set(seed=3, n=4, lo=1, hi=7):
    rng = np.random.default_rng(seed)
    seqs = [
        "".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWYX"), rng.integers(lo, hi))) for _ in range(n)
    ]
    batch = SeqBatch.from_strings(seqs, alphabet=PROTEIN)
    params = pair_hmm(PROTEIN)
    letters = np.ascontiguousarray(letter_map(PROTEIN, params.letters)[batch.codes])
    odds, prm = model_arrays(params)
    return batch, params, letters, odds, prm


def cpu_dense(batch, params, x, y):
    letters = letter_map(PROTEIN, params.letters)[batch.codes]
    post, _ = native.msa_pair_posteriors(
        letters[batch.offsets[x] : batch.offsets[x + 1]],
        letters[batch.offsets[y] : batch.offsets[y + 1]],
        *params.arrays(),
    )
    return post


def test_chunks_and_work_size():
    lengths = np.array([3, 4, 5])
    pairs = all_pairs(3)
    assert work_size(3, 4) == 12 + 18 * 5 + 4
    runs = list(chunks(pairs, lengths, budget=int(work_size(3, 4) + work_size(3, 5))))
    assert runs == [(0, 2), (2, 3)]
    assert list(chunks(pairs, lengths, budget=1)) == [(0, 1), (1, 2), (2, 3)]


def test_cpu_operation_layout():
    batch, params, letters, odds, prm = small_set()
    pairs = all_pairs(len(batch))
    flat, starts = posteriors_cpu(native, letters, batch.offsets, pairs, odds, prm)
    for k, (x, y) in enumerate(pairs.tolist()):
        want = cpu_dense(batch, params, x, y)
        got = flat[starts[k] : starts[k] + want.size].reshape(want.shape)
        np.testing.assert_allclose(got, want, atol=TOL)


@pytest.mark.cudasim
def test_numba_kernel_equals_cpu_on_the_simulator():
    from bioaccel.backends import get_backend

    batch, params, letters, odds, prm = small_set(n=4, hi=6)
    pairs = all_pairs(len(batch))
    engine = get_backend("numba-cuda", "pair_posteriors")
    flat, starts = engine.pair_posteriors(letters, batch.offsets, pairs, odds, prm)
    for k, (x, y) in enumerate(pairs.tolist()):
        want = cpu_dense(batch, params, x, y)
        got = flat[starts[k] : starts[k] + want.size].reshape(want.shape)
        np.testing.assert_allclose(got, want, atol=TOL)


@pytest.mark.cudasim
def test_accurate_msa_numba_backend_equals_cpu():
    from bioaccel import msa

    recs = [("a", "MKVLAAG"), ("b", "MKLAG"), ("c", "MRVLAG"), ("d", "KVLAAW")]
    cpu = msa(recs, mode="accurate", threads=1)
    gpu = msa(recs, mode="accurate", backend="numba-cuda", threads=1)
    assert gpu.sequences == cpu.sequences


def test_virtual_gpus_spread_pairs_by_the_tile_runner(monkeypatch):
    """Three virtual GPUs run the CPU engine tile by tile: the same posteriors, so the same
    alignment, as one CPU run."""
    from bioaccel import msa
    from bioaccel.devices import _multigpu as multigpu

    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "3")
    seen = []
    real = multigpu.run_tiles

    def spy(tiles, devices, *a, **k):
        seen.append((len(tiles), len(devices)))
        return real(tiles, devices, *a, **k)

    import bioaccel.devices as devices

    for where in (multigpu, devices):  # the engine calls the package's re-export
        monkeypatch.setattr(where, "run_tiles", spy)
    rng = np.random.default_rng(5)
    base = "".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWY"), 40))
    recs = [
        (f"s{k}", "".join(c if rng.random() > 0.2 else "W" for c in base)[k % 3 :])
        for k in range(7)
    ]
    want = msa(recs, mode="accurate", threads=1)
    got = msa(recs, mode="accurate", devices="all", threads=1)
    assert got.sequences == want.sequences
    assert seen and seen[0][1] == 3 and seen[0][0] > 1


@pytest.fixture(scope="module")
def posterior_host(tmp_path_factory):
    return nvcc_host.build(tmp_path_factory, "posterior_host.cu")


@pytest.mark.nvcc
def test_cuda_kernel_host_build_equals_cpu(posterior_host):
    batch, params, letters, odds, prm = small_set(seed=8, n=5, lo=1, hi=40)
    for x, y in all_pairs(len(batch)).tolist():
        lx, ly = int(batch.lengths[x]), int(batch.lengths[y])
        parts = [
            np.array([odds.shape[0], lx, ly], np.int64),
            letters[batch.offsets[x] : batch.offsets[x + 1]].astype(np.int16),
            letters[batch.offsets[y] : batch.offsets[y + 1]].astype(np.int16),
            odds.astype(np.float64),
            prm.astype(np.float64),
        ]
        res = subprocess.run(
            [str(posterior_host)],
            input=b"".join(p.tobytes() for p in parts),
            capture_output=True,
            check=True,
        )
        values = np.array(res.stdout.split(), dtype=np.float64)
        assert values[0] == 0
        np.testing.assert_allclose(
            values[1:].reshape(lx, ly), cpu_dense(batch, params, x, y), atol=TOL
        )


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvcc_builds_the_posterior_kernel(tmp_path, arch):
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        unavailable("nvcc is not on PATH")
    res = subprocess.run(
        [
            nvcc,
            f"-arch={arch}",
            "-Werror",
            "all-warnings",
            "-ptx",
            str(SOURCE),
            "-o",
            str(tmp_path / "k.ptx"),
        ],
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert ".entry pair_posteriors" in (tmp_path / "k.ptx").read_text()


def test_cupy_numpy_stand_in_has_no_posterior_kernel():
    from bioaccel.backends.cupy._backend import CupyBackend
    from bioaccel.errors import BackendUnavailableError

    batch, params, letters, odds, prm = small_set()
    with pytest.raises(BackendUnavailableError, match="pair_posteriors"):
        CupyBackend(np).pair_posteriors(letters, batch.offsets, all_pairs(len(batch)), odds, prm)


@pytest.mark.gpu
def test_cupy_kernel_equals_cpu_on_a_gpu():
    from bioaccel.backends import get_backend

    # the gpu marker (tests/conftest.py) runs it only where BIOACCEL_GPU_TESTS=1
    batch, params, letters, odds, prm = small_set(seed=9, n=6, lo=1, hi=60)
    pairs = all_pairs(len(batch))
    flat, starts = get_backend("cupy", "pair_posteriors").pair_posteriors(
        letters, batch.offsets, pairs, odds, prm
    )
    for k, (x, y) in enumerate(pairs.tolist()):
        want = cpu_dense(batch, params, x, y)
        np.testing.assert_allclose(
            flat[starts[k] : starts[k] + want.size].reshape(want.shape), want, atol=TOL
        )
