"""Alignment scores and tracebacks against Biopython's PairwiseAligner (the oracle), the
C++ scalar Gotoh, and the Python reference; every backend; edge cases and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from Bio.Align import PairwiseAligner, substitution_matrices
from hypothesis import given, settings
from hypothesis import strategies as st

import bioaccel
from bioaccel import _native
from bioaccel.errors import AlphabetError
from bioaccel.pairwise._align import align, align_scores, score_cigar
from bioaccel.pairwise._scoring import ScoringError, gaps_from_blast, make_scoring
from tests.align_cases import AA, DIFF_CASES, DNA, MODES, indel_family, native_scores, width_of

GAPS = [(11, 1), (5, 5), (8, 0), (3, 1)]  # open > extend, open == extend, extend = 0


def biopython_score(a: str, b: str, mode: str, matrix, o: int, e: int) -> int:
    if not a or not b:  # PairwiseAligner refuses empty sequences: the score is one gap
        n = len(a) + len(b)
        return -(o + (n - 1) * e) if (mode == "global" and n) else 0
    al = PairwiseAligner(mode="local" if mode == "local" else "global")
    if isinstance(matrix, tuple):
        al.match_score, al.mismatch_score = matrix
    else:
        al.substitution_matrix = substitution_matrices.load(matrix)
    al.open_gap_score = -o
    al.extend_gap_score = -e
    if mode == "semiglobal":
        al.end_gap_score = 0
    return int(al.score(a, b))


def random_family(rng, letters, n, lo, hi, mutate=0.25):
    anc = rng.choice(letters, hi)
    out = []
    for _ in range(n):
        s = list(anc[: rng.integers(lo, hi + 1)])
        for p in np.flatnonzero(rng.random(len(s)) < mutate):
            s[p] = rng.choice(letters)
        for _ in range(rng.integers(0, 3)):
            p = int(rng.integers(0, len(s) + 1))
            s[p:p] = list(rng.choice(letters, rng.integers(1, 5)))
        out.append("".join(s))
    return out


@pytest.mark.parametrize("o,e", GAPS)
@pytest.mark.parametrize("matrix", ["BLOSUM45", "BLOSUM62", "BLOSUM80", "PAM250"])
@pytest.mark.parametrize("mode", MODES)
def test_protein_scores_equal_biopython(rng, mode, matrix, o, e):
    seqs = random_family(rng, AA, 9, 0, 40) + ["", "W", "".join(rng.choice(AA, 70))]
    got = align_scores(seqs, mode=mode, matrix=matrix, gap_open=o, gap_extend=e, backend="cpu")
    want = [[biopython_score(a, b, mode, matrix, o, e) for b in seqs] for a in seqs]
    assert got.tolist() == want


@pytest.mark.parametrize("o,e", GAPS)
@pytest.mark.parametrize("mode", MODES)
def test_dna_match_mismatch_equal_biopython(rng, mode, o, e):
    q = random_family(rng, DNA, 6, 1, 60)
    t = random_family(rng, DNA, 5, 0, 60)
    got = align_scores(q, t, mode=mode, matrix=(2, -3), gap_open=o, gap_extend=e, backend="cpu")
    assert got.tolist() == [[biopython_score(a, b, mode, (2, -3), o, e) for b in t] for a in q]


@pytest.mark.parametrize("mode", MODES)
def test_every_backend_equals_reference(backend_name, mode, rng):
    from tests.conftest import GPU

    if backend_name == "cupy" and not GPU:
        # the NumPy stand-in has no align_scores kernels (CUDA C; tests/test_cupy_*.py check
        # them on the CPU): named explicitly, that is an error, never a fallback
        with pytest.raises(bioaccel.BackendUnavailableError, match="no align_scores kernels"):
            align_scores(["MKV"], backend="cupy")
        return
    seqs = random_family(rng, AA, 6, 0, 30) + [""]
    ref = align_scores(seqs, mode=mode, gap_open=7, gap_extend=2, backend="reference")
    got = align_scores(seqs, mode=mode, gap_open=7, gap_extend=2, backend=backend_name)
    assert np.array_equal(got, ref)


@pytest.mark.parametrize("strip", [None, "5"])
@pytest.mark.parametrize("mode", MODES)
def test_simd_kernels_equal_scalar_core(monkeypatch, rng, mode, strip):
    # this process's kernel level; tests/core/test_cpu_dispatch.py forces each level in turn
    if strip:  # cut queries into strips of 5 rows (long queries use 256)
        monkeypatch.setenv("BIOACCEL_ALIGN_STRIP", strip)
    seqs = random_family(rng, AA, 50, 5, 120)
    sc = make_scoring("BLOSUM62", 10, 1, bioaccel.PROTEIN)
    b = bioaccel.SeqBatch.from_strings(seqs)
    got = align_scores(b, mode=mode, gap_open=10, gap_extend=1, backend="cpu", threads=2)
    mode_id = ["global", "local", "semiglobal"].index(mode)
    for i in range(0, len(seqs), 7):
        for j in range(len(seqs)):
            assert got[i, j] == _native.align_score_scalar(b[i], b[j], sc.table, mode_id, 10, 1)


def test_int8_and_int16_overflow_reruns(rng):
    # identical 400-residue proteins score ~2,000 locally (past int8) and long ones past
    # int16: the lanes that overflow are re-run wider, the others stay narrow
    base = "".join(rng.choice(AA, 400))
    long = "".join(rng.choice(AA, 7000))
    seqs = [base, base[:390], "".join(rng.choice(AA, 400)), long, long[:6900]]
    b = bioaccel.SeqBatch.from_strings(seqs)
    sc = make_scoring("BLOSUM62", 11, 1, bioaccel.PROTEIN)
    scores, stats = _native.align_scores(
        b.codes, b.offsets, b.codes, b.offsets, sc.table, 1, 11, 1, True, 1
    )
    assert stats["reruns"] > 0 and stats["cells_int8"] > 0 and stats["cells_int16"] > 0
    assert scores[3, 3] > 32767  # needed int32
    for i in range(len(seqs)):
        for j in range(len(seqs)):
            assert scores[i, j] == _native.align_score_scalar(b[i], b[j], sc.table, 1, 11, 1)
    assert scores[0, 1] == biopython_score(seqs[0], seqs[1], "local", "BLOSUM62", 11, 1)


@pytest.mark.parametrize("case", DIFF_CASES, ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_global_difference_kernel_at_the_width_edges(case):
    matrix, o, e, letters, length, (glo, ghi), width = case
    rng = np.random.default_rng(length + o * 7 + e)
    seqs = indel_family(rng, letters, 6, length, glo, ghi)
    seqs += ["".join(rng.choice(letters, 3)), seqs[0][: length // 3]]
    scores, stats = native_scores(seqs, seqs, matrix, o, e)
    assert width_of(stats) == width
    if width == "int8":  # the scores themselves leave int8 (else it proves nothing)
        assert scores.max() > 127 and (e == 0 or scores.min() < -128)
    # the other modes on the same data: local re-runs the lanes that pass int8, then int16
    for mode in ("local", "semiglobal"):
        native_scores(seqs[:4], seqs, matrix, o, e, mode=mode)


def test_global_scores_past_int16_in_int8_differences(rng):
    # all matches over 7,000 residues (~ +37,000) and a 33,000-residue gap (-33,010) leave
    # int16 (the absolute kernels would take int32); their differences stay in int8
    long = "".join(rng.choice(AA, 7000))
    near = list(long)
    for p in np.flatnonzero(rng.random(len(near)) < 0.05):
        near[p] = rng.choice(AA)
    near = "".join(near[:2000] + near[2300:] + list(rng.choice(AA, 250)))
    queries = [long, near, "W", long[3000:3400]]
    targets = [long, near, "".join(rng.choice(AA, 500)), "Y"]
    scores, stats = native_scores(queries, targets, "BLOSUM62", 11, 1)
    assert width_of(stats) == "int8"
    assert scores[0, 0] > 32767
    assert scores[1, 0] == biopython_score(near, long, "global", "BLOSUM62", 11, 1)
    assert scores[3, 0] == biopython_score(long[3000:3400], long, "global", "BLOSUM62", 11, 1)
    huge = "".join(rng.choice(AA, 33000))
    scores, stats = native_scores(["W", "MK"], [huge, "A"], "BLOSUM62", 11, 1)
    assert width_of(stats) == "int8"
    assert scores[0, 0] == biopython_score("W", huge, "global", "BLOSUM62", 11, 1) < -32768
    # past int32 by the bound: refused, never clamped
    with pytest.raises(OverflowError, match="int32"):
        native_scores(["A" * 3000], ["A" * 3000], (1_000_000, -1), 5, 1)


def test_global_difference_kernel_in_int16(rng):
    # open 50: -3 * open leaves int8, so the differences run in int16, where the scores
    # (all matches over 7,000 residues) would need int32
    long = "".join(rng.choice(AA, 7000))
    seqs = [long, long[:6500] + "".join(rng.choice(AA, 300)), "W", long[100:400]]
    scores, stats = native_scores(seqs, seqs, "BLOSUM62", 50, 1)
    assert width_of(stats) == "int16" and scores[0, 0] > 32767


def test_no_diff_switch_gives_the_same_global_scores(monkeypatch, rng):
    seqs = indel_family(rng, AA, 20, 300, 10, 60)
    diff, st = native_scores(seqs, seqs, "BLOSUM62", 11, 1)
    monkeypatch.setenv("BIOACCEL_ALIGN_NO_DIFF", "1")
    absolute, st_abs = native_scores(seqs, seqs, "BLOSUM62", 11, 1)
    assert width_of(st) == "int8" and width_of(st_abs) == "int16"
    assert np.array_equal(diff, absolute)


@settings(max_examples=80, deadline=None)
@given(
    st.integers(1, 80),
    st.integers(-128, 0),
    st.integers(0, 45),
    st.integers(0, 45),
    st.integers(0, 2**32 - 1),
)
def test_global_difference_kernel_any_scheme(match, mismatch, o, e, seed):
    # schemes around the edges of the difference widths, sequences with long gaps, strips
    if o < e:
        o, e = e, o
    rng = np.random.default_rng(seed)
    seqs = indel_family(rng, DNA, 5, int(rng.integers(40, 400)), 5, 35)
    seqs += ["".join(rng.choice(DNA, int(rng.integers(1, 20))))]
    native_scores(seqs[:3], seqs, (match, mismatch), o, e)


BASELINE_CHILD = r"""
import numpy as np
from bioaccel import _native
from tests.align_cases import DIFF_CASES, indel_family, native_scores, width_of
assert _native.align_isa() == "sse2", _native.align_isa()
for case in DIFF_CASES:
    matrix, o, e, letters, length, (glo, ghi), width = case
    rng = np.random.default_rng(length + o * 7 + e)
    seqs = indel_family(rng, letters, 4, length, glo, ghi) + [letters[-1]]
    scores, stats = native_scores(seqs, seqs, matrix, o, e)
    assert width_of(stats) == width, (case, stats)
