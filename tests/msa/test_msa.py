"""The MSA engine against independent oracles: Biopython's PairwiseAligner (two sequences),
a brute-force sum-of-pairs over every path (the profile-profile DP), BAliBASE references
(``../shared/msa``), and the rules every alignment must keep."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bioaccel
from bioaccel import _native
from bioaccel.errors import (
    AlphabetError,
    BackendUnavailableError,
    DuplicateIdError,
    SequenceFormatError,
)
from bioaccel.msa_engine.scoring import msa_scoring
from tests.cli_runner import run_process
from tests.cpu_levels import outputs_per_level
from tests.datasets import child_env, unavailable
from tests.msa.msa_helpers import AA, BALIBASE, SHARED, lcs_dp, random_family  # noqa: F401


def check_rows(aln, ids, seqs):
    assert aln.ids == list(ids)
    assert len({len(r) for r in aln.sequences}) == 1
    for row, s in zip(aln.sequences, seqs):
        assert row.replace("-", "") == s.replace("-", "").replace(".", "")
    # no all-gap column
    if aln.width:
        cols = np.array([list(r) for r in aln.sequences])
        assert not np.any(np.all(cols == "-", axis=0))


# -- two sequences: the optimum of the pairwise problem ------------------------------------------
def sp_score(rows, sc, split=None):
    """Sum of pairs of gapped rows, FAMSA's way: residue pairs by the matrix, a residue facing
    a gap by the penalty of that gap's kind in its own row (internal open/extend, terminal
    open/extend), gap-gap 0. With ``split``, only pairs of a row before ``split`` with one
    after it (what aligning two profiles optimises). Plain Python, independent of the engine."""
    letters = "ARNDCQEGHILKMFPSTWYVBZJX"
    kinds = []
    for r in rows:
        k = []
        res = [i for i, c in enumerate(r) if c != "-"]
        first, last = (res[0], res[-1]) if res else (len(r), -1)
        for i, c in enumerate(r):
            if c != "-":
                k.append(None)
                continue
            terminal = i < first or i > last
            opening = i == 0 or r[i - 1] != "-"
            if terminal:
                k.append(sc.term_open if opening else sc.term_extend)
            else:
                k.append(sc.gap_open if opening else sc.gap_extend)
        kinds.append(k)
    total = 0.0
    for a, b in itertools.combinations(range(len(rows)), 2):
        if split is not None and not (a < split <= b):
            continue
        for i in range(len(rows[a])):
            ca, cb = rows[a][i], rows[b][i]
            if ca != "-" and cb != "-":
                total += float(sc.sub[letters.index(ca), letters.index(cb)])
            elif ca != "-":
                total -= kinds[b][i]
            elif cb != "-":
                total -= kinds[a][i]
    return total


def pairwise_sp_score(rows, sc, split=None):
    """Sum of pairs as FAMSA's total score counts it, pair by pair in plain Python: for each
    pair the columns where both have a gap are dropped; a residue pair scores the matrix; each
    maximal gap run of one row costs an opening for its first cell and an extension for the
    others, at terminal rates when it lies before the row's first residue or after its last."""
    letters = "ARNDCQEGHILKMFPSTWYVBZJX"
    total = 0.0
    for a, b in itertools.combinations(range(len(rows)), 2):
        if split is not None and not (a < split <= b):
            continue
        for x, y in ((a, b), (b, a)):
            res = [i for i, c in enumerate(rows[x]) if c != "-"]
            first, last = res[0], res[-1]
            previous_gap = False
            for i in range(len(rows[x])):
                cx, cy = rows[x][i], rows[y][i]
                if cx == "-" and cy == "-":
                    continue  # not a column of this pair
                if cx != "-":
                    if x == a and cy != "-":
                        total += float(sc.sub[letters.index(cx), letters.index(cy)])
                    previous_gap = False
                    continue
                terminal = i < first or i > last
                if previous_gap:
                    total -= sc.term_extend if terminal else sc.gap_extend
                else:
                    total -= sc.term_open if terminal else sc.gap_open
                previous_gap = True
    return total


