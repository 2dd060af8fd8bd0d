"""k-mer distances against plain-Python references of the published formulas; MinHash
estimates within their statistical error of the exact Jaccard index; sketches round-trip."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter

import numpy as np
import pytest

import bioaccel
from bioaccel.distances._kmers import DAYHOFF6, Sketches, mash_distance, sketch

COMPLEMENT = str.maketrans("ACGT", "TGCA")


def related(rng, n, length, rate=0.05):
    base = rng.choice(list("ACGT"), length)
    out = []
    for _ in range(n):
        s = base.copy()
        hit = rng.random(length) < rate * rng.random() * 4
        s[hit] = rng.choice(list("ACGT"), int(hit.sum()))
        out.append("".join(s))
    return out


def kmers(s, k):
    return [s[i : i + k] for i in range(len(s) - k + 1) if set(s[i : i + k]) <= set("ACGT")]


def canonical(s, k):
    return {min(x, x.translate(COMPLEMENT)[::-1]) for x in kmers(s, k)}


def test_kmer_distance_equals_edgar_formula(rng):
    seqs = related(rng, 8, 300) + ["ACGTNNACGT" * 20]
    k = 6
    got = bioaccel.distance_matrix(seqs, "kmer", k=k).data
    for i, a in enumerate(seqs):
        for j, b in enumerate(seqs):
            if i == j:
                continue
            ca, cb = Counter(kmers(a, k)), Counter(kmers(b, k))
            shared = sum(min(c, cb[t]) for t, c in ca.items())
            f = shared / (min(len(a), len(b)) - k + 1)
            assert got[i, j] == pytest.approx(1 - f, abs=1e-12)


def test_protein_kmer_distance_uses_dayhoff6():
    group = {ch: g for g, letters in enumerate(DAYHOFF6) for ch in letters}
    a, b = "MKVLEAGHWKLLEMKVAAGT", "MRILDAGFWKVIEMRLSSGT"
    got = bioaccel.distance_matrix([a, b], "kmer", k=3).data[0, 1]
    ra = ["".join(str(group[c]) for c in a[i : i + 3]) for i in range(len(a) - 2)]
    rb = ["".join(str(group[c]) for c in b[i : i + 3]) for i in range(len(b) - 2)]
    ca, cb = Counter(ra), Counter(rb)
    shared = sum(min(c, cb[t]) for t, c in ca.items())
    assert got == pytest.approx(1 - shared / (min(len(a), len(b)) - 2))


def test_exact_jaccard_uses_canonical_kmers(rng):
    seqs = related(rng, 6, 400)
    seqs.append(seqs[0].translate(COMPLEMENT)[::-1])  # reverse complement: identical k-mer set
    got = bioaccel.distance_matrix(seqs, "jaccard", k=11).data
    for i in range(len(seqs)):
        for j in range(len(seqs)):
            a, b = canonical(seqs[i], 11), canonical(seqs[j], 11)
            assert got[i, j] == pytest.approx(1 - len(a & b) / len(a | b), abs=1e-12)
    assert got[0, -1] == 0.0


def test_minhash_within_sketch_error_of_exact_jaccard(rng):
    seqs = related(rng, 12, 5000, rate=0.03)
    size, k = 1000, 15
    exact = 1 - bioaccel.distance_matrix(seqs, "jaccard", k=k).data
    s = sketch(seqs, k=k, size=size, seed=7)
    est_d = bioaccel.distance_matrix(s, "mash").data
    for i in range(len(seqs)):
        for j in range(i + 1, len(seqs)):
            j_true = exact[i, j]
            # the bottom-s estimator is hypergeometric-like: sd <= sqrt(J (1 - J) / s)
            bound = 4 * np.sqrt(j_true * (1 - j_true) / size) + 2 / size
            # invert D = -ln(2J/(1+J))/k to compare on the Jaccard scale
            x = np.exp(-k * est_d[i, j])
            j_est = x / (2 - x)
            assert abs(j_est - j_true) <= bound, (i, j, j_est, j_true)


def test_mash_distance_definition():
    assert mash_distance(np.array([1.0, 0.0]), 21).tolist() == [0.0, 1.0]
    j = 0.5
    assert mash_distance(np.array([j]), 21)[0] == pytest.approx(-np.log(2 * j / (1 + j)) / 21)


def test_sketches_round_trip(tmp_path, rng):
    seqs = related(rng, 5, 2000) + ["ACGT"]  # the last sketch is empty
    s = sketch(seqs, k=17, size=200, seed=3)
    p = tmp_path / "s.npz"
    s.save(p)
    back = Sketches.load(p)
    assert back.k == 17 and back.size == 200 and back.ids == s.ids
    assert bioaccel.distance_matrix(back, "mash") == bioaccel.distance_matrix(s, "mash")
    assert bioaccel.distance_matrix(
        seqs, "mash", k=17, sketch_size=200, seed=3
    ) == bioaccel.distance_matrix(back, "mash")
    with pytest.raises(bioaccel.ModelError, match="k=17, not k=21"):
        bioaccel.distance_matrix(back, "mash", k=21)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a sketch")
    with pytest.raises(bioaccel.ModelError, match="not a bioaccel sketch file"):
        Sketches.load(bad)
    # damaged arrays: values out of order in one sketch, offsets past the end, oversize
    values = s.values.copy()
    start = int(s.offsets[2])
    values[start + 3], values[start + 4] = values[start + 4], values[start + 3]
    damaged = [
        ({"values": values}, rf"sketch '{s.ids[2]}' is not strictly increasing at value 4"),
        ({"offsets": s.offsets + 1}, "offsets must rise from 0"),
        ({"size": 100}, rf"size=100: sketch '{s.ids[0]}' holds 200 values"),
    ]
    for change, message in damaged:
        dataclasses.replace(s, **change).save(bad)
        with pytest.raises(bioaccel.ModelError, match=message):
            Sketches.load(bad)


def test_bad_k():
    with pytest.raises(bioaccel.ModelError, match="k must be a positive integer"):
        bioaccel.distance_matrix(["ACGT", "ACGA"], "jaccard", k=0)
    with pytest.raises(ValueError, match="too large"):
        bioaccel.distance_matrix(["ACGT", "ACGA"], "jaccard", k=40)


def test_real_16s_mash_tracks_jaccard():
    from tests.datasets import dada2_16s

    batch = bioaccel.read_sequences(dada2_16s()).subset(range(60))
    exact = bioaccel.distance_matrix(batch, "jaccard", k=21).data
    mash = bioaccel.distance_matrix(batch, "mash", k=21, sketch_size=1000).data
    iu = np.triu_indices(len(batch), 1)
    j_true = 1 - exact[iu]
    x = np.exp(-21 * mash[iu])
    j_est = x / (2 - x)  # Mash's D back on the Jaccard scale
    assert np.all(np.abs(j_est - j_true) <= 4 * np.sqrt(j_true * (1 - j_true) / 1000) + 2e-3)


@pytest.mark.parametrize("pairs_by", ["auto", "bitmap", "postings"])
@pytest.mark.parametrize("size", [1, 15, 16, 17, 60, 333])
def test_minhash_estimator_equals_python_reference(rng, monkeypatch, size, pairs_by):
    # Mash's estimator, spelled out: the s smallest values of the union, share in both.
    # Sizes around the kernel's 16-value blocks; sketches shorter than s (short sequences,
    # an empty one) and pairs from identical to unrelated. Both ways of counting the pairs
    # (bitmap walk, postings of each value; auto picks per row) forced in turn.
    monkeypatch.setenv("BIOACCEL_MINHASH_PAIRS", pairs_by)
    seqs = (
        related(rng, 9, 800, rate=0.2)
        + related(rng, 4, 300, rate=0.01)
        + ["ACGT" * 10, "A" * 30, "ACG", "".join(rng.choice(list("ACGT"), 500))]
    )
    k = 9
    s = sketch(seqs, k=k, size=size, seed=11)
    got = bioaccel.distance_matrix(s, "mash").data
    parts = [set(s.values[s.offsets[i] : s.offsets[i + 1]].tolist()) for i in range(len(seqs))]
    for i in range(len(seqs)):
        for j in range(i + 1, len(seqs)):
            union = sorted(parts[i] | parts[j])[:size]
            shared = sum(1 for v in union if v in parts[i] and v in parts[j])
            j_est = shared / len(union) if union else 0.0
            want = min(0.0 - math.log(2 * j_est / (1 + j_est)) / k, 1.0) if j_est > 0 else 1.0
            assert got[i, j] == want, (size, i, j)
            assert mash_distance(np.array([j_est]), k)[0] == pytest.approx(want, rel=1e-15)


def test_minhash_avx2_and_scalar_bit_tests_agree(tmp_path, rng):
    # The pair loop tests 16 values at a time by AVX2 gathers where the CPU has AVX2, else
    # by scalar loads; BIOACCEL_NO_AVX2=1 (read once per process) forces the scalar path.
    import subprocess
    import sys

    from tests.datasets import child_env

    seqs = related(rng, 30, 700, rate=0.1) + ["ACGT" * 10, "ACG"]
    s = sketch(seqs, k=11, size=150, seed=5)
    s.save(tmp_path / "s.npz")
    here = bioaccel.distance_matrix(s, "mash").data
    code = (
        "import sys, numpy as np, bioaccel\n"
        "from bioaccel.distances._kmers import Sketches\n"
        "d = bioaccel.distance_matrix(Sketches.load(sys.argv[1]), 'mash').data\n"
        "np.save(sys.argv[2], d)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "s.npz"), str(tmp_path / "d.npy")],
        check=True,
        env=child_env(BIOACCEL_NO_AVX2="1"),
    )
    np.testing.assert_array_equal(np.load(tmp_path / "d.npy"), here)


@pytest.mark.parametrize("kind", ["hashes", "repeats", "skewed", "one", "empty"])
def test_value_ranks_equal_numpy_unique(rng, kind):
    from bioaccel._core.native import load_native

    values = {
        "hashes": rng.integers(0, 2**64 - 1, 50_000, dtype=np.uint64, endpoint=True),
        "repeats": rng.integers(0, 300, 20_000).astype(np.uint64) * np.uint64(2**50),
        "skewed": np.concatenate(
            [
                rng.integers(0, 1000, 10_000).astype(np.uint64),
                np.array([2**63, 2**64 - 1], np.uint64),
            ]
        ),
        "one": np.full(7, 12345, np.uint64),
        "empty": np.zeros(0, np.uint64),
    }[kind]
    rank, universe = load_native().kmer_ranks(values)
    want_universe, want_rank = np.unique(values, return_inverse=True)
    assert universe == len(want_universe)
    np.testing.assert_array_equal(rank, want_rank.ravel())
    assert rank.dtype == np.uint32


def test_mash_distances_agree_with_the_mash_tool(tmp_path):
    """Mash itself (Debian `mash`) on 300 real 16S sequences: its shared-hash fractions and
    ours estimate the same Jaccard index with different hash functions, so they agree within
    the sketch error of two independent estimates."""
    import shutil
    import subprocess

    from tests.datasets import dada2_16s, unavailable

    mash = shutil.which("mash")
    if mash is None:
        unavailable("the mash tool is not installed (apt-get install mash)")
    batch = bioaccel.read_sequences(dada2_16s())
    sub = batch.subset(range(0, len(batch), len(batch) // 300)[:300])
    fasta = tmp_path / "s.fa"
    fasta.write_text("".join(f">{sub.ids[i]}\n{sub.sequence(i)}\n" for i in range(len(sub))))
    s, k = 1000, 21
    subprocess.run(
        [mash, "sketch", "-i", "-k", str(k), "-s", str(s), "-o", str(tmp_path / "m"), str(fasta)],
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        [mash, "dist", str(tmp_path / "m.msh"), str(tmp_path / "m.msh")],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    where = {name: i for i, name in enumerate(sub.ids)}
    theirs = np.zeros((len(sub), len(sub)))
    dist = np.zeros((len(sub), len(sub)))
    for line in out.splitlines():
        a, b, d, _p, shared = line.split("\t")
        x, y = shared.split("/")
        theirs[where[a], where[b]] = int(x) / int(y)
        dist[where[a], where[b]] = float(d)
    from bioaccel.distances._kmers import kmer_rows

    rows = kmer_rows(sub, "mash", k=k, sketch_size=s)
    ours_j = np.zeros_like(theirs)
    i, j = np.triu_indices(len(sub), 1)
    ours_d = rows.distances(0, len(sub))
    # back from Mash distance to the Jaccard estimate: d = -ln(2j / (1 + j)) / k
    e = np.exp(-k * ours_d)
    ours_j[i, j] = e / (2 - e)
    iu = (i, j)
    jj = theirs[iu]
    sigma = np.sqrt(2 * np.maximum(jj * (1 - jj), 1 / s) / s)
    diff = np.abs(ours_j[iu] - jj)
    assert np.mean(diff <= 3 * sigma) > 0.99
    assert np.all(diff <= 6 * sigma + 2 / s)
    # and Mash's own distance formula on its estimate equals ours on ours
    np.testing.assert_allclose(mash_distance(jj, k), dist[iu], atol=1e-6)


def _mix64(x: int, seed: int) -> int:
    """csrc/kmers/kmers.cpp's mix64 (a splitmix64 finaliser), restated in Python."""
    m = (1 << 64) - 1
    x ^= (seed + 0x9E3779B97F4A7C15) & m
    x ^= x >> 33
    x = (x * 0xFF51AFD7ED558CCD) & m
    x ^= x >> 33
    x = (x * 0xC4CEB9FE1A85EC53) & m
    return x ^ (x >> 33)


