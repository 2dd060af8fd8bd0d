"""``bioaccel.cluster``: greedy centroids against a brute force, swarm's alignment against
a scalar transcription of swarm's nw.cc, edit versus swarm differences, fastidious
grafting on a hand-made case, the API's labels and tables."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from bioaccel import cluster
from bioaccel.clusters import read_amplicons, swarm_alignments
from bioaccel.pairwise import edit_distances
from tests.clusters.sim import simulate, write_fasta
from tests.clusters.swarm_oracles import nw_reference
from tests.datasets import require


# --- swarm's alignment ---------------------------------------------------------------------
def test_swarm_alignment_equals_nw_reference():
    rng = np.random.default_rng(5)
    base = "".join(rng.choice(list("ACGT"), size=40))
    seqs = {base}
    while len(seqs) < 60:
        s = list(base)
        for _ in range(int(rng.integers(1, 8))):
            p = int(rng.integers(len(s)))
            r = rng.random()
            if r < 0.5:
                s[p] = str(rng.choice(list("ACGT")))
            elif r < 0.75:
                del s[p]
            else:
                s.insert(p, str(rng.choice(list("ACGT"))))
        seqs.add("".join(s))
    seqs = sorted(seqs)
    recs = [(f"s{k};size=1", s) for k, s in enumerate(seqs)]
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in recs).encode())
    n = len(amp)
    qi, ti = np.triu_indices(n, 1)
    qi, ti = np.concatenate([qi, ti]), np.concatenate([ti, qi])
    diffs, lengths, cigars = swarm_alignments(amp, qi, ti, cigars=True)
    for k, (a, b) in enumerate(zip(qi.tolist(), ti.tolist())):
        want = nw_reference(amp.sequence(a), amp.sequence(b))
        assert (diffs[k], lengths[k], cigars[k]) == want, (amp.sequence(a), amp.sequence(b))
    # the banded count agrees wherever it says <= d, and says d + 1 beyond
    for d in (1, 2, 3, 5):
        banded = swarm_alignments(amp, qi, ti, max_diffs=d)[0]
        assert np.array_equal(np.minimum(diffs, d + 1), banded)


def test_swarm_alignment_of_equal_lengths_by_substitutions():
    # equal lengths up to 4 substitutions take the ungapped shortcut (18 x 4 = 72 < 74, two
    # gaps); 5 substitutions do not: GGGG ACACA TTTT vs GGGG CACAC TTTT aligns with two gaps
    # (2 differences) in swarm's scores, and a shortcut at 5 would say 5
    rng = np.random.default_rng(11)
    base = "".join(rng.choice(list("ACGT"), size=60))
    pairs = [("GGGGACACATTTT", "GGGGCACACTTTT"), ("GGGGACACTTTT", "GGGGCACATTTT"), ("A", "C")]
    for h in range(0, 8):
        for _ in range(6):
            s = list(base)
            for p in rng.choice(len(s), size=h, replace=False):
                s[p] = str(rng.choice([c for c in "ACGT" if c != s[p]]))
            pairs.append((base, "".join(s)))
    seqs = sorted({x for pair in pairs for x in pair})
    amp = read_amplicons("".join(f">s{k};size=1\n{s}\n" for k, s in enumerate(seqs)).encode())
    where = {amp.sequence(k): k for k in range(len(amp))}
    qi = np.array([where[a] for a, b in pairs] + [where[b] for a, b in pairs])
    ti = np.array([where[b] for a, b in pairs] + [where[a] for a, b in pairs])
    diffs, lengths, cigars = swarm_alignments(amp, qi, ti, cigars=True)
    for k, (a, b) in enumerate(zip(qi.tolist(), ti.tolist())):
        want = nw_reference(amp.sequence(a), amp.sequence(b))
        assert (diffs[k], lengths[k], cigars[k]) == want, (amp.sequence(a), amp.sequence(b))
    assert diffs[0] == 2 and diffs[1] == 4  # the two borders above
    for d in (0, 1, 2, 3, 4):
        banded = swarm_alignments(amp, qi, ti, max_diffs=d)[0]
        assert np.array_equal(np.minimum(diffs, d + 1), banded)


def test_swarm_alignment_of_one_gap_run_with_known_edits():
    # lengths apart, with the edit distance known (as the growth knows it): a pair whose edit
    # distance one gap run and m <= 5 substitutions reach is counted without the programme.
    # Against the transcription of nw.cc, diffs and lengths, both as query and as target,
    # banded and not; m from 0 to 8 (6 to 8 go to the programme). The first pair is the
    # border: edits 7, one run with 6 substitutions, but swarm's optimum has gaps on both
    # sides (length 12, not 9), so a shortcut at m = 6 would say the wrong length.
    edlib = require("edlib", "edlib is the oracle of the edit distance (pip install edlib)")
    rng = np.random.default_rng(17)
    pairs = [("GCCAGCGT", "TTAGGCCAG"), ("ATGGCAACCCA", "ACAACCCCCGGT")]
    runs = {m: 0 for m in range(9)}
    while min(runs.values()) < 12:
        short = "".join(rng.choice(list("ACGT"), size=int(rng.integers(6, 40))))
        long_ = list(short)
        for _ in range(int(rng.integers(1, 4))):  # one to three letters in one place or apart
            long_.insert(int(rng.integers(len(long_) + 1)), str(rng.choice(list("ACGT"))))
        for p in rng.choice(
            len(long_), size=min(len(long_), int(rng.integers(0, 9))), replace=False
        ):
            long_[p] = str(rng.choice(list("ACGT")))
        long_ = "".join(long_)
        delta = len(long_) - len(short)
        e = edlib.align(short, long_)["editDistance"]
        m = min(
            sum(a != b for a, b in zip(short[:p], long_[:p]))
            + sum(a != b for a, b in zip(short[p:], long_[p + delta :]))
            for p in range(len(short) + 1)
        )
        if m + delta == e and runs.get(m, 99) < 12 and short not in long_:
            runs[m] += 1
            pairs.append((short, long_))
    seqs = sorted({x for pair in pairs for x in pair})
    amp = read_amplicons("".join(f">s{k};size=1\n{s}\n" for k, s in enumerate(seqs)).encode())
    where = {amp.sequence(k): k for k in range(len(amp))}
    qi = np.array([where[a] for a, b in pairs] + [where[b] for a, b in pairs])
    ti = np.array([where[b] for a, b in pairs] + [where[a] for a, b in pairs])
    edits = np.array([edlib.align(a, b)["editDistance"] for a, b in pairs] * 2)
    want = [
        nw_reference(amp.sequence(a), amp.sequence(b))[:2] for a, b in zip(qi.tolist(), ti.tolist())
    ]
    diffs, lengths, _ = swarm_alignments(amp, qi, ti, edits=edits)
    assert [(int(x), int(y)) for x, y in zip(diffs, lengths)] == want
    assert want[0] == (7, 12) and want[1][1] != len(pairs[1][1])  # the borders above
    # indices and distances are whole numbers: a float or a negative is named, not rounded
    with pytest.raises(ValueError, match=r"edits: expected whole numbers, got float64"):
        swarm_alignments(amp, qi[:1], ti[:1], edits=[2.5])
    with pytest.raises(ValueError, match=r"edits: -2 at pair 0; expected -1 or more"):
        swarm_alignments(amp, qi[:1], ti[:1], edits=[-2])
    with pytest.raises(ValueError, match=r"queries: expected whole numbers"):
        swarm_alignments(amp, [0.5], ti[:1])
    for d in (2, 5, 8):
        banded = swarm_alignments(amp, qi, ti, max_diffs=d, edits=np.where(edits <= d, edits, -1))
        assert np.array_equal(banded[0], np.minimum(diffs, d + 1))
        within = diffs <= d
        assert np.array_equal(banded[1][within], lengths[within])


def test_swarm_differences_exceed_edit_and_change_clusters():
    # GGGGAGATTTTT vs GGGGGATTTTTT: one deletion and one insertion (Levenshtein 2), but two
    # gaps cost 2 x 37 in swarm's scores and three mismatches 54: swarm aligns them with
    # three mismatches, 3 differences
    recs = [("a;size=10", "GGGGAGATTTTT"), ("b;size=2", "GGGGGATTTTTT")]
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in recs).encode())
    lev = int(edit_distances([r[1] for r in recs], backend="cpu")[0, 1])
    sw = int(swarm_alignments(amp, [0], [1])[0][0])
    assert lev == 2 and sw == 3
    assert cluster(recs, max_distance=2, differences="edit").n_clusters == 1
    assert cluster(recs, max_distance=2, differences="swarm").n_clusters == 2


# --- greedy --------------------------------------------------------------------------------
def greedy_brute(amp, identity):
    seqs = [amp.sequence(k) for k in range(len(amp))]
    D = edit_distances(seqs, backend="cpu")
    ident = Fraction(str(identity))
    cent = []
    out = []
    for v in range(len(seqs)):
        best, best_id = None, None
        for u in cent:
            m = max(len(seqs[u]), len(seqs[v]))
            f = Fraction(m - int(D[u, v]), m)
            if f >= ident and (best is None or f > best_id):
                best, best_id = u, f
        if best is None:
            cent.append(v)
            best = v
        out.append(best)
    return np.array(out)


@pytest.mark.parametrize(
    "identity, sim",
    [
        (0.97, dict(length=90, max_edits=4)),
        (0.95, dict(length=90, max_edits=4)),
        (0.9, dict(length=90, max_edits=4)),
        # N and IUPAC codes (the profiles fold them into A C G T: still a lower bound)
        (0.9, dict(length=90, max_edits=4, iupac=True)),
        # most amplicons have no centroid within 2 edits: every centroid is tried
        (0.8, dict(length=60, max_edits=9)),
        # short sequences at a low identity: a centroid found within 2 edits can still lose
        # to one further away but longer (or as good and earlier)
        (0.6, dict(length=9, max_edits=3)),
        (0.5, dict(length=8, max_edits=4)),
        # identity 1: only equal sequences would join, and the input is dereplicated
        (1.0, dict(length=40, max_edits=2)),
    ],
)
def test_greedy_equals_brute_force(tmp_path, identity, sim):
    fasta = tmp_path / "g.fa"
    write_fasta(simulate(300, 11, **sim), fasta)
    amp = read_amplicons(fasta)
    result = cluster(amp, method="greedy", identity=identity)
    want = greedy_brute(amp, identity)
    got = result.seeds[result.node_cluster]
    assert np.array_equal(got, want)
    if identity < 1:
        assert 1 < result.n_clusters < len(amp)
    else:
        assert result.n_clusters == len(amp)
    # seeds are centroids in decreasing abundance; members follow their centroid
    assert np.all(np.diff(result.seeds) > 0)
    # the radius is each member's distance to its centroid
    seqs = [amp.sequence(k) for k in range(len(amp))]
    D = edit_distances(seqs, backend="cpu")
    assert np.array_equal(result.radius, D[np.arange(len(amp)), want])


def infix_edits(p: str, t: str) -> int:
    """The fewest edits aligning all of p to a stretch of t (edlib's HW mode: an
    independent implementation of the infix alignment)."""
    import edlib

    return 0 if not p else int(edlib.align(p, t, mode="HW", task="distance")["editDistance"])


def greedy_brute_shorter(amp, identity):
    """greedy with identity over the shorter length, overhangs free: every centroid tried,
    the shorter aligned within the longer (on equal lengths the fewer of both ways)."""
    seqs = [amp.sequence(k) for k in range(len(amp))]
    ident = Fraction(str(identity))
    cent, out, dist = [], [], []
    for v in range(len(seqs)):
        best, best_id, best_e = None, None, 0
        for u in cent:
            a, b = sorted((seqs[u], seqs[v]), key=len)
            e = infix_edits(a, b)
            if len(a) == len(b):
                e = min(e, infix_edits(b, a))
            f = Fraction(len(a) - e, len(a))
            if f >= ident and (best is None or f > best_id):
                best, best_id, best_e = u, f, e
        if best is None:
            cent.append(v)
            best = v
        out.append(best)
        dist.append(best_e)
    return np.array(out), np.array(dist)


def ragged(n: int, seed: int, length: int, edits: int, overhang: int):
    """n amplicons of a few parents, each cut at random ends (up to `overhang` letters off
    either end or added from the parent's flanks) with up to `edits` substitutions and
    indels: the ragged ends of reads not trimmed to one region; abundances decreasing."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("ACGT"))
    parents = ["".join(rng.choice(letters, size=length + 2 * overhang)) for _ in range(4)]
    seqs: set[str] = set()
    while len(seqs) < n:
        p = parents[rng.integers(4)]
        s = list(p[rng.integers(0, 2 * overhang + 1) : len(p) - rng.integers(0, 2 * overhang + 1)])
        for _ in range(rng.integers(0, edits + 1)):
            k, op = rng.integers(len(s)), rng.integers(3)
            if op == 0:
                s[k] = str(rng.choice(letters))
            elif op == 1 and len(s) > 1:
                del s[k]
            else:
                s.insert(k, str(rng.choice(letters)))
        seqs.add("".join(s))
    return [(f"r{k};size={n - k}", s) for k, s in enumerate(sorted(seqs))]


@pytest.mark.parametrize(
    "identity, shape",
    [
        (0.97, dict(length=90, edits=2, overhang=6)),
        (0.9, dict(length=60, edits=5, overhang=10)),
        (0.8, dict(length=30, edits=4, overhang=8)),
        # short sequences: equal lengths in both directions, ties with earlier centroids
        (0.6, dict(length=6, edits=2, overhang=2)),
    ],
)
def test_greedy_with_overhangs_free_equals_brute_force(identity, shape):
    recs = ragged(160, 3, **shape)
    result = cluster(recs, method="greedy", identity=identity, identity_definition="shorter")
    amp = result.amplicons
    want, dist = greedy_brute_shorter(amp, identity)
    assert np.array_equal(result.seeds[result.node_cluster], want)
    assert np.array_equal(result.radius, dist)
    assert 1 < result.n_clusters < len(amp)
    # the ends count with the default definition: more centroids there
    default = cluster(amp, method="greedy", identity=identity)
    assert default.n_clusters > result.n_clusters
    assert (result.identity_definition, default.identity_definition) == ("shorter", "longer")


def test_infix_distance_against_edlib():
    """csrc's infix_distance (banded, with a threshold) against edlib's HW mode on seeded
    random pairs, the pattern a mutated stretch of the text or unrelated."""
    from bioaccel._core import load_native

    native = load_native()
    rng = np.random.default_rng(8)
    code = {c: k for k, c in enumerate("ACGT")}
    for _ in range(400):
        t = "".join(rng.choice(list("ACGT"), size=int(rng.integers(1, 60))))
        if rng.random() < 0.5:
            a = int(rng.integers(0, len(t)))
            p = list(t[a : a + int(rng.integers(0, 40))])
            for _ in range(int(rng.integers(0, 5))):
                if p:
                    p[int(rng.integers(len(p)))] = str(rng.choice(list("ACGT")))
            p = "".join(p)
        else:
            p = "".join(rng.choice(list("ACGT"), size=int(rng.integers(0, 30))))
        k = int(rng.integers(0, 12))
        want = min(infix_edits(p, t), k + 1)
        got = native.infix_distance(
            np.array([code[c] for c in p], dtype=np.uint8),
            np.array([code[c] for c in t], dtype=np.uint8),
            k,
        )
        assert got == want, (p, t, k)


def test_identity_definition_is_checked_and_cpu_only():
    recs = [("a;size=3", "ACGTACGTAA"), ("b;size=1", "ACGTACGTAAC")]
    with pytest.raises(ValueError, match="identity_definition='both'"):
        cluster(recs, method="greedy", identity_definition="both")
    with pytest.raises(ValueError, match="applies to method='greedy' only"):
        cluster(recs, method="swarm", identity_definition="shorter")
    with pytest.raises(ValueError, match="searched on the CPU"):
        cluster(recs, method="greedy", identity_definition="shorter", backend="reference")


def test_greedy_tie_with_a_farther_longer_earlier_centroid():
    """Q = ACGT is 2 edits from centroid B (length 4: identity 1/2) and 3 from the earlier
    centroid A (length 6: identity 1/2). The search finds B in its index of centroids
    within 2 edits, must still try the others (a longer one further away can match B's
    identity), and on the tie takes the earlier: A."""
    recs = [("A;size=9", "AAAAGT"), ("B;size=5", "AGCT"), ("Q;size=1", "ACGT")]
    got = cluster(recs, method="greedy", identity=0.5)
    amp = got.amplicons
    assert got.n_clusters == 2
    assert [amp.ids[k] for k in got.seeds[got.node_cluster]] == ["A", "B", "A"]
    assert got.radius.tolist() == [0, 0, 3]
    assert np.array_equal(got.seeds[got.node_cluster], greedy_brute(amp, 0.5))


def greedy_on_every_pair(amp, identity, threads=1):
    """The greedy rule on the graph of every pair within the threshold's distance (the
    reference/GPU path, here with the CPU pair search): each node's centroid."""
    from bioaccel._core import load_native
    from bioaccel.clusters._cluster import _csr, _neighbour_pairs

    ident = Fraction(str(identity))
    dmax = int(amp.lengths.max()) * (ident.denominator - ident.numerator) // ident.denominator
    i, j, dist = _neighbour_pairs(amp, dmax, threads, "cpu")
    indptr, nbr, dd = _csr(len(amp), i, j, dist)
    return load_native().greedy_centroids(
        indptr, nbr, dd, amp.lengths.astype(np.int64), ident.numerator, ident.denominator
    )


@pytest.mark.parametrize("identity", [0.99, 0.97, 0.9])
def test_greedy_search_equals_the_rule_on_every_pair_real_reads(real_amplicons, identity):
    """The search (index of centroids within 2 edits, then profile bounds and
    Landau-Vishkin over every centroid where one may still win) against the rule applied
    to every pair within the threshold, on the bundled MiSeq reads."""
    amp = read_amplicons(real_amplicons)
    got = cluster(amp, method="greedy", identity=identity)
    want = greedy_on_every_pair(amp, identity)
    assert np.array_equal(got.seeds[got.node_cluster], want)
    assert 1 < got.n_clusters < len(amp)


def test_greedy_search_threads_split_the_centroids_and_keep_ties(tmp_path):
    """Past 4,096 centroids an amplicon that tries every centroid splits them among the
    threads; the best of each is merged by identity, then by the earlier centroid. Random
    40-mers are all centroids; each V_k sits 3 substitutions from A_k (early) and B_k (late,
    in the other thread's half), which are 6 apart: a tie A_k must win."""
    rng = np.random.default_rng(5)
    letters = np.array(list("ACGT"))

    def rand(n):
        return "".join(rng.choice(letters, size=n))

    def subs(s, positions):
        b = list(s)
        for p in positions:
            b[p] = {"A": "C", "C": "G", "G": "T", "T": "A"}[b[p]]
        return "".join(b)

    filler = [rand(40) for _ in range(4600)]
    v = [rand(40) for _ in range(40)]
    a = [subs(x, (2, 12, 22)) for x in v]
    b = [subs(x, (7, 17, 27)) for x in v]
    seqs = filler[:100] + a + filler[100:4000] + b + filler[4000:] + v
    recs = [(f"s{k:05d};size=1", s) for k, s in enumerate(seqs)]
    amp = cluster(recs, method="greedy", identity=0.9).amplicons  # read once
    one = cluster(amp, method="greedy", identity=0.9, threads=1)
    two = cluster(amp, method="greedy", identity=0.9, threads=2)
    c1 = one.seeds[one.node_cluster]
    assert np.array_equal(c1, two.seeds[two.node_cluster])
    assert np.array_equal(c1, greedy_on_every_pair(amp, 0.9))
    first_v = len(seqs) - len(v)
    assert one.n_clusters > 4096
    assert c1[first_v:].tolist() == list(range(100, 100 + len(v)))  # each V_k joins A_k


# --- fastidious, by hand -------------------------------------------------------------------
def test_fastidious_grafts_light_swarm_after_heavy_members():
    base = "ACGTACGTTGCAACGTAGGA"
    two = "ACGTACCTTGCTACGTAGGA"  # two substitutions from base: a light swarm of its own
    recs = [
        ("heavy;size=50", base),
        ("h2;size=3", base[:-1] + "C"),
        ("light;size=1", two),
        ("far;size=1", "TTTTTTTTTTGGGGGGGGGG"),
    ]
    plain = cluster(recs, max_distance=1)
    assert plain.n_clusters == 3
    f = cluster(recs, max_distance=1, fastidious=True)
    assert f.n_clusters == 2
    assert [f.amplicons.ids[k] for k in f.members[: f.starts[1]]] == ["heavy", "h2", "light"]
    assert f.abundances.tolist() == [54, 1]
    # a boundary of 1: every swarm is heavy, nothing to graft
    assert cluster(recs, max_distance=1, fastidious=True, boundary=1).n_clusters == 3


# --- the API -------------------------------------------------------------------------------
def test_labels_follow_input_order_and_tables():
    recs = [("c;size=1", "TTTTTTTT"), ("a;size=5", "ACGTACGT"), ("b;size=2", "ACGTACGA")]
    res = cluster(recs)
    assert res.labels.tolist() == [1, 0, 0]
    assert res.seed_ids == ["a", "c"]
    df = res.to_pandas()
    assert df.to_dict("list") == {
        "id": ["c", "a", "b"],
        "cluster": [2, 1, 1],
        "seed": ["c", "a", "a"],
        "abundance": [1, 5, 2],
    }


def test_iupac_codes_count_as_letters_with_edit_differences():
    # N against A is a difference, N against N a match
    recs = [("a;size=5", "ACGTNCGT"), ("b;size=2", "ACGTACGT"), ("c;size=1", "ACGTNCGA")]
    res = cluster(recs, max_distance=1)
    assert res.n_clusters == 1
    with pytest.raises(ValueError, match="IUPAC code 'N'"):
        cluster(recs, max_distance=2, differences="swarm")


@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(max_distance=0), "out of range"),
        (dict(max_distance=256), "out of range"),
        (dict(max_distance=1.5), "expected an integer"),
        (dict(method="upgma"), "expected one of"),
        (dict(fastidious=True, max_distance=2), "max_distance=1"),
        (dict(method="linkage", fastidious=True), "swarm"),
        (dict(method="greedy", identity=1.5), "out of range"),
        (dict(method="greedy", identity=0), "out of range"),
        # 0.1 + 0.2 is 0.30000000000000004: past 64-bit exact comparison with (L - e) / L
        (dict(method="greedy", identity=0.1 + 0.2), "at most 9 decimal places"),
        (dict(method="greedy", differences="swarm"), "does not apply"),
        (dict(differences="hamming"), "expected one of"),
        (dict(fastidious=True, boundary=0), "out of range"),
    ],
)
def test_bad_arguments(kw, match):
    with pytest.raises(ValueError, match=match):
        cluster([("a;size=1", "ACGT"), ("b;size=1", "ACGA")], **kw)