def test_two_sequences_score_the_pairwise_optimum():
    from Bio.Align import PairwiseAligner
    from Bio.Align.substitution_matrices import Array

    rng = np.random.default_rng(7)
    sc = msa_scoring(bioaccel.PROTEIN)
    aligner = PairwiseAligner(
        mode="global",
        substitution_matrix=Array("ARNDCQEGHILKMFPSTWYVBZJX*", dims=2, data=sc.sub.astype(float)),
    )
    aligner.open_internal_gap_score = -sc.gap_open
    aligner.extend_internal_gap_score = -sc.gap_extend
    aligner.open_end_gap_score = -sc.term_open
    aligner.extend_end_gap_score = -sc.term_extend
    for _ in range(40):
        a, b = random_family(rng, 2, int(rng.integers(1, 40)), mutate=0.5)
        aln = bioaccel.msa([("a", a), ("b", b)], refine=False, mode="fast")
        check_rows(aln, ["a", "b"], [a, b])
        assert sp_score(aln.sequences, sc) == pytest.approx(aligner.score(a, b), abs=1e-3)


def test_gap_open_below_gap_extend_is_scored_as_asked():
    """The MSA DP keeps gap opening and extension in separate states (unlike the pairwise
    kernels, which refuse open < extend), so a scheme with open < extend is valid here: a
    long deletion must cost open + (L - 1) x extend, and the optimum equals Biopython's."""
    from Bio.Align import PairwiseAligner
    from Bio.Align.substitution_matrices import Array

    sc = msa_scoring(bioaccel.PROTEIN, gap_open=1, gap_extend=4, term_open=2, term_extend=2)
    aligner = PairwiseAligner(
        mode="global",
        substitution_matrix=Array("ARNDCQEGHILKMFPSTWYVBZJX*", dims=2, data=sc.sub.astype(float)),
    )
    aligner.open_internal_gap_score = -1
    aligner.extend_internal_gap_score = -4
    aligner.open_end_gap_score = aligner.extend_end_gap_score = -2
    rng = np.random.default_rng(3)
    for _ in range(25):
        a = "".join(rng.choice(list(AA), int(rng.integers(20, 60))))
        cut, length = int(rng.integers(3, len(a) - 10)), int(rng.integers(3, 10))
        b = a[:cut] + a[cut + length :]
        aln = bioaccel.msa(
            [("a", a), ("b", b)], refine=False, mode="fast", gap_open=1, gap_extend=4, term_gap=2
        )
        check_rows(aln, ["a", "b"], [a, b])
        assert sp_score(aln.sequences, sc) == pytest.approx(aligner.score(a, b), abs=1e-3)


# -- the profile-profile DP against every path -----------------------------------------------------
def all_paths(n, m):
    """Every sequence of ops (0 match, 1 A-column vs gap, 2 B-column vs gap) over n and m."""
    if n == 0 and m == 0:
        yield ()
        return
    if n and m:
        for p in all_paths(n - 1, m - 1):
            yield p + (0,)
    if n:
        for p in all_paths(n - 1, m):
            yield p + (1,)
    if m:
        for p in all_paths(n, m - 1):
            yield p + (2,)


def merge_rows(rows_a, rows_b, path):
    out_a = ["" for _ in rows_a]
    out_b = ["" for _ in rows_b]
    i = j = 0
    for op in path:
        for k, r in enumerate(rows_a):
            out_a[k] += r[i] if op != 2 else "-"
        for k, r in enumerate(rows_b):
            out_b[k] += r[j] if op != 1 else "-"
        i += op != 2
        j += op != 1
    return out_a + out_b


