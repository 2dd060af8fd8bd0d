"""Which alphabet sequences are read in: ``auto`` by composition, not by
the letters DNA and protein share; mixed files and mixed inputs refused; ``alphabet=`` /
``--alphabet`` on every reading function and command; a matrix of the other alphabet
refused. Oracle: the sequences' real kind (UniProt peptides, real DNA files)."""

from __future__ import annotations

import logging

import numpy as np
import pytest

import bioaccel
from bioaccel import SeqBatch
from bioaccel.errors import AlphabetError
from bioaccel.pairwise._scoring import ScoringError
from bioaccel.sequences._alphabet import guess_alphabet
from tests.cli_runner import invoke as run

PROT = ">p1\nMKVLEFWHHKLLLEEGSTAV\n>p2\nMKVIEFWQHKLLLEEGSTAV\n"
DNA = ">d1\nACGTACGTAAACGTAGGGTTTACGAT\n>d2\nACGTACGTAAACGTAGGTTTACGAT\n"


@pytest.fixture
def files(tmp_path):
    out = {}
    for name, text in {
        "prot.fa": PROT,
        "dna.fa": DNA,
        "mixed.fa": PROT + DNA,
        "short.fa": ">s\nGAGA\n>t\nGAGG\n",
        "pep.fa": ">pep1\nMKWVTGHRSACDNK\n>pep2\nMKWVTGHRSACDNR\n",
    }.items():
        (tmp_path / name).write_text(text)
        out[name] = tmp_path / name
    return out


def test_peptides_of_iupac_letters_are_protein():
    # every letter of MKWVTGHRSACDNK is also an IUPAC nucleotide code: the old rule read
    # it as DNA and aligned it with +2/-3
    assert guess_alphabet(b"MKWVTGHRSACDNK").name == "protein"
    b = SeqBatch.from_strings(["MKWVTGHRSACDNK", "MKWVTGHRSACDNR"])
    assert b.alphabet.name == "protein"
    # BLOSUM62 (the protein default), not +2/-3: K/R scores 2 in BLOSUM62
    assert (
        bioaccel.align_scores(b).tolist()
        == bioaccel.align_scores(b, matrix="BLOSUM62", gap_open=11, gap_extend=1).tolist()
    )
    # real DNA with ambiguity codes stays DNA
    assert guess_alphabet(b"ACGTRACGTTGCAYACGTACGNNNACGT").name == "dna"


def test_dna_with_one_x_is_dna_and_the_x_is_named():
    # decided: composition says DNA (98% A/C/G/T/N), so reading the file as protein would
    # silently align DNA with BLOSUM62; the X is refused by record and position instead
    seq = "ACGTTGCAAC" * 5 + "X" + "ACGT"
    with pytest.raises(
        AlphabetError,
        match=r"record 'r', position 51: invalid letter 'X'.*"
        r"reads as dna.*masked bases are N",
    ):
        SeqBatch.from_strings([seq], ids=["r"])
    assert SeqBatch.from_strings([seq], alphabet="protein").alphabet.name == "protein"


def test_short_nucleotide_letters_are_ambiguous_and_logged(caplog):
    with caplog.at_level(logging.INFO, logger="bioaccel"):
        assert SeqBatch.from_strings(["GAGA"], source="x.fa").alphabet.name == "dna"
    assert "x.fa: 4 residues, all A/C/G/T/U/N: ambiguous, read as DNA" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="bioaccel"):
        SeqBatch.from_strings(["ACGTTGCAACGTTGCAACGTTGCA"])
    assert "ambiguous" not in caplog.text


def test_mixed_file_refused(files):
    with pytest.raises(
        AlphabetError,
        match=r"mixed\.fa: mixed alphabets: 'd1' reads as DNA .* "
        r"'p1' as protein",
    ):
        bioaccel.read_sequences(files["mixed.fa"])
    # named explicitly, the user has decided
    assert bioaccel.read_sequences(files["mixed.fa"], alphabet="protein").alphabet.name == "protein"
    res = run("distance", files["mixed.fa"], "-m", "kmer", "-o", "-")
    assert res.exit_code == 2 and "mixed alphabets" in res.output


