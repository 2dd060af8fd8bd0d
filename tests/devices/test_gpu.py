"""Real-GPU checks (scripts/gpu-check.sh sets BIOACCEL_GPU_TESTS=1; skipped elsewhere):
the GPU backends on inputs too large for the simulator, against the cpu backend."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from tests.datasets import random_alignment

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("backend", ["cupy", "numba-cuda"])
@pytest.mark.parametrize("model", ["k80", "tn93", "logdet"])
def test_gpu_backend_equals_cpu_at_scale(backend, model):
    rng = np.random.default_rng(5)
    seqs = random_alignment(rng, 700, 3000)
    for pd in (False, True):
        gpu = bioaccel.distance_matrix(seqs, model, pairwise_deletion=pd, backend=backend).data
        cpu = bioaccel.distance_matrix(seqs, model, pairwise_deletion=pd, backend="cpu").data
        assert np.array_equal(gpu, cpu, equal_nan=True)


def test_auto_keeps_dna_counts_on_the_cpp_core_and_names_reach_the_gpu():
    # measured: the C++ core on the host's cores beats the GPU there (AUTO_GPU_FROM)
    assert bioaccel.get_backend("auto").name == "cpu"
    assert bioaccel.get_backend("cupy").name == "cupy"


def test_numba_alignment_and_edit_kernels_at_scale():
    from bioaccel.pairwise._align import align_scores
    from bioaccel.pairwise._edit import edit_distances

    rng = np.random.default_rng(9)
    aa = list("ARNDCQEGHILKMFPSTWYV")
    prots = ["".join(rng.choice(aa, rng.integers(50, 400))) for _ in range(200)]
    for mode in ("global", "local", "semiglobal"):
        assert np.array_equal(
            align_scores(prots, mode=mode, backend="numba-cuda"),
            align_scores(prots, mode=mode, backend="cpu"),
        )
    dna = ["".join(rng.choice(list("ACGT"), rng.integers(100, 3000))) for _ in range(200)]
    for mode in ("global", "infix", "prefix"):
        q, t = dna[:50], dna
        assert np.array_equal(
            edit_distances(q, t, mode=mode, backend="numba-cuda"),
            edit_distances(q, t, mode=mode, backend="cpu"),
        )


@pytest.mark.parametrize("mode", ["global", "local", "semiglobal"])
def test_cupy_alignment_kernels_equal_cpu(mode):
    """Both CUDA C alignment kernels on a GPU: one pair per thread (many short pairs) and one
    pair per warp (targets over 4,096 residues; and a call with few pairs)."""
    from tests.datasets import ha_proteins

    rng = np.random.default_rng(21)
    aa = list("ACDEFGHIKLMNPQRSTVWY")
    prots = ha_proteins(60) + ["".join(rng.choice(aa, rng.integers(1, 400))) for _ in range(150)]
    long = ["".join(rng.choice(aa, n)) for n in (4097, 6000)] + [prots[0] * 9]
    targets = prots + long  # 210 x 213 pairs: the short ones by thread, the long ones by warp
    for q, t in ((prots, targets), (long + prots[:3], long)):  # the second: a few pairs only
        np.testing.assert_array_equal(
            bioaccel.align_scores(q, t, mode=mode, backend="cupy"),
            bioaccel.align_scores(q, t, mode=mode, backend="cpu"),
        )


def test_real_gpus_are_discovered_and_split_work():
    """Device discovery through CUDA, and devices="all" on the real GPUs (numba-cuda and
    cupy kernels bound per worker thread) equal to the CPU."""
    from bioaccel.devices._discover import discover_devices

    devices = discover_devices()
    assert devices and not devices[0].virtual and devices[0].memory_bytes > 1e9
    rng = np.random.default_rng(9)
    prot = [
        "".join(rng.choice(list("ACDEFGHIKLMNPQRSTVWY"), rng.integers(50, 400))) for _ in range(300)
    ]
    np.testing.assert_array_equal(
        bioaccel.align_scores(prot, devices="all", backend="numba-cuda"),
        bioaccel.align_scores(prot, backend="cpu"),
    )
    seqs = random_alignment(rng, 400, 2000)
    np.testing.assert_array_equal(
        bioaccel.distance_matrix(seqs, "k80", devices="all", backend="cupy").data,
        bioaccel.distance_matrix(seqs, "k80", backend="cpu").data,
    )


def test_cupy_nj_equals_cpu_nj():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3000, 8))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    gpu, cpu = bioaccel.nj(d, backend="cupy"), bioaccel.nj(d)
    np.testing.assert_allclose(gpu.patristic()[:200, :200], cpu.patristic()[:200, :200], rtol=1e-10)


def test_cupy_nj_follows_the_tie_rule_on_real_influenza(flu_ha):
    # one tie rule: ties and near-ties of the 599 HA genes, as the C++ core breaks them
    from tests.nj_reference import assert_same_nj_tree

    dm = bioaccel.distance_matrix(bioaccel.read_sequences(flu_ha), "k80", backend="cpu")
    assert_same_nj_tree(bioaccel.nj(dm, backend="cupy"), bioaccel.nj(dm))