@pytest.mark.parametrize("seed", range(12))
def test_profile_dp_equals_brute_force_sum_of_pairs(seed):
    rng = np.random.default_rng(seed)
    sc = msa_scoring(
        bioaccel.PROTEIN,
        gap_open=float(rng.uniform(2, 15)),
        gap_extend=float(rng.uniform(0.5, 2)),
        term_open=float(rng.uniform(0, 3)),
        term_extend=float(rng.uniform(0, 1)),
    )

    # two small gapped sub-alignments (columns with at least one residue)
    def sub_alignment(rows, width):
        while True:
            m = rng.random((rows, width)) < 0.7
            if m.any(axis=0).all() and m.any(axis=1).all():
                return [
                    "".join(rng.choice(list(AA)) if m[r, c] else "-" for c in range(width))
                    for r in range(rows)
                ]

    rows_a = sub_alignment(int(rng.integers(1, 4)), int(rng.integers(1, 5)))
    rows_b = sub_alignment(int(rng.integers(1, 4)), int(rng.integers(1, 5)))
    rows = rows_a + rows_b
    ungapped = [r.replace("-", "") for r in rows]
    batch = bioaccel.SeqBatch.from_strings(ungapped, alphabet="protein")
    cols = np.concatenate([[i for i, c in enumerate(r) if c != "-"] for r in rows]).astype(np.int32)
    na = len(rows_a)
    # place B's columns after A's so the two sub-alignments have their own column sets
    width_a = len(rows_a[0])
    offs = batch.offsets
    for k in range(na, len(rows)):
        cols[offs[k] : offs[k + 1]] += width_a
    best = max(
        sp_score(merge_rows(rows_a, rows_b, p), sc, na)
        for p in all_paths(len(rows_a[0]), len(rows_b[0]))
    )
    path, score, rescored = _native.msa_profile_pair(
        batch.codes,
        batch.offsets,
        sc.letter_of,
        sc.sub,
        sc.gaps,
        np.ones(len(rows)),
        cols,
        np.arange(na),
        np.arange(na, len(rows)),
    )
    # profile scores are normalised by |A| |B|
    scale = len(rows_a) * len(rows_b)
    assert score * scale == pytest.approx(best, abs=1e-3)
    assert rescored == pytest.approx(score, abs=1e-4)
    merged = merge_rows(rows_a, rows_b, tuple(int(x) for x in path))
    assert sp_score(merged, sc, na) == pytest.approx(best, abs=1e-3)


@pytest.mark.parametrize("seed", range(8))
def test_refinement_score_is_the_pairwise_sum_of_pairs(seed):
    """The refinement's acceptance score (pairs across a split, each with its own gap runs)
    against the pair-by-pair Python count, on random gapped alignments."""
    rng = np.random.default_rng(seed)
    sc = msa_scoring(
        bioaccel.PROTEIN,
        gap_open=float(rng.uniform(2, 15)),
        gap_extend=float(rng.uniform(0.5, 2)),
        term_open=float(rng.uniform(0, 3)),
        term_extend=float(rng.uniform(0, 1)),
    )
    n, width = int(rng.integers(2, 9)), int(rng.integers(1, 30))
    while True:
        m = rng.random((n, width)) < rng.uniform(0.3, 0.9)
        if m.any(axis=0).all() and m.any(axis=1).all():
            break
    rows = [
        "".join(rng.choice(list(AA)) if m[r, c] else "-" for c in range(width)) for r in range(n)
    ]
    batch = bioaccel.SeqBatch.from_strings([r.replace("-", "") for r in rows], alphabet="protein")
    cols = np.concatenate([[i for i, c in enumerate(r) if c != "-"] for r in rows]).astype(np.int32)
    split = int(rng.integers(1, n))
    got = _native.msa_cross_sum_of_pairs(
        batch.codes,
        batch.offsets,
        sc.letter_of,
        sc.sub,
        sc.gaps,
        cols,
        width,
        np.arange(split),
        np.arange(split, n),
    )
    # the engine holds the penalties as float32
    assert got == pytest.approx(pairwise_sp_score(rows, sc, split), rel=1e-6, abs=1e-6)


def test_refinement_never_lowers_the_sum_of_pairs():
    rng = np.random.default_rng(44)
    records = [(f"s{k}", s) for k, s in enumerate(random_family(rng, 14, 50, mutate=0.45))]
    sc = msa_scoring(bioaccel.PROTEIN)
    before = bioaccel.msa(records, refine=False, mode="fast").sequences
    after = bioaccel.msa(records, refine=200, threads=1, mode="fast").sequences
    assert after != before  # something was accepted
    assert pairwise_sp_score(after, sc) > pairwise_sp_score(before, sc)
    # several splits realigned at once, taken in draw order: the serial result
    for threads in (2, 3, 8):
        assert bioaccel.msa(records, refine=200, threads=threads, mode="fast").sequences == after


def test_checkpointed_traceback_equals_full():
    rng = np.random.default_rng(3)
    a, b = random_family(rng, 2, 300, mutate=0.4)
    batch = bioaccel.SeqBatch.from_strings([a, b], alphabet="protein")
    sc = msa_scoring(batch.alphabet)
    cols = np.concatenate([np.arange(len(a)), np.arange(len(b))]).astype(np.int32)
    args = (
        batch.codes,
        batch.offsets,
        sc.letter_of,
        sc.sub,
        sc.gaps,
        np.ones(2),
        cols,
        np.array([0]),
        np.array([1]),
    )
    full = _native.msa_profile_pair(*args)
    for limit in (1000, 5000, 40000):  # forces checkpoints of various block heights
        part = _native.msa_profile_pair(*args, full_limit=limit)
        assert np.array_equal(part[0], full[0]) and part[1] == full[1]


