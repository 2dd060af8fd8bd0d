"""The CuPy alignment path without a GPU: query profiles built by array code (NumPy), and
the CUDA C kernel's per-pair function compiled by nvcc for the CPU, against the C++ core."""

import numpy as np
import pytest

from bioaccel.align import align_scores
from bioaccel.backends.cupy_align import build_profiles
from bioaccel.scoring import MODES, make_scoring
from bioaccel.seqbatch import SeqBatch
from tests import nvcc_host

PROTEIN = "ACDEFGHIKLMNPQRSTVWY"


def test_profiles_equal_the_table_per_position():
    b = SeqBatch.from_strings(["HEAGAWGHEE", "", "P", "W" * 70])
    scoring = make_scoring("BLOSUM62", 11, 1, b.alphabet)
    prof, off = build_profiles(np, b.codes, b.offsets, scoring.table)
    alpha = scoring.table.shape[0]
    for q in range(len(b)):
        codes = b[q]
        m = len(codes)
        assert off[q + 1] - off[q] == alpha * m
        block = prof[off[q]:off[q + 1]].reshape(alpha, m)
        for c in range(alpha):
            assert block[c].tolist() == [int(scoring.table[c, x]) for x in codes]


@pytest.fixture(scope="module")
def host_kernel(tmp_path_factory):
    return nvcc_host.build(tmp_path_factory, "align_host.cu")


def run_host(exe, q: SeqBatch, t: SeqBatch, scoring, mode: int) -> np.ndarray:
    prof, off = build_profiles(np, q.codes, q.offsets, scoring.table)
    parts = [np.array([mode, scoring.gap_open, scoring.gap_extend, len(q), len(t)], np.int64),
             off.astype(np.int64), q.lengths.astype(np.int64), t.offsets.astype(np.int64),
             prof[:int(off[-1])].astype(np.int16), np.array([t.codes.size], np.int64),
             t.codes.astype(np.uint8)]
    return nvcc_host.run(exe, parts, (len(q), len(t)))


@pytest.mark.nvcc
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("matrix, gaps", [("BLOSUM62", (11, 1)), ("BLOSUM45", (5, 5)),
                                          ("PAM250", (8, 0)), ((2, -3), (5, 2))])
def test_cuda_kernel_on_the_cpu_equals_the_cpp_core(host_kernel, mode, matrix, gaps):
    rng = np.random.default_rng(11)
    letters = "ACGT" if isinstance(matrix, tuple) else PROTEIN
    # lengths around the kernel's 16-row passes, empty and length-1 sequences
    lengths = [0, 1, 7, 15, 16, 17, 32, 33, 40, 123]
    base = "".join(rng.choice(list(letters), 130))
    queries = [base[:n] for n in lengths] + ["".join(rng.choice(list(letters), 60))]
    targets = [base, base[5:70], "".join(rng.choice(list(letters), 33)), "", letters[0]]
    q = SeqBatch.from_strings(queries)
    t = SeqBatch.from_strings(targets, ids=[f"t{i}" for i in range(len(targets))])
    scoring = make_scoring(matrix, gaps[0], gaps[1], q.alphabet)
    want = align_scores(q, t, mode=mode, matrix=matrix, gap_open=gaps[0], gap_extend=gaps[1],
                        backend="cpu")
    got = run_host(host_kernel, q, t, scoring, MODES[mode])
    np.testing.assert_array_equal(got, want)