def test_reading_options_with_amplicons_already_read_are_refused_not_ignored():
    """default_abundance and abundance_annotation apply when reading: given with Amplicons
    already read they are refused (before: silently ignored); the annotation they were
    read with is accepted."""
    amp = read_amplicons(b">a_3\nACGT\n>b_1\nACGA\n", abundance_annotation="underscore")
    assert cluster(amp, abundance_annotation="underscore").seed_ids == ["a"]
    with pytest.raises(ValueError, match="read with 'underscore'"):
        cluster(amp, abundance_annotation="size")
    with pytest.raises(ValueError, match="default_abundance applies when reading"):
        cluster(amp, default_abundance=1)


# --- the growth that searches as it grows against the growth on all pairs ----------------
GROWTHS = [
    dict(max_distance=1),
    dict(max_distance=1, fastidious=True),
    dict(max_distance=1, fastidious=True, boundary=6),
    dict(max_distance=2),
    dict(max_distance=2, differences="swarm"),
    dict(max_distance=3, differences="swarm"),
    dict(max_distance=4),
    dict(max_distance=7),
    dict(method="linkage", max_distance=2),
    dict(method="linkage", max_distance=3, differences="swarm"),
]


def _short_and_iupac(records, seed):
    """Some records shortened below the index's segment count (an empty segment) and some
    with N: the search's corner cases."""
    rng = np.random.default_rng(seed)
    out = []
    for h, s in records:
        r = rng.random()
        if r < 0.08:
            s = s[: int(rng.integers(1, 9))]
        elif r < 0.15:
            p = int(rng.integers(len(s)))
            s = s[:p] + "N" + s[p + 1 :]
        out.append((h, s))
    seen, kept = set(), []
    for h, s in out:
        if s not in seen:
            seen.add(s)
            kept.append((h, s))
    return kept