# -- rules every alignment keeps ------------------------------------------------------------------
def test_rows_threads_input_order_and_backends():
    rng = np.random.default_rng(11)
    seqs = random_family(rng, 25, 60)
    ids = [f"s{k}" for k in range(len(seqs))]
    records = list(zip(ids, seqs))
    one = bioaccel.msa(records, threads=1)
    check_rows(one, ids, seqs)
    assert bioaccel.msa(records, threads=2).sequences == one.sequences
    assert bioaccel.msa(records, threads=2, backend="cpu").sequences == one.sequences
    perm = rng.permutation(len(records))
    shuffled = bioaccel.msa([records[k] for k in perm], threads=2)
    assert shuffled.ids == [ids[k] for k in perm]
    assert [shuffled[i] for i in ids] == one.sequences
    for tree in ("single", "upgma", "nj", "medoid"):
        check_rows(bioaccel.msa(records, guide_tree=tree), ids, seqs)


def test_every_cpu_level_gives_the_same_alignment():
    """The DP's row kernels and the LCS kernel are built for AVX-512, AVX2 and the baseline;
    forcing a lower level (BIOACCEL_NO_AVX512 / BIOACCEL_NO_AVX2, read once per process)
    must not change a single column or distance."""
    rng = np.random.default_rng(21)
    seqs = random_family(rng, 30, 120, mutate=0.35) + random_family(rng, 11, 300)
    code = (
        "import sys, numpy as np, bioaccel\n"
        "from bioaccel import SeqBatch\n"
        f"records = {list(enumerate(seqs))!r}\n"
        "aln = bioaccel.msa(records, threads=2)\n"
        "b = SeqBatch.from_strings([s for _, s in records], alphabet='protein')\n"
        "d = bioaccel._native.msa_lcs_distances(b.codes, b.offsets, 20,"
        " np.arange(len(b), dtype=np.int64), None, 2)\n"
        "print(bioaccel._native.cpu_features()['isa'])\n"
        "print(d.tobytes().hex())\n"
        "print('\\n'.join(aln.sequences))\n"
    )
    outs = outputs_per_level(code)
    assert len(set(outs.values())) == 1


def test_lcs_distances_equal_the_textbook_dp():
    """Eight queries per vector, of lengths around the 64-bit word edges and with letters
    that never match (X), condensed and rectangular, against the O(n m) DP."""
    from bioaccel import SeqBatch

    rng = np.random.default_rng(5)
    lengths = [0, 1, 2, 63, 64, 65, 127, 128, 129, 200, 17, 300, 64, 5]
    seqs = ["".join(rng.choice(list(AA + "X"), n)) for n in lengths]
    seqs += random_family(rng, 7, 150)  # related: long common subsequences
    batch = SeqBatch.from_strings(seqs, alphabet="protein")
    n = len(seqs)
    want = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            lcs = lcs_dp(seqs[i].replace("X", "#"), seqs[j].replace("X", "*"))
            la, lb = len(seqs[i]), len(seqs[j])
            want[i, j] = (
                np.float32(np.finfo(np.float32).max)
                if lcs == 0
                else np.float32((la + lb - 2 * lcs) ** 0.75 / lcs)
            )
    rows = np.arange(n, dtype=np.int64)
    cond = _native.msa_lcs_distances(batch.codes, batch.offsets, 20, rows, None, 2)
    iu = np.triu_indices(n, 1)
    np.testing.assert_array_equal(cond, want[iu].astype(np.float32))
    cols = rows[::-3].copy()
    rect = _native.msa_lcs_distances(batch.codes, batch.offsets, 20, rows, cols, 1)
    np.testing.assert_array_equal(rect, want[:, cols].astype(np.float32))


