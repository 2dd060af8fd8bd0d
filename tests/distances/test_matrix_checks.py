"""Distance matrices read and built right: the PHYLIP layout decided
from all rows, a non-number named by line and column, strict PHYLIP names that touch their
values; anything that is not a distance matrix (non-zero diagonal, negative entries) refused
by one check everywhere; no -0.0 in DistanceMatrix.data, Newick or what goes to R."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

import bioaccel
from bioaccel import DistanceMatrix
from bioaccel.errors import MatrixFormatError
from tests.cli_runner import run_process as run
from tests.datasets import require


# -- PHYLIP matrices --------------------------------------------------------------------------
@pytest.mark.parametrize(
    "bad, column", [("NA", 14), ("-", 14), ("?", 14), ("1,5", 14), ("0.1e", 14), ("1_0", 14)]
)
def test_a_non_number_is_named_by_line_and_column(tmp_path, bad, column):
    p = tmp_path / "t.phy"
    p.write_text(f"4\nw1 0 0.1 0.2 {bad}\nw2 0.1 0 0.3 0.4\nw3 0.2 0.3 0 0.5\nw4 {bad} 0.4 0.5 0\n")
    with pytest.raises(
        MatrixFormatError,
        match=re.escape(f"t.phy, line 2, column {column}: '{bad}' is not a number"),
    ):
        DistanceMatrix.read(p)
    res = run("tree", p, "-o", tmp_path / "t.nwk")
    assert res.returncode == 2 and "line 2, column 14" in res.stderr, res.stderr
    assert not (tmp_path / "t.nwk").exists()


def test_strict_phylip_names_touching_values_are_read(tmp_path):
    # scikit-bio's own test file: 10-character names, the first touching its values
    p = tmp_path / "strict.dist"
    p.write_text(
        "4\ncatcatcatc0.0   0.2   0.3   0.6\ndog       0.2   0.0   0.6   0.7\n"
        "lizard    0.3   0.6   0.0   0.8\nsuperlizar0.6   0.7   0.8   0.0\n"
    )
    dm = DistanceMatrix.read(p)
    assert dm.ids == ["catcatcatc", "dog", "lizard", "superlizar"]
    assert dm["catcatcatc", "superlizar"] == 0.6 and dm["lizard", "superlizar"] == 0.8
    skbio = require("skbio", "scikit-bio is the oracle")
    sk = skbio.DistanceMatrix.read(str(p), format="phylip_dm")
    assert list(sk.ids) == dm.ids and np.array_equal(sk.data, dm.data)
    lower = tmp_path / "lower.dist"  # strict lower triangle, names touching
    lower.write_text("3\nalphaalpha\nbetabetabe0.5\ngammagamma0.25 0.75\n")
    dm = DistanceMatrix.read(lower)
    assert dm.ids == ["alphaalpha", "betabetabe", "gammagamma"] and dm.data[2, 1] == 0.75


def test_rows_wrapped_onto_continuation_lines(tmp_path):
    # PHYLIP's programs wrap long rows onto indented lines
    p = tmp_path / "w.dist"
    p.write_text("3\na    0.0 0.1\n     0.2\nb    0.1 0.0\n     0.3\nc    0.2 0.3\n     0.0\n")
    dm = DistanceMatrix.read(p)
    assert dm.ids == ["a", "b", "c"] and dm["b", "c"] == 0.3


@pytest.mark.parametrize(
    "content, message",
    [
        # a lower triangle with its diagonal: numbers would be glued into the names
        (
            "3\nMouse 0.0000\nBovine 1.7043 0.0000\nLemur 2.0235 1.1901 0.0000\n",
            "line 2: 1 value.s. after the first word, but a lower matrix",
        ),
        # square rows one value short
        (
            "3\nAlpha 0.0 1.0\nBeta 1.0 0.0\nGamma 2.0 2.0\n",
            "line 2: 2 value.s. after the first word",
        ),
    ],
)
def test_layouts_that_no_row_set_fits_are_refused(tmp_path, content, message):
    p = tmp_path / "m.phy"
    p.write_text(content)
    with pytest.raises(MatrixFormatError, match=message):
        DistanceMatrix.read(p)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_skbio_phylip_test_files_read_as_skbio_reads_them():
    skbio = require("skbio", "scikit-bio is the oracle")
    data = Path(skbio.__file__).parent / "io" / "format" / "tests" / "data"
    files = sorted(data.glob("phylip_dm_*"))
    assert len(files) >= 10
    for f in files:
        try:
            want = skbio.DistanceMatrix.read(str(f), format="phylip_dm")
        except Exception:
            want = None
        try:
            got = DistanceMatrix.read(f, "phylip")
        except MatrixFormatError:
            assert want is None, f.name  # everything scikit-bio reads, bioaccel reads
            continue
        if want is not None:
            assert got.ids == list(want.ids) and np.array_equal(got.data, want.data), f.name
        else:  # only blank lines around the header, which bioaccel skips
            assert "empty_line" in f.name, f.name


def test_phylip_writer_refuses_ids_it_cannot_give_back(tmp_path):
    d = np.array([[0, 1.0], [1.0, 0]])
    for ids in (["a  b", "c"], [" a", "c"], ["a\tb", "c"], ["x 0.5", "y"], ["s 1", "t"], ["", "c"]):
        with pytest.raises(ValueError):
            DistanceMatrix(d, ids).write(tmp_path / "m.phy")
    with pytest.raises(ValueError, match="tab"):
        DistanceMatrix(d, ["a\tb", "c"]).write(tmp_path / "m.tsv")
    for ids in (["strain 1", "strain 2"], ["Homo sapiens", "Mus musculus"], ["0", "1"]):
        DistanceMatrix(d, ids).write(tmp_path / "m.phy")
        assert DistanceMatrix.read(tmp_path / "m.phy").ids == ids
        DistanceMatrix(d, ids).write(tmp_path / "l.phy", "phylip-lower")
        assert DistanceMatrix.read(tmp_path / "l.phy").ids == ids
    assert sorted(p.name for p in tmp_path.iterdir()) == ["l.phy", "m.phy"]


# -- not a distance matrix ------------------------------------------------------------------
def test_score_matrices_and_identities_are_not_distances(tmp_path):
    fa = tmp_path / "p.fa"
    fa.write_text(">a\nMKVLEAGHW\n>b\nMKILDAGW\n>c\nWWPPMKV\n")
    assert run("align", fa, "-o", tmp_path / "s.npy").returncode == 0
    res = run("tree", tmp_path / "s.npy", "-o", tmp_path / "t.nwk")
    assert res.returncode == 2
    assert "not a distance matrix: the distance of 'a' to itself (row 1 of 3) is" in res.stderr
    np.save(tmp_path / "eye.npy", np.eye(3))
    (tmp_path / "eye.npy.ids.txt").write_text("a\nb\nc\n")
    res = run("tree", tmp_path / "eye.npy", "-o", tmp_path / "t.nwk")
    assert res.returncode == 2 and "is 1.0; a distance matrix has 0 on its diagonal" in res.stderr
    (tmp_path / "d5.phy").write_text("2\na 5 1\nb 1 0\n")
    res = run("tree", tmp_path / "d5.phy", "-o", tmp_path / "t.nwk")
    assert res.returncode == 2 and "the distance of 'a' to itself" in res.stderr
    assert not (tmp_path / "t.nwk").exists()


@pytest.mark.parametrize(
    "data, message",
    [
        ([[0, 1, 2], [1, 3, 1], [2, 1, 0]], r"the distance of 'b' to itself \(row 2 of 3\) is 3.0"),
        ([[0, -1, 2], [-1, 0, 1], [2, 1, 0]], r"'a'/'b' = -1.0 is negative \(row 1, column 2\)"),
        ([[np.nan, 1], [1, 0]], r"'a' to itself \(row 1 of 2\) is nan"),
    ],
)
def test_one_check_in_every_builder_and_reader(tmp_path, data, message):
    ids = list("abc")[: len(data)]
    for build in (
        lambda: DistanceMatrix(data, ids),
        lambda: bioaccel.nj(np.array(data), ids),
        lambda: bioaccel.upgma(np.array(data), ids),
    ):
        with pytest.raises(MatrixFormatError, match=message):
            build()
    np.savez(tmp_path / "m.npz", data=np.array(data, dtype=float), ids=np.array(ids))
    (tmp_path / "m.tsv").write_text(
        "\t"
        + "\t".join(ids)
        + "\n"
        + "".join(i + "\t" + "\t".join(map(str, row)) + "\n" for i, row in zip(ids, data))
    )
    for name in ("m.npz", "m.tsv"):
        with pytest.raises(MatrixFormatError, match=message):
            DistanceMatrix.read(tmp_path / name)


def test_nan_and_inf_off_the_diagonal_stay_allowed():
    dm = DistanceMatrix([[0, np.inf], [np.inf, 0]], ["a", "b"])
    assert np.isinf(dm["a", "b"])


# -- no -0.0 -------------------------------------------------------------------------------
def test_no_negative_zero_in_data_newick_or_r(tmp_path):
    d = np.array([[0.0, -0.0, 0.3], [-0.0, -0.0, 0.3], [0.3, 0.3, 0.0]])
    mine = d.copy()
    dm = DistanceMatrix(mine, ["a", "b", "c"])
    assert not np.signbit(dm.data).any()
    assert np.signbit(mine[0, 1])  # the caller's array is not changed
    for tree in (bioaccel.upgma(dm), bioaccel.nj(dm), bioaccel.nj(dm, clamp_negative=True)):
        assert not np.signbit(tree.length).any()
        assert "-0.0" not in tree.to_newick()
    # lengths set later are cleaned too
    tree = bioaccel.upgma(dm)
    tree.length = -np.abs(tree.length) * 0
    assert "-0" not in tree.to_newick()


def test_upgma_of_identical_sequences_writes_no_negative_zero():
    seqs = ["ACGTACGTAC", "ACGTACGTAC", "ACGTACGTAA", "ACGTACGTAA", "TCGTACGTAA"]
    dm = bioaccel.distance_matrix(seqs, "k80", backend="cpu")
    assert not np.signbit(dm.data).any()
    assert "-0.0" not in bioaccel.upgma(dm).to_newick()


@pytest.mark.r
def test_what_goes_to_r_has_no_negative_zero(rinterop, ro):
    dm = DistanceMatrix(np.array([[0.0, -0.0], [-0.0, 0.0]]), ["a", "b"])
    rd = rinterop.to_r_dist(dm)
    ro.globalenv["bioaccel_d"] = rd
    assert list(ro.r("1 / as.vector(bioaccel_d)")) == [np.inf]  # 1 / -0 would be -Inf
    phylo = rinterop.tree_to_phylo(bioaccel.upgma(dm))
    ro.globalenv["bioaccel_p"] = phylo
    assert all(v == np.inf for v in ro.r("1 / bioaccel_p$edge.length"))