@pytest.mark.parametrize("kw", GROWTHS, ids=lambda kw: "-".join(f"{k}{v}" for k, v in kw.items()))
@pytest.mark.parametrize("seed", [3, 4])
def test_search_as_it_grows_equals_growth_on_all_pairs(kw, seed):
    """backend='cpu' grows without a pair list (csrc/clusters/growth.cpp); 'reference'
    lists every pair within d by all-vs-all edit distances and grows on that graph."""
    records = simulate(400, seed=seed, parents=5, length=90, max_edits=4)
    if kw.get("differences") != "swarm":
        records = _short_and_iupac(records, seed)
    fast = cluster(records, backend="cpu", threads=1, **kw)
    slow = cluster(records, backend="reference", threads=1, **kw)
    assert (fast.sizes > 1).sum() >= 10  # the sets do cluster
    for name in ("members", "starts", "found", "generation", "radius", "own_size"):
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)


def test_directed_graph_equals_rows_built_one_edge_at_a_time():
    """The graph the --edges, GPU and reference paths grow on (csrc/clusters/clusters.cpp,
    directed_rows / directed_fill): row u lists its lower neighbours, then its higher ones,
    each ascending, with the count of u as query; against lists built edge by edge."""
    from bioaccel._core import load_native

    native = load_native()
    rng = np.random.default_rng(23)
    for n, m in [(1, 0), (2, 1), (40, 300), (300, 5000)]:
        cells = rng.choice(n * n, size=min(m * 3, n * n), replace=False)
        a, b = np.divmod(cells, n)
        keep = a < b
        i, j = np.unique(np.stack([a[keep], b[keep]], axis=1), axis=0).T[:, :m].astype(np.int64)
        dij = rng.integers(0, 9, size=len(i), dtype=np.int32)
        dji = rng.integers(0, 9, size=len(i), dtype=np.int32)
        kij = rng.random(len(i)) < 0.7
        kji = rng.random(len(i)) < 0.7
        rows = [[] for _ in range(n)]
        for k in range(len(i)):  # lower neighbours first: pairs by (i, j) give them ascending
            if kji[k]:
                rows[j[k]].append((int(i[k]), int(dji[k])))
        for k in range(len(i)):
            if kij[k]:
                rows[i[k]].append((int(j[k]), int(dij[k])))
        indptr, nbr, dist = native.directed_graph(
            n, i, j, dij, dji, kij.view(np.uint8), kji.view(np.uint8)
        )
        assert indptr.tolist() == np.cumsum([0] + [len(r) for r in rows]).tolist()
        for u in range(n):
            got = list(
                zip(
                    nbr[indptr[u] : indptr[u + 1]].tolist(),
                    dist[indptr[u] : indptr[u + 1]].tolist(),
                )
            )
            assert got == rows[u]
            assert got == sorted(got, key=lambda e: e[0])
    ones = np.ones(2, dtype=np.uint8)
    two = np.zeros(2, dtype=np.int32)
    with pytest.raises(ValueError, match="sorted"):
        native.directed_graph(3, np.array([1, 0]), np.array([2, 1]), two, two, ones, ones)
    with pytest.raises(ValueError, match="0 <= i < j < n"):
        native.directed_graph(3, np.array([0, 1]), np.array([1, 1]), two, two, ones, ones)


