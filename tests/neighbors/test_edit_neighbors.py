"""Edit-distance neighbours against a brute force over all pairs (edit_distances, and edlib
as an independent oracle): seeded families with substitutions and indels, d = 0..8 and a d
above 5 % of the length, varying lengths, N/IUPAC codes, empty sequences, protein; the
real dada2 reads (dereplicated); both filters (microvariants, segment masking) with several
segment counts; shards; GPU verification on the CUDA simulator and the nvcc host build."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from bioaccel.errors import AlphabetError, BackendUnavailableError, DuplicateIdError, ModelError
from bioaccel.neighbors import merge_neighbors, neighbors, read_neighbors
from bioaccel.pairwise import edit_distances
from bioaccel.sequences import SeqBatch
from tests.datasets import bundled, require, unavailable
from tests.neighbor_cases import as_dict, families, mutate

DATA = bundled("dada2")


def brute(seqs, d: int):
    """{(i, j): distance} of every pair within d, from the all-pairs matrix."""
    b = seqs if isinstance(seqs, SeqBatch) else SeqBatch.from_strings(seqs)
    m = edit_distances(b, backend="cpu")
    i, j = np.triu_indices(len(b), 1)
    keep = m[i, j] <= d
    return {(int(a), int(c)): int(m[a, c]) for a, c in zip(i[keep], j[keep])}


MIXED = (
    families(1, 6, 30, 60, 6)
    + families(2, 3, 20, 120, 10, "ACGTN")
    + ["", "", "A", "AC", "ACG", "N", "NNNN", "ACGTRYKM", "ACGTRYKA"]
    + families(3, 2, 15, 9, 3)
)


@pytest.fixture(scope="module")
def mixed_truth():
    return brute(MIXED, 12)


@pytest.mark.parametrize("d", [0, 1, 2, 3, 4, 5, 6, 8])
def test_every_pair_within_d_and_no_other(mixed_truth, d):
    want = {p: v for p, v in mixed_truth.items() if v <= d}
    nb = neighbors(MIXED, max_distance=d, backend="cpu")
    assert as_dict(nb) == want
    assert nb.n == len(MIXED) and len(nb) == len(want)


@pytest.mark.parametrize("d", [0, 1])
@pytest.mark.parametrize("method", [1, 2])
def test_both_filters_for_small_d(mixed_truth, d, method):
    from bioaccel._core.native import load_native

    b = SeqBatch.from_strings(MIXED)
    i, j, dist, _ = load_native().edit_neighbors(
        b.codes, b.offsets, b.alphabet.size, d, method=method
    )
    assert dict(zip(zip(i.tolist(), j.tolist()), dist.tolist())) == {
        p: v for p, v in mixed_truth.items() if v <= d
    }


@pytest.mark.parametrize("d, segments", [(2, 3), (2, 5), (2, 8), (3, 4), (3, 7), (4, 9), (6, 7)])
@pytest.mark.parametrize("symmetric", [False, True])
def test_segment_counts_and_probing_sides_give_the_same_pairs(mixed_truth, d, segments, symmetric):
    from bioaccel._core.native import load_native

    b = SeqBatch.from_strings(MIXED)
    i, j, dist, _ = load_native().edit_neighbors(
        b.codes, b.offsets, b.alphabet.size, d, method=2, segments=segments, symmetric=symmetric
    )
    assert dict(zip(zip(i.tolist(), j.tolist()), dist.tolist())) == {
        p: v for p, v in mixed_truth.items() if v <= d
    }


@pytest.mark.parametrize("d", [2, 3, 4])
@pytest.mark.parametrize("length", [7, 19, 44])
def test_every_sampled_variant_within_d_of_a_seed_is_paired_with_it(d, length):
    """Probes skip the shift patterns no canonical mask needs (packed_edit.hpp, Mask: a
    masked segment past the first unmasked one must hold an edit). 1,200 variants of one
    seed, each d or fewer random edits (substitutions, insertions, deletions, at the ends
    and at segment boundaries alike), on lengths of one letter a segment up to uneven
    layouts: every pair within d, the seed's and the variants' among themselves, equals the
    brute force."""
    rng = np.random.default_rng(100 * d + length)
    seed = "".join(rng.choice(list("ACGT"), length))
    variants = sorted(
        {mutate(rng, seed, int(rng.integers(1, d + 1)), "ACGT") for _ in range(1200)} - {seed}
    )
    seqs = [seed, *variants]
    full = edit_distances(seqs)
    i, j = np.triu_indices(len(seqs), 1)
    want = {(a, b): v for a, b, v in zip(i.tolist(), j.tolist(), full[i, j].tolist()) if v <= d}
    assert sum(1 for a, _ in want if a == 0) == len(variants)  # every variant within d
    assert as_dict(neighbors(seqs, max_distance=d)) == want


def test_edlib_agrees_on_every_reported_and_every_missed_pair():
    edlib = require("edlib", "edlib is an independent oracle (pip install edlib)")
    seqs = families(7, 4, 25, 80, 8)
    nb = as_dict(neighbors(seqs, max_distance=4))
    for a in range(len(seqs)):
        for c in range(a + 1, len(seqs)):
            dist = edlib.align(seqs[a], seqs[c], task="distance")["editDistance"]
            if not seqs[a] or not seqs[c]:
                dist = max(len(seqs[a]), len(seqs[c]))
            assert nb.get((a, c)) == (dist if dist <= 4 else None), (a, c, dist)


def test_a_threshold_above_five_percent_of_the_length():
    seqs = families(11, 3, 20, 150, 14)  # d = 12 is 8 % of 150
    assert as_dict(neighbors(seqs, max_distance=12)) == brute(seqs, 12)


def test_a_threshold_past_the_longest_sequence_finds_every_pair():
    # searched as the longest length (no pair is further apart): before, every length within
    # d of each probe and C(d + 1, d) masks were walked, and the shift patterns grow as d^3
    rng = np.random.default_rng(8)
    seqs = ["".join(rng.choice(list("ACGT"), int(n))) for n in rng.integers(1, 30, 25)]
    seqs += ["A" * 30, "C" * 30]  # 30 edits apart: every letter differs
    for d in (29, 30, 500):
        assert as_dict(neighbors(seqs, max_distance=d)) == brute(seqs, d)


@pytest.mark.parametrize(
    "alphabet, length, d",
    [
        ("ACGT", 900, 5),  # past 640 letters: the 3-gram counts a byte each
        ("AAAAAAAC", 400, 4),  # low complexity: 4-bit counts saturate at 15 (AAA: ~270)
        ("ACGTN", 150, 3),  # N and IUPAC codes counted by their low two bits
    ],
)
def test_the_gram_count_test_never_drops_a_pair(alphabet, length, d):
    """The q-gram lemma before Landau-Vishkin (edit::GramCounts): pairs d edits apart, and
    many just past d (the ones it turns away), in the regimes of its counts."""
    seqs = families(21, 3, 25, length, d + 3, alphabet)
    want = brute(seqs, d)
    assert sum(1 for v in want.values() if v == d) >= 5  # pairs at the threshold itself
    assert as_dict(neighbors(seqs, max_distance=d)) == want


def test_lengths_that_vary_widely():
    rng = np.random.default_rng(5)
    base = "".join(rng.choice(list("ACGT"), 300))
    seqs = [base[: int(n)] for n in rng.integers(0, 300, 80)] + [
        mutate(rng, base[:200], 3, "ACGT") for _ in range(20)
    ]
    for d in (1, 3, 7):
        assert as_dict(neighbors(seqs, max_distance=d)) == brute(seqs, d), d


def test_n_and_iupac_count_as_letters_equal_only_to_themselves():
    nb = neighbors(["ACGTACGT", "ACGNACGT", "ACGNACGN", "RCGTACGT"], max_distance=2)
    got = as_dict(nb)
    assert got == {(0, 1): 1, (0, 2): 2, (1, 2): 1, (0, 3): 1, (1, 3): 2}


def test_empty_sequences_are_at_the_other_length():
    got = as_dict(neighbors(["", "A", "ACG", "", "ACGTA"], max_distance=3))
    assert got == {(0, 1): 1, (0, 2): 3, (0, 3): 0, (1, 2): 2, (1, 3): 1, (2, 3): 3, (2, 4): 2}


def test_protein_sequences():
    seqs = families(13, 3, 20, 70, 6, "ACDEFGHIKLMNPQRSTVWY")
    b = SeqBatch.from_strings(seqs, alphabet="protein")
    for d in (1, 3):
        assert as_dict(neighbors(b, max_distance=d)) == brute(b, d)


def dada2_uniques() -> list[str]:
    seen: dict[str, int] = {}
    for name in ("sam1F.fastq.gz", "sam2F.fastq.gz"):
        with gzip.open(DATA / name, "rt") as f:
            for k, line in enumerate(f):
                if k % 4 == 1:
                    seen.setdefault(line.strip(), len(seen))
    return list(seen)


@pytest.mark.parametrize("d", [1, 2, 3, 13])
def test_real_dada2_reads_dereplicated(d):
    seqs = dada2_uniques()[:900]
    assert len(set(seqs)) == len(seqs)
    assert as_dict(neighbors(seqs, max_distance=d)) == brute(seqs, d)


def test_the_reference_backend_equals_the_cpu():
    for d in (0, 2, 5):
        ref = neighbors(MIXED, max_distance=d, backend="reference")
        cpu = neighbors(MIXED, max_distance=d, backend="cpu")
        assert as_dict(ref) == as_dict(cpu)


@pytest.mark.parametrize("d", [1, 3])
@pytest.mark.parametrize("count", [1, 2, 3, 7])
def test_shards_partition_the_pairs_and_merge_to_the_same_bytes(tmp_path, d, count):
    whole = neighbors(MIXED, max_distance=d)
    whole.write(tmp_path / "whole.tsv")
    whole.write(tmp_path / "whole.npz")
    parts = [neighbors(MIXED, max_distance=d, shard=(k, count)) for k in range(count)]
    assert sum(len(p) for p in parts) == len(whole)
    union = {}
    for p in parts:
        got = as_dict(p)
        assert not set(got) & set(union)
        union.update(got)
    assert union == as_dict(whole)
    for k, p in enumerate(parts):
        p.write(tmp_path / f"s{k}.tsv")
        p.write(tmp_path / f"s{k}.npz")
    merge_neighbors([tmp_path / f"s{k}.tsv" for k in range(count)], tmp_path / "m.tsv")
    assert (tmp_path / "m.tsv").read_bytes() == (tmp_path / "whole.tsv").read_bytes()
    shuffled = [tmp_path / f"s{k}.npz" for k in reversed(range(count))]
    merged = merge_neighbors(shuffled, tmp_path / "m2.tsv")
    assert (tmp_path / "m2.tsv").read_bytes() == (tmp_path / "whole.tsv").read_bytes()
    assert as_dict(merged) == as_dict(whole)


def test_merge_refuses_a_missing_or_repeated_shard(tmp_path):
    for k in range(3):
        neighbors(MIXED, max_distance=1, shard=(k, 3)).write(tmp_path / f"s{k}.npz")
    with pytest.raises(ValueError, match="missing"):
        merge_neighbors([tmp_path / "s0.npz", tmp_path / "s2.npz"])
    import shutil

    shutil.copy(tmp_path / "s0.npz", tmp_path / "s0_copy.npz")
    with pytest.raises(ValueError, match="both shard 1/3"):
        merge_neighbors([tmp_path / "s0.npz", tmp_path / "s0_copy.npz", tmp_path / "s2.npz"])
    # Before: a .tsv shard given twice was merged into duplicated pairs (a .tsv holds no
    # shard number); now the same file twice is refused, .npz and .tsv alike
    for k in range(3):
        neighbors(MIXED, max_distance=1, shard=(k, 3)).write(tmp_path / f"s{k}.tsv")
    for ext in ("npz", "tsv"):
        with pytest.raises(ValueError, match="are the same file"):
            merge_neighbors([tmp_path / f"s{k}.{ext}" for k in (0, 0, 1, 2)], tmp_path / "m.tsv")
    assert not (tmp_path / "m.tsv").exists()


def test_merge_takes_the_shard_tables_computed_in_process():
    """Before: merge_neighbors(parts) of the README's in-process shards raised pathlib's
    TypeError. Now Neighbors tables merge as their .npz files do, with the same checks."""
    whole = neighbors(MIXED, max_distance=2)
    parts = [neighbors(MIXED, max_distance=2, shard=(k, 4)) for k in range(4)]
    merged = merge_neighbors(parts[::-1])
    assert as_dict(merged) == as_dict(whole) and merged.digest == whole.digest
    assert merged.i.tolist() == whole.i.tolist() and merged.j.tolist() == whole.j.tolist()
    with pytest.raises(ValueError, match=r"shards \[4\] of 4 are missing"):
        merge_neighbors(parts[:3])
    with pytest.raises(TypeError, match="every shard as a Neighbors table or every one as a file"):
        merge_neighbors([parts[0], "s1.npz"])


def test_edge_table_views_and_files(tmp_path):
    seqs = ["ACGTACGT", "ACGTACGA", "TTTTTTTT", "ACGTACGT"]
    ids = ["a;size=10", "b;size=3;", "c", "d;size=1;sample=x"]
    nb = neighbors(SeqBatch.from_strings(seqs, ids=ids), max_distance=1)
    assert nb.ids == ["a", "b", "c", "d;sample=x"]
    assert as_dict(nb) == {(0, 1): 1, (0, 3): 0, (1, 3): 1}
    m = nb.to_scipy()
    assert m.shape == (4, 4) and m.nnz == 3 and m.tocsr()[0, 3] == 0
    assert nb.to_scipy("csr")[0, 1] == 1
    df = nb.to_pandas()
    assert df.columns.tolist() == ["id1", "id2", "distance"]
    assert df.values.tolist() == [["a", "b", 1], ["a", "d;sample=x", 0], ["b", "d;sample=x", 1]]
    nb.write(tmp_path / "p.tsv")
    assert (tmp_path / "p.tsv").read_text() == "a\tb\t1\na\td;sample=x\t0\nb\td;sample=x\t1\n"
    nb.write(tmp_path / "p.npz")
    back = read_neighbors(tmp_path / "p.npz")
    assert back.ids == nb.ids and as_dict(back) == as_dict(nb) and back.max_distance == 1
    tsv = read_neighbors(tmp_path / "p.tsv")
    assert tsv.ids == ["a", "b", "d;sample=x"] and len(tsv) == 3
    with pytest.raises(ValueError, match=r"\.csv"):
        nb.write(tmp_path / "p.csv")
    assert not (tmp_path / "p.csv").exists()


def test_ids_equal_without_their_size_annotation_are_refused():
    b = SeqBatch.from_strings(["ACGT", "ACGA"], ids=["x;size=2", "x;size=5"])
    with pytest.raises(DuplicateIdError, match="dereplicate"):
        neighbors(b, max_distance=1)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"max_distance": -1}, ValueError, "non-negative"),
        ({"max_distance": 1.5}, ValueError, "whole number"),
        ({"max_distance": True}, ValueError, "non-negative"),
        ({"model": "hamming"}, ModelError, "unknown neighbour model"),
        ({"shard": (2, 2)}, ValueError, "shard"),
        ({"shard": (0, 0)}, ValueError, "shard"),
        ({"k": 5}, ModelError, "k-mer models"),
        ({"backend": "warp"}, BackendUnavailableError, "unknown backend"),
        ({"threads": -3}, ValueError, "threads"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        neighbors(["ACGT", "ACGA"], **kwargs)


def test_gaps_are_refused_with_the_ungap_hint():
    with pytest.raises(AlphabetError, match="--ungap"):
        neighbors(["AC-GT", "ACGGT"], max_distance=1)


def test_a_named_gpu_backend_that_cannot_run_is_an_error(monkeypatch):
    monkeypatch.delenv("NUMBA_ENABLE_CUDASIM", raising=False)
    import bioaccel.backends as reg

    monkeypatch.setattr(reg, "_instances", {})
    for name in ("cupy", "numba-cuda"):
        if reg.available_backends()[name] is None:
            continue  # a real GPU: nothing to refuse
        with pytest.raises(BackendUnavailableError):
            neighbors(MIXED, max_distance=1, backend=name)


@pytest.mark.cudasim
def test_numba_verification_on_the_simulator_equals_the_cpu(monkeypatch):
    monkeypatch.setenv("NUMBA_ENABLE_CUDASIM", "1")
    require("numba", "numba runs the CUDA simulator")
    import bioaccel.backends as reg
    from bioaccel.backends.numba._backend import NumbaCudaBackend

    monkeypatch.setattr(reg, "_instances", {"numba-cuda": NumbaCudaBackend()})
    monkeypatch.setattr(NumbaCudaBackend, "pair_chunk", 97)
    seqs = families(17, 2, 12, 70, 5) + ["", "A", "NNNN"]
    for d in (1, 3):
        sim = neighbors(seqs, max_distance=d, backend="numba-cuda")
        assert as_dict(sim) == as_dict(neighbors(seqs, max_distance=d, backend="cpu"))
        assert sim.candidates >= len(sim)


def test_edit_pairs_of_every_cpu_backend_agree_with_the_bound():
    from bioaccel.backends import get_backend

    b = SeqBatch.from_strings(MIXED)
    rng = np.random.default_rng(3)
    pi = rng.integers(0, len(b), 400)
    pj = rng.integers(0, len(b), 400)
    m = edit_distances(b, backend="cpu")
    for d in (0, 2, 7):
        want = np.minimum(m[pi, pj], d + 1)
        for name in ("cpu", "reference"):
            got = get_backend(name, "edit_pairs").edit_pairs(b, pi, pj, d, 1)
            np.testing.assert_array_equal(got, want)


def test_virtual_devices_spread_the_verification(monkeypatch):
    monkeypatch.setenv("BIOACCEL_VIRTUAL_GPUS", "3")
    for d in (1, 4):
        spread = neighbors(MIXED, max_distance=d, devices="all")
        assert as_dict(spread) == as_dict(neighbors(MIXED, max_distance=d))


def test_size_annotations_stripped_in_bulk_as_one_by_one():
    from bioaccel.neighbors import display_ids, strip_size

    names = ["a;size=12", "b;size=3;sample=x", "plain", "x;size=;y", "x;size=5x"]
    names += ["c;size=x;size=3", "d;size=3;size=4;", ";size=1", "e;size=2;;", "q;size=7;z;size=8"]
    names += [f"u{k};size={k};" for k in range(2000)]
    got = display_ids(names)  # over 1,000 names: the C++ path
    assert got == [strip_size(x) for x in names]
    assert got[:5] == ["a", "b;sample=x", "plain", "x;size=;y", "x;size=5x"]
    assert got[5:10] == ["c;size=x", "d;size=4;", "", "e;;", "q;z;size=8"]
    with pytest.raises(DuplicateIdError, match="dereplicate"):
        display_ids(names + ["u5;size=99"])


@pytest.mark.nvcc
def test_cuda_c_kernel_with_the_bound_equals_the_cpu_on_the_candidates(tmp_path_factory):
    """What the cupy backend's edit_pairs launches (kernels/edit_distance.cu, global, with the
    bound), built by nvcc for the CPU, on the filter's candidate pairs."""
    from bioaccel._core.native import load_native
    from bioaccel.backends import get_backend
    from tests import nvcc_host
    from tests.edit_oracle import run_host

    exe = nvcc_host.build(tmp_path_factory, "edit_host.cu")
    seqs = families(23, 2, 10, 90, 6, "ACGTN") + ["", "A"]
    b = SeqBatch.from_strings(seqs)
    for d in (1, 3):
        ci, cj, _, _ = load_native().edit_neighbors(
            b.codes, b.offsets, b.alphabet.size, d, verify=False
        )
        full = run_host(exe, b, b, 0, d)  # every pair, the kernel's bounded distances
        want = get_backend("cpu", "edit_pairs").edit_pairs(b, ci, cj, d, 1)
        np.testing.assert_array_equal(full[ci, cj], want)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["cupy", "numba-cuda"])
