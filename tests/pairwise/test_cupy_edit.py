"""The CuPy edit-distance path without a GPU: the array code (Peq masks) with NumPy, and the
CUDA C kernel's per-pair function compiled by nvcc for the CPU, against the C++ core."""

import numpy as np
import pytest

from bioaccel.backends.bitmasks import build_peq
from bioaccel.pairwise._edit import EDIT_MODES, edit_distances
from bioaccel.sequences._batch import SeqBatch
from tests import nvcc_host
from tests.edit_oracle import run_host


def test_peq_masks_equal_a_per_letter_reference():
    rng = np.random.default_rng(1)
    seqs = ["".join(rng.choice(list("ACGTN"), n)) for n in (0, 1, 63, 64, 65, 130, 7)]
    b = SeqBatch.from_strings(seqs)
    alpha = b.alphabet.size
    peq, word_off = build_peq(np, b.codes, b.offsets, alpha)
    assert (
        word_off.tolist()
        == np.concatenate([[0], np.cumsum([(len(s) + 63) // 64 for s in seqs])]).tolist()
    )
    for q, s in enumerate(seqs):
        codes = b[q]
        for w in range((len(s) + 63) // 64):
            for c in range(alpha):
                want = sum(
                    1 << bit
                    for bit in range(64)
                    if 64 * w + bit < len(s) and codes[64 * w + bit] == c
                )
                assert int(peq[(word_off[q] + w) * alpha + c]) == want


@pytest.fixture(scope="module")
def host_kernel(tmp_path_factory):
    return nvcc_host.build(tmp_path_factory, "edit_host.cu")


@pytest.mark.nvcc
@pytest.mark.parametrize("mode", ["global", "infix", "prefix"])
@pytest.mark.parametrize("max_distance", [-1, 0, 7])
def test_cuda_kernel_on_the_cpu_equals_the_cpp_core(host_kernel, mode, max_distance):
    rng = np.random.default_rng(5)
    base = "".join(rng.choice(list("ACGT"), 140))
    lengths = [0, 1, 63, 64, 65, 127, 128, 129, 140]
    seqs = [base[:n] for n in lengths] + ["".join(rng.choice(list("ACGTN"), n)) for n in (50, 200)]
    targets = [base, base[10:100], "TT" + base[:70] + "GG", ""] + seqs[-2:]
    q = SeqBatch.from_strings(seqs)
    t = SeqBatch.from_strings(targets, ids=[f"t{i}" for i in range(len(targets))])
    k = None if max_distance < 0 else max_distance
    want = edit_distances(q, t, mode=mode, max_distance=k, backend="cpu")
    got = run_host(host_kernel, q, t, EDIT_MODES[mode], max_distance)
    np.testing.assert_array_equal(got, want)