@pytest.mark.parametrize("n", [511, 512, 1024, 1025])
def test_index_entries_hold_every_node_at_powers_of_two(n):
    """An index entry is 4 bytes: the key's bits below its bucket's and the node's
    (csrc/clusters/growth.cpp, SegmentIndex); at d = 1 a power of two of amplicons needs one
    bucket bit more than the entries alone ask for, so that every node and the dropped
    marker fit. The same OTUs as on the graph of every pair."""
    records = simulate(n, seed=n, parents=6, length=40, max_edits=2)
    assert len(records) == n
    for method in ("swarm", "linkage"):
        fast = cluster(records, method=method, max_distance=1, backend="cpu", threads=1)
        slow = cluster(records, method=method, max_distance=1, backend="reference", threads=1)
        for name in ("members", "starts", "found", "generation", "radius"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
        assert fast.n_clusters < n


@pytest.mark.parametrize("method", ["swarm", "linkage"])
def test_graph_recount_in_blocks_equals_one_block(method, monkeypatch):
    """The graph paths (--edges, GPU and reference backends) recount swarm's differences a
    block of pairs at a time: blocks of 7 pairs (every boundary inside a row) grow the same
    OTUs as one block, and as the growth that searches."""
    import bioaccel.clusters._cluster as impl

    records = simulate(300, seed=9, parents=4, length=60, max_edits=4)
    kw = dict(method=method, max_distance=3, differences="swarm", threads=1)
    whole = cluster(records, backend="reference", **kw)
    monkeypatch.setattr(impl, "_RECOUNT_BLOCK", 7)
    blocks = cluster(records, backend="reference", **kw)
    search = cluster(records, backend="cpu", **kw)
    for name in ("members", "starts", "found", "generation", "radius"):
        np.testing.assert_array_equal(getattr(blocks, name), getattr(whole, name), err_msg=name)
        np.testing.assert_array_equal(getattr(blocks, name), getattr(search, name), err_msg=name)
    assert whole.n_clusters < len(records)


@pytest.mark.parametrize("d", [4, 7, 30, 255])
def test_large_thresholds_grow_as_on_all_pairs(d):
    """d from 4 (past the d + 3 segments) up to 255, past the longest
    amplicon (searched as that length: no two are further apart), against the growth on the
    graph of every pair."""
    records = simulate(150, seed=d, parents=3, length=24, max_edits=9)
    # two amplicons as far apart as two can be (every letter differs): one OTU from d = 40 on
    far = [("polyA;size=2", "A" * 40), ("polyC;size=1", "C" * 40)]
    assert cluster(far, max_distance=d, backend="cpu").n_clusters == (1 if d >= 40 else 2)
    # with swarm's differences the growth recounts in the band its Levenshtein distance
    # allows, the reference in the band d allows (swarm_alignments): the same counts
    for method, differences in (("swarm", "edit"), ("linkage", "edit"), ("swarm", "swarm")):
        kw = dict(method=method, max_distance=d, differences=differences, threads=1)
        fast = cluster(records, backend="cpu", **kw)
        slow = cluster(records, backend="reference", **kw)
        for name in ("members", "starts", "found", "generation", "radius"):
            np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert fast.n_clusters < len(records)


@pytest.mark.parametrize("length", [4, 7, 61, 253])
def test_every_single_edit_of_a_seed_is_found_by_the_seed(length):
    """At d = 1 the growth's index admits a candidate only when its masked segment's
    quarter tags allow one edit (csrc/clusters/growth.cpp): every substitution, deletion
    and insertion at every position (so at every segment and quarter boundary, and at
    both ends) of a seed must still be found by the seed itself, in generation 1."""
    rng = np.random.default_rng(length)
    seed = "".join(rng.choice(list("ACGT"), size=length))
    variants = {seed}
    for p in range(length + 1):
        for a in "ACGT":
            variants.add(seed[:p] + a + seed[p:])  # insertion before p
            if p < length:
                variants.add(seed[:p] + a + seed[p + 1 :])  # substitution
        if p < length:
            variants.add(seed[:p] + seed[p + 1 :])  # deletion
    variants.discard(seed)
    records = [("seed;size=1000", seed)]
    records += [(f"v{k};size=1", v) for k, v in enumerate(sorted(variants))]
    c = cluster(records, method="swarm", max_distance=1, backend="cpu", threads=1)
    assert c.n_clusters == 1 and c.sizes[0] == len(records)
    # the seed is node 0; every other node is one edit from it, so generation 1
    np.testing.assert_array_equal(c.generation[1:], np.ones(len(variants), dtype=np.int64))
    np.testing.assert_array_equal(c.radius[1:], np.ones(len(variants), dtype=np.int64))


def test_crlf_and_wrapped_lines_read_as_plain_fasta(tmp_path):
    """Windows line ends and sequences wrapped over lines give the same OTUs; a refused
    letter is still named at its position in the sequence (CRs and line breaks not counted)."""
    records = simulate(150, seed=8, parents=3, length=80)
    plain = b"".join(f">{h}\n{s}\n".encode() for h, s in records)
    wrapped = b"".join(
        f">{h}\r\n".encode()
        + b"".join(s[k : k + 17].encode() + b"\r\n" for k in range(0, len(s), 17))
        for h, s in records
    )
    a = cluster(plain, max_distance=2, threads=1)
    b = cluster(wrapped, max_distance=2, threads=1)
    np.testing.assert_array_equal(a.members, b.members)
    np.testing.assert_array_equal(a.starts, b.starts)
    h, s = records[5]
    bad = wrapped.replace(
        f">{h}\r\n{s[:17]}\r\n{s[17:34]}".encode(),
        f">{h}\r\n{s[:17]}\r\n{s[17:20]}X{s[21:34]}".encode(),
    )
    assert bad != wrapped
    with pytest.raises(ValueError, match=r"position 21\b.*'X'|'X'.*position 21\b"):
        cluster(bad, max_distance=2, threads=1)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_letters_equal_a_per_letter_translation_whatever_the_wrapping(tmp_path, seed):
    """The reader takes two letters a step (and stores them two a byte) wherever a line and
    a record start, odd or even; its codes equal a letter-by-letter translation for lines
    of every length, mixed case, U, IUPAC codes and CRs inside lines, from a file (sized
    once from its length) and from bytes; and the first refused byte is named at its
    position however the lines fall."""
    rng = np.random.default_rng(seed)
    code = {c: k for k, c in enumerate("ACGTRYSWKMBDHVN")} | {"U": 3}
    records, want = [], []
    for k in range(40):
        seq = "".join(rng.choice(list("ACGTUacgtuNnRy"), size=int(rng.integers(1, 60))))
        cuts = sorted({0, len(seq), *rng.integers(0, len(seq) + 1, size=3).tolist()})
        lines = [seq[a:b] for a, b in zip(cuts, cuts[1:])]
        lines = [x[:1] + "\r" + x[1:] if len(x) > 2 and rng.random() < 0.2 else x for x in lines]
        records.append(f">r{k};size={40 - k}\n" + "".join(x + "\n" for x in lines))
        want.append([code[c.upper()] for c in seq])
    text = "".join(records)
    path = tmp_path / "wrapped.fa"
    path.write_text(text)
    for source in (path, text.encode()):
        amp = read_amplicons(source)
        b = amp.batch
        for k in range(len(amp)):
            got = b.codes[b.offsets[k] : b.offsets[k + 1]].tolist()
            assert got == want[int(amp.record[k])], (k, int(amp.record[k]))
    for k in (3, 4, 17, 30):  # a refused byte at odd and even places of the text
        seq = [c for c in records[k].split("\n", 1)[1] if c not in "\r\n"]
        at = int(rng.integers(len(seq)))
        body = records[k].split("\n", 1)[1]
        letters_seen, cut = 0, None
        for i, c in enumerate(body):
            if c in "\r\n":
                continue
            if letters_seen == at:
                cut = i
                break
            letters_seen += 1
        bad = text.replace(
            records[k], records[k].split("\n", 1)[0] + "\n" + body[:cut] + "Z" + body[cut + 1 :]
        )
        with pytest.raises(
            ValueError, match=rf"record {k + 1} .*position {at + 1}: invalid letter 'Z'"
        ):
            read_amplicons(bad.encode())


def test_headers_and_ids_equal_a_per_record_derivation_from_the_header_bytes():
    """The parse hands over the headers and ids as two newline-separated texts in swarm's
    order; each must be what its header's own bytes give: invalid UTF-8 held as lone
    surrogates (surrogateescape: written back as the bytes read), the
    annotation cut as swarm prints ids (a ';' kept between text on both sides), CRLF
    headers without the CR, ties of abundance in header byte order."""
    heads = [
        b"plain;size=3",
        b"size=2;first",
        b"mid;size=7;sample=x",
        b"bad\xff\xfebytes;size=3",
        b"caf\xc3\xa9;size=3;",
        b"crlf;size=9",
        b"x;size=1",
        b";size=4;lead",
        b"\xe2\x82;size=2",  # a cut multi-byte sequence, then the annotation
    ]
    rng = np.random.default_rng(4)
    seqs = ["".join(rng.choice(list("ACGT"), 30)) for _ in heads]
    raw = b"".join(
        b">" + h + (b"\r\n" if h.startswith(b"crlf") else b"\n") + s.encode() + b"\n"
        for h, s in zip(heads, seqs)
    )
    amp = read_amplicons(raw)
    order = amp.record.tolist()
    want_headers = [heads[r].decode("utf-8", "surrogateescape") for r in order]
    assert amp.raw_headers == want_headers

    def ident(h: bytes) -> str:
        at = h.find(b"size=")
        s = at - 1 if at > 0 and h[at - 1 : at] == b";" else at
        e = at + 5
        while e < len(h) and h[e : e + 1].isdigit():
            e += 1
        e += 1 if e < len(h) and h[e : e + 1] == b";" else 0
        cut = h[:s] + b";" + h[e:] if 0 < s and e < len(h) else h[:s] + h[e:]
        return cut.decode("utf-8", "surrogateescape")

    assert amp.ids == [ident(heads[r]) for r in order]
    assert amp.ids[:2] == ["crlf", "mid;sample=x"]  # abundance 9, then 7
    assert len(amp.ids) == len(heads) and "\n" not in "".join(amp.ids)


@pytest.mark.parametrize("piece", [1, 2, 3, 7, 64])
def test_text_read_in_pieces_cut_anywhere_reads_as_one(tmp_path, monkeypatch, piece):
    """The parse is fed the file a piece at a time (a gzip file decompressed as it is
    read): pieces cut inside headers, sequences, CRLF pairs and annotations give the same
    amplicons as the whole text at once, and errors name the same record and line."""
    import gzip

    import bioaccel.clusters._amplicons as amplicons_module

    records = simulate(60, seed=11, parents=3, length=50)
    text = b"\r\n\n" + b"".join(
        f">{h} some description\r\n{s[:23]}\n{s[23:].lower()}\r\n".encode() for h, s in records
    )
    whole = read_amplicons(text)
    (tmp_path / "a.fa").write_bytes(text)
    (tmp_path / "a.fa.gz").write_bytes(gzip.compress(text))
    monkeypatch.setattr(amplicons_module, "_PIECE", piece)
    for path in ("a.fa", "a.fa.gz"):
        got = read_amplicons(tmp_path / path)
        assert list(got.raw_headers) == list(whole.raw_headers)
        assert list(got.ids) == list(whole.ids)
        np.testing.assert_array_equal(got.batch.codes, whole.batch.codes)
        np.testing.assert_array_equal(got.batch.offsets, whole.batch.offsets)
        np.testing.assert_array_equal(got.record, whole.record)
        np.testing.assert_array_equal(got.abundance, whole.abundance)
    h, s = records[7]
    bad = text.replace(f"{s[:23]}\n".encode(), f"{s[:5]}-{s[6:23]}\n".encode(), 1)
    (tmp_path / "bad.fa").write_bytes(bad)
    with pytest.raises(ValueError) as one:
        read_amplicons(bad)
    with pytest.raises(ValueError) as pieces:
        read_amplicons(tmp_path / "bad.fa")
    assert "position 6" in str(one.value) and "'-'" in str(one.value)
    assert str(pieces.value) == str(one.value).replace("<bytes>", str(tmp_path / "bad.fa"))


def test_damaged_gzip_and_not_fasta_are_named(tmp_path):
    import gzip

    records = simulate(30, seed=12, parents=2, length=60)
    text = b"".join(f">{h}\n{s}\n".encode() for h, s in records)
    cut = tmp_path / "cut.fa.gz"
    cut.write_bytes(gzip.compress(text)[:-20])
    with pytest.raises(ValueError, match=r"cut\.fa\.gz: damaged gzip file"):
        read_amplicons(cut)
    prose = tmp_path / "notes.fa"
    prose.write_bytes(b"\n  \nthese are my reads\n" + text)
    with pytest.raises(
        ValueError, match=r"notes\.fa: line 3: expected a FASTA header.*'these are my reads'"
    ):
        read_amplicons(prose)
    blank = tmp_path / "blank.fa"
    blank.write_bytes(b"\n \r\n\t\n")
    with pytest.raises(ValueError, match=r"blank\.fa: file is empty"):
        read_amplicons(blank)


@pytest.mark.parametrize("d", [2, 3])
@pytest.mark.parametrize("breaking", [True, False])
@pytest.mark.parametrize("differences", ["edit", "swarm"])
def test_gram_test_changes_no_growth(d, breaking, differences):
    """At d >= 2 the growth and the fastidious search compare 3-gram counts before
    Landau-Vishkin (csrc/clusters/growth.cpp, edit::GramCounts): on and off, the growth
    equals the growth on the graph of all pairs within d."""
    from bioaccel._core import load_native

    native = load_native()
    records = simulate(500, seed=20 + d, parents=4, length=70, max_edits=5)
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in records).encode())
    method = "swarm" if breaking else "linkage"
    slow = cluster(
        records, method=method, max_distance=d, differences=differences, backend="reference"
    )
    assert (slow.sizes > 1).sum() >= 10
    ab = np.ascontiguousarray(amp.abundance, dtype=np.uint64)
    for gram_test in (1, 0, -1):
        order, found, starts, gen, rad, _ = native.swarm_grow_search(
            amp.batch.codes, amp.batch.offsets, ab, d, breaking, differences == "swarm", gram_test
        )
        np.testing.assert_array_equal(order, slow.members, err_msg=f"gram_test={gram_test}")
        np.testing.assert_array_equal(starts, slow.starts)
        np.testing.assert_array_equal(found, slow.found)
        np.testing.assert_array_equal(gen, slow.generation)
        np.testing.assert_array_equal(rad, slow.radius)
    heavy = (np.arange(len(amp)) % 3 == 0).astype(np.uint8)
    on, off = (
        native.nearest_in_set(amp.batch.codes, amp.batch.offsets, heavy, d, 1, pf) for pf in (1, 0)
    )
    np.testing.assert_array_equal(on, off)
    assert (on >= 0).sum() > 50
    with pytest.raises(ValueError, match="gram_test"):
        native.swarm_grow_search(amp.batch.codes, amp.batch.offsets, ab, d, breaking, False, 2)