def test_single_linkage_against_scipy():
    """SLINK over a condensed matrix and streamed over LCS distances: the same merges, and
    the same ultrametric (the cophenetic distances, unique for single linkage even with
    ties) as SciPy's single linkage."""
    from scipy.cluster.hierarchy import cophenet, linkage
    from scipy.spatial.distance import squareform

    from bioaccel import SeqBatch

    rng = np.random.default_rng(8)
    seqs = random_family(rng, 40, 90, mutate=0.4) + random_family(rng, 30, 70, mutate=0.2)
    seqs += [seqs[3], seqs[3], "WWWW"]  # ties (identical sequences) and one sharing little
    batch = SeqBatch.from_strings(seqs, alphabet="protein")
    n = len(seqs)
    rows = np.arange(n, dtype=np.int64)
    cond = _native.msa_lcs_distances(batch.codes, batch.offsets, 20, rows, None, 2)
    merges, heights = _native.msa_single_linkage(cond, n)
    streamed, streamed_heights = _native.msa_single_linkage_lcs(
        batch.codes, batch.offsets, 20, rows, 2
    )
    np.testing.assert_array_equal(streamed, merges)
    np.testing.assert_array_equal(streamed_heights, heights)
    # our merges as a SciPy linkage matrix (cluster sizes added), then its ultrametric
    size = np.ones(2 * n - 1)
    for k, (a, b) in enumerate(merges):
        size[n + k] = size[a] + size[b]
    ours = np.column_stack([merges, heights, size[n:]]).astype(float)
    theirs = linkage(cond.astype(np.float64), method="single")
    np.testing.assert_allclose(np.sort(heights), theirs[:, 2], rtol=1e-6)
    np.testing.assert_allclose(cophenet(ours), cophenet(theirs), rtol=1e-6)
    assert squareform(cophenet(ours)).shape == (n, n)


def test_odd_inputs():
    one = bioaccel.msa([("x", "MKV")])
    assert one.sequences == ["MKV"] and one.guide_tree is None
    same = bioaccel.msa([(f"c{k}", "MKVLAAGIVHW") for k in range(50)])
    assert set(same.sequences) == {"MKVLAAGIVHW"}
    disjoint = bioaccel.msa([("a", "AAAA"), ("b", "WWW"), ("c", "KK")])
    check_rows(disjoint, "abc", ["AAAA", "WWW", "KK"])
    tiny = bioaccel.msa([("a", "M"), ("b", "W"), ("c", "MW")])
    check_rows(tiny, "abc", ["M", "W", "MW"])
    lower = bioaccel.msa([("a", "mkvlaag"), ("b", "MKVAAG"), ("c", "mkvLAAg")])
    upper = bioaccel.msa([("a", "MKVLAAG"), ("b", "MKVAAG"), ("c", "MKVLAAG")])
    assert [r.upper() for r in lower.sequences] == upper.sequences
    assert lower.sequences[0].replace("-", "") == "mkvlaag"
    gapped = bioaccel.msa([("a", "MK-VL"), ("b", "M.KVL")])
    check_rows(gapped, "ab", ["MKVL", "MKVL"])
    empty_row = bioaccel.msa([("a", "MKVL"), ("b", ""), ("c", "MKL")])
    assert empty_row["b"] == "-" * empty_row.width
    rna = bioaccel.msa([("a", "ACGUAGGUNA"), ("b", "ACGUGGUA"), ("c", "acguagguna")])
    assert rna.alphabet is bioaccel.DNA and rna["a"].replace("-", "") == "ACGUAGGUNA"


def test_newick_guide_tree(tmp_path):
    rng = np.random.default_rng(5)
    seqs = random_family(rng, 6, 40)
    ids = [f"t{k}" for k in range(6)]
    (tmp_path / "g.nwk").write_text("(((t0,t1),(t2,t3)),'t4',t5);")
    aln = bioaccel.msa(list(zip(ids, seqs)), guide_tree=tmp_path / "g.nwk")
    check_rows(aln, ids, seqs)
    assert sorted(aln.guide_tree.labels) == sorted(ids)
    (tmp_path / "miss.nwk").write_text("((t0,t1),(t2,t3),t4);")
    with pytest.raises(SequenceFormatError, match="misses the sequence 't5'"):
        bioaccel.msa(list(zip(ids, seqs)), guide_tree=tmp_path / "miss.nwk")
    (tmp_path / "twice.nwk").write_text("((t0,t1),(t2,t3),(t4,t5),t1);")
    with pytest.raises(ValueError, match="'t1'"):
        bioaccel.msa(list(zip(ids, seqs)), guide_tree=tmp_path / "twice.nwk")


