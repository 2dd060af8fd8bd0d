"""bioaccel.rinterop: exact round trips through R, and R's own functions as oracles."""

import numpy as np
import pytest

from bioaccel.distances._compute import distance_matrix
from bioaccel.distances._matrix import DistanceMatrix
from bioaccel.pairwise._align import align
from bioaccel.trees._tree import Tree, nj, upgma

pytestmark = pytest.mark.r


def random_matrix(seed, n, labels=None):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 5))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    return DistanceMatrix(d, labels or [f"s{i}" for i in range(n)])


def test_dist_round_trip_is_exact(ro, rinterop):
    dm = random_matrix(1, 30, [f"taxon {i}" for i in range(29)] + ["it's é"])
    dm.data[0, 1] = dm.data[1, 0] = np.nan
    dm.data[2, 3] = dm.data[3, 2] = np.inf
    d = rinterop.to_r_dist(dm)
    assert list(d.rclass) == ["dist"]
    # R agrees on the values by label: as.matrix(d)["taxon 5", "taxon 7"]
    m = ro.r["as.matrix"](d)
    assert ro.r("function(m) m['taxon 5', 'taxon 7']")(m)[0] == dm.data[5, 7]
    back = rinterop.from_r_dist(d)
    assert back.ids == dm.ids
    np.testing.assert_array_equal(back.data, dm.data)


