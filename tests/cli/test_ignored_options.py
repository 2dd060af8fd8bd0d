"""Options that were silently ignored are honoured or refused, and the tree builders' inputs
as R hands them over (Python side): labels kept, duplicates refused."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel.errors import DuplicateIdError
from tests.cli_runner import invoke as run
from tests.datasets import bundled, require

D = [[0, 5, 9, 9, 8], [5, 0, 10, 10, 9], [9, 10, 0, 8, 7], [9, 10, 8, 0, 3], [8, 9, 7, 3, 0]]


@pytest.fixture
def phy(tmp_path):
    p = tmp_path / "d.phy"
    p.write_text(
        "5\n" + "".join(f"{n} " + " ".join(map(str, row)) + "\n" for n, row in zip("abcde", D))
    )
    return p


def test_clamp_negative_with_upgma_refused(phy, tmp_path):
    res = run("tree", phy, "--method", "upgma", "--clamp-negative", "-o", tmp_path / "t.nwk")
    assert res.exit_code == 2 and "--clamp-negative applies to --method nj" in res.output
    assert not (tmp_path / "t.nwk").exists()
    assert run("tree", phy, "--clamp-negative", "-o", "-").exit_code == 0


def test_backend_on_a_matrix_builds_the_tree(phy):
    # before: -b was ignored for a matrix input (NJ always ran on the C++ core)
    want = bioaccel.nj(D, list("abcde")).to_newick()
    res = run("tree", phy, "-b", "reference", "-o", "-")
    assert (
        res.exit_code == 0
        and res.stdout.strip() == bioaccel.nj(D, list("abcde"), backend="reference").to_newick()
    )
    res = run("tree", phy, "-b", "cupy", "-o", "-")
    from tests.conftest import GPU

    if not GPU:  # named and unavailable: refused, never a silent CPU run
        assert res.exit_code == 2 and "cupy" in res.output
    else:
        assert res.exit_code == 0 and res.stdout.strip().count(",") == want.count(",")
    for bad, why in (
        (["-b", "numba-cuda"], "neighbour joining runs on cupy, cpu or reference"),
        (["--method", "upgma", "-b", "cpu"], "UPGMA runs on the CPU only"),
    ):
        res = run("tree", phy, *bad, "-o", "-")
        assert res.exit_code == 2 and why in res.output, res.output


def test_traceback_on_a_gpu_backend_refused(tmp_path):
    fa = tmp_path / "p.fa"
    fa.write_text(">a\nMKVLEFWHHK\n>b\nMKVIEFWQHK\n")
    for b in ("cupy", "numba-cuda", "reference"):
        res = run("align", fa, "--traceback", "-b", b, "-o", tmp_path / "a.tsv")
        assert res.exit_code == 2 and "--traceback alignments run on the CPU only" in res.output
    assert not (tmp_path / "a.tsv").exists()
    assert run("align", fa, "--traceback", "-b", "cpu", "-o", "-").exit_code == 0


def test_msa_input_format_is_honoured_for_files(tmp_path):
    fa = tmp_path / "x.txt"
    fa.write_text(">a\nMKVLEFWHHK\n>b\nMKVIEFWQHK\n")
    res = run("msa", fa, "--input-format", "bogus", "-o", "-")
    assert res.exit_code == 2 and "unknown sequence format 'bogus'" in res.output
    res = run("msa", fa, "--input-format", "fastq", "-o", "-")
    assert res.exit_code == 2 and "not valid FASTQ" in res.output
    res = run("msa", fa, "--input-format", "FASTA", "-o", "-")
    assert res.exit_code == 0 and ">a\nMKVLEFWHHK" in res.stdout


def test_tree_out_with_one_sequence(tmp_path):
    fa = tmp_path / "one.fa"
    fa.write_text(">only\nMKVLEFW\n")
    res = run("msa", fa, "-o", tmp_path / "o.fa", "--tree-out", tmp_path / "o.nwk")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "o.nwk").read_text() == "only;\n"
    res = run("msa", fa, "-o", tmp_path / "o2.fa", "--guide-tree", tmp_path / "o.nwk")
    assert res.exit_code == 0, res.output


def test_guide_tree_with_empty_records_feeds_back(tmp_path):
    fa = tmp_path / "e.fa"
    fa.write_text(">a\nMKVLEFWHHK\n>e\n\n>b\nMKVIEFWQHK\n>c\nMRVLEAWHHK\n>f\n\n")
    res = run("msa", fa, "-o", tmp_path / "x.fa", "--tree-out", tmp_path / "g.nwk")
    assert res.exit_code == 0, res.output
    tree = bioaccel.read_newick(tmp_path / "g.nwk")
    assert sorted(tree.labels) == ["a", "b", "c", "e", "f"]  # every input sequence once
    res = run("msa", fa, "-o", tmp_path / "y.fa", "--guide-tree", tmp_path / "g.nwk")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "x.fa").read_text() == (tmp_path / "y.fa").read_text()
    # a tree naming only the non-empty sequences is taken too
    (tmp_path / "old.nwk").write_text("(a,(b,c));\n")
    res = run("msa", fa, "-o", tmp_path / "z.fa", "--guide-tree", tmp_path / "old.nwk")
    assert res.exit_code == 0, res.output


def test_saturated_distances_say_what_to_do():
    # fn3 (HMMER's tutorial family) is divergent: kimura saturates, poisson does not
    aln = bioaccel.msa(bundled("hmmer", "fn3.fa"), refine=False)
    kimura = aln.distance_matrix("kimura")
    assert np.isinf(kimura.data).any()
    with pytest.raises(ValueError, match="past kimura's saturation.*'poisson'"):
        bioaccel.nj(kimura)
    poisson = aln.distance_matrix("poisson")  # the README's example now
    assert np.isfinite(poisson.data).all()
    assert bioaccel.nj(poisson).n_tips == len(aln)


def test_nj_labels():
    with pytest.raises(DuplicateIdError, match="duplicate id 'a'"):
        bioaccel.nj(D, ["a", "b", "a", "d", "e"])
    with pytest.raises(DuplicateIdError):
        bioaccel.upgma(D, ["a", "b", "a", "d", "e"])
    pd = require("pandas")
    df = pd.DataFrame(D, index=list("vwxyz"), columns=list("vwxyz"))
    assert sorted(bioaccel.nj(df).labels) == list("vwxyz")  # before: 0..4
    assert bioaccel.nj(df).to_newick() == bioaccel.nj(D, list("vwxyz")).to_newick()
    with pytest.raises(ValueError, match="same labels on its index and columns"):
        bioaccel.nj(pd.DataFrame(D, index=list("vwxyz"), columns=list("abcde")))
    with pytest.raises(ValueError, match="labels= differ"):
        bioaccel.nj(bioaccel.DistanceMatrix(np.array(D, float), list("abcde")), list("vwxyz"))


def test_nj_takes_a_scikit_bio_matrix():
    skbio = require("skbio", "scikit-bio is the oracle")
    dm = skbio.DistanceMatrix(np.array(D, float), list("abcde"))
    assert bioaccel.nj(dm).to_newick() == bioaccel.nj(D, list("abcde")).to_newick()
    with pytest.raises(TypeError, match="expected a distance matrix"):
        bioaccel.nj({"a": 1})