@pytest.mark.slow
def test_two_long_sequences_in_linear_memory():
    rng = np.random.default_rng(2)
    a, b = random_family(rng, 2, 20000, mutate=0.1)
    code = (
        "import bioaccel, re\n"
        f"aln = bioaccel.msa([('a', {a!r}), ('b', {b!r})], threads=1)\n"
        # VmHWM, not ru_maxrss: ru_maxrss keeps the forking pytest process's high-water mark
        # across exec, so late in a long session it measured the parent
        "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "print(aln.width, hwm)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=child_env()
    )
    width, rss_kb = map(int, out.stdout.split())
    assert width >= 20000
    assert rss_kb < 600_000  # a full traceback would need 400 MB for the cells alone + DP rows


def test_bad_input(tmp_path):
    (tmp_path / "empty.fa").write_text("")
    with pytest.raises(SequenceFormatError):
        bioaccel.msa(tmp_path / "empty.fa")
    with pytest.raises(DuplicateIdError, match="'a'"):
        bioaccel.msa([("a", "MKV"), ("a", "MKV")])
    with pytest.raises(AlphabetError, match="'b'.*position 3"):
        bioaccel.msa([("a", "MKV"), ("b", "MK!V")])
    with pytest.raises(AlphabetError, match="'p'"):
        bioaccel.msa([("d", "ACGT"), ("p", "MKVLE")], alphabet="dna")
    with pytest.raises(BackendUnavailableError):
        bioaccel.msa([("a", "MKV"), ("b", "MKV")], backend="cupy")
    with pytest.raises(ValueError, match="threads"):
        bioaccel.msa([("a", "MKV"), ("b", "MKV")], threads=10**6)


def test_cli_msa(tmp_path):
    fa = tmp_path / "in.fa"
    fa.write_text(">a\nMKVLAAGIVHW\n>b\nMKVLGIVHW\n>c\nMKALAAGIVW\n")
    r = run_process(
        "msa", fa, "-o", tmp_path / "out.aln", "--tree-out", tmp_path / "g.nwk", "-t", "2"
    )
    assert r.returncode == 0 and r.stdout == "", r.stderr
    assert (tmp_path / "out.aln").read_text().startswith("CLUSTAL")
    assert bioaccel.read_newick(tmp_path / "g.nwk").n_tips == 3
    r = run_process("msa", fa, "-o", "-", "--format", "stockholm")
    assert r.returncode == 0 and r.stdout.startswith("# STOCKHOLM")

    # -t is the shared thread option of every command: one line, exit 2, nothing written
    r = run_process("msa", fa, "-o", tmp_path / "x.fa", "-t", "1000000")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "threads=1000000 is out of range" in r.stderr, r.stderr
    assert not (tmp_path / "x.fa").exists()
    for bad in (
        ["-o", tmp_path / "x.nwk"],
        ["-o", tmp_path / "x.phy", "--format", "fasta"],
        ["-o", tmp_path / "x.fa", "--guide-tree", tmp_path / "none.nwk"],
    ):
        r = run_process("msa", fa, *bad)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, r.stderr
        assert not (tmp_path / "x.fa").exists()
    r = run_process("msa", tmp_path / "missing.fa", "-o", tmp_path / "x.fa")
    assert r.returncode == 2 and "missing.fa" in r.stderr


def test_writers_and_biopython(tmp_path):
    from Bio import AlignIO

    aln = bioaccel.msa([("a", "MKVLAAGIVHW"), ("b", "MKVLGIVHW"), ("c", "MKALAAGIVW")])
    for fmt, ext in (("fasta", "fa"), ("clustal", "aln"), ("stockholm", "sto"), ("phylip", "phy")):
        aln.write(tmp_path / f"x.{ext}")
        back = AlignIO.read(tmp_path / f"x.{ext}", fmt if fmt != "phylip" else "phylip-relaxed")
        assert [str(r.seq) for r in back] == aln.sequences
    aln.write(tmp_path / "x.a2m", "a2m")
    assert (tmp_path / "x.a2m").read_text().startswith(">a")
    bio = aln.to_biopython()
    assert [str(s) for s in bio] == aln.sequences


