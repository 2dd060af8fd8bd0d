"""The accurate (consistency) MSA mode: posteriors against a textbook forward-backward, the
consistency transformation against a hand-checked case, determinism, the API and CLI."""

from __future__ import annotations

import itertools
import subprocess
import sys

import numpy as np
import pytest

from bioaccel.backends.cpu import load_native
from bioaccel.msa_engine.accurate import (
    NUCLEOTIDE_LETTERS, PROTEIN_LETTERS, letter_map, pair_hmm,
)
from bioaccel.alphabet import DNA, PROTEIN

native = load_native()


# ------------------------------------------------------------------ textbook forward-backward
def textbook_posteriors(x, y, odds, start, opens, extends):
    """Posterior match probabilities of the five-state pair-HMM by the textbook recursions in
    log space (no scaling), every state and cell written out: states M, Ix0, Iy0, Ix1, Iy1;
    begin/end with ``start``; M->M 1-2(o0+o1), M->I*k ok, I*k->I*k ek, I*k->M 1-ek."""
    lx, ly = len(x), len(y)
    K = odds.shape[0]
    emit = lambda a, b: 1.0 if a >= K or b >= K else odds[a, b]  # noqa: E731
    o, e = opens, extends
    t = np.zeros((5, 5))  # t[from, to]
    t[0, 0] = 1 - 2 * (o[0] + o[1])
    for k, (ix, iy) in enumerate(((1, 2), (3, 4))):
        t[0, ix] = t[0, iy] = o[k]
        t[ix, ix] = t[iy, iy] = e[k]
        t[ix, 0] = t[iy, 0] = 1 - e[k]
    lt = np.log(np.where(t > 0, t, 1e-300))
    ls = np.log(np.asarray(start))
    step = {0: (1, 1), 1: (1, 0), 2: (0, 1), 3: (1, 0), 4: (0, 1)}
    neg = -np.inf
    F = np.full((5, lx + 1, ly + 1), neg)
    for i in range(lx + 1):
        for j in range(ly + 1):
            for s in range(5):
                di, dj = step[s]
                pi, pj = i - di, j - dj
                if pi < 0 or pj < 0:
                    continue
                terms = [F[r, pi, pj] + lt[r, s] for r in range(5)]
                if pi == 0 and pj == 0:
                    terms.append(ls[s])
                em = np.log(emit(x[i - 1], y[j - 1])) if s == 0 else 0.0
                F[s, i, j] = np.logaddexp.reduce(terms) + em
    logz = np.logaddexp.reduce([F[s, lx, ly] + ls[s] for s in range(5)])
    B = np.full((5, lx + 1, ly + 1), neg)
    for i in range(lx, -1, -1):
        for j in range(ly, -1, -1):
            for r in range(5):
                terms = []
                if i == lx and j == ly:
                    terms.append(ls[r])
                for s in range(5):
                    di, dj = step[s]
                    ni, nj = i + di, j + dj
                    if ni > lx or nj > ly:
                        continue
                    em = np.log(emit(x[ni - 1], y[nj - 1])) if s == 0 else 0.0
                    terms.append(lt[r, s] + em + B[s, ni, nj])
                B[r, i, j] = np.logaddexp.reduce(terms) if terms else neg
    post = np.exp(F[0, 1:, 1:] + B[0, 1:, 1:] - logz)
    return post, logz


def _letters(s, letters):
    return np.array([letters.index(c) if c in letters else len(letters) for c in s], np.int16)


@pytest.mark.parametrize("alphabet,x,y", [
    (PROTEIN, "MKVLAAGIVW", "MKALAAGIW"),
    (PROTEIN, "HEAGAWGHEE", "PAWHEAE"),
    (PROTEIN, "MXKV", "QQWMKVPPD"),           # an unknown letter (X) emits odds 1
    (PROTEIN, "W", "ACDEFG"),
    (DNA, "ACGTTGCAAC", "ACGTGCATC"),
])
def test_posteriors_equal_textbook(alphabet, x, y):
    params = pair_hmm(alphabet)
    odds, start, opens, extends = params.arrays()
    xl, yl = _letters(x, params.letters), _letters(y, params.letters)
    post, logz = native.msa_pair_posteriors(xl, yl, odds, start, opens, extends)
    ref, ref_logz = textbook_posteriors(xl, yl, odds, start, opens, extends)
    # scaled probability space vs log space, both float64: agreement to 1e-12 relative
    np.testing.assert_allclose(post, ref, rtol=1e-10, atol=1e-13)
    assert logz == pytest.approx(ref_logz, rel=1e-12)
    assert np.all(post.sum(axis=1) <= 1 + 1e-12)


def test_posteriors_random_pairs_and_symmetry():
    rng = np.random.default_rng(7)
    params = pair_hmm(PROTEIN)
    arrays = params.arrays()
    for _ in range(4):
        x = rng.integers(0, 20, rng.integers(1, 14)).astype(np.int16)
        y = rng.integers(0, 20, rng.integers(1, 14)).astype(np.int16)
        post, _ = native.msa_pair_posteriors(x, y, *arrays)
        ref, _ = textbook_posteriors(x, y, *arrays)
        np.testing.assert_allclose(post, ref, rtol=1e-10, atol=1e-13)
        # the model reads the same with x and y swapped (symmetric odds and states)
        back, _ = native.msa_pair_posteriors(y, x, *arrays)
        np.testing.assert_allclose(back.T, post, rtol=1e-10, atol=1e-13)


def test_long_pair_stays_finite():
    """Scaling keeps 3,000 x 3,000 unrelated residues finite (a plain forward underflows)."""
    rng = np.random.default_rng(1)
    params = pair_hmm(PROTEIN)
    x = rng.integers(0, 20, 3000).astype(np.int16)
    y = rng.integers(0, 20, 2500).astype(np.int16)
    post, logz = native.msa_pair_posteriors(x, y, *params.arrays())
    assert np.isfinite(logz) and np.all(np.isfinite(post))
    assert post.max() <= 1 + 1e-9 and post.sum(axis=1).max() <= 1 + 1e-9


def test_letter_map():
    lm = letter_map(PROTEIN, PROTEIN_LETTERS)
    codes = PROTEIN.encode("ARXUB") if hasattr(PROTEIN, "encode") else None
    sym = PROTEIN.symbols
    assert lm[sym.index("A")] == 0 and lm[sym.index("V")] == 19
    assert lm[sym.index("U")] == PROTEIN_LETTERS.index("C")
    assert lm[sym.index("X")] == 20 and lm[sym.index("-")] == -1
    del codes
    dm = letter_map(DNA, NUCLEOTIDE_LETTERS)
    assert dm[DNA.symbols.index("T")] == 3 and dm[DNA.symbols.index("N")] == 4