@pytest.mark.parametrize("length", [9, 23, 40])
def test_every_double_edit_of_a_seed_is_found_by_the_seed_with_the_gram_test(length):
    """Every sequence within 2 edits of a seed (all pairs of substitutions, deletions and
    insertions, so edits in one segment, in two, at segment boundaries and at the ends) is
    found by the seed itself at d = 2 with the q-gram test on, with its exact distance as
    radius."""
    from bioaccel._core import load_native

    rng = np.random.default_rng(length)
    seed = "".join(rng.choice(list("ACGT"), size=length))

    def one_edit(s):
        out = set()
        for p in range(len(s) + 1):
            for a in "ACGT":
                out.add(s[:p] + a + s[p:])
                if p < len(s):
                    out.add(s[:p] + a + s[p + 1 :])
            if p < len(s):
                out.add(s[:p] + s[p + 1 :])
        return out

    first = one_edit(seed)
    variants = set(first)
    for v in first:
        variants |= one_edit(v)
    variants.discard(seed)
    variants = sorted(variants)
    records = [("seed;size=100000", seed)] + [(f"v{k};size=1", v) for k, v in enumerate(variants)]
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in records).encode())
    ab = np.ascontiguousarray(amp.abundance, dtype=np.uint64)
    order, found, starts, gen, rad, _ = load_native().swarm_grow_search(
        amp.batch.codes, amp.batch.offsets, ab, 2, True, False, 1
    )
    assert len(starts) == 2  # one OTU holding every variant
    assert np.all(gen[1:] == 1)
    want = edit_distances([seed], variants).ravel()
    node_of = {amp.ids[k]: k for k in range(len(amp))}
    got = np.array([rad[node_of[f"v{k}"]] for k in range(len(variants))])
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("length", [6, 19, 40])
def test_every_sampled_triple_edit_of_a_seed_is_found_by_the_seed(length):
    """Probes skip the shift patterns no canonical mask needs (packed_edit.hpp, Mask). Every
    one of 3,000 variants of a seed by 1-3 random edits (anywhere: ends, segment and part
    boundaries) is found by the seed itself in generation 1 at d = 3, q-gram test off and
    on, with its exact distance as radius."""
    from bioaccel._core import load_native
    from tests.neighbor_cases import mutate

    rng = np.random.default_rng(length)
    seed = "".join(rng.choice(list("ACGT"), size=length))
    variants = sorted(
        {mutate(rng, seed, int(rng.integers(1, 4)), "ACGT") for _ in range(3000)} - {seed}
    )
    records = [("seed;size=100000", seed)] + [(f"v{k};size=1", v) for k, v in enumerate(variants)]
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in records).encode())
    ab = np.ascontiguousarray(amp.abundance, dtype=np.uint64)
    want = edit_distances([seed], variants).ravel()
    node_of = {amp.ids[k]: k for k in range(len(amp))}
    for gram_test in (0, 1):
        order, found, starts, gen, rad, _ = load_native().swarm_grow_search(
            amp.batch.codes, amp.batch.offsets, ab, 3, True, False, gram_test
        )
        assert len(starts) == 2 and np.all(gen[1:] == 1)
        got = np.array([rad[node_of[f"v{k}"]] for k in range(len(variants))])
        np.testing.assert_array_equal(got, want)


