"""The amplicon reader's 2-bit letters (``Amplicons.letters``, csrc/clusters/amplicons.cpp)
against a Python transcription of the same records, and every consumer of them against the
byte-code path: the growth, the fastidious search, the writers; and the swarm path's
promise that it never decodes the letters a byte each (the memory of a sequencing run)."""

from __future__ import annotations

import dataclasses
import io

import numpy as np
import pytest

from bioaccel import cluster
from bioaccel._core import load_native
from bioaccel.clusters import _amplicons, read_amplicons
from tests.clusters.sim import simulate

CODES = {c: k for k, c in enumerate("ACGTRYSWKMBDHVN")}
CODES["U"] = 3


def _records(rng, n, letters="ACGT", lengths=(1, 100)):
    seqs = set()
    while len(seqs) < n:
        size = int(rng.integers(*lengths))
        seqs.add("".join(rng.choice(list(letters), size=size)))
    seqs = sorted(seqs)
    rng.shuffle(seqs)
    ab = rng.integers(1, 6, size=n)
    return [(f"r{k};size={int(a)}", s) for k, (a, s) in enumerate(zip(ab, seqs))]


def _fasta(records, rng, wrap=True, crlf=False, case=True) -> bytes:
    out = []
    nl = "\r\n" if crlf else "\n"
    for h, s in records:
        if case:
            s = "".join(c.lower() if rng.random() < 0.2 else c for c in s)
        if wrap and len(s) > 10:
            cut = int(rng.integers(1, len(s)))
            s = s[:cut] + nl + s[cut:]
        out.append(f">{h}{nl}{s}{nl}")
    return "".join(out).encode()


def _expected(records):
    """(codes, offsets) in swarm's order: abundance decreasing, then header bytes."""
    order = sorted(
        range(len(records)),
        key=lambda k: (-int(records[k][0].split("size=")[1]), records[k][0].encode(), k),
    )
    seqs = [records[k][1].upper() for k in order]
    codes = np.array([CODES[c] for s in seqs for c in s], dtype=np.uint8)
    offsets = np.concatenate(([0], np.cumsum([len(s) for s in seqs])))
    return codes, offsets


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_letters_are_packed_and_decode_to_the_records(seed):
    # lengths across word boundaries (31, 32, 33, 64, ...), lower case, U, wrapped lines
    rng = np.random.default_rng(seed)
    records = _records(rng, 300, "ACGTU", (1, 140))
    amp = read_amplicons(_fasta(records, rng, crlf=seed == 2))
    assert amp.letters is not None
    codes, offsets = _expected(records)
    assert np.array_equal(amp.lengths, np.diff(offsets))
    assert np.array_equal(amp.batch.offsets, offsets)
    assert np.array_equal(amp.batch.codes, codes)
    for k in rng.integers(0, len(records), size=20).tolist():
        assert np.array_equal(amp.batch[k], codes[offsets[k] : offsets[k + 1]])
    # 2 bits a letter, each sequence from a word boundary (under 8 bytes of padding), 4 bytes
    # each of its start and length
    assert amp.letters.nbytes <= len(codes) / 4 + 8 * len(records) + 8 * len(records) + 1024


def test_pieces_cut_anywhere_give_the_same_letters(tmp_path, monkeypatch):
    rng = np.random.default_rng(7)
    records = _records(rng, 200, "ACGT", (20, 90))
    path = tmp_path / "a.fa"
    path.write_bytes(_fasta(records, rng))
    whole = read_amplicons(path)
    monkeypatch.setattr(_amplicons, "_PIECE", 7)  # lines and records cut by the pieces
    cut = read_amplicons(path)
    assert np.array_equal(cut.batch.codes, whole.batch.codes)
    assert list(cut.raw_headers) == list(whole.raw_headers)


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_an_iupac_code_turns_the_reader_to_bytes_keeping_what_came_before(where):
    # the letters read 2 bits each (each record from a word boundary) are carried over
    rng = np.random.default_rng(11)
    records = _records(rng, 120, "ACGT", (30, 80))
    k = {"first": 0, "middle": 60, "last": 119}[where]
    h, s = records[k]
    records[k] = (h, s[:17] + "N" + s[17:] + "RY")
    amp = read_amplicons(_fasta(records, rng))
    assert amp.letters is None
    codes, offsets = _expected(records)
    assert np.array_equal(amp.batch.codes, codes)
    assert np.array_equal(amp.batch.offsets, offsets)


def test_repeats_are_equal_letters_and_equal_lengths():
    # all-A sequences share their words (A is 0): only the lengths tell them apart
    recs = [(f"a{n};size=1", "A" * n) for n in (1, 2, 31, 32, 33, 64, 65)]
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in recs).encode())
    assert amp.letters is not None and len(amp) == 7
    text = "".join(f">{h}\n{s}\n" for h, s in recs + [("b;size=2", "a" * 32)]).encode()
    with pytest.raises(
        ValueError,
        match=r"records 4 \('a32;size=1', line 7\) and 8 \('b;size=2', line 15\) hold the same sequence",
    ):
        read_amplicons(text)


