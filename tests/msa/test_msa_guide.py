"""The MSA guide tree's distance stage on every backend and on several (virtual) GPUs: LCS
lengths against the textbook DP, and the same distances, trees and alignments as the CPU
engine whichever way the pairs are computed."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel import SeqBatch
from bioaccel.backends.bitmasks import build_peq
from bioaccel.backends.reference import lcs_length_reference
from bioaccel.errors import BackendUnavailableError, DeviceSelectionError
from bioaccel.msa_engine.guide import GuideDistances, guide_merges, medoid_merges
from tests import nvcc_host
from tests.msa.msa_helpers import lcs_dp, random_family


def batch_of(seqs):
    return SeqBatch.from_strings(seqs, alphabet="protein")


def mixed_batch(seed=4):
    """Lengths around the 64-bit word edges, empty ones, X (never matches), a related family."""
    rng = np.random.default_rng(seed)
    odd = [
        "".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWYX"), n))
        for n in (0, 1, 63, 64, 65, 128, 129, 20)
    ]
    return batch_of(odd + random_family(rng, 12, 140))


def test_reference_lcs_is_the_textbook_dp():
    rng = np.random.default_rng(1)
    for _ in range(40):
        a = "".join(rng.choice(list("ACDX"), rng.integers(0, 30)))
        b = "".join(rng.choice(list("ACDX"), rng.integers(0, 30)))
        batch = batch_of([a, b, "A"])
        # X's code is past the 20 amino acids: it never matches, even itself
        want = lcs_dp(a.replace("X", "#"), b.replace("X", "*"))
        assert lcs_length_reference(batch[0], batch[1], 20) == want


def test_every_backend_equals_the_reference(backend_name):
    from tests.conftest import GPU

    batch = mixed_batch()
    rows = np.arange(len(batch), dtype=np.int64)
    if backend_name == "cupy" and not GPU:
        # the NumPy stand-in has no LCS kernel (CUDA C, checked below by an nvcc host
        # build): named explicitly, that is an error, never a fallback
        with pytest.raises(BackendUnavailableError, match="no lcs_lengths kernels"):
            GuideDistances(batch, 1, backend="cupy").rect(rows, rows)
        return
    want = GuideDistances(batch, 1, backend="reference").rect(rows, rows)
    got = GuideDistances(batch, 2, backend=backend_name).rect(rows, rows[::-1])
    np.testing.assert_array_equal(got, want[:, ::-1])
    # the CPU engine's own distances (no lengths round trip) are the same floats
    np.testing.assert_array_equal(GuideDistances(batch, 2).rect(rows, rows), want)


@pytest.mark.parametrize("backend", ["reference", "numba-cuda"])
def test_every_tree_is_the_cpu_engines(backend, monkeypatch):
    """Single linkage by blocks of rows (three blocks here), medoid, NJ and UPGMA from
    lengths computed elsewhere give the CPU engine's merges."""
    rng = np.random.default_rng(9)
    batch = batch_of(random_family(rng, 24, 60, mutate=0.4) + random_family(rng, 9, 80))
    monkeypatch.setattr(GuideDistances, "BLOCK_PAIRS", 33 * 12)
    for method in ("single", "upgma", "nj"):
        cpu, _ = guide_merges(batch, method, 2)
        other, _ = guide_merges(batch, method, 2, backend=backend)
        np.testing.assert_array_equal(other, cpu, err_msg=method)
    np.testing.assert_array_equal(
        medoid_merges(GuideDistances(batch, 2, backend=backend), leaf=6, seeds=3),
        medoid_merges(GuideDistances(batch, 2), leaf=6, seeds=3),
    )


def test_msa_on_virtual_gpus_equals_one_device(monkeypatch):
    rng = np.random.default_rng(13)
    records = [(f"s{k}", s) for k, s in enumerate(random_family(rng, 30, 90, mutate=0.35))]
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "3")
    monkeypatch.setattr(GuideDistances, "BLOCK_PAIRS", 200)  # several blocks, several tiles
    one = bioaccel.msa(records, threads=2)
    for tree in ("auto", "nj", "medoid"):
        spread = bioaccel.msa(records, threads=2, devices="all", guide_tree=tree)
        assert spread.sequences == bioaccel.msa(records, threads=2, guide_tree=tree).sequences
    assert bioaccel.msa(records, devices="0,2", backend="cpu").sequences == one.sequences
    # CuPy missing here, or virtual GPUs that cannot run it: named, never a fallback
    with pytest.raises(
        BackendUnavailableError, match="virtual GPUs run the CPU backend|CuPy is not installed"
    ):
        bioaccel.msa(records, devices="all", backend="cupy")
    with pytest.raises(DeviceSelectionError, match=r"\[0, 1, 2\]"):
        bioaccel.msa(records, devices=[5])


@pytest.fixture(scope="module")
def lcs_host(tmp_path_factory):
    return nvcc_host.build(tmp_path_factory, "lcs_host.cu")


@pytest.mark.nvcc
def test_cuda_kernel_on_the_cpu_equals_the_cpp_engine(lcs_host):
    queries = mixed_batch(6)
    targets = batch_of(["", "A", "WWWW"] + [queries.sequence(k) for k in range(2, 12)])
    alpha = queries.alphabet.size
    peq, word_off = build_peq(np, queries.codes, queries.offsets, alpha)
    total_words = int(word_off[-1])
    parts = [
        np.array([alpha, 20, len(queries), len(targets)], np.int64),
        queries.offsets.astype(np.int64),
        targets.offsets.astype(np.int64),
        np.array([total_words], np.int64),
        word_off.astype(np.int64),
        peq[: total_words * alpha].astype(np.uint64),
        np.array([targets.codes.size], np.int64),
        targets.codes.astype(np.uint8),
    ]
    got = nvcc_host.run(lcs_host, parts, (len(queries), len(targets)))
    want = bioaccel.backends.get_backend("cpu", "lcs_lengths").lcs_lengths(
        queries, targets, 20, False, 2
    )
    np.testing.assert_array_equal(got, want)
    assert want.max() > 100  # the related family's long common subsequences are in


@pytest.mark.gpu
def test_cupy_lcs_kernel_and_msa_on_a_real_gpu():
    """On the device (scripts/gpu-check.sh): the CUDA kernel's lengths equal the CPU
    engine's, and msa(backend="cupy", devices="all") the CPU alignment."""
    batch = mixed_batch(7)
    rows = np.arange(len(batch), dtype=np.int64)
    np.testing.assert_array_equal(
        GuideDistances(batch, 2, backend="cupy").rect(rows, rows),
        GuideDistances(batch, 2).rect(rows, rows),
    )
    rng = np.random.default_rng(3)
    records = [(f"s{k}", s) for k, s in enumerate(random_family(rng, 60, 150))]
    assert (
        bioaccel.msa(records, backend="cupy", devices="all").sequences
        == bioaccel.msa(records, backend="cpu").sequences
    )