def test_protein_queries_dna_targets_refused(files, tmp_path):
    # before: the CLI read the targets with the queries' alphabet (DNA aligned as protein)
    res = run("align", files["prot.fa"], files["dna.fa"], "-o", tmp_path / "s.tsv")
    assert res.exit_code == 2, res.output
    assert "read as protein but targets" in res.output and "mismatched alphabets" in res.output
    assert not (tmp_path / "s.tsv").exists()
    with pytest.raises(AlphabetError, match="mismatched alphabets"):
        bioaccel.align_scores(files["prot.fa"], files["dna.fa"])
    with pytest.raises(AlphabetError, match="mismatched alphabets"):
        bioaccel.edit_distances(files["prot.fa"], files["dna.fa"])
    # a side too short to tell takes the other side's alphabet
    got = bioaccel.align_scores(files["prot.fa"], files["short.fa"])
    want = bioaccel.align_scores(files["prot.fa"], files["short.fa"], alphabet="protein")
    assert np.array_equal(got, want)
    # a batch the caller built as DNA is not re-read
    with pytest.raises(AlphabetError, match="mismatched alphabets"):
        bioaccel.align_scores(files["prot.fa"], SeqBatch.from_strings(["GAGA"], alphabet="dna"))
    with pytest.raises(AlphabetError, match="is dna, not protein"):
        bioaccel.align_scores(SeqBatch.from_strings(["GAGA"], alphabet="dna"), alphabet="protein")


def test_matrix_of_the_other_alphabet_refused(files, tmp_path):
    res = run("align", files["dna.fa"], "--matrix", "BLOSUM62", "-o", tmp_path / "s.npy")
    assert (
        res.exit_code == 2
        and "BLOSUM62 is a protein matrix, but the sequences are dna" in res.output
    )
    res = run("msa", files["dna.fa"], "--matrix", "BLOSUM62", "-o", tmp_path / "m.fa")
    assert res.exit_code == 2 and "BLOSUM62 is a protein matrix" in res.output
    res = run("distance", files["dna.fa"], "-m", "identity", "--matrix", "BLOSUM62", "-o", "-")
    assert res.exit_code == 2 and "protein matrix" in res.output
    with pytest.raises(
        ScoringError, match="NUC.4.4 is a nucleotide matrix, but the sequences are protein"
    ):
        bioaccel.align_scores(files["prot.fa"], matrix="NUC.4.4")
    with pytest.raises(ScoringError, match="protein matrix"):
        bioaccel.msa(files["dna.fa"], matrix="BLOSUM62")
    # the nucleotide matrix on DNA, and DNA read as protein on purpose, still work
    assert bioaccel.align_scores(files["dna.fa"], matrix="NUC.4.4").shape == (2, 2)
    assert bioaccel.align_scores(files["dna.fa"], matrix="BLOSUM62", alphabet="protein").shape == (
        2,
        2,
    )


@pytest.mark.parametrize(
    "command",
    [
        ["distance", "-m", "kmer", "-k", "3", "-o", "-"],
        ["tree", "-m", "kmer", "-k", "3", "-o", "-"],
        ["align", "-o", "-"],
        ["sketch", "-k", "3", "-o", "{tmp}/s.npz"],
        ["msa", "-o", "-"],
    ],
)
def test_every_reading_command_takes_alphabet(files, tmp_path, command):
    args = [a.replace("{tmp}", str(tmp_path)) for a in command]
    # protein read as DNA: the first letter that is not a nucleotide code (M, K, V are) is named
    res = run(args[0], files["prot.fa"], *args[1:], "--alphabet", "dna")
    assert res.exit_code == 2, res.output
    assert "record 'p1', position 4: invalid letter 'L'" in res.output
    ok = run(args[0], files["short.fa"], *args[1:], "--alphabet", "protein")
    assert ok.exit_code == 0, ok.output


def test_every_reading_function_takes_alphabet(files, tmp_path):
    p = files["short.fa"]
    for call in (
        lambda a: bioaccel.read_sequences(p, alphabet=a),
        lambda a: bioaccel.read_many([p], alphabet=a),
    ):
        assert call("protein").alphabet.name == "protein"
        assert call("auto").alphabet.name == "dna"
    from bioaccel.distances._models import prepare

    assert prepare(p, "identity", alphabet="protein").params()["matrix"] == "BLOSUM62"
    assert prepare(p, "identity").params()["matrix"].startswith("match=2")
    assert len(bioaccel.distance_matrix(p, "identity", alphabet="protein")) == 2
    from bioaccel.distances._kmers import sketch
    from bioaccel.distances._ondisk import stream_distances

    assert sketch(p, k=2, size=4, alphabet="protein").alphabet == "protein"
    with pytest.raises(AlphabetError, match="invalid letter 'L'"):
        stream_distances(files["prot.fa"], "kmer", tmp_path / "d.cdist", alphabet="dna", k=2)
    with pytest.raises(AlphabetError, match="invalid letter 'L'"):
        bioaccel.edit_distances(files["prot.fa"], alphabet="dna")


def test_files_of_one_kind_across_read_many(files):
    with pytest.raises(
        AlphabetError,
        match=r"the first file \(.*prot.fa\) read as protein but a "
        r"later file \(.*dna.fa\) as dna",
    ):
        bioaccel.read_many([files["prot.fa"], files["dna.fa"]])
    # a file too short to tell follows the others
    b = bioaccel.read_many([files["short.fa"], files["prot.fa"]])
    assert b.alphabet.name == "protein" and b.ids[:2] == ["s", "t"]
