"""Options that do nothing for the chosen model or output are refused by name (a silently
ignored option makes a user believe in a result it did not shape), and gapped input is made
usable for alignment-based work by an explicit ungapping."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel import SeqBatch
from bioaccel.distances._ondisk import stream_distances
from bioaccel.distances._tiles import distance_block, distance_tile
from bioaccel.errors import AlphabetError, ModelError
from tests.cli_runner import invoke as cli

DNA = [
    "ACGTACGTACGTAAGTACGA",
    "ACGTACGTACGTAAGAACGA",
    "ACGAACGTACGTTAGTACGT",
    "TCGAACGTTCGTAAGTACGA",
]
GAPPED_PROTEIN = {"p1": "MKV-LEFW-HHK", "p2": "MKVILEFWQHHK", "p3": "MR-VLEAW--HK"}


@pytest.fixture
def dna(tmp_path):
    p = tmp_path / "dna.fa"
    p.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(DNA)))
    return p


@pytest.fixture
def gapped(tmp_path):
    p = tmp_path / "aln.fa"
    p.write_text("".join(f">{k}\n{v}\n" for k, v in GAPPED_PROTEIN.items()))
    return p


@pytest.mark.parametrize(
    "args, message",
    [
        (
            ["-m", "k80", "-k", "5"],
            "-k/--kmer does nothing for model 'k80': it sets the k-mer length for "
            "kmer, jaccard and mash only",
        ),
        (
            ["-m", "mash", "--pairwise-deletion"],
            "--pairwise-deletion does nothing for model 'mash'",
        ),
        (
            ["-m", "jc69", "--seed", "7"],
            "--seed does nothing for model 'jc69': it seeds the MinHash hashes for mash only",
        ),
        (
            ["-m", "jaccard", "--sketch-size", "50"],
            "--sketch-size does nothing for model 'jaccard'",
        ),
        (["-m", "edit", "--matrix", "BLOSUM62"], "--matrix does nothing for model 'edit'"),
        (["-m", "k80", "--ungap"], "--ungap does nothing for model 'k80'"),
        (
            ["-m", "k80", "--float64"],
            "--float64 does nothing here: it applies to .cdist output only",
        ),
        (["-m", "k80", "--restart"], "--restart does nothing here"),
    ],
)
def test_cli_refuses_options_that_do_nothing(tmp_path, dna, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    res = cli("distance", dna, *args, "-o", "d.phy")
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert not (tmp_path / "d.phy").exists()


def test_cli_accepts_options_that_apply(tmp_path, dna, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for args in (
        ["-m", "k80", "--pairwise-deletion"],
        ["-m", "mash", "-k", "5", "--seed", "3"],
        ["-m", "k80", "--float64", "-o", "d.cdist"],
    ):
        out = args[-1] if args[-2] == "-o" else "d.phy"
        res = cli("distance", dna, *[a for a in args if a != out and a != "-o"], "-o", out)
        assert res.exit_code == 0, res.output


def test_python_refuses_options_that_do_nothing(tmp_path):
    with pytest.raises(ModelError, match="k= does nothing for model 'k80'"):
        bioaccel.distance_matrix(DNA, "k80", k=5)
    with pytest.raises(ModelError, match="pairwise_deletion= does nothing for model 'mash'"):
        bioaccel.distance_matrix(DNA, "mash", pairwise_deletion=True)
    with pytest.raises(ModelError, match="gap_open= does nothing for model 'jc69'"):
        stream_distances(DNA, "jc69", tmp_path / "d.cdist", gap_open=3)
    with pytest.raises(ModelError, match="matrix= does nothing for model 'raw'"):
        distance_block(DNA, "raw", (0, 2), (0, 2), matrix=(2, -3))
    # the one dispatch (distance_models.prepare) checks the MinHash options too
    with pytest.raises(ModelError, match="sketch_size= does nothing for model 'k80'"):
        bioaccel.distance_matrix(DNA, "k80", sketch_size=50)
    with pytest.raises(ModelError, match="seed= does nothing for model 'jaccard'"):
        distance_tile(DNA, "jaccard", (0, 2), (0, 2), seed=3)
    assert not list(tmp_path.iterdir())


def test_gapped_input_error_suggests_ungapping():
    batch = SeqBatch.from_strings(list(GAPPED_PROTEIN.values()), ids=list(GAPPED_PROTEIN))
    with pytest.raises(
        AlphabetError,
        match=r"letter '-' of sequence 'p1' at position 4 is not in the "
        r"matrix BLOSUM62; the sequences look aligned: remove the "
        r"gaps with SeqBatch.ungapped\(\) \(command line: --ungap\)",
    ):
        bioaccel.align_scores(batch)
    plain = {k: v.replace("-", "") for k, v in GAPPED_PROTEIN.items()}
    ungapped = batch.ungapped()
    assert [ungapped.sequence(i) for i in range(3)] == list(plain.values())
    assert ungapped.ids == list(GAPPED_PROTEIN)
    assert np.array_equal(
        bioaccel.align_scores(ungapped), bioaccel.align_scores(list(plain.values()))
    )
    for model in ("identity", "scoredist"):
        assert np.array_equal(
            bioaccel.distance_matrix(ungapped, model).data,
            bioaccel.distance_matrix(list(plain.values()), model).data,
        )
    # empty and all-gap sequences, DNA with '.'
    dna = SeqBatch.from_strings(["A-C.G", "----", ""], ids=list("xyz")).ungapped()
    assert [dna.sequence(i) for i in range(3)] == ["ACG", "", ""]


def test_cli_ungap(tmp_path, gapped, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = cli("align", gapped, "-o", "s.npy")
    assert (
        res.exit_code == 2
        and "remove the gaps with SeqBatch.ungapped() (command line: --ungap)" in res.output
    )
    assert cli("align", gapped, "--ungap", "-o", "s.npy").exit_code == 0
    plain = [v.replace("-", "") for v in GAPPED_PROTEIN.values()]
    assert np.array_equal(np.load(tmp_path / "s.npy"), bioaccel.align_scores(plain))
    for model in ("identity", "scoredist"):
        res = cli("distance", gapped, "-m", model, "--ungap", "-o", f"{model}.tsv")
        assert res.exit_code == 0, res.output
        got = bioaccel.DistanceMatrix.read(tmp_path / f"{model}.tsv")
        assert np.array_equal(got.data, bioaccel.distance_matrix(plain, model).data)


def test_binary_files_given_as_sequences_say_what_they_are(tmp_path, dna, monkeypatch):
    # a sketch file without -m mash once gave "byte 16 is not text": name what it is
    from bioaccel.distances._kmers import sketch
    from bioaccel.errors import SequenceFormatError

    monkeypatch.chdir(tmp_path)
    sk = tmp_path / "s.npz"
    sketch(DNA, k=5).save(sk)
    for model in ("k80", "jaccard"):
        res = cli("distance", sk, "-m", model, "-o", "d.phy")
        assert res.exit_code == 2
        assert (
            f"{sk}: a bioaccel sketch file (from `bioaccel sketch`), not sequences: compare the "
            f"sketches with the mash model (`bioaccel distance {sk} -m mash`"
        ) in res.output
    renamed = tmp_path / "sketches.bin"  # found by content with -m mash, whatever the name
    renamed.write_bytes(sk.read_bytes())
    assert cli("distance", renamed, "-m", "mash", "-o", "m.phy").exit_code == 0
    dm = bioaccel.distance_matrix(DNA, "raw")
    dm.write(tmp_path / "d.npy")
    dm.write(tmp_path / "d.cdist")
    for path, kind in [
        ("d.npy", "a NumPy .npy array"),
        ("d.cdist", "a bioaccel .cdist distance matrix"),
    ]:
        with pytest.raises(SequenceFormatError, match=f"{path}: {kind}"):
            bioaccel.read_sequences(tmp_path / path)


def test_sketch_takes_many_files_and_directories(tmp_path, monkeypatch):
    # genomes come as many files and folders of them, gzipped or not, FASTA or FASTQ
    import gzip

    from bioaccel.distances._kmers import Sketches, sketch

    monkeypatch.chdir(tmp_path)
    rng = np.random.default_rng(5)
    seqs = {f"r{i}": "".join(rng.choice(list("ACGT"), 200)) for i in range(6)}
    names = list(seqs)
    (tmp_path / "one.fa").write_text("".join(f">{n}\n{seqs[n]}\n" for n in names[:2]))
    d = tmp_path / "genomes"
    d.mkdir()
    (d / "b.fasta").write_text("".join(f">{n}\n{seqs[n]}\n" for n in names[3:5]))
    (d / "a.fna.gz").write_bytes(gzip.compress(f">{names[2]}\n{seqs[names[2]]}\n".encode()))
    (d / "README.txt").write_text("not sequences\n")
    (tmp_path / "last.fq").write_text(f"@{names[5]}\n{seqs[names[5]]}\n+\n{'I' * 200}\n")
    res = cli("sketch", "one.fa", "genomes", "last.fq", "-k", "15", "-s", "40", "-o", "all.npz")
    assert res.exit_code == 0, res.output
    got = Sketches.load(tmp_path / "all.npz")
    assert bioaccel.read_many(["one.fa", "genomes", "last.fq"]).ids == names
    want = sketch(list(seqs.values()), k=15, size=40)
    assert got.ids == names  # files in order, a directory's files sorted by name
    assert np.array_equal(got.values, want.values) and np.array_equal(got.offsets, want.offsets)
    # duplicates across files name both files; an empty directory and a missing path are named
    (tmp_path / "again.fa").write_text(f">{names[0]}\nACGTACGTACGTACGTACGT\n")
    res = cli("sketch", "one.fa", "again.fa", "-o", "x.npz")
    assert res.exit_code == 2 and "duplicate id 'r0': in one.fa and in again.fa" in res.output
    (tmp_path / "empty").mkdir()
    res = cli("sketch", "one.fa", "empty", "-o", "x.npz")
    assert res.exit_code == 2 and "empty: directory holds no sequence file" in res.output
    # - (stdin) as the one input, as the other commands read it
    res = cli(
        "sketch",
        "-",
        "-k",
        "15",
        "-s",
        "40",
        "-o",
        "in.npz",
        input=(tmp_path / "one.fa").read_text(),
    )
    assert res.exit_code == 0, res.output
    assert Sketches.load(tmp_path / "in.npz").ids == names[:2]
    res = cli("sketch", "-", "one.fa", "-o", "x.npz")
    assert res.exit_code == 2 and "- (stdin) is the only input" in res.output
    res = cli("sketch", "one.fa", "nope.fa", "-o", "x.npz")
    assert res.exit_code == 2 and "nope.fa: no such file or directory" in res.output
    assert not (tmp_path / "x.npz").exists()


def test_tree_refuses_options_that_do_nothing_and_ungaps(tmp_path, dna, gapped, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bioaccel.distance_matrix(DNA, "raw").write(tmp_path / "m.phy")
    for args, message in [
        (["m.phy", "-m", "tn93"], "-m/--model does nothing here: m.phy is a distance matrix"),
        (["m.phy", "--pairwise-deletion"], "--pairwise-deletion does nothing here"),
        (["m.phy", "-k", "5"], "-k/--kmer does nothing here: m.phy is a distance"),
        (["m.phy", "--matrix", "BLOSUM62"], "--matrix does nothing here"),
        (
            [dna, "-m", "mash", "--pairwise-deletion"],
            "--pairwise-deletion does nothing for model 'mash'",
        ),
        ([dna, "--ungap"], "--ungap does nothing for model 'k80'"),
    ]:
        res = cli("tree", *args, "-o", "t.nwk")
        assert res.exit_code == 2 and message in res.output, res.output
    assert not (tmp_path / "t.nwk").exists()
    res = cli("tree", gapped, "-m", "identity", "--ungap", "-o", "t.nwk")
    assert res.exit_code == 0, res.output
    plain = [v.replace("-", "") for v in GAPPED_PROTEIN.values()]
    want = bioaccel.nj(bioaccel.distance_matrix(plain, "identity").data, list(GAPPED_PROTEIN))
    assert (tmp_path / "t.nwk").read_text().strip() == want.to_newick()
