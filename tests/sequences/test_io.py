"""Reading sequences: formats through Biopython, messy headers, clear errors."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import bioaccel
from bioaccel import SeqBatch
from bioaccel.errors import AlphabetError, DuplicateIdError, SequenceFormatError

SEQS = {
    "A/Sao_Paulo/43812/2009": "ACGTNACGT-",
    "Bacteria;Firmicutes;Bacilli": "ACGTRACGTA",
    "x": "acgtuacg.a",
}


def write_fasta(path, records, space_after_gt=False):
    gt = "> " if space_after_gt else ">"
    path.write_text(
        "".join(f"{gt}{k} some description\n{v[:5]}\n{v[5:]}\n" for k, v in records.items())
    )
    return path


def test_fasta_keeps_full_ids_and_folds_case(tmp_path):
    b = bioaccel.read_sequences(write_fasta(tmp_path / "x.fa", SEQS))
    assert b.ids == list(SEQS)
    assert b.alphabet.name == "dna"
    assert b.sequence(2) == "ACGTTACG-A"  # lower case folded, U read as T, '.' as gap
    assert b.codes.dtype == np.uint8 and b.offsets.tolist() == [0, 10, 20, 30]


def test_space_after_gt(tmp_path):
    b = bioaccel.read_sequences(write_fasta(tmp_path / "x.fa", SEQS, space_after_gt=True))
    assert b.ids == list(SEQS)


def test_gzip_by_content_not_name(tmp_path):
    plain = write_fasta(tmp_path / "x.fa", SEQS).read_bytes()
    p = tmp_path / "no_suffix"
    p.write_bytes(gzip.compress(plain))
    assert bioaccel.read_sequences(p).ids == list(SEQS)


def test_fastq(tmp_path):
    p = tmp_path / "r.fastq.gz"
    p.write_bytes(gzip.compress(b"@r1 desc\nACGTN\n+\nIIIII\n@r2\nACG\n+\nIII\n"))
    b = bioaccel.read_sequences(p)
    assert b.ids == ["r1", "r2"] and b.lengths.tolist() == [5, 3]


@pytest.mark.parametrize("fmt", ["clustal", "phylip-relaxed", "stockholm", "nexus"])
def test_alignment_formats(tmp_path, fmt):
    from Bio import AlignIO
    from Bio.Align import MultipleSeqAlignment
    from Bio.Seq import Seq
    from Bio.SeqRecord import SeqRecord

    recs = [
        SeqRecord(
            Seq("ACGT-ACGTA"), id="long_name_of_more_than_ten", annotations={"molecule_type": "DNA"}
        ),
        SeqRecord(Seq("ACGTTACGTA"), id="short", annotations={"molecule_type": "DNA"}),
    ]
    p = tmp_path / "aln.txt"
    AlignIO.write(MultipleSeqAlignment(recs), p, fmt)
    b = bioaccel.read_sequences(p)  # format sniffed from the content
    assert b.ids == ["long_name_of_more_than_ten", "short"]
    assert b.sequence(0) == "ACGT-ACGTA"


def test_protein_alphabet_guessed():
    b = SeqBatch.from_strings(["MKVLEF*", "mkvlqx-"])
    assert b.alphabet.name == "protein"


def test_duplicate_ids_name_both_records(tmp_path):
    p = tmp_path / "d.fa"
    p.write_text(">a\nACGT\n>b\nACGT\n>a\nACGA\n")
    with pytest.raises(DuplicateIdError, match=r"d.fa: duplicate id 'a': record 1 and record 3"):
        bioaccel.read_sequences(p)


def test_invalid_letter_names_record_position_letter(tmp_path):
    p = tmp_path / "bad.fa"
    p.write_text(">ok\nACGT\n>bad one\nACGT\nAC1T\n")
    with pytest.raises(AlphabetError, match=r"record 'bad', position 7: invalid letter '1'"):
        bioaccel.read_sequences(p, alphabet="dna")
    with pytest.raises(AlphabetError, match=r"position 7: invalid letter '1'"):
        bioaccel.read_sequences(p)  # auto: not DNA, not protein either


def test_dna_alphabet_rejects_protein_letters():
    with pytest.raises(AlphabetError, match=r"record 's1', position 3: invalid letter 'E'"):
        SeqBatch.from_strings(["ACGT", "ACEG"], ids=["s0", "s1"], alphabet="dna")


@pytest.mark.parametrize(
    "content,message",
    [
        (b"", "file is empty"),
        (b"\n  \n", "file is empty"),
        (b"hello world\nthis is prose\n", "not a sequence file: first line 'hello world'"),
        (b"\x00\x01\xff\xfe", "is not text"),
        (b">\nACGT\n", "record 1 has an empty id"),
    ],
)
def test_bad_files(tmp_path, content, message):
    p = tmp_path / "in.dat"
    p.write_bytes(content)
    with pytest.raises(SequenceFormatError, match=message):
        bioaccel.read_sequences(p)


def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(SequenceFormatError, match="no such file"):
        bioaccel.read_sequences(tmp_path / "nope.fa")
    p = write_fasta(tmp_path / "x.fa", SEQS)
    with pytest.raises(SequenceFormatError, match="unknown sequence format 'genbank'"):
        bioaccel.read_sequences(p, format="genbank")


def test_truncated_fastq_is_an_error(tmp_path):
    p = tmp_path / "r.fq"
    p.write_text("@r1\nACGT\n+\nII\n")
    with pytest.raises(SequenceFormatError, match="not valid FASTQ"):
        bioaccel.read_sequences(p)


def test_the_letters_given_are_kept_beside_the_codes(tmp_path):
    """The codes fold case and read U as T and '.' as '-'; the file's own letters stay beside
    them (what the MSA and align write back), through every way a batch is cut or joined."""
    path = write_fasta(tmp_path / "x.fa", SEQS)
    b = bioaccel.read_sequences(path)
    given = [v for v in SEQS.values()]
    assert [b.given_sequence(i) for i in range(3)] == given
    assert b.given_sequence(-1) == "acgtuacg.a" and b.sequence(-1) == "ACGTTACG-A"
    for part, want in (
        (b.subset([2, 0]), [given[2], given[0]]),
        (b[1:], given[1:]),
        (b[::-1], given[::-1]),
        (b.ungapped(), [g.replace("-", "").replace(".", "") for g in given]),
    ):
        assert [part.given_sequence(i) for i in range(len(part))] == want
    other = tmp_path / "y.fa"
    other.write_text(">y\nACGT\n")
    joined = bioaccel.read_many([path, other])
    assert [joined.given_sequence(i) for i in range(4)] == [*given, "ACGT"]
    plain = SeqBatch.from_strings(["ACGT", "AC-T"])  # its letters are the codes': none kept
    assert plain.given is None and plain.given_sequence(1) == "AC-T"
    # a sequence too short to tell, read again as the other side's protein: its U stays a U
    q, t = bioaccel.sequences.as_batch_pair(["MKWVTFISLLFLFSSAYSRGV"], ["GAUGA"])
    assert t.alphabet is bioaccel.PROTEIN and t.sequence(0) == "GAUGA"


def test_subset_and_alignment_view():
    b = SeqBatch.from_strings(["AAAA", "CCCC", "GGGG"], ids=["a", "b", "c"])
    s = b.subset([2, 0])
    assert s.ids == ["c", "a"] and s.sequence(0) == "GGGG"
    assert b.as_alignment().shape == (3, 4)


def test_real_data_reads(woodmouse, flu_ha):
    w = bioaccel.read_sequences(woodmouse)
    assert len(w) == 15 and set(w.lengths) == {965}
    h = bioaccel.read_sequences(flu_ha)
    assert len(h) == 599 and set(h.lengths) == {1701}


def test_seqbatch_slicing_gives_batches():
    # a slice of a batch is a batch (ids kept), as a list's slice is a list
    seqs = ["ACGT", "GG", "", "TTTAC", "CA", "A"]
    b = SeqBatch.from_strings(seqs, ids=list("uvwxyz"))
    for key in (
        slice(2, 5),
        slice(None, 3),
        slice(-2, None),
        slice(4, 2),
        slice(None, None, 2),
        slice(None, None, -1),
        slice(5, 0, -2),
        slice(1, 100),
    ):
        part = b[key]
        assert isinstance(part, SeqBatch)
        assert part.ids == list("uvwxyz")[key]
        assert [part.sequence(k) for k in range(len(part))] == seqs[key]
        assert part.alphabet is b.alphabet
    assert b[2:5].codes.base is not None  # step 1 shares the buffer
    assert b.alphabet.decode(b[3]) == "TTTAC" and b.alphabet.decode(b[-3]) == "TTTAC"
    with pytest.raises(IndexError, match="index 6 outside a batch of 6"):
        b[6]
    with pytest.raises(IndexError, match="index -7 outside"):
        b[-7]
    with pytest.raises(TypeError, match="integers or slices"):
        b["u"]
