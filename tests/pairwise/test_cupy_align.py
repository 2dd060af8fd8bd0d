"""The CuPy alignment path without a GPU: query profiles built by array code (NumPy), and
the CUDA C kernel's per-pair function compiled by nvcc for the CPU, against the C++ core."""

import numpy as np
import pytest

from bioaccel.backends.cupy._align import build_profiles
from bioaccel.pairwise._align import align_scores
from bioaccel.pairwise._scoring import MODES, make_scoring
from bioaccel.sequences._batch import SeqBatch
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
        block = prof[off[q] : off[q + 1]].reshape(alpha, m)
        for c in range(alpha):
            assert block[c].tolist() == [int(scoring.table[c, x]) for x in codes]


@pytest.fixture(scope="module")
def host_kernel(tmp_path_factory):
    return nvcc_host.build(tmp_path_factory, "align_host.cu")


def run_host(
    exe, q: SeqBatch, t: SeqBatch, scoring, mode: int, kernel: str = "thread"
) -> np.ndarray:
    prof, off = build_profiles(np, q.codes, q.offsets, scoring.table)
    parts = [
        np.array([mode, scoring.gap_open, scoring.gap_extend, len(q), len(t)], np.int64),
        off.astype(np.int64),
        q.lengths.astype(np.int64),
        t.offsets.astype(np.int64),
        prof[: int(off[-1])].astype(np.int16),
        np.array([t.codes.size], np.int64),
        t.codes.astype(np.uint8),
    ]
    return nvcc_host.run(exe, parts, (len(q), len(t)), (kernel,))


#: gap regimes: open > extend, open == extend, extend == 0, and a DNA match/mismatch scheme
REGIMES = [("BLOSUM62", (11, 1)), ("BLOSUM45", (5, 5)), ("PAM250", (8, 0)), ((2, -3), (5, 2))]


def assert_host_kernel_equals_cpp_core(
    exe, kernel: str, queries, targets, mode, matrix="BLOSUM62", gaps=(11, 1)
):
    q = SeqBatch.from_strings(queries)
    t = SeqBatch.from_strings(targets, ids=[f"t{i}" for i in range(len(targets))])
    scoring = make_scoring(matrix, gaps[0], gaps[1], q.alphabet)
    want = align_scores(
        q, t, mode=mode, matrix=matrix, gap_open=gaps[0], gap_extend=gaps[1], backend="cpu"
    )
    np.testing.assert_array_equal(run_host(exe, q, t, scoring, MODES[mode], kernel), want)


@pytest.mark.nvcc
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("matrix, gaps", REGIMES)
def test_cuda_kernel_on_the_cpu_equals_the_cpp_core(host_kernel, mode, matrix, gaps):
    rng = np.random.default_rng(11)
    letters = "ACGT" if isinstance(matrix, tuple) else PROTEIN
    # lengths around the kernel's 16-row passes, empty and length-1 sequences
    lengths = [0, 1, 7, 15, 16, 17, 32, 33, 40, 123]
    base = "".join(rng.choice(list(letters), 130))
    queries = [base[:n] for n in lengths] + ["".join(rng.choice(list(letters), 60))]
    targets = [base, base[5:70], "".join(rng.choice(list(letters), 33)), "", letters[0]]
    assert_host_kernel_equals_cpp_core(host_kernel, "thread", queries, targets, mode, matrix, gaps)


@pytest.mark.nvcc
@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("matrix, gaps", REGIMES)
def test_warp_kernel_small_warp_on_the_cpu_equals_the_cpp_core(host_kernel, mode, matrix, gaps):
    # The warp-cooperative function with 4 lanes of 3 rows (strips of 12 rows, boundary
    # loads of 4 columns): short sequences cross many strips and loads; lanes left without
    # rows in the last strip; empty and length-1 sequences.
    rng = np.random.default_rng(12)
    letters = "ACGT" if isinstance(matrix, tuple) else PROTEIN
    base = "".join(rng.choice(list(letters), 80))
    queries = [base[:n] for n in (0, 1, 2, 3, 4, 11, 12, 13, 25, 37, 80)]
    targets = [
        base[3:60],
        base[:4],
        base[:5],
        "".join(rng.choice(list(letters), 9)),
        "",
        letters[0],
        base[::-1][:33],
    ]
    assert_host_kernel_equals_cpp_core(host_kernel, "warp4", queries, targets, mode, matrix, gaps)