def test_dist_from_r_computations(ro, rinterop):
    ro.r("data(woodmouse, package = 'ape')")
    d = ro.r["dist.dna"](ro.r["woodmouse"], model="K80")
    dm = rinterop.from_r_dist(d)
    ids = [str(x) for x in ro.r("rownames(woodmouse)")]
    assert dm.ids == ids and dm.data.shape == (15, 15)
    seqs = ro.r("apply(toupper(as.character(woodmouse)), 1, paste, collapse = '')")
    ours = distance_matrix([str(s) for s in seqs], "k80", backend="cpu")
    np.testing.assert_allclose(ours.data, dm.data, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("build", [nj, upgma])
def test_tree_to_phylo_round_trip_is_exact(ro, rinterop, build):
    dm = random_matrix(2, 25, [f"t{i}" for i in range(23)] + ["a b", "it's"])
    tree = build(dm)
    phylo = rinterop.tree_to_phylo(tree)
    assert list(phylo.rclass) == ["phylo"]
    assert int(ro.r["Ntip"](phylo)[0]) == 25
    back = rinterop.phylo_to_tree(phylo)
    assert back.to_newick() == tree.to_newick()
    # ape measures the same tree: cophenetic distances == our patristic distances
    coph = ro.r["cophenetic.phylo"](phylo)
    labels = [str(x) for x in ro.r["rownames"](coph)]
    order = [labels.index(t) for t in tree.labels]
    arr = np.array(list(coph)).reshape(25, 25, order="F")[np.ix_(order, order)]
    np.testing.assert_allclose(arr, tree.patristic(), rtol=1e-12)


def test_phylo_from_ape_nj(ro, rinterop):
    dm = random_matrix(3, 12)
    phylo = ro.r["nj"](rinterop.to_r_dist(dm))
    tree = rinterop.phylo_to_tree(phylo)
    assert isinstance(tree, Tree) and tree.n_tips == 12
    # an additive-tree fit: ape's NJ and ours give the same patristic distances
    np.testing.assert_allclose(tree.patristic(), nj(dm).patristic(), rtol=1e-9, atol=1e-12)


def test_hclust_cutree_and_pcoa(ro, rinterop):
    from scipy.cluster.hierarchy import fcluster, linkage

    dm = random_matrix(4, 20)
    labels = rinterop.cutree(rinterop.hclust(dm, "average"), h=2.0)
    expected = fcluster(linkage(dm.condensed(), "average"), 2.0, criterion="distance")
    assert len({(a, b) for a, b in zip(labels, expected)}) == len(set(labels)) == len(set(expected))
    points, eig = rinterop.pcoa(dm, k=2)
    # classical MDS: the top eigenvalues of the double-centred squared distances
    n = len(dm)
    j = np.eye(n) - 1 / n
    b = -0.5 * j @ (dm.data**2) @ j
    top = np.sort(np.linalg.eigvalsh(b))[::-1][:2]
    np.testing.assert_allclose(eig[:2], top, rtol=1e-8)
    np.testing.assert_allclose(
        np.abs(points),
        np.abs(np.linalg.eigh(b)[1][:, ::-1][:, :2] * np.sqrt(top)),
        rtol=1e-6,
        atol=1e-9,
    )


def test_scores_and_alignments_to_dataframes(ro, rinterop):
    scores = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    df = rinterop.scores_to_dataframe(scores, ["q1", "q2"], ["a", "b", "c"])
    assert list(ro.r["colnames"](df)) == ["query", "target", "score"]
    assert list(ro.r("function(d) d$score[d$query == 'q2' & d$target == 'b']")(df)) == [5]
    with pytest.raises(ValueError, match="do not fit"):
        rinterop.scores_to_dataframe(scores, ["q1"], ["a", "b", "c"])
    alns = align(["HEAGAWGHEE", "PAWHEAE"], matrix="BLOSUM50", gap_open=8, gap_extend=8)
    df = rinterop.alignments_to_dataframe(alns)
    assert int(ro.r["nrow"](df)[0]) == len(alns)
    assert list(ro.r("function(d) d$score")(df)) == [a.score for a in alns]


def test_plot_tree_writes_images(ro, rinterop, tmp_path):
    tree = nj(random_matrix(5, 15))
    for ext in ("png", "pdf"):
        rinterop.plot_tree(tree, str(tmp_path / f"t.{ext}"), title="NJ")
        assert (tmp_path / f"t.{ext}").stat().st_size > 3000
    assert (tmp_path / "t.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(ValueError, match="png or .pdf"):
        rinterop.plot_tree(tree, str(tmp_path / "t.svg"))


def test_starting_r_leaves_children_a_working_python(ro):
    """rpy2 prepends R's library folders to LD_LIBRARY_PATH when it starts R; a Python child
    inheriting that loads the system's libpython and finds no packages (it broke every test
    that ran `python -c` after the first R test). bioaccel.rinterop puts the variable back."""
    import subprocess
    import sys

    code = (
        "import os, subprocess, sys\n"
        "before = os.environ.get('LD_LIBRARY_PATH')\n"
        "from bioaccel import rinterop\n"
        "rinterop.to_r_dist(rinterop.DistanceMatrix([[0.0, 1.0], [1.0, 0.0]], ['a', 'b']))\n"
        "assert os.environ.get('LD_LIBRARY_PATH') == before, os.environ.get('LD_LIBRARY_PATH')\n"
        "r = subprocess.run([sys.executable, '-c', 'import numpy, bioaccel'], capture_output=True,"
        " text=True)\n"
        "assert r.returncode == 0, r.stderr\n"
        "print('ok')\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert res.returncode == 0 and res.stdout == "ok\n", res.stderr


def _family(seed, n=50, length=30):
    """Seeded DNA sequences of a few families (each a parent with up to 5 random edits)."""
    rng = np.random.default_rng(seed)
    parents = ["".join(rng.choice(list("ACGT"), length)) for _ in range(3)]
    out = []
    for k in range(n):
        s = list(parents[k % 3])
        for _ in range(int(rng.integers(0, 6))):
            p = int(rng.integers(len(s)))
            kind = int(rng.integers(3))
            if kind == 0:
                s[p] = str(rng.choice(list("ACGT")))
            elif kind == 1:
                s.insert(p, str(rng.choice(list("ACGT"))))
            elif len(s) > 1:
                del s[p]
        out.append("".join(s))
    return out


def test_neighbors_to_r_holds_the_pairs_of_rs_own_levenshtein(ro, rinterop):
    import bioaccel

    seqs = _family(5)
    ids = [f"read {k}" for k in range(len(seqs))]
    nb = bioaccel.neighbors(bioaccel.SeqBatch.from_strings(seqs, ids=ids), max_distance=4)
    df = rinterop.neighbors_to_r(nb)
    # R's adist (generalized Levenshtein, unit costs) is the oracle, pairs in (i, j) order
    check = ro.r(
        "function(df, seqs, d) { m <- adist(seqs); hit <- which(upper.tri(m) & m <= d, "
        "arr.ind = TRUE); hit <- hit[order(hit[, 1], hit[, 2]), , drop = FALSE]; "
        "ids <- attr(df, 'ids'); c(nrow(hit), identical(df$id1, ids[hit[, 1]]), "
        "identical(df$id2, ids[hit[, 2]]), identical(df$distance, as.integer(m[hit]))) }"
    )
    n_pairs, same1, same2, same_d = check(df, ro.StrVector(seqs), 4)
    assert n_pairs == len(nb) > 50 and same1 and same2 and same_d
    assert list(ro.r("function(df) attr(df, 'ids')")(df)) == ids
    assert ro.r("function(df) attr(df, 'model')")(df)[0] == "edit"
    if not ro.r('isTRUE(requireNamespace("Matrix", quietly = TRUE))')[0]:
        return
    m = rinterop.neighbors_to_r(nb, sparse=True)
    dense = np.array(ro.r("function(m) as.vector(as.matrix(m))")(m)).reshape(len(seqs), -1)
    want = np.zeros((len(seqs), len(seqs)))
    want[nb.i, nb.j] = want[nb.j, nb.i] = nb.distance
    assert (dense == want).all()
    with pytest.raises(TypeError, match="True or False"):
        rinterop.neighbors_to_r(nb, sparse="yes")


def test_clusters_to_r_is_the_assignment_table(ro, rinterop):
    import bioaccel

    unique = list(dict.fromkeys(_family(9, n=40)))  # dereplicated
    records = {f"a{k};size={100 - k}": s for k, s in enumerate(unique)}
    c = bioaccel.cluster(records, max_distance=2)
    df = rinterop.clusters_to_r(c)
    assert list(ro.r["colnames"](df)) == ["id", "cluster", "seed", "abundance"]
    ids = [h.split(";")[0] for h in records]
    assert list(ro.r("function(d) d$id")(df)) == ids
    assert list(ro.r("function(d) d$cluster")(df)) == (c.labels + 1).tolist()
    assert list(ro.r("function(d) d$seed")(df)) == [c.seed_ids[k] for k in c.labels]
    # R counts the OTUs' sizes and masses from the table as the OTU list has them
    sizes = ro.r(
        "function(d) as.vector(table(factor(d$cluster, levels = sort(unique(d$cluster)))))"
    )(df)
    assert list(sizes) == c.sizes.tolist()
    mass = ro.r("function(d) as.vector(tapply(d$abundance, d$cluster, sum))")(df)
    assert list(mass) == c.abundances.astype(float).tolist()
