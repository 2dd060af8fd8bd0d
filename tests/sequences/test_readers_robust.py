"""Readers that fail in one line and read what other tools read (and a mutation test of the
one mechanism behind it): every reader's failure is exit 2 naming the file;
FASTA/FASTQ with blank lines first, a byte-order mark, ';' comments or Latin-1 headers are
read; k larger than every sequence is said so; and every reader, fed truncated,
blank-prefixed, BOM, CR-only, binary and wrong-kind files, never exits 1 and never leaves
output behind."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

import bioaccel
from bioaccel.errors import SequenceFormatError
from tests.cli_runner import invoke as cli
from tests.datasets import require

FASTA = (
    ">a first\nACGTACGTACGGTTAACC\n>b\nACGTACGTACGGTTAACA\n>c\nACGAACGTACGGTAAACC\n"
    ">d\nTCGAACGTTCGGTAAACC\n"
)


def one_error_line(res, *words):
    assert res.exit_code == 2, (res.exit_code, res.output)
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bioaccel: error: "), res.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    return lines[0]


# -- a reader's failure is one line naming the file --------------------------------------------
def test_nexus_that_bio_nexus_rejects_is_one_line(tmp_path):
    # DATATYPE=STANDARD (morphology, as phyml's nexus_example.nxs): Bio.Nexus raises
    # NexusError with the whole block in its message
    p = tmp_path / "m.nex"
    p.write_text(
        "#NEXUS\nBEGIN DATA;\nDIMENSIONS NTAX=2 NCHAR=300;\nFORMAT DATATYPE=STANDARD "
        'SYMBOLS="0123" MISSING=?;\nMATRIX\n'
        + "".join(f"t{i} {'0123' * 75}\n" for i in range(2))
        + ";\nEND;\n"
    )
    line = one_error_line(cli("distance", p, "-o", tmp_path / "d.phy"), str(p), "not valid NEXUS")
    assert len(line) < 300
    # an interleaved matrix without INTERLEAVE (phyml's example.nex)
    p2 = tmp_path / "i.nex"
    p2.write_text(
        "#NEXUS\nBEGIN DATA;\nDIMENSIONS NTAX=2 NCHAR=8;\nFORMAT DATATYPE=DNA;\nMATRIX\n"
        "s1 ACGT\ns2 ACGA\n\nACGT\nACGA\n;\nEND;\n"
    )
    one_error_line(cli("distance", p2, "-o", tmp_path / "d.phy"), str(p2))
    assert not (tmp_path / "d.phy").exists()


def test_stockholm_gr_line_of_the_wrong_length_is_one_line(tmp_path):
    p = tmp_path / "x.sto"
    p.write_text("# STOCKHOLM 1.0\na ACGT-ACGT\nb ACGTTACGA\n#=GR a SS <<..>>\n//\n")
    one_error_line(cli("distance", p, "-m", "raw", "-o", tmp_path / "d.phy"), str(p))


def test_a_distance_tile_given_as_sketches_is_one_line(tmp_path):
    (tmp_path / "a.fa").write_text(FASTA)
    assert (
        cli(
            "distance", tmp_path / "a.fa", "--tile", "0,0", "--tiles", "1", "-o", tmp_path / "t.npz"
        ).exit_code
        == 0
    )
    one_error_line(
        cli("distance", tmp_path / "t.npz", "-m", "mash", "-o", tmp_path / "d.phy"),
        "a distance tile",
        "merge-tiles",
    )
    np.save(tmp_path / "plain.npy", np.zeros((3, 3)))
    one_error_line(
        cli("merge-tiles", tmp_path / "plain.npy", "-o", tmp_path / "m.phy"),
        "not a bioaccel distance tile",
    )
    one_error_line(
        cli("distance", tmp_path / "plain.npy", "-m", "mash", "-o", tmp_path / "d.phy"), "plain.npy"
    )


# -- files other tools read: blank lines first, a byte-order mark, comments, Latin-1 ------------
@pytest.mark.parametrize(
    "raw",
    [
        b"\n\n  \n" + FASTA.encode(),  # blank lines first
        b"\xef\xbb\xbf" + FASTA.encode(),  # UTF-8 byte-order mark
        b";old FASTA comment\n" + FASTA.replace(">b\n", ">b\n;inner comment\n").encode(),
        FASTA.replace(">a first", ">a caf\xe9").encode("latin-1"),  # Latin-1 header
        gzip.compress(b"\n" + FASTA.encode()),
    ],
    ids=["blank-first", "bom", "semicolon-comments", "latin-1", "gzip-blank-first"],
)
def test_fasta_variants_other_tools_read(tmp_path, raw):
    p = tmp_path / "x.fa"
    p.write_bytes(raw)
    b = bioaccel.read_sequences(p)
    assert b.ids == ["a", "b", "c", "d"]
    assert b.sequence(1) == "ACGTACGTACGGTTAACA"
    skbio = require("skbio", "scikit-bio is the oracle")
    if raw[:1] == b"\n":  # scikit-bio reads blank-prefixed FASTA: the same records
        assert [s.metadata["id"] for s in skbio.io.read(str(p), format="fasta")] == b.ids


def test_fastq_with_blank_lines_first_and_a_bom(tmp_path):
    p = tmp_path / "r.fq"
    p.write_bytes(b"\xef\xbb\xbf\n\n@r1\nACGT\n+\nIIII\n@r2\nACGA\n+\nIIII\n")
    assert bioaccel.read_sequences(p).ids == ["r1", "r2"]


def test_binary_files_are_refused_naming_the_byte(tmp_path):
    p = tmp_path / "x.fa"
    p.write_bytes(b">a\nACGT\x00\x01\x02\n")
    with pytest.raises(SequenceFormatError, match=r"byte 7 is not text \(0x00\): a binary file"):
        bioaccel.read_sequences(p)


# -- k larger than every sequence -----------------------------------------------------------------
@pytest.mark.parametrize("model", ["mash", "kmer", "jaccard"])
def test_k_longer_than_every_sequence_is_said_so(tmp_path, model):
    p = tmp_path / "s.fa"
    p.write_text(">a\nACGTA\n>b\nACG\n")
    k = 6 if model == "kmer" else 21
    one_error_line(
        cli("distance", p, "-m", model, "-o", tmp_path / "d.phy"),
        f"no sequence has a k-mer of length {k} (shortest 3, longest 5 letters",
    )
    one_error_line(
        cli("sketch", p, "-o", tmp_path / "s.npz"), "no sequence has a k-mer of length 21"
    )
    assert sorted(x.name for x in tmp_path.iterdir()) == ["s.fa"]


# -- the mechanism: every reader under mutation ------------------------------------------------
def _inputs(tmp_path):
    """One valid file per reader: (name, bytes, command that reads it)."""
    from bioaccel.distances._tiles import distance_tile, tile_bounds, write_tile

    work = tmp_path / "src"
    work.mkdir()
    (work / "a.fa").write_text(FASTA)
    batch = bioaccel.read_sequences(work / "a.fa")
    dm = bioaccel.distance_matrix(batch, "raw")
    for name in ("m.phy", "m.tsv", "m.npy", "m.npz", "m.cdist"):
        dm.write(work / name)
    bounds = tile_bounds(batch, 0, 0, 1)
    values, params = distance_tile(batch, "raw", bounds[:2], bounds[2:])
    write_tile(work / "t.npz", values, bounds, len(batch), batch.ids, params)
    from bioaccel.distances._kmers import sketch

    sketch(batch, k=5, size=50).save(work / "s.npz")
    aln = bioaccel.msa(work / "a.fa")
    for name in ("a.aln", "a.sto", "a.phy"):
        aln.write(work / name)
    (work / "a.fq").write_text("@r1\nACGTACGT\n+\nIIIIIIII\n@r2\nACGAACGT\n+\nIIIIIIII\n")
    (work / "a.nex").write_text(
        "#NEXUS\nBEGIN DATA;\nDIMENSIONS NTAX=2 NCHAR=8;\nFORMAT "
        "DATATYPE=DNA MISSING=? GAP=-;\nMATRIX\ns1 ACGTACGT\ns2 ACGAACGT\n"
        ";\nEND;\n"
    )
    (work / "g.nwk").write_text("((a,b),(c,d));\n")
    cases = [
        (f, ["distance", "{f}", "-m", "raw", "-o", "out.phy"])
        for f in ("a.fa", "a.aln", "a.sto", "a.phy", "a.fq", "a.nex")
    ]
    cases += [
        (f, ["tree", "{f}", "-o", "out.nwk"])
        for f in ("m.phy", "m.tsv", "m.npy", "m.npz", "m.cdist")
    ]
    cases += [
        ("t.npz", ["merge-tiles", "{f}", "-o", "out.phy"]),
        ("s.npz", ["distance", "{f}", "-m", "mash", "-o", "out.phy"]),
        ("g.nwk", ["msa", "a.fa", "--guide-tree", "{f}", "-o", "out.fa"]),
    ]
    return work, cases


def _mutations(raw: bytes, other: bytes) -> dict[str, bytes]:
    return {
        "truncated": raw[: max(1, len(raw) * 2 // 3)],
        "blank-prefixed": b"\n\n" + raw,
        "bom": b"\xef\xbb\xbf" + raw,
        "cr-only": raw.replace(b"\n", b"\r"),
        "binary": bytes(range(256)) * 4,
        "empty": b"",
        "wrong-kind": other,
    }


def test_every_reader_under_mutation_never_exits_1_nor_leaves_output(tmp_path, monkeypatch):
    work, cases = _inputs(tmp_path)
    monkeypatch.chdir(work)
    kinds = {f: (work / f).read_bytes() for f, _ in cases}
    wrong = {
        "m.phy": "a.fa",
        "m.tsv": "a.fa",
        "m.npy": "t.npz",
        "m.npz": "s.npz",
        "m.cdist": "m.npy",
        "t.npz": "m.npz",
        "s.npz": "t.npz",
        "g.nwk": "m.phy",
    }
    seen = []
    for f, cmd in cases:
        other = kinds[wrong.get(f, "m.npy")]  # a file of another kind
        for mutation, data in _mutations(kinds[f], other).items():
            bad = work / f"bad{''.join(f.partition('.')[1:])}"
            bad.write_bytes(data)
            before = sorted(p.name for p in work.iterdir())
            res = cli(*[str(bad) if a == "{f}" else a for a in cmd])
            seen.append((f, mutation, res.exit_code))
            assert res.exit_code in (0, 2), (f, mutation, res.exit_code, res.output)
            if res.exit_code == 2:
                assert len(res.stderr.splitlines()) == 1, (f, mutation, res.stderr)
                assert sorted(p.name for p in work.iterdir()) == before, (f, mutation)
            for out in work.glob("out.*"):
                out.unlink()
            bad.unlink()
    refused = {(f, m) for f, m, rc in seen if rc == 2}
    assert ("m.npy", "binary") in refused and ("a.fa", "wrong-kind") in refused
    # blank lines first, a BOM and CR line ends are read like the file itself
    for f, m, rc in seen:
        if f.endswith((".fa", ".fq", ".aln", ".sto", ".phy", ".tsv")) and m in (
            "blank-prefixed",
            "bom",
            "cr-only",
        ):
            assert rc == 0, (f, m)