# --- precomputed edges (bioaccel neighbors, shards) ----------------------------------------
def _texts(c):
    import io

    out = []
    for write in (c.write_otus, c.write_statistics, c.write_seeds):
        buf = io.StringIO()
        write(buf)
        out.append(buf.getvalue())
    return out


@pytest.mark.parametrize("d", [1, 2, 3])
def test_cluster_on_edges_equals_the_search(tmp_path, d):
    """The growth on a neighbour table (one file, or every shard's .npz) gives the OTUs, the
    statistics and the seeds of the growth that searches, for swarm and linkage, edit and
    swarm differences; a table of a larger d serves a smaller one."""
    from bioaccel import neighbors

    records = simulate(700, seed=40 + d, parents=5, length=90, max_edits=5)
    path = tmp_path / "amp.fa"
    write_fasta(records, path)
    whole = tmp_path / "pairs.npz"
    neighbors(str(path), max_distance=d + 1, threads=1).write(whole)
    shards = []
    for k in range(3):
        shards.append(tmp_path / f"part{k}.npz")
        neighbors(str(path), max_distance=d, shard=(k, 3), threads=1).write(shards[-1])
    for method in ("swarm", "linkage"):
        for differences in ("edit", "swarm"):
            kw = dict(method=method, max_distance=d, differences=differences)
            searched = _texts(cluster(str(path), **kw))
            assert _texts(cluster(str(path), edges=whole, **kw)) == searched
            assert _texts(cluster(str(path), edges=shards[::-1], **kw)) == searched
    if d == 1:
        kw = dict(max_distance=1, fastidious=True)
        assert _texts(cluster(str(path), edges=shards, **kw)) == _texts(cluster(str(path), **kw))


