"""The accurate (consistency) MSA mode: posteriors against a textbook forward-backward, the
consistency transformation against a hand-checked case, determinism, the API and CLI."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

from bioaccel import DNA, PROTEIN
from bioaccel._core.native import load_native
from bioaccel.msa_engine.accurate import (
    NUCLEOTIDE_LETTERS,
    PROTEIN_LETTERS,
    letter_map,
    pair_hmm,
)
from tests.cli_runner import COMMAND

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


@pytest.mark.parametrize(
    "alphabet,x,y",
    [
        (PROTEIN, "MKVLAAGIVW", "MKALAAGIW"),
        (PROTEIN, "HEAGAWGHEE", "PAWHEAE"),
        (PROTEIN, "MXKV", "QQWMKVPPD"),  # an unknown letter (X) emits odds 1
        (PROTEIN, "W", "ACDEFG"),
        (DNA, "ACGTTGCAAC", "ACGTGCATC"),
    ],
)
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


# ------------------------------------------------------------------ consistency
def _three_sequence_set(pxy, pxz, pyz, cutoff):
    """A posterior set of three 2-residue sequences with the given dense posteriors."""
    codes = np.zeros(6, np.uint8)
    ps = native.MsaPosteriorSet(
        codes, np.array([0, 2, 4, 6], np.int64), letter_map(PROTEIN, PROTEIN_LETTERS), 20
    )
    flat = np.concatenate([np.asarray(m, np.float32).ravel() for m in (pxy, pxz, pyz)])
    ps.set_pairs(
        np.array([[0, 1], [0, 2], [1, 2]], np.int64), flat, np.array([0, 4, 8], np.int64), cutoff
    )
    return ps


def _dense(ps, x, y):
    rs, col, p, rows, cols = ps.pair(x, y)
    out = np.zeros((rows, cols))
    for a in range(rows):
        out[a, col[rs[a] : rs[a + 1]]] = p[rs[a] : rs[a + 1]]
    return out


def test_consistency_three_sequences_hand_checked():
    # x, y, z of two residues each.  P'xy = (2 Pxy + Pxz Pzy) / 3 with Pzy = Pyz^T:
    #   Pxz Pzy = [[1, 0], [0, .5]] [[.6, .2], [0, .7]] = [[.6, .2], [0, .35]]
    #   P'xy = ([[1.6, .2], [0, 1.8]] + [[.6, .2], [0, .35]]) / 3 = [[2.2, .4], [0, 2.15]] / 3
    #   P'xz = (2 Pxz + Pxy Pyz) / 3, Pxy Pyz = [[.5, .07], [.18, .63]]
    #        = [[2.5, .07], [.18, 1.63]] / 3 -> .07 / 3 = .0233 falls under the 0.05 cut-off
    #   P'yz = (2 Pyz + Pyx Pxz) / 3, Pyx Pxz = [[.8, 0], [.1, .45]] -> [[2, 0], [.5, 1.85]] / 3
    pxy = [[0.8, 0.1], [0.0, 0.9]]
    pxz = [[1.0, 0.0], [0.0, 0.5]]
    pyz = [[0.6, 0.0], [0.2, 0.7]]
    ps = _three_sequence_set(pxy, pxz, pyz, 0.05)
    np.testing.assert_allclose(_dense(ps, 0, 1), pxy, atol=1e-7)
    ps.consistency(1, 0.05, 1)
    np.testing.assert_allclose(_dense(ps, 0, 1), np.array([[2.2, 0.4], [0, 2.15]]) / 3, atol=1e-6)
    np.testing.assert_allclose(_dense(ps, 0, 2), np.array([[2.5, 0], [0.18, 1.63]]) / 3, atol=1e-6)
    np.testing.assert_allclose(_dense(ps, 1, 2), np.array([[2.0, 0], [0.5, 1.85]]) / 3, atol=1e-6)


def test_consistency_matches_dense_numpy_on_random_set():
    """Two rounds on five random sequences equal the dense NumPy products (cut-off applied
    after each round, as the C++ does)."""
    rng = np.random.default_rng(3)
    n = 5
    seqs = ["".join(rng.choice(list(PROTEIN_LETTERS), rng.integers(5, 12))) for _ in range(n)]
    params = pair_hmm(PROTEIN)
    batch_codes = np.frombuffer("".join(seqs).encode(), np.uint8)
    from bioaccel import SeqBatch

    b = SeqBatch.from_strings(seqs, alphabet=PROTEIN)
    ps = native.MsaPosteriorSet(b.codes, b.offsets, letter_map(PROTEIN, PROTEIN_LETTERS), 20)
    ps.compute(*params.arrays(), 0.01, 1)
    P = {}
    for x in range(n):
        P[x, x] = np.eye(b.lengths[x])
        for y in range(x + 1, n):
            P[x, y] = _dense(ps, x, y)
            P[y, x] = P[x, y].T
    for _ in range(2):
        Q = {}
        for x in range(n):
            Q[x, x] = P[x, x]
            for y in range(x + 1, n):
                m = sum(P[x, z] @ P[z, y] for z in range(n)) / n
                m = np.where(m >= 0.01, m, 0.0).astype(np.float32).astype(np.float64)
                Q[x, y], Q[y, x] = m, m.T
        P = Q
    ps.consistency(2, 0.01, 2)
    for x in range(n):
        for y in range(x + 1, n):
            np.testing.assert_allclose(_dense(ps, x, y), P[x, y], atol=2e-6)
    del batch_codes


def _rows_of(state, x, y):
    """Pxy of a {(x, y): pair()} state (x < y or not) as its rows: (columns, float32 values)."""
    if x < y:
        rs, col, p, rows, _ = state[x, y]
        return [(col[rs[a] : rs[a + 1]], p[rs[a] : rs[a + 1]]) for a in range(rows)]
    rs, col, p, _, cols = state[y, x]
    rows = np.repeat(np.arange(len(rs) - 1), np.diff(rs))
    return [(rows[col == b], p[col == b]) for b in range(cols)]


def _reference_round(state, n, cutoff):
    """One consistency round in float32 with the engine's order of additions for every
    element: z increasing (z = y gives 2 Pxy, z = x nothing), within z the middle residue
    increasing, each term the product of two stored entries (so an infinite entry meets no
    zero). The engine must reproduce these bits, whatever its kernel and threads."""
    inv_n = np.float32(1) / np.float32(n)
    out = {}
    for x in range(n):
        for y in range(x + 1, n):
            _, _, _, lx, ly = state[x, y]
            acc = np.zeros((lx, ly), np.float32)
            for z in range(n):
                if z == x:
                    continue
                if z == y:
                    for a, (cols, vals) in enumerate(_rows_of(state, x, y)):
                        acc[a, cols] += np.float32(2) * vals
                    continue
                right = _rows_of(state, z, y)
                for a, (mids, vals) in enumerate(_rows_of(state, x, z)):
                    for m, v in zip(mids, vals):
                        cols, w = right[m]
                        acc[a, cols] += v * w
            v = acc * inv_n
            keep = v >= np.float32(cutoff)
            rs = np.concatenate([[0], np.cumsum(keep.sum(axis=1))]).astype(np.int64)
            out[x, y] = (rs, np.nonzero(keep)[1].astype(np.int32), np.minimum(v[keep], 1), lx, ly)
    return out


def _state(ps, n):
    return {(x, y): ps.pair(x, y) for x in range(n) for y in range(x + 1, n)}


def _assert_same_bits(got, want):
    for key, (rs, col, p, rows, cols) in want.items():
        g = got[key]
        assert (g[3], g[4]) == (rows, cols), key
        np.testing.assert_array_equal(g[0], rs, err_msg=str(key))
        np.testing.assert_array_equal(g[1], col, err_msg=str(key))
        assert g[2].dtype == np.float32 and g[2].tobytes() == p.astype(np.float32).tobytes(), key


@pytest.mark.parametrize(
    "n,lengths,cutoff,related",
    [
        (6, (8, 40), 0.01, True),  # rows of one to a few tiles
        (12, (20, 36), 0.01, True),  # enough sequences that whole rows are read out
        (5, (60, 90), 0.0005, False),  # unrelated, a low cut-off: rows wider than four tiles
    ],
)
def test_consistency_bits_equal_the_float32_reference(n, lengths, cutoff, related):
    """Two rounds, each equal to the bit to the float32 reference (the order of the sums is
    the output's definition: the banded, vectorised kernel must not change it), on one and
    on two threads."""
    from bioaccel import SeqBatch

    rng = np.random.default_rng(17)
    base = "".join(rng.choice(list(PROTEIN_LETTERS), lengths[1]))
    seqs = []
    for _ in range(n):
        length = int(rng.integers(*lengths))
        if related:
            s = [c if rng.random() > 0.3 else rng.choice(list(PROTEIN_LETTERS)) for c in base]
            seqs.append("".join(s)[:length])
        else:
            seqs.append("".join(rng.choice(list(PROTEIN_LETTERS), length)))
    b = SeqBatch.from_strings(seqs, alphabet=PROTEIN)
    for threads in (1, 2):
        ps = native.MsaPosteriorSet(b.codes, b.offsets, letter_map(PROTEIN, PROTEIN_LETTERS), 20)
        ps.compute(*pair_hmm(PROTEIN).arrays(), cutoff, threads)
        for _ in range(2):
            want = _reference_round(_state(ps, n), n, cutoff)
            ps.consistency(1, cutoff, threads)
            _assert_same_bits(_state(ps, n), want)


def test_consistency_with_an_infinite_entry_keeps_the_sparse_sums():
    """No posterior is infinite, but a corrupt input (set_pairs) can hold +inf: the engine
    then adds only stored entries' products, as the sparse product does (+inf times a band's
    zero would be NaN)."""
    inf = np.inf
    pxy = [[0.8, 0.1, 0.0], [0.0, inf, 0.05]]
    pxz = [[0.9, 0.0], [0.0, 0.5]]
    pyz = [[0.6, 0.0], [0.2, 0.7], [0.0, 0.3]]
    codes = np.zeros(7, np.uint8)
    ps = native.MsaPosteriorSet(
        codes, np.array([0, 2, 5, 7], np.int64), letter_map(PROTEIN, PROTEIN_LETTERS), 20
    )
    flat = np.concatenate([np.asarray(m, np.float32).ravel() for m in (pxy, pxz, pyz)])
    ps.set_pairs(
        np.array([[0, 1], [0, 2], [1, 2]], np.int64), flat, np.array([0, 6, 10], np.int64), 0.01
    )
    want = _reference_round(_state(ps, 3), 3, 0.01)
    ps.consistency(1, 0.01, 1)
    _assert_same_bits(_state(ps, 3), want)
    assert _dense(ps, 0, 1)[1, 1] == 1.0  # inf, capped


def test_consistency_same_bits_without_avx2():
    """The sums' kernel is built for AVX2 and for the baseline (BIOACCEL_NO_AVX2=1, read once
    per process): the same bits."""
    from tests.cpu_levels import outputs_per_level

    code = (
        "import hashlib, numpy as np, bioaccel\n"
        "from bioaccel import SeqBatch, _native\n"
        "from bioaccel.msa_engine.accurate import PROTEIN_LETTERS, letter_map, pair_hmm\n"
        "from benchmarks.family_sim import simulate_family\n"
        "fam = simulate_family(24, 90, seed=9, depth=1.5)\n"
        "b = SeqBatch.from_strings(fam.sequences, alphabet='protein')\n"
        "ps = _native.MsaPosteriorSet(b.codes, b.offsets,"
        " letter_map(bioaccel.PROTEIN, PROTEIN_LETTERS), 20)\n"
        "ps.compute(*pair_hmm(bioaccel.PROTEIN).arrays(), 0.01, 2)\n"
        "ps.consistency(2, 0.01, 2)\n"
        "h = hashlib.sha256()\n"
        "for x in range(len(b)):\n"
        "    for y in range(x + 1, len(b)):\n"
        "        for a in ps.pair(x, y)[:3]:\n"
        "            h.update(a.tobytes())\n"
        "print(_native.cpu_features()['isa'])\n"
        "print(h.hexdigest())\n"
    )
    outs = outputs_per_level(code, ("avx2", "sse2"))
    assert len(set(outs.values())) == 1, outs


def test_refinement_never_lowers_the_objective():
    from benchmarks.family_sim import simulate_family
    from bioaccel import SeqBatch
    from bioaccel.msa_engine.accurate import accuracy_merges, posterior_set

    fam = simulate_family(12, 60, seed=4, depth=1.5)
    b = SeqBatch.from_strings(fam.sequences, ids=fam.ids, alphabet=PROTEIN)
    ps = posterior_set(native, b, pair_hmm(PROTEIN), 1)
    merges = accuracy_merges(native, ps, len(b))
    ps.consistency(2, 0.01, 1)
    cols0, w0, acc0 = ps.align(merges, 0, 1, 1)
    cols1, w1, acc1 = ps.align(merges, 50, 1, 1)
    assert acc0 == 0
    assert ps.objective(cols1) >= ps.objective(cols0) - 1e-6
    if acc1:
        assert ps.objective(cols1) > ps.objective(cols0)


# ------------------------------------------------------------------ msa(mode=...)
def _family(n=14, length=70, seed=2, alphabet="protein"):
    from benchmarks.family_sim import simulate_family

    return simulate_family(n, length, alphabet, seed=seed, depth=1.2)


def test_accurate_mode_deterministic_threads_and_order():
    from bioaccel import msa

    fam = _family()
    recs = list(zip(fam.ids, fam.sequences))
    one = msa(recs, mode="accurate", threads=1)
    two = msa(recs, mode="accurate", threads=2)
    assert one.mode == "accurate" and one.sequences == two.sequences
    perm = np.random.default_rng(0).permutation(len(recs))
    shuffled = msa([recs[i] for i in perm], mode="accurate", threads=2)
    assert dict(zip(shuffled.ids, shuffled.sequences)) == dict(zip(one.ids, one.sequences))
    for row, seq in zip(one.sequences, fam.sequences):
        assert row.replace("-", "") == seq


def test_accurate_beats_fast_on_a_divergent_family():
    """A divergent simulated family (16 x 90, seeded): SP/TC against the true alignment
    0.902/0.776 accurate, 0.828/0.643 fast when written; the BAliBASE figures are in
    benchmarks/bench_msa.py."""
    from benchmarks.msa_accuracy import sp_tc_family
    from bioaccel import msa

    fam = _family(16, 90, seed=11)
    recs = list(zip(fam.ids, fam.sequences))
    acc = msa(recs, mode="accurate", threads=2)
    fast = msa(recs, mode="fast", threads=2)
    s_acc = sp_tc_family(dict(zip(acc.ids, acc.sequences)), fam)
    s_fast = sp_tc_family(dict(zip(fast.ids, fast.sequences)), fam)
    assert s_acc["sp"] >= s_fast["sp"] + 0.03


def test_dna_accurate_mode():
    from bioaccel import msa

    fam = _family(8, 80, seed=5, alphabet="dna")
    aln = msa(list(zip(fam.ids, fam.sequences)), mode="accurate", threads=1)
    assert aln.mode == "accurate" and aln.alphabet.name in ("dna", "DNA")
    for row, seq in zip(aln.sequences, fam.sequences):
        assert row.replace("-", "") == seq


def test_mode_auto_and_small_inputs():
    from bioaccel import msa
    from bioaccel.msa_engine.engine import resolve_mode

    assert msa([("a", "MKVL"), ("b", "MKIL"), ("c", "MKV")]).mode == "accurate"
    assert msa([("a", "MKVL")], mode="accurate").sequences == ["MKVL"]
    two = msa([("a", "MKVLAAGIV"), ("b", "MKVLGIV")], mode="accurate")
    assert two.sequences == ["MKVLAAGIV", "MKVL--GIV"] or two.sequences[1].count("-") == 2
    empty = msa([("a", "MKVL"), ("b", ""), ("c", "MKL")], mode="accurate")
    assert empty.sequences[1] == "-" * empty.width
    assert resolve_mode("auto", np.full(5000, 300))[0] == "fast"
    assert resolve_mode("auto", np.full(50, 300))[0] == "accurate"
    assert resolve_mode("fast", np.full(5, 30)) == ("fast", "asked for")


@pytest.mark.parametrize("bad", ["precise", "", None, 3])
def test_bad_mode_is_named(bad):
    from bioaccel import msa

    with pytest.raises(ValueError, match=r"mode must be one of 'auto', 'accurate', 'fast'"):
        msa([("a", "MKV"), ("b", "MKV")], mode=bad)


def test_cli_mode(tmp_path):
    fam = _family(6, 40, seed=9)
    inp = tmp_path / "in.fa"
    inp.write_text("".join(f">{i}\n{s}\n" for i, s in zip(fam.ids, fam.sequences)))
    out = tmp_path / "out.fa"
    run = subprocess.run(
        [
            *COMMAND,
            "-v",
            "msa",
            str(inp),
            "-o",
            str(out),
            "--mode",
            "accurate",
            "-t",
            "1",
        ],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "msa mode: accurate" in run.stderr
    from bioaccel import msa
    from bioaccel.msa_engine import read_alignment

    got = read_alignment(out)
    want = msa(list(zip(fam.ids, fam.sequences)), mode="accurate", threads=1)
    assert got.sequences == want.sequences
    bad = subprocess.run(
        [
            *COMMAND,
            "msa",
            str(inp),
            "-o",
            str(tmp_path / "x.fa"),
            "--mode",
            "precise",
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "precise" in bad.stderr


def test_posterior_memory_is_the_largest_pairs_per_thread():
    from bioaccel.msa_engine.accurate import POSTERIOR_BYTES_PER_CELL, posterior_memory

    # two threads: the two largest pairs, (300 + 1)(200 + 1) and (300 + 1)(100 + 1) cells
    need, a, b = posterior_memory([100, 300, 200], threads=2)
    assert (a, b) == (300, 200)
    assert need == POSTERIOR_BYTES_PER_CELL * (301 * 201 + 301 * 101)
    # more threads than pairs: every pair once
    need, _, _ = posterior_memory([10, 20], threads=8)
    assert need == POSTERIOR_BYTES_PER_CELL * 11 * 21
    assert posterior_memory([50], threads=4) == (0, 0, 0)


def test_explicit_accurate_mode_on_pairs_too_large_is_refused_before_work(tmp_path, monkeypatch):
    """An explicit mode='accurate' whose dense posteriors exceed the memory available is
    refused at once, naming the need, the largest pair and the fast mode (auto never picks
    accurate there); the CLI says it in one line, exit 2, and writes nothing."""
    import bioaccel._core as core
    from bioaccel import msa
    from bioaccel.errors import InsufficientMemoryError

    rng = np.random.default_rng(4)
    a = "".join(rng.choice(list("ACGT"), 3000))
    b = a[:1500] + a[1600:]
    monkeypatch.setattr(core, "available_bytes", lambda: 50 * 2**20)  # 50 MiB
    with pytest.raises(InsufficientMemoryError, match=r"3,000 x 2,900 residues.*mode='fast'"):
        msa([("a", a), ("b", b)], mode="accurate", threads=1)
    assert msa([("a", a), ("b", b)], mode="fast", threads=1).sequences[0].replace("-", "") == a
    # a real refusal, no patching: a pair of 200 kb needs 16 x 4e10 bytes
    long_a = "".join(rng.choice(list("ACGT"), 200_000))
    inp = tmp_path / "long.fa"
    inp.write_text(f">x\n{long_a}\n>y\n{long_a[::-1]}\n")
    out = tmp_path / "out.fa"
    run = subprocess.run(
        [
            *COMMAND,
            "msa",
            str(inp),
            "-o",
            str(out),
            "--mode",
            "accurate",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 2, run.stderr
    assert "200,000 x 200,000 residues" in run.stderr and len(run.stderr.strip().splitlines()) == 1
    assert not out.exists()