def test_real_gpu_verification_equals_the_cpu(name):
    from bioaccel.backends import available_backends

    why = available_backends()[name]
    if why is not None:
        unavailable(f"{name}: {why}")
    seqs = families(29, 4, 40, 250, 6)
    for d in (1, 2, 4):
        gpu = neighbors(seqs, max_distance=d, backend=name)
        assert as_dict(gpu) == as_dict(neighbors(seqs, max_distance=d, backend="cpu"))


def test_a_dict_is_read_as_ids_and_sequences():
    """Before: neighbors({'sampleA': 'ACGT...', ...}) compared the keys ('sampleA' against
    'sampleB', as protein) under ids seq0, seq1. Now a mapping is id -> sequence, (id,
    sequence) pairs are read too, and anything else that is not a string is refused."""
    seqs = {"sampleA": "ACGTACGTAAAA", "sampleB": "TTTTGGGGCCCC", "sampleC": "ACGTACGTAAAT"}
    nb = neighbors(seqs, max_distance=1)
    assert nb.ids == list(seqs) and as_dict(nb) == {(0, 2): 1}
    assert as_dict(neighbors(list(seqs.items()), max_distance=1)) == {(0, 2): 1}
    with pytest.raises(TypeError, match="sequence 2: expected a string, got int"):
        neighbors(["ACGT", 7], max_distance=1)