def test_cluster_edges_refused(tmp_path):
    from bioaccel import neighbors

    records = simulate(200, seed=3, parents=3, length=60, max_edits=4)
    path, other = tmp_path / "amp.fa", tmp_path / "other.fa"
    write_fasta(records, path)
    write_fasta(records[::-1], other)  # the same amplicons in another input order
    neighbors(str(path), max_distance=2, threads=1).write(tmp_path / "d2.npz")
    neighbors(str(path), max_distance=2, threads=1).write(tmp_path / "d2.tsv")
    neighbors(str(path), max_distance=2, shard=(0, 2), threads=1).write(tmp_path / "s1.npz")
    cases = [
        (dict(max_distance=3, edges=tmp_path / "d2.npz"), r"within 2 edits; max_distance=3"),
        (dict(edges=tmp_path / "s1.npz"), r"shard 1/2 only"),
        (dict(edges=tmp_path / "d2.tsv"), r"d2\.tsv: edges need an \.npz"),
        (dict(method="greedy", edges=tmp_path / "d2.npz"), r"method='swarm' and 'linkage'"),
        (dict(backend="reference", edges=tmp_path / "d2.npz"), r"with edges there is none"),
    ]
    for kw, message in cases:
        with pytest.raises(ValueError, match=message):
            cluster(str(path), **kw)
    with pytest.raises(ValueError, match=r"record \d+ of .*other\.fa is .*not a table of this"):
        cluster(str(other), edges=tmp_path / "d2.npz")
    with pytest.raises(FileNotFoundError, match=r"missing\.npz"):
        cluster(str(path), edges=tmp_path / "missing.npz")