def test_protein_distances_against_scalar_reference():
    rng = np.random.default_rng(4)
    seqs = random_family(rng, 8, 50, mutate=0.4)
    aln = bioaccel.msa([(f"s{k}", s) for k, s in enumerate(seqs)])
    rows = aln.sequences
    for model in ("p", "poisson", "kimura"):
        dm = aln.distance_matrix(model)
        for i in range(len(rows)):
            for j in range(len(rows)):
                sites = [(x, y) for x, y in zip(rows[i], rows[j]) if x in AA and y in AA]
                p = sum(x != y for x, y in sites) / len(sites)
                ref = {"p": p, "poisson": -np.log(1 - p), "kimura": -np.log(1 - p - 0.2 * p * p)}[
                    model
                ]
                assert dm.data[i, j] == pytest.approx(0.0 if i == j else ref, abs=1e-12)
    dna = bioaccel.msa([("a", "ACGTACGTTA"), ("b", "ACGTACCTTA"), ("c", "ACGAACGTTA")])
    assert dna.distance_matrix("jc69").shape == (3, 3)
    tree = bioaccel.nj(aln.distance_matrix())
    assert sorted(tree.labels) == sorted(aln.ids)


# -- BAliBASE: accuracy floors on a few cases -----------------------------------------------------
@pytest.mark.parametrize("case,floor", [("BB11001", 0.55), ("BB12001", 0.85), ("BBS12010", 0.85)])
def test_balibase_floor(case, floor, tmp_path):
    if not BALIBASE.is_dir():
        if os.environ.get("BIOACCEL_STRICT_TESTS"):
            pytest.fail(f"the MSA oracle set is missing: {BALIBASE}")
        unavailable(f"the MSA oracle set is not here: {BALIBASE}")
    sys.path.insert(0, str(SHARED))
    try:
        import msa_score
    finally:
        sys.path.pop(0)
    aln = bioaccel.msa(BALIBASE / f"{case}.fa", threads=1)
    aln.write(tmp_path / "out.fa")
    assert msa_score.score(BALIBASE / f"{case}.ref.fa", tmp_path / "out.fa")["sp"] >= floor


# -- DNA: the default scores on simulated families (benchmarks/family_sim.py, known truth) --------
def test_dna_default_scores_and_accuracy_on_simulated_families():
    """The default DNA matrix is NUC.4.4 mapped from +5/-4 to +5/-1 (the mismatch scale the gap
    costs were tuned for): on divergent simulated families (1 substitution per site) it must
    beat raw NUC.4.4, which over-gaps them, against the true alignment."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from benchmarks.family_sim import simulate_family
    from benchmarks.msa_accuracy import sp_tc_family

    sc = msa_scoring(bioaccel.DNA)
    a, c, n = (int(sc.letter_of[bioaccel.DNA.symbols.index(x)]) for x in "ACN")
    assert sc.sub[a, a] == 5 and sc.sub[a, c] == -1 and -1 < sc.sub[a, n] < 5
    for seed, floor in ((1, 0.8), (2, 0.85)):
        fam = simulate_family(120, 300, "dna", seed=seed, depth=1.0)
        records = list(zip(fam.ids, fam.sequences))
        scores = {
            m: sp_tc_family(dict(zip(x.ids, x.sequences)), fam)["sp"]
            for m in ("auto", "NUC.4.4")
            for x in [bioaccel.msa(records, matrix=m, mode="fast")]
        }
        assert scores["auto"] >= floor and scores["auto"] > scores["NUC.4.4"] + 0.03, scores


def test_copies_are_aligned_once_and_named_in_the_tree():
    """Identical sequences (263 of pdH1N1's 433 HA genes repeat another) are aligned once:
    every copy gets its representative's row (its own letters: case kept), and the guide
    tree still names every sequence once, so it can be given back."""
    rng = np.random.default_rng(5)
    fam = random_family(rng, 12, 120)
    recs = [(f"s{k}", s) for k, s in enumerate(fam)]
    recs += [(f"copy{k}", fam[k % 3].lower() if k == 0 else fam[k % 3]) for k in range(9)]
    aln = bioaccel.msa(recs, mode="fast")
    for k in range(9):
        assert aln[f"copy{k}"].upper() == aln[f"s{k % 3}"]
    assert sorted(aln.guide_tree.labels) == sorted(i for i, _ in recs)
    again = bioaccel.msa(recs, mode="fast", guide_tree=aln.guide_tree)  # followed as given
    assert all(again[f"copy{k}"].upper() == again[f"s{k % 3}"] for k in range(9))