def _reference_sketch(s: str, k: int, size: int, seed: int) -> list[int]:
    code = {c: d for d, c in enumerate("ACGT")}
    values = set()
    for kmer in canonical(s, k):  # canonical k-mers as strings
        values.add(_mix64(sum(code[c] * 4 ** (k - 1 - p) for p, c in enumerate(kmer)), seed))
    return sorted(values)[:size]


@pytest.mark.parametrize("k", [21, 31, 32])
def test_minhash_hashes_equal_a_python_reference_up_to_k32(rng, k):
    # k = 32: 32 letters of 2 bits fill a 64-bit code exactly, as mash allows
    seqs = related(rng, 3, 300) + ["ACGTN" * 20 + "ACGT" * 20]
    s = sketch(seqs, k=k, size=50, seed=9)
    for i, seq in enumerate(seqs):
        got = s.values[s.offsets[i] : s.offsets[i + 1]].tolist()
        assert got == _reference_sketch(seq, k, 50, 9)
    exact = bioaccel.distance_matrix(seqs[:3], "jaccard", k=k).data
    a, b = canonical(seqs[0], k), canonical(seqs[1], k)
    assert exact[0, 1] == pytest.approx(1 - len(a & b) / len(a | b), abs=1e-12)


def test_k_beyond_64_bit_codes_is_refused_clearly():
    with pytest.raises(
        bioaccel.ModelError,
        match="k = 33 is too large for dna k-mers: at most 32 letters of 4 fit one 64-bit code",
    ):
        sketch(["ACGT" * 20, "ACGA" * 20], k=33)
    with pytest.raises(bioaccel.ModelError, match="k = 33 is too large for dna"):
        bioaccel.distance_matrix(["ACGT" * 20, "ACGA" * 20], "jaccard", k=33)
    with pytest.raises(
        bioaccel.ModelError, match="k = 15 is too large for protein k-mers: at most 14"
    ):
        sketch(["MKVLEFWHHK" * 5, "MKVIEFWQHK" * 5], k=15)
    with pytest.raises(
        bioaccel.ModelError, match="k = 25 is too large for Dayhoff-6 protein k-mers: at most 24"
    ):
        bioaccel.distance_matrix(["MKVLEFWHHK" * 5, "MKVIEFWQHK" * 5], "kmer", k=25)