long = "".join(np.random.default_rng(5).choice(list("ARNDCQEGHILKMFPSTWYV"), 7000))
scores, stats = native_scores([long, long[1000:1500], "W"], [long, long[:6000]], "BLOSUM62", 11, 1)
assert width_of(stats) == "int8" and scores[0, 0] > 32767
print("ok")
"""


def test_global_difference_kernel_in_the_baseline_build():
    # the same kernel source compiled for the baseline instruction set (BIOACCEL_NO_AVX2=1,
    # read once per process: a child); the AVX-512 build shares it too
    import subprocess
    import sys
    from pathlib import Path

    from tests.datasets import child_env

    run = subprocess.run(
        [sys.executable, "-c", BASELINE_CHILD],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        env=child_env(BIOACCEL_NO_AVX2="1"),
    )
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr[-3000:]


def test_threads_identical(rng):
    seqs = random_family(rng, AA, 80, 20, 150)
    one = align_scores(seqs, mode="local", threads=1, backend="cpu")
    two = align_scores(seqs, mode="local", threads=2, backend="cpu")
    assert np.array_equal(one, two) and np.array_equal(one, one.T)


@pytest.mark.slow
def test_pair_over_30000_residues(rng):
    a = "".join(rng.choice(DNA, 30500))
    b = list(a)
    for p in np.flatnonzero(rng.random(len(b)) < 0.1):
        b[p] = rng.choice(DNA)
    b = "".join(b[:15000] + b[15040:])
    got = align_scores(
        [a], [b], mode="global", matrix=(2, -3), gap_open=5, gap_extend=2, backend="cpu"
    )
    assert got[0, 0] == biopython_score(a, b, "global", (2, -3), 5, 2)
    aln = align([a], [b], mode="global", matrix=(2, -3), gap_open=5, gap_extend=2)[0]
    assert aln.score == got[0, 0]
    assert aln.query_aligned.replace("-", "") == a and aln.target_aligned.replace("-", "") == b


@pytest.mark.parametrize("mode", MODES)
def test_tracebacks_are_consistent(rng, mode):
    seqs = random_family(rng, AA, 12, 0, 60)
    sc = make_scoring("BLOSUM62", 11, 1, bioaccel.PROTEIN)
    scores = align_scores(seqs, mode=mode, backend="cpu")
    for aln in align(seqs, mode=mode):
        i, j = int(aln.query_id[3:]), int(aln.target_id[3:])  # ids are seq0, seq1, ...
        assert aln.score == scores[i, j]
        assert score_cigar(aln, sc) == aln.score  # the score recomputed from the alignment
        assert aln.query_aligned.replace("-", "") == seqs[i][aln.query_start : aln.query_end]
        assert aln.target_aligned.replace("-", "") == seqs[j][aln.target_start : aln.target_end]
        if mode == "global":
            assert (aln.query_start, aln.query_end) == (0, len(seqs[i]))
            assert (aln.target_start, aln.target_end) == (0, len(seqs[j]))


def test_traceback_hand_checked():
    # ACGTTGCA vs ACGTGCA, +2/-3, gap 5/2: one of the two Ts against a gap, 7 matches:
    # 14 - 5 = 9. Walking back from the end, diagonal steps come first, so the gap lands
    # on the leftmost of the co-optimal places.
    a = align(["ACGTTGCA"], ["ACGTGCA"], matrix=(2, -3), gap_open=5, gap_extend=2)[0]
    assert (a.cigar, a.score, a.identity) == ("3M1I4M", 9, 7 / 8)
    assert (a.query_aligned, a.target_aligned) == ("ACGTTGCA", "ACG-TGCA")
    loc = align(
        ["TTTTACGTACGTTTTT"],
        ["GGACGTACGGG"],
        mode="local",
        matrix=(1, -2),
        gap_open=3,
        gap_extend=1,
    )[0]
    assert (loc.query_aligned, loc.target_aligned, loc.score) == ("ACGTACG", "ACGTACG", 7)


def test_aligned_strings_keep_the_letters_given(tmp_path):
    """RNA and lower case come back as given (a U stays a U), from strings, a file and the
    command line; scores and identity are those of the upper-case DNA spelling."""
    from tests.cli_runner import run_process

    seqs = ["GGCUAGCUAGcuagCUAACG", "GGCTAGCAAGCTAGCTAAGG", "ggcuagcuagcuaacg"]
    dna = [s.upper().replace("U", "T") for s in seqs]
    path = tmp_path / "rna.fa"
    path.write_text("".join(f">s{k}\n{s}\n" for k, s in enumerate(seqs)))
    want = align(dna)
    for source in (seqs, bioaccel.read_sequences(path)):
        got = align(source)
        for a, w in zip(got, want):
            qi, ti = int(a.query_id[-1]), int(a.target_id[-1])
            assert a.query_aligned.replace("-", "") == seqs[qi][a.query_start : a.query_end]
            assert a.target_aligned.replace("-", "") == seqs[ti][a.target_start : a.target_end]
            assert (a.cigar, a.score, a.identity) == (w.cigar, w.score, w.identity)
            assert a.query_aligned.upper().replace("U", "T") == w.query_aligned
    r = run_process("align", "-", "--traceback", "-o", "-", stdin=path.read_text())
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()[1:]]
    assert rows[0][:2] == ["s0", "s1"] and rows[0][-2].replace("-", "") == seqs[0]


def test_blast_gap_converter():
    # BLAST counts existence + L * extension: 11/1 in BLAST is 12/1 here
    assert gaps_from_blast(11, 1) == (12, 1)


def test_bad_inputs():
    with pytest.raises(ScoringError, match="unknown substitution matrix 'BLOSUM99'.*BLOSUM62"):
        align_scores(["MKV"], matrix="BLOSUM99")
    with pytest.raises(
        AlphabetError,
        match=r"letter 'J' of sequence 'b' at position 3 is not in the matrix BLOSUM62",
    ):
        align_scores(bioaccel.SeqBatch.from_strings(["MKV", "MKJ"], ids=["a", "b"]))
    with pytest.raises(ScoringError, match="gap_open must be >= 0"):
        align_scores(["MKV"], gap_open=-1)
    with pytest.raises(ScoringError, match="gap_extend must be a non-negative integer, got 1.5"):
        align_scores(["MKV"], gap_extend=1.5)
    with pytest.raises(ScoringError, match="unknown alignment mode 'glocal'"):
        align_scores(["MKV"], mode="glocal")
    with pytest.raises(AlphabetError, match="mismatched alphabets"):
        align_scores(["MKVLEF"], bioaccel.SeqBatch.from_strings(["ACGT"], alphabet="dna"))
    with pytest.raises(ScoringError, match="integer"):
        align_scores(["ACGT"], matrix=(1.5, -1))


def test_identity_distance_matches_alignments(rng):
    seqs = random_family(rng, AA, 8, 10, 50)
    dm = bioaccel.distance_matrix(seqs, "identity")
    for aln in align(seqs):
        i, j = int(aln.query_id[3:]), int(aln.target_id[3:])
        assert dm.data[i, j] == pytest.approx(1 - aln.identity, abs=1e-15)
    assert np.all(np.diag(dm.data) == 0)


def test_scoredist_formula(rng):
    # recompute Sonnhammer & Hollich's formula from the alignments bioaccel reports
    seqs = random_family(rng, AA, 6, 30, 60) + ["".join(rng.choice(AA, 40))]
    dm = bioaccel.distance_matrix(seqs, "scoredist")
    sc = make_scoring("BLOSUM62", 11, 1, bioaccel.PROTEIN)
    b = bioaccel.SeqBatch.from_strings(seqs)
    counts = np.bincount(b.codes, minlength=sc.alphabet.size).astype(float)
    p = counts / counts.sum()
    per_column = p @ sc.table @ p
    for aln in align(seqs):
        i, j = int(aln.query_id[3:]), int(aln.target_id[3:])
        cols = [(x, y) for x, y in zip(aln.query_aligned, aln.target_aligned) if "-" not in (x, y)]
        code = bioaccel.PROTEIN.code
        sigma_r = len(cols) * per_column
        sigma_u = sum(sc.table[code(x), code(x)] + sc.table[code(y), code(y)] for x, y in cols) / 2
        if aln.score - sigma_r <= 0:
            assert dm.data[i, j] == np.inf
        else:
            want = -np.log((aln.score - sigma_r) / (sigma_u - sigma_r)) * 1.3370
            assert dm.data[i, j] == pytest.approx(want, rel=1e-12)
    assert dm.data[0, 0] == 0.0 and not np.signbit(dm.data).any()
    with pytest.raises(bioaccel.ModelError, match="proteins"):
        bioaccel.distance_matrix(["ACGT", "ACGA"], "scoredist")


def test_matrix_names_are_case_insensitive():
    # matrix names resolved against Biopython's list, reported in its spelling
    from bioaccel.pairwise._scoring import make_scoring
    from bioaccel.sequences._alphabet import PROTEIN

    seqs = ["MKVLEFWHHK", "MKVIEFWQHK", "MRVLEAW"]
    for upper, spellings in [
        ("BLOSUM62", ["blosum62", "Blosum62", " BLOSUM62 "]),
        ("PAM250", ["pam250"]),
    ]:
        want = align_scores(seqs, matrix=upper)
        for name in spellings:
            assert np.array_equal(align_scores(seqs, matrix=name), want)
            assert make_scoring(name, 11, 1, PROTEIN).name == upper
    with pytest.raises(
        ScoringError, match="unknown substitution matrix 'blosum99'.*BLOSUM62.*any case"
    ):
        align_scores(seqs, matrix="blosum99")