def test_cluster_edges_of_other_sequences_with_the_same_ids_refused(tmp_path):
    """Before: only the record count and the ids tied a table to its file, so the table of
    another file whose ids `vsearch --relabel` numbered alike (U1, U2, ...) was taken and
    gave that file's OTUs. Now the table holds a digest of the letters it was computed on,
    which must be the amplicons'; a table without one is refused. The digest is of the
    letters, so lower case and U read as their amplicons (and shards carry it)."""
    from bioaccel import Neighbors, neighbors

    records = simulate(300, seed=8, parents=4, length=70, max_edits=4)
    path = tmp_path / "amp.fa"
    write_fasta(records, path)
    neighbors(str(path), max_distance=2, threads=1).write(tmp_path / "d2.npz")
    # the same ids, one letter changed in one sequence
    (h, s), rest = records[150], list(records)
    rest[150] = (h, s[:30] + ("A" if s[30] != "A" else "C") + s[31:])
    edited = tmp_path / "edited.fa"
    write_fasta(rest, edited)
    with pytest.raises(ValueError, match=r"computed on other sequences than those of .*edited\.fa"):
        cluster(str(edited), max_distance=2, edges=tmp_path / "d2.npz")
    nb = neighbors(str(path), max_distance=2, threads=1)
    bare = Neighbors(nb.i, nb.j, nb.distance, nb.ids, "edit", 2)
    with pytest.raises(ValueError, match="records no digest of the sequences"):
        cluster(str(path), max_distance=2, edges=bare)
    # lower case and U: the same letters to both readers
    odd = tmp_path / "odd.fa"
    write_fasta([(h, s.lower().replace("t", "u")) for h, s in records], odd)
    shards = [tmp_path / "o1.npz", tmp_path / "o2.npz"]
    for k, p in enumerate(shards):
        neighbors(str(odd), max_distance=2, shard=(k, 2), threads=1).write(p)
    assert _texts(cluster(str(odd), max_distance=2, edges=shards)) == _texts(
        cluster(str(path), max_distance=2)
    )


def test_python_refuses_settings_that_do_not_apply_and_misread_records():
    """Before: cluster(identity=0.9) with swarm, max_distance= with greedy and boundary=
    without fastidious ran with the setting dropped (the CLI refuses each), identity="0.9"
    was taken, and a list of plain strings was read as (header, sequence) pairs ('AC' as
    header 'A', sequence 'C'). Now each is refused naming it."""
    recs = [("a;size=5", "ACGTACGT"), ("b;size=2", "ACGTACGA"), ("c;size=1", "TTTTTTTT")]
    cases = [
        (dict(identity=0.9), r"identity= applies to method='greedy' only"),
        (dict(method="linkage", identity_definition="shorter"), r"identity_definition= applies"),
        (dict(method="greedy", max_distance=2), r"max_distance does not apply to method='greedy'"),
        (dict(boundary=5), r"boundary= applies with fastidious=True only"),
        (dict(method="greedy", identity="0.9"), r"identity='0.9': expected a number"),
    ]
    for kw, message in cases:
        with pytest.raises(ValueError, match=message):
            cluster(recs, **kw)
    with pytest.raises(
        TypeError, match=r"record 1: expected a \(header, sequence\) pair, got str 'AC'"
    ):
        cluster(["AC", "GT"], default_abundance=1)
    # the defaults still apply when nothing is given
    assert cluster(recs).max_distance == 1
    assert cluster(recs, method="greedy").identity_definition == "longer"
    assert (
        cluster(recs, fastidious=True).n_clusters
        == cluster(recs, fastidious=True, boundary=3).n_clusters
    )