def test_a_threshold_past_every_length_is_searched_as_the_longest():
    """Before: -d 2147483647 was refused ("max_distance is too large", naming neither) and
    2^63 or more ended in an internal TypeError. No two sequences are further apart than
    the longer's length, so any larger threshold gives the pairs of the longest length."""
    want = as_dict(neighbors(MIXED, max_distance=max(len(s) for s in MIXED)))
    n = len(MIXED)
    assert len(want) == n * (n - 1) // 2
    for d in (2**31 - 1, 2**63, 10**30):
        nb = neighbors(MIXED, max_distance=d)
        assert as_dict(nb) == want and nb.max_distance == d


def test_a_tsv_table_reads_back_with_i_before_j_in_order(tmp_path):
    """Before: ids read from a .tsv are numbered by first appearance, so a line's second id
    could have the smaller number: pairs with i > j, out of order, a to_scipy() that was not
    upper-triangular. Now every pair is (i < j), sorted by (i, j), naming the same pairs."""
    nb = neighbors(MIXED, max_distance=3)
    nb.write(tmp_path / "p.tsv")
    back = read_neighbors(tmp_path / "p.tsv")
    assert (back.i < back.j).all() and (np.diff(back.i * back.n + back.j) > 0).all()
    names, again = np.array(nb.ids), np.array(back.ids)
    want = {(frozenset(p), d) for p, d in zip(zip(names[nb.i], names[nb.j]), nb.distance.tolist())}
    got = {
        (frozenset(p), d) for p, d in zip(zip(again[back.i], again[back.j]), back.distance.tolist())
    }
    assert got == want and any(
        back.ids.index(a) > back.ids.index(b) for a, b in zip(names[nb.i], names[nb.j])
    )


def test_a_threshold_large_against_the_lengths_verifies_every_pair(monkeypatch):
    """Before: 41 phiX genomes at d = 400 took 30 s in the segment filter (its probes grow
    as d^3) where every pair takes about a second. Now the cpu backend verifies every pair
    when that costs less (the same pairs: the filter forced gives them too); on amplicons at
    small d it keeps filtering."""
    from bioaccel.neighbors import _edit

    rng = np.random.default_rng(9)
    base = "".join(rng.choice(list("ACGT"), 600))
    genomes = [mutate(rng, base, int(rng.integers(0, 90)), "ACGT") for _ in range(12)]
    batch = SeqBatch.from_strings(genomes)
    assert _edit.all_pairs_cheaper(batch, 60, 0, len(batch))
    amplicons = SeqBatch.from_strings(MIXED)
    assert not _edit.all_pairs_cheaper(amplicons, 2, 0, len(amplicons))
    every = neighbors(genomes, max_distance=60)
    monkeypatch.setattr(_edit, "ALL_PAIRS_AT_MOST", 0)  # the filter, forced
    assert as_dict(neighbors(genomes, max_distance=60)) == as_dict(every)
    assert 0 < len(every) < len(genomes) * (len(genomes) - 1) // 2
