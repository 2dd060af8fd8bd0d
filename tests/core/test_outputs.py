"""Output names that say what the file holds: the extension decides the
format, a name that would lie is refused before anything is computed, and the same rule
holds for the Python writers and every command."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel._core.outputs import MATRIX, output_format
from bioaccel.distances._kmers import sketch
from bioaccel.distances._ondisk import stream_distances
from bioaccel.distances._tiles import write_tile
from tests.cli_runner import invoke as cli

SEQS = ["ACGTACGTACGTAAGT", "ACGTACGTACGTAAGA", "ACGAACGTACGTTAGT", "TCGAACGTTCGTAAGT"]


@pytest.fixture
def fasta(tmp_path):
    p = tmp_path / "in.fa"
    p.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(SEQS)))
    return p


def test_output_format_rules():
    assert output_format("d.PHY", MATRIX, "distance matrix") == "phylip"
    assert output_format("d.phy", MATRIX, "distance matrix", "phylip-lower") == "phylip-lower"
    assert output_format("d", MATRIX, "distance matrix", default="phylip") == "phylip"
    assert output_format("d", MATRIX, "distance matrix", "tsv", default="phylip") == "tsv"
    with pytest.raises(
        ValueError,
        match=r"d\.csv: a distance matrix is not written as \.csv; "
        r"name it \.cdist, .*\.phy, \.phylip or \.tsv",
    ):
        output_format("d.csv", MATRIX, "distance matrix")
    with pytest.raises(ValueError, match="name says tsv but the format asked is npy; name it .npy"):
        output_format("d.tsv", MATRIX, "distance matrix", "npy")
    with pytest.raises(ValueError, match="no extension"):
        output_format("d", MATRIX, "distance matrix")


def test_python_writers_refuse_names_that_lie(tmp_path):
    dm = bioaccel.distance_matrix(SEQS, "raw")
    with pytest.raises(ValueError, match=r"\.csv"):
        dm.write(tmp_path / "d.csv")
    with pytest.raises(ValueError, match=r"tile is not written as \.phy; name it \.npz"):
        write_tile(tmp_path / "x.phy", dm.data, (0, 4, 0, 4), 4, dm.ids, {"model": "raw"})
    with pytest.raises(ValueError, match=r"not written as \.npy; name it \.cdist"):
        stream_distances(SEQS, "raw", tmp_path / "all.npy", backend="cpu")
    with pytest.raises(ValueError, match=r"sketch file is not written as \.phy"):
        sketch(SEQS, k=5).save(tmp_path / "s.phy")
    with pytest.raises(ValueError, match=r"Newick tree is not written as \.phy"):
        bioaccel.nj(dm).write(tmp_path / "t.phy")
    assert list(tmp_path.iterdir()) == []
    dm.write(tmp_path / "plain")  # no extension: PHYLIP
    assert (tmp_path / "plain").read_text().startswith("4\n")
    assert bioaccel.DistanceMatrix.read(tmp_path / "plain") == dm


@pytest.mark.parametrize(
    "args, message",
    [
        (["distance", "{in}", "-o", "d.csv"], "not written as .csv"),
        (
            ["distance", "{in}", "--tile", "0,0", "--tiles", "1", "-o", "x.phy"],
            "tile is not written as .phy",
        ),
        (
            ["distance", "{in}", "--format", "npy", "-o", "d.tsv"],
            "name says tsv but the format asked is npy",
        ),
        (
            ["align", "{in}", "-o", "x.phy"],
            "score matrix is not written as .phy; name it .npy or .tsv",
        ),
        (["align", "{in}", "-o", "x.cdist"], "score matrix is not written as .cdist"),
        (
            ["align", "{in}", "--traceback", "-o", "tb.npy"],
            "(--traceback) is not written as .npy; name it .tsv",
        ),
        (["tree", "{in}", "-o", "t.phy"], "Newick tree is not written as .phy"),
        (["tree", "{in}", "-o", "t.nwk", "--matrix-output", "m.csv"], "not written as .csv"),
        (["sketch", "{in}", "-o", "s.tsv"], "sketch file is not written as .tsv; name it .npz"),
    ],
)
def test_commands_refuse_names_that_lie(tmp_path, fasta, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    res = cli(*[str(fasta) if a == "{in}" else a for a in args])
    assert res.exit_code == 2, res.output
    assert message in res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.fa"]


def test_commands_write_what_the_name_says(tmp_path, fasta, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli("align", fasta, "-o", "s.tsv").exit_code == 0
    assert (tmp_path / "s.tsv").read_text().startswith("\ts0\t")
    assert cli("align", fasta, "-o", "s.npy").exit_code == 0
    assert np.load(tmp_path / "s.npy").shape == (4, 4)
    assert cli("distance", fasta, "-m", "raw", "-o", "d.cdist").exit_code == 0
    assert (tmp_path / "d.cdist").read_bytes().startswith(b"BACDIST1")
    res = cli("distance", fasta, "-m", "raw", "--format", "tsv", "-o", "d")
    assert res.exit_code == 0 and (tmp_path / "d").read_text().startswith("\ts0")


def test_identical_sequences_never_write_negative_zero(tmp_path):
    # -b log(1) is -0.0 in jc69/k80/f81/tn93: none may reach a file
    seqs = [SEQS[0], SEQS[0], SEQS[1]]
    dm = bioaccel.distance_matrix(seqs, "k80", backend="cpu")
    assert dm.data[0, 1] == 0 and not np.signbit(dm.data).any()  # in memory too
    for name, fmt in [("d.phy", None), ("l.phy", "phylip-lower"), ("d.tsv", None)]:
        dm.write(tmp_path / name, fmt)
        assert "-0.0" not in (tmp_path / name).read_text()
    for name in ("d.npy", "d.npz", "d.cdist"):
        dm.write(tmp_path / name)
        assert not np.signbit(bioaccel.DistanceMatrix.read(tmp_path / name).data).any()
    streamed = stream_distances(seqs, "k80", tmp_path / "s.cdist", backend="cpu", dtype="float64")
    assert not np.signbit(np.asarray(streamed.condensed())).any()
    write_tile(tmp_path / "t.npz", dm.data, (0, 3, 0, 3), 3, dm.ids, {"model": "k80"})
    with np.load(tmp_path / "t.npz") as z:
        assert not np.signbit(z["data"]).any()