@pytest.mark.parametrize("annotation", ["size", "underscore"])
def test_ids_are_made_when_read_and_equal_the_headers_without_annotation(annotation):
    if annotation == "size":
        text = b">x;size=3;b=1\nACGT\n>size=2;y\nACGA\n>z;size=1\nACGG\n"
        want = ["x;b=1", "y", "z"]
    else:
        text = b">x_3\nACGT\n>y_2\nACGA\n>z_1\nACGG\n"
        want = ["x", "y", "z"]
    amp = read_amplicons(text, abundance_annotation=annotation)
    assert amp.ids._text_ is None  # not made yet
    assert list(amp.ids) == want
    assert amp.ids[1] == want[1]


@pytest.mark.parametrize("d,differences", [(1, "edit"), (2, "swarm"), (3, "edit")])
def test_the_growth_on_packed_letters_equals_the_growth_on_codes(d, differences):
    rng = np.random.default_rng(d)
    records = simulate(600, seed=d + 40, parents=6, length=90, max_edits=3)
    text = "".join(f">{h}\n{s}\n" for h, s in records).encode()
    amp = read_amplicons(text)
    assert amp.letters is not None
    native = load_native()
    ab = np.ascontiguousarray(amp.abundance, dtype=np.uint64)
    packed = native.swarm_grow_search_packed(amp.letters, ab, d, True, differences == "swarm")
    codes = native.swarm_grow_search(
        amp.batch.codes, amp.batch.offsets, ab, d, True, differences == "swarm"
    )
    for a, b in zip(packed[:5], codes[:5]):
        assert np.array_equal(a, b)
    heavy = (rng.random(len(amp)) < 0.3).astype(np.uint8)
    assert np.array_equal(
        native.nearest_in_set_packed(amp.letters, heavy, 2, 2),
        native.nearest_in_set(amp.batch.codes, amp.batch.offsets, heavy, 2, 2),
    )


@pytest.mark.parametrize("fastidious", [False, True])
def test_the_swarm_path_never_decodes_the_letters(fastidious):
    # what a sequencing run's clustering reads: letters 2 bits each, start to outputs
    records = simulate(400, seed=9, parents=5, length=100, max_edits=3)
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in records).encode())
    result = cluster(amp, max_distance=1, fastidious=fastidious)
    for write in (result.write_otus, result.write_seeds, result.write_statistics):
        write(io.StringIO())
    assert "_codes" not in amp.batch.__dict__, "the swarm path decoded the letters a byte each"
    # and the outputs are those of the byte path (the same amplicons without their letters:
    # the growth and the fastidious search then read the codes)
    by_codes = cluster(
        dataclasses.replace(amp, letters=None), max_distance=1, fastidious=fastidious
    )
    assert "_codes" in amp.batch.__dict__  # the byte path did run
    assert np.array_equal(result.labels, by_codes.labels)


def test_the_otu_list_streamed_in_blocks_equals_the_list_written_at_once():
    records = simulate(500, seed=3, parents=6, length=80, max_edits=3)
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in records).encode())
    result = cluster(amp, max_distance=1)
    whole = b"".join(result._otu_blocks(amp.headers, block=1 << 20))
    for block in (1, 2, 7, 64):
        assert b"".join(result._otu_blocks(amp.headers, block=block)) == whole
    h = list(amp.headers)
    want = "".join(
        " ".join(h[k] for k in result.members[a:b].tolist()) + "\n"
        for a, b in zip(result.starts[:-1].tolist(), result.starts[1:].tolist())
    )
    assert whole.decode() == want


def test_a_clustering_pickles_with_its_packed_letters_and_lazy_ids():
    # for multiprocessing and caches: the letters pickle as their codes and pack again
    import pickle

    records = simulate(200, seed=4, parents=4, length=70, max_edits=3)
    amp = read_amplicons("".join(f">{h}\n{s}\n" for h, s in records).encode())
    result = cluster(amp, max_distance=2)
    back = pickle.loads(pickle.dumps(result))
    assert back.amplicons.letters is not None
    assert np.array_equal(back.amplicons.batch.codes, amp.batch.codes)
    assert list(back.amplicons.ids) == list(amp.ids)
    assert np.array_equal(back.labels, result.labels)


@pytest.mark.parametrize("definition", ["longer", "shorter"])
def test_greedy_on_packed_letters_equals_greedy_on_codes_and_never_decodes(definition):
    # centroids a byte each only (the infix identity's edit distances), never every amplicon
    records = simulate(500, seed=12, parents=6, length=90, max_edits=4)
    text = "".join(f">{h}\n{s}\n" for h, s in records).encode()
    amp = read_amplicons(text)
    native = load_native()
    shorter = definition == "shorter"
    for num, den in ((97, 100), (9, 10), (1, 2)):
        packed = native.greedy_search_packed(amp.letters, num, den, 2, shorter)
        codes = native.greedy_search(amp.batch.codes, amp.batch.offsets, num, den, 2, shorter)
        assert np.array_equal(packed[0], codes[0]) and np.array_equal(packed[1], codes[1])
    fresh = read_amplicons(text)
    result = cluster(fresh, method="greedy", identity=0.97, identity_definition=definition)
    result.write_otus(io.StringIO())
    assert "_codes" not in fresh.batch.__dict__, "greedy decoded the letters a byte each"
