"""Alignment writers that keep every id whole and say what they write (and the one rule that
the output name decides the format): relaxed PHYLIP, full-width Clustal ids with a conservation line
that ape reads, gzip for .gz, refused extensions instead of FASTA, Stockholm ids checked; the
name decides the format through bioaccel._core.outputs.ALIGNMENT for the library and the command."""

from __future__ import annotations

import gzip

import pytest

import bioaccel
from bioaccel.msa_engine import MultipleAlignment
from bioaccel.msa_engine.alignment import conservation_line
from tests.cli_runner import run_process as run
from tests.datasets import require

#: ids that a 10- or 30-character cut makes equal, and one with a non-ASCII letter
RRM = [
    ("YIS5_YEAST_RRM_domain_1", "MKVLEAGHWKKLIIDAGW"),
    ("YIS5_YEAST_RRM_domain_2", "MKILDAGWKKVLEAG"),
    ("A/California/07/2009(H1N1)_segment4_HA", "WWPPMKVLEAGHW"),
    ("A/California/07/2009(H1N1)_segment6_NA", "MKVLEFAGHW"),
    ("ñandú", "MKVLEAGHW"),
]


@pytest.fixture(scope="module")
def aln():
    return bioaccel.msa(RRM)


@pytest.mark.parametrize(
    "name",
    [
        "x.phy",
        "x.phylip",
        "x.aln",
        "x.clustal",
        "x.sto",
        "x.fa",
        "x.afa",
        "x.a2m",
        "x.fa.gz",
        "x.aln.gz",
        "x.phy.gz",
        "plain",
    ],
)
def test_every_format_reads_back_whole(tmp_path, aln, name):
    aln.write(tmp_path / name)
    back = bioaccel.read_sequences(tmp_path / name)
    assert back.ids == aln.ids
    if not name.startswith("x.a2m"):  # A2M writes insert states in lower case
        assert [back.sequence(i) for i in range(len(back))] == aln.sequences


def test_phylip_is_relaxed_with_a_separator(tmp_path, aln):
    aln.write(tmp_path / "x.phy")
    lines = (tmp_path / "x.phy").read_text().splitlines()
    assert lines[0] == f"{len(aln)} {aln.width}"
    assert lines[1] == f"{aln.ids[0]}  {aln.sequences[0]}"
    from Bio import AlignIO

    back = AlignIO.read(tmp_path / "x.phy", "phylip-relaxed")
    assert [r.id for r in back] == aln.ids and [str(r.seq) for r in back] == aln.sequences


def test_clustal_keeps_long_ids_apart_and_has_a_conservation_line(tmp_path, aln):
    aln.write(tmp_path / "x.aln")
    text = (tmp_path / "x.aln").read_text()
    assert text.startswith("CLUSTAL")
    rows = [ln for ln in text.splitlines()[1:] if ln.strip()]
    assert rows[len(aln)].startswith(" ")  # the conservation line of the first block
    from Bio import AlignIO

    back = AlignIO.read(tmp_path / "x.aln", "clustal")
    assert [r.id for r in back] == aln.ids and len(set(aln.ids)) == len(aln.ids)
    assert [str(r.seq) for r in back] == aln.sequences
    skbio = require("skbio", "scikit-bio is the oracle")
    msa = skbio.TabularMSA.read(
        str(tmp_path / "x.aln"), format="clustal", constructor=skbio.Protein
    )
    assert list(msa.index) == aln.ids and [str(s) for s in msa] == aln.sequences


def test_conservation_marks():
    assert conservation_line(["MKVL-", "MRIL-", "MKVLA"], protein=True) == "*::* "
    assert conservation_line(["AS", "AT"], protein=True) == "*:"  # S/T: strong group STA
    assert conservation_line(["AC", "AT"], protein=False) == "* "  # DNA: identity only
    assert conservation_line(["CS", "SA"], protein=True) == ".:"  # C/S weak (CSA), S/A strong