def test_sketch_refuses_aligned_input_and_proteins_get_mash_s_k():
    """Before: `bioaccel sketch` took aligned input (k-mers across gaps silently dropped:
    distances far from the ungapped ones), which `distance -m mash` refuses; and mash on
    proteins failed with its default k = 21 (too large for 20 letters). Now sketch refuses
    gaps by the one rule (--ungap / SeqBatch.ungapped() as the way out), and proteins take
    k = 9 unless told (Mash's own for amino acids, mash sketch -a)."""
    import bioaccel
    from bioaccel.errors import AlphabetError

    aligned = bioaccel.SeqBatch.from_strings(["ACGT-ACGTACGTTTGACA", "ACGTAACGTACGTTTG-CA"])
    with pytest.raises(AlphabetError, match="look aligned"):
        sketch(aligned, k=5)
    ungapped = sketch(aligned.ungapped(), k=5)
    assert len(ungapped.ids) == 2
    prot = ["MKVLAAGIVGLLLAWQESKTRPLMNVEEF", "MKVLAAGIVGALLAWQESKTRPLMNVEEY"]
    assert sketch(prot).k == 9
    dm = bioaccel.distance_matrix(prot, "mash")
    assert dm[0, 1] == bioaccel.distance_matrix(prot, "mash", k=9)[0, 1] < 1