@pytest.mark.nvcc
@pytest.mark.parametrize("mode", list(MODES))
def test_warp_kernel_as_launched_on_the_cpu_equals_the_cpp_core(host_kernel, mode):
    # 32 lanes of 16 rows, as the kernel runs: queries of 1, 2 and 3 strips (512 rows each),
    # targets across several 32-column boundary loads, real and random protein.
    rng = np.random.default_rng(13)
    from tests.datasets import ha_proteins

    real = ha_proteins(2)
    queries = [real[0][:511], real[0][:513], "".join(rng.choice(list(PROTEIN), 1100)), "W"]
    targets = [real[1][:97], real[1][200:232], "".join(rng.choice(list(PROTEIN), 70))]
    assert_host_kernel_equals_cpp_core(host_kernel, "warp", queries, targets, mode)


def test_split_targets_routes_long_targets_and_small_calls_to_the_warp_kernel():
    from bioaccel.backends.cupy import _align as ca

    lengths = np.array([5000, 10, 4096, 4097, 300])
    by_thread, by_warp = ca.split_targets(lengths, n_queries=10_000)
    assert by_thread.tolist() == [1, 4, 2] and by_warp.tolist() == [3, 0]
    by_thread, by_warp = ca.split_targets(lengths, n_queries=2)  # 10 pairs: all to warps
    assert by_thread.tolist() == [] and by_warp.tolist() == [1, 4, 2, 3, 0]


class _HostArray(np.ndarray):
    def get(self):
        return np.asarray(self)


class _FakeCupy:
    """NumPy standing in for CuPy in the launch code: the "kernels" check their launch
    geometry and buffers, then copy the expected scores of the pairs they were given."""

    int16, int32, int64 = np.int16, np.int32, np.int64

    def __init__(self, want):
        self.want, self.launches = want, []

    def asarray(self, a, dtype=None):
        return np.asarray(a, dtype=dtype)

    def empty(self, shape, dtype):
        return np.empty(shape, dtype).view(_HostArray)

    def zeros(self, shape, dtype):
        return np.zeros(shape, dtype)

    def __getattr__(self, name):
        return getattr(np, name)

    def RawModule(self, code):
        assert "align_scores_warp" in code and "align_scores_batch" in code
        return self

    def get_function(self, name):
        def kernel(grid, block, args, shared_mem):
            (_, _, _, q0, _, t_off, tgt, nt), rest = args[:8], args[8:]
            bound_h, res = rest[-3], rest[-1]
            longest = int(max((t_off[t + 1] - t_off[t] for t in tgt), default=0))
            per_block = block[0] // 32 if name == "align_scores_warp" else block[0]
            assert grid[0] * per_block >= nt and grid[1] == res.shape[0]
            assert bound_h.size >= (longest + 1) * grid[1] * grid[0] * per_block
            self.launches.append((name, int(q0), grid[1], list(tgt)))
            res[:] = self.want[int(q0) : int(q0) + grid[1]][:, tgt]

        return kernel


@pytest.mark.parametrize(
    "lengths, nq",
    [
        ([20, 5000, 7, 4100, 300], 4000),  # both kernels
        ([20, 5000, 7], 3),  # warps only
        ([20, 30, 7, 90, 1], 4000),
    ],
)  # threads only
def test_launch_code_places_every_score(monkeypatch, lengths, nq):
    from bioaccel.backends.cupy import _align as ca

    rng = np.random.default_rng(5)
    monkeypatch.setattr(ca, "_BOUNDARY_BYTES", 40_000_000)  # several query batches
    q = SeqBatch.from_strings(["".join(rng.choice(list(PROTEIN), 1 + i % 9)) for i in range(nq)])
    t = SeqBatch.from_strings(
        ["".join(rng.choice(list(PROTEIN), n)) for n in lengths],
        ids=[f"t{i}" for i in range(len(lengths))],
    )
    want = rng.integers(-1000, 1000, (nq, len(lengths))).astype(np.int32)
    fake = _FakeCupy(want)
    scoring = make_scoring("BLOSUM62", 11, 1, q.alphabet)
    got = ca.align_scores_cupy(fake, q, t, scoring, 0, symmetric=False)
    np.testing.assert_array_equal(got, want)
    kinds = {name for name, *_ in fake.launches}
    if nq * len(lengths) < ca._WARP_MAX_PAIRS:
        assert kinds == {"align_scores_warp"}
    else:
        assert len(fake.launches) > len(kinds)  # batched over queries
        assert kinds == {"align_scores_batch"} | (
            {"align_scores_warp"} if max(lengths) > 4096 else set()
        )