@pytest.mark.r
def test_ape_reads_clustal_and_phylip(tmp_path, ro):
    # two blocks (a conservation line each), the second with no conserved column
    ids = ["seq_one_long_name_a", "b/2009(H1N1)_HA", "b/2009(H1N1)_NA"]
    rows = [
        "ACGTACGTACGGTTAACC" * 4 + "ACGT",
        "ACGTACGTACGGTTAACA" * 4 + "TGCA",
        "ACGAACGTAC-GTAAACC" * 4 + "GTAC",
    ]
    aln = MultipleAlignment(ids, rows, alphabet=bioaccel.DNA)
    for name in ("x.aln", "x.aln.gz"):
        aln.write(tmp_path / name)
        ro.r(f'x <- read.dna("{tmp_path / name}", format = "clustal", as.character = TRUE)')
        assert list(ro.r("rownames(x)")) == ids
        got = ["".join(ro.r(f"x[{k + 1}, ]")) for k in range(3)]
        assert got == [r.lower() for r in rows]
    aln.write(tmp_path / "x.phy")
    ro.r(f'y <- read.dna("{tmp_path / "x.phy"}", format = "sequential", as.character = TRUE)')
    assert list(ro.r("rownames(y)")) == ids
    assert ["".join(ro.r(f"y[{k + 1}, ]")) for k in range(3)] == [r.lower() for r in rows]


def test_gzip_for_gz_names(tmp_path, aln):
    aln.write(tmp_path / "x.fa.gz")
    raw = (tmp_path / "x.fa.gz").read_bytes()
    assert raw[:2] == b"\x1f\x8b"
    assert gzip.decompress(raw).decode() == aln.to_text("fasta")
    res = run("msa", tmp_path / "x.fa.gz", "-o", tmp_path / "y.sto.gz")
    assert res.returncode == 0, res.stderr
    assert gzip.decompress((tmp_path / "y.sto.gz").read_bytes()).startswith(b"# STOCKHOLM")


@pytest.mark.parametrize(
    "name", ["x.msf", "x.nex", "x.fq", "x.csv", "x.nwk", "x.npy", "x.txt", "x.tsv"]
)
def test_names_of_formats_not_written_are_refused(tmp_path, aln, name):
    with pytest.raises(ValueError, match=r"an alignment is not written as \.\w+; name it "):
        aln.write(tmp_path / name)
    res = run("msa", tmp_path / "in.fa", "-o", tmp_path / name, cwd=tmp_path)
    assert res.returncode == 2 and "an alignment is not written as" in res.stderr, res.stderr
    assert list(tmp_path.iterdir()) == []


def test_format_and_name_must_agree(tmp_path, aln):
    with pytest.raises(ValueError, match="the name says phylip but the format asked is fasta"):
        aln.write(tmp_path / "x.phy", "fasta")
    aln.write(tmp_path / "noext", "clustal")
    assert (tmp_path / "noext").read_text().startswith("CLUSTAL")
    aln.write(tmp_path / "plain")
    assert (tmp_path / "plain").read_text().startswith(">")


@pytest.mark.parametrize("fmt", ["fasta", "clustal", "stockholm", "a2m", "phylip"])
def test_ids_a_format_cannot_hold_are_refused_before_writing(tmp_path, fmt):
    spaced = MultipleAlignment(["a b", "c"], ["MK-V", "MKLV"])
    with pytest.raises(ValueError, match="cannot hold whitespace"):
        spaced.write(tmp_path / "x", fmt)
    assert list(tmp_path.iterdir()) == []
    if fmt == "stockholm":
        for bad in ("#=GS", "//end"):
            with pytest.raises(ValueError, match="cannot start with"):
                MultipleAlignment([bad, "c"], ["MK-V", "MKLV"]).write(tmp_path / "x.sto")


def test_stdout_uses_the_same_writers(tmp_path):
    (tmp_path / "in.fa").write_text("".join(f">{i}\n{s}\n" for i, s in RRM))
    for fmt in ("phylip", "clustal", "fasta"):
        res = run("msa", tmp_path / "in.fa", "-o", "-", "--format", fmt)
        assert res.returncode == 0, res.stderr
        assert res.stdout == bioaccel.msa(tmp_path / "in.fa").to_text(fmt)
