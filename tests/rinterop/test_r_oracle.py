"""bioaccel against R itself: ape::dist.dna, ape::nj and phangorn::upgma through rpy2.

Real data: ape's woodmouse, phangorn's Laurasiatherian and mothur's flu HA alignment
(fetched at test time), plus seeded random alignments with gaps, N and IUPAC codes."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from tests.datasets import random_alignment
from tests.rhelpers import r, r_matrix_to_numpy, to_r_matrix

pytestmark = pytest.mark.r


def ape_dist(ro, path, model, pairwise_deletion, labels):
    ro.globalenv["bioaccel_path"] = str(path)
    pd = "TRUE" if pairwise_deletion else "FALSE"
    m = ro.r(
        f'as.matrix(ro_dist <- ape::dist.dna(ape::read.dna(bioaccel_path, format="fasta"), '
        f'model="{model.upper()}", pairwise.deletion={pd}))'
    )
    return r_matrix_to_numpy(ro, m, labels)


def _write_fasta(tmp_path, seqs):
    p = tmp_path / "aln.fasta"
    p.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(seqs)))
    return p


@pytest.mark.parametrize("pairwise_deletion", [False, True])
def test_distances_equal_ape_on_random(tmp_path, rng, pairwise_deletion):
    ro = r()
    seqs = random_alignment(rng, 20, 600, divergence=0.6)
    path = _write_fasta(tmp_path, seqs)
    batch = bioaccel.read_sequences(path)
    for model in bioaccel.MODELS:
        ours = bioaccel.distance_matrix(batch, model, pairwise_deletion=pairwise_deletion).data
        theirs = ape_dist(ro, path, model, pairwise_deletion, batch.ids)
        assert np.array_equal(np.isnan(ours), np.isnan(theirs)), model
        assert np.array_equal(np.isinf(ours), np.isinf(theirs)), model
        ok = np.isfinite(theirs)
        np.testing.assert_allclose(ours[ok], theirs[ok], rtol=1e-12, atol=1e-12, err_msg=model)


@pytest.mark.parametrize("dataset", ["woodmouse", "laurasiatherian", "flu_ha"])
def test_distances_equal_ape_on_real_data(request, dataset, tmp_path):
    ro = r()
    path = request.getfixturevalue(dataset)
    if str(path).endswith(".gz"):  # read.dna does not read gzip
        import gzip

        plain = tmp_path / "aln.fasta"
        plain.write_bytes(gzip.decompress(path.read_bytes()))
        path = plain
    batch = bioaccel.read_sequences(path)
    for model in bioaccel.MODELS:
        for pd in (False, True):
            ours = bioaccel.distance_matrix(batch, model, pairwise_deletion=pd).data
            theirs = ape_dist(ro, path, model, pd, batch.ids)
            ok = np.isfinite(theirs)
            assert np.array_equal(ok, np.isfinite(ours)), (model, pd)
            np.testing.assert_allclose(
                ours[ok], theirs[ok], rtol=1e-12, atol=1e-12, err_msg=f"{dataset} {model} pd={pd}"
            )


def _ape_tree(ro, newick: str):
    ro.globalenv["bioaccel_nwk"] = newick
    return ro.r("ape::read.tree(text=bioaccel_nwk)")


def _compare_nj(ro, dm: bioaccel.DistanceMatrix, expect_rf0: bool):
    ours = bioaccel.nj(dm)
    ro.globalenv["bioaccel_d"] = to_r_matrix(ro, dm.data, dm.ids)
    ro.r("bioaccel_ape_nj <- ape::nj(bioaccel_d)")
    theirs = r_matrix_to_numpy(ro, ro.r("ape::cophenetic.phylo(bioaccel_ape_nj)"), dm.ids)
    np.testing.assert_allclose(ours.patristic(), theirs, rtol=0, atol=1e-9)
    # our Newick, read back by ape, gives the same patristic distances and topology
    ro.globalenv["bioaccel_ours"] = _ape_tree(ro, ours.to_newick())
    back = r_matrix_to_numpy(ro, ro.r("ape::cophenetic.phylo(bioaccel_ours)"), dm.ids)
    np.testing.assert_allclose(back, theirs, rtol=0, atol=1e-9)
    if expect_rf0:
        assert ro.r("ape::dist.topo(bioaccel_ours, bioaccel_ape_nj)")[0] == 0


@pytest.mark.parametrize("dataset", ["woodmouse", "laurasiatherian"])
def test_nj_equals_ape_nj(request, dataset):
    ro = r()
    batch = bioaccel.read_sequences(request.getfixturevalue(dataset))
    dm = bioaccel.distance_matrix(batch, "k80", pairwise_deletion=True)
    assert np.all(np.isfinite(dm.data))
    # both data sets are tie-free: the trees must be the same, not only co-optimal
    _compare_nj(ro, dm, expect_rf0=True)


def test_nj_equals_ape_nj_random(rng):
    ro = r()
    for n in (3, 4, 5, 17, 120):
        x = rng.random((n, 6))
        data = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
        _compare_nj(ro, bioaccel.DistanceMatrix(data, [f"t{i}" for i in range(n)]), expect_rf0=True)


@pytest.mark.parametrize("dataset", ["woodmouse", "laurasiatherian"])
def test_upgma_equals_phangorn(request, dataset):
    ro = r()
    batch = bioaccel.read_sequences(request.getfixturevalue(dataset))
    dm = bioaccel.distance_matrix(batch, "jc69", pairwise_deletion=True)
    ours = bioaccel.upgma(dm)
    ro.globalenv["bioaccel_d"] = to_r_matrix(ro, dm.data, dm.ids)
    ro.r("bioaccel_up <- phangorn::upgma(bioaccel_d)")
    theirs = r_matrix_to_numpy(ro, ro.r("ape::cophenetic.phylo(bioaccel_up)"), dm.ids)
    np.testing.assert_allclose(ours.patristic(), theirs, rtol=0, atol=1e-9)
    ro.globalenv["bioaccel_ours"] = _ape_tree(ro, ours.to_newick())
    assert ro.r("ape::dist.topo(ape::unroot(bioaccel_ours), ape::unroot(bioaccel_up))")[0] == 0


def test_quoted_labels_survive_ape(tmp_path):
    ro = r()
    # ape's read.tree keeps the quotes of a quoted label as part of the label, and it
    # cannot read quoted labels holding parentheses: test what ape can read, unquoted.
    labels = ["A/Sao_Paulo/43812/2009", "Bacteria;Firmicutes;Bacilli", "x y", "a,b", "plain"]
    rng = np.random.default_rng(3)
    x = rng.random((5, 3))
    data = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    tree = bioaccel.nj(data, labels)
    path = tmp_path / "t.nwk"
    tree.write(path)
    ro.globalenv["bioaccel_path"] = str(path)
    tips = [str(t).strip("'") for t in ro.r("ape::read.tree(bioaccel_path)$tip.label")]
    assert sorted(tips) == sorted(labels)
