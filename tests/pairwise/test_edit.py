"""Edit distances against edlib (the oracle), the plain DP reference and every backend:
word boundaries, empty sequences, early exit, real 16S data."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel.backends.reference import edit_distance_reference
from bioaccel.pairwise._edit import edit_distances
from tests.edit_oracle import LETTERS, edlib_distance, mutated


@pytest.mark.parametrize("mode", ["global", "infix", "prefix"])
@pytest.mark.parametrize("length", [1, 63, 64, 65, 127, 128, 129, 300])
def test_equals_edlib_at_word_boundaries(rng, mode, length):
    base = "".join(rng.choice(LETTERS, length))
    queries = [base, mutated(rng, base, 0.1), "".join(rng.choice(LETTERS, length))]
    targets = [mutated(rng, base, 0.2), "TT" + base + "GG", "", base[: length // 2]]
    got = edit_distances(queries, targets, mode=mode, backend="cpu")
    assert got.tolist() == [[edlib_distance(q, t, mode) for t in targets] for q in queries]


@pytest.mark.parametrize("mode", ["global", "infix", "prefix"])
def test_every_backend_equals_reference(backend_name, rng, mode):
    from tests.conftest import GPU

    if backend_name == "cupy" and not GPU:
        # the NumPy stand-in has no edit_distances kernels (CUDA C; tests/test_cupy_*.py check
        # them on the CPU): named explicitly, that is an error, never a fallback
        with pytest.raises(bioaccel.BackendUnavailableError, match="no edit_distances kernels"):
            edit_distances(["ACGT"], backend="cupy")
        return
    seqs = ["".join(rng.choice(LETTERS, rng.integers(0, 90))) for _ in range(6)] + [""]
    ref = edit_distances(seqs, seqs, mode=mode, backend="reference")
    got = edit_distances(seqs, seqs, mode=mode, backend=backend_name)
    assert np.array_equal(got, ref)
    want = [[edlib_distance(a, b, mode) for b in seqs] for a in seqs]
    assert ref.tolist() == want


def test_all_vs_all_symmetric_and_threads(rng):
    base = "".join(rng.choice(LETTERS, 500))
    seqs = [mutated(rng, base, 0.15) for _ in range(60)]
    one = edit_distances(seqs, threads=1, backend="cpu")
    two = edit_distances(seqs, threads=2, backend="cpu")
    assert np.array_equal(one, two) and np.array_equal(one, one.T) and not np.diag(one).any()
    assert one[3, 17] == edlib_distance(seqs[3], seqs[17], "global")


def test_max_distance_sentinel(rng):
    base = "".join(rng.choice(LETTERS, 400))
    seqs = [mutated(rng, base, r) for r in (0.0, 0.05, 0.3, 0.6)]
    full = edit_distances(seqs, backend="cpu")
    for k in (0, 5, 40, 1000):
        capped = edit_distances(seqs, max_distance=k, backend="cpu")
        assert np.array_equal(capped, np.minimum(full, k + 1))
        assert np.array_equal(edit_distances(seqs, max_distance=k, backend="reference"), capped)
    inf = edit_distances(seqs[:1], seqs, mode="infix", max_distance=3, backend="cpu")
    assert np.array_equal(inf, np.minimum(edit_distances(seqs[:1], seqs, mode="infix"), 4))


def test_banded_global_equals_edlib(rng):
    # Global distances of queries over 128 letters go through Ukkonen's band with doubling
    # thresholds (64, 128, ...), the first rounds set by the first targets' distances: a mix
    # of near-identical, related and unrelated targets, in both orders, with length
    # differences beyond the first band, and caps around the band edges.
    base = "".join(rng.choice(LETTERS, 1500))
    seqs = (
        [mutated(rng, base, r) for r in (0.0, 0.01, 0.02, 0.04)]  # similar first
        + [mutated(rng, base, r) for r in rng.uniform(0, 0.5, 14)]
        + [base[:200], base[100:1400], "".join(rng.choice(LETTERS, 1700)), base[5:]]
    )
    for order in (seqs, seqs[::-1]):
        got = edit_distances(order[:6], order, backend="cpu")
        want = np.array([[edlib_distance(q, t, "global") for t in order] for q in order[:6]])
        np.testing.assert_array_equal(got, want)
        for k in (0, 1, 63, 64, 65, 127, 128, 129, 300, 5000):
            np.testing.assert_array_equal(
                edit_distances(order[:6], order, max_distance=k, backend="cpu"),
                np.minimum(want, k + 1),
                err_msg=f"max_distance={k}",
            )
    # all-vs-all (symmetric) of related sequences, 1 and 2 threads
    family = [mutated(rng, base[:900], r) for r in rng.uniform(0, 0.3, 12)]
    want = np.array([[edlib_distance(q, t, "global") for t in family] for q in family])
    for threads in (1, 2):
        np.testing.assert_array_equal(edit_distances(family, threads=threads, backend="cpu"), want)


def test_normalize():
    d = edit_distances(["kitten"], ["sitting", ""], normalize=True, backend="cpu")
    assert d.tolist() == [[3 / 7, 1.0]]
    assert edit_distances([""], [""], normalize=True).tolist() == [[0.0]]


@pytest.mark.slow
def test_30kb_genomes(rng):
    a = "".join(rng.choice(LETTERS, 30000))
    b = mutated(rng, a, 0.05)
    assert edit_distances([a], [b], backend="cpu")[0, 0] == edlib_distance(a, b, "global")


def test_reference_textbook():
    code = bioaccel.DNA.code
    enc = lambda s: np.array([code(c) for c in s], dtype=np.uint8)  # noqa: E731
    # GATTACA -> GCATGCU style hand example on DNA letters: AGTC vs GTCA = 2 (drop A, add A)
    assert edit_distance_reference(enc("AGTC"), enc("GTCA"), 0) == 2
    assert edit_distance_reference(enc("GTC"), enc("AAGTCAA"), 1) == 0
    assert edit_distance_reference(enc("GTCA"), enc("GTC"), 2) == 1


def test_bad_arguments():
    with pytest.raises(ValueError, match="unknown edit-distance mode 'local'"):
        edit_distances(["A"], mode="local")
    with pytest.raises(ValueError, match="max_distance must be a non-negative integer"):
        edit_distances(["A"], max_distance=-2)
    with pytest.raises(ValueError, match="not symmetric"):
        edit_distances(["A", "C"], mode="infix")


def test_real_16s(tmp_path):
    from tests.datasets import dada2_16s

    batch = bioaccel.read_sequences(dada2_16s()).subset(range(40))
    got = edit_distances(batch, backend="cpu")
    seqs = [batch.sequence(i) for i in range(len(batch))]
    for i in range(0, 40, 7):
        for j in range(40):
            assert got[i, j] == edlib_distance(seqs[i], seqs[j], "global")
