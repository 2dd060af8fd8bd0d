"""NJ and UPGMA against slow references, SciPy, hand-checked cases; Newick output."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel.trees._tree import quote_label
from tests.nj_reference import assert_same_nj_tree, check_joins_are_q_minima, nj_reference


def _euclid(rng, n, dims=5):
    x = rng.random((n, dims))
    return np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))


def _tree_from_edges(edges, n):
    e = np.array(edges, dtype=float)
    return bioaccel.Tree(
        [str(i) for i in range(n)],
        e[:, 0].astype(int),
        e[:, 1].astype(int),
        e[:, 2],
        int(e[:, 0].max()),
    )


def test_nj_hand_checked():
    # The five-taxon example of Saitou & Nei's method as taught (Wikipedia "Neighbor joining"):
    # a and b join first with branch lengths 2 and 3; the tree is additive, so path
    # lengths reproduce the matrix exactly.
    d = np.array(
        [[0, 5, 9, 9, 8], [5, 0, 10, 10, 9], [9, 10, 0, 8, 7], [9, 10, 8, 0, 3], [8, 9, 7, 3, 0]],
        dtype=float,
    )
    t = bioaccel.nj(d, list("abcde"))
    assert (t.parent[0], t.child[0], t.length[0]) == (5, 0, 2.0)
    assert (t.child[1], t.length[1]) == (1, 3.0)
    np.testing.assert_allclose(t.patristic(), d)


@pytest.mark.parametrize("n", [3, 4, 9, 60, 250])
def test_nj_equals_slow_reference(rng, n):
    d = _euclid(rng, n)
    edges, gaps = nj_reference(d)
    assert gaps.size == 0 or gaps.min() > 1e-9  # tie-free, so the tree is unique
    ours = bioaccel.nj(d)
    np.testing.assert_allclose(ours.patristic(), _tree_from_edges(edges, n).patristic(), atol=1e-9)


def test_nj_threads_identical(rng):
    d = _euclid(rng, 400)
    one = bioaccel.nj(d, threads=1)
    two = bioaccel.nj(d, threads=2)
    assert one.to_newick() == two.to_newick()


def test_nj_on_tied_real_data_is_an_nj_tree(flu_ha):
    # HA holds identical sequences, so Q ties abound: check each join is a Q minimum
    dm = bioaccel.distance_matrix(
        bioaccel.read_sequences(flu_ha).subset(range(150)), "k80", pairwise_deletion=True
    )
    check_joins_are_q_minima(dm.data, bioaccel.nj(dm))


def test_nj_negative_lengths_kept_or_clamped():
    # non-additive matrix whose NJ tree has a negative branch
    d = np.array([[0, 2, 2, 2], [2, 0, 5, 5], [2, 5, 0, 2], [2, 5, 2, 0]], dtype=float)
    kept = bioaccel.nj(d)
    assert kept.length.min() < 0
    clamped = bioaccel.nj(d, clamp_negative=True)
    assert clamped.length.min() == 0.0
    assert np.array_equal(np.maximum(kept.length, 0), clamped.length)


def test_two_taxa_and_errors():
    t = bioaccel.nj([[0, 4], [4, 0]], ["x", "y"])
    assert t.to_newick() == "(x:2.0,y:2.0);"
    with pytest.raises(ValueError, match="at least 2 taxa"):
        bioaccel.nj([[0.0]])
    with pytest.raises(ValueError, match=r"'b' and 'c' is nan"):
        bioaccel.nj(np.array([[0, 1, 1], [1, 0, np.nan], [1, np.nan, 0]]), list("abc"))
    with pytest.raises(ValueError, match="inf"):
        bioaccel.upgma(np.array([[0, 1, 1], [1, 0, np.inf], [1, np.inf, 0]]))


@pytest.mark.parametrize("n", [2, 3, 10, 300])
def test_upgma_equals_scipy_average_linkage(rng, n):
    from scipy.cluster.hierarchy import cophenet, linkage
    from scipy.spatial.distance import squareform

    d = _euclid(rng, n)
    z = linkage(squareform(d, checks=False), method="average")
    expected = squareform(cophenet(z))
    t = bioaccel.upgma(d)
    np.testing.assert_allclose(t.patristic(), expected, atol=1e-12)
    # ultrametric: every tip at the same depth below the root
    assert t.root == 2 * n - 2


def test_newick_quoting_round_trip_through_biopython(tmp_path, rng):
    from Bio import Phylo

    labels = [
        "A/Sao_Paulo/43812/2009",
        "Root;Bacteria;Firmicutes",
        "it's",
        "with space",
        "paren(1)",
        "br[a]ck",
        "colon:x",
        "plain_name",
    ]
    d = _euclid(rng, len(labels))
    path = tmp_path / "t.nwk"
    bioaccel.nj(d, labels).write(path)
    tree = Phylo.read(path, "newick")
    assert sorted(c.name for c in tree.get_terminals()) == sorted(labels)
    assert quote_label("it's") == "'it''s'"


def test_deep_tree_newick_does_not_recurse():
    # a caterpillar: UPGMA of points on a line at doubling distances, depth ~ n
    n = 3000
    x = np.cumsum(np.arange(1, n + 1, dtype=float))
    d = np.abs(x[:, None] - x[None])
    text = bioaccel.upgma(d).to_newick()
    assert text.count("(") == n - 1 and text.endswith(";")


def test_nj_star_like_data_uses_full_scans_and_stays_exact(rng):
    # d_ij = a_i + a_j + small noise: Q values nearly tie everywhere, the sorted-row bounds
    # stop pruning and the joiner switches to plain scans; the tree must not change.
    n = 150
    a = rng.uniform(0.1, 0.3, n)
    noise = rng.uniform(0, 1e-3, (n, n))
    d = a[:, None] + a[None, :] + (noise + noise.T)
    np.fill_diagonal(d, 0)
    edges, gaps = nj_reference(d)
    assert gaps.min() > 1e-12
    np.testing.assert_allclose(
        bioaccel.nj(d).patristic(), _tree_from_edges(edges, n).patristic(), atol=1e-9
    )


# -- the array NJ (NumPy here; the same code runs on CuPy for backend="cupy") -----------------
def _splits(tree):
    """Bipartitions of the tips (as frozensets of the side without tip 0)."""
    n = tree.n_tips
    below: dict[int, set[int]] = {}
    order = []
    stack = [tree.root]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(int(tree.child[e]) for e in tree._children[v])
    for v in reversed(order):
        below[v] = (
            {v} if v < n else set().union(*(below[int(tree.child[e])] for e in tree._children[v]))
        )
    out = set()
    for side in below.values():
        s = side if 0 not in side else set(range(n)) - side
        if 1 < len(s) < n - 1:
            out.add(frozenset(s))
    return out


@pytest.mark.parametrize("n", [3, 4, 7, 60, 400])
def test_array_nj_equals_the_cpu_nj(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=(n, 6))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    cpu = bioaccel.nj(d)
    ref = bioaccel.nj(d, backend="reference")
    assert _splits(ref) == _splits(cpu)
    np.testing.assert_allclose(ref.patristic(), cpu.patristic(), rtol=1e-12, atol=1e-12)
    # integer distances: every step is exact, so the trees are identical to the bit,
    # ties included (many equal Q values here)
    di = rng.integers(1, 6, (n, n)).astype(float)
    di = di + di.T
    np.fill_diagonal(di, 0)
    assert bioaccel.nj(di, backend="reference").to_newick() == bioaccel.nj(di).to_newick()


def test_nj_backends_and_slow_reference_agree_on_real_influenza(flu_ha):
    # the 599 HA genes hold identical and near-identical sequences, so
    # Q ties and last-bit near-ties abound; every backend must follow the one tie rule.
    dm = bioaccel.distance_matrix(bioaccel.read_sequences(flu_ha), "k80")
    cpu = bioaccel.nj(dm)
    assert_same_nj_tree(cpu, bioaccel.nj(dm, backend="reference"))
    assert_same_nj_tree(cpu, bioaccel.nj(dm, threads=1))
    edges, _ = nj_reference(dm.data)
    assert_same_nj_tree(cpu, _tree_from_edges(edges, dm.data.shape[0]))


@pytest.mark.parametrize("n", [40, 300])
def test_nj_backends_and_slow_reference_agree_on_exact_ties(n):
    # integer distances: exact ties at most steps; K80-like rounding added on the second matrix
    rng = np.random.default_rng(n)
    di = rng.integers(1, 4, (n, n)).astype(float)
    di = di + di.T
    np.fill_diagonal(di, 0)
    for d in (di, di / 7.0):
        cpu = bioaccel.nj(d)
        edges, _ = nj_reference(d)
        assert_same_nj_tree(cpu, _tree_from_edges(edges, n))
        assert_same_nj_tree(cpu, bioaccel.nj(d, backend="reference"))
        assert_same_nj_tree(cpu, bioaccel.nj(d, threads=1))


def test_nj_backend_errors():
    d = np.array([[0, 1, 2], [1, 0, 2], [2, 2, 0.0]])
    with pytest.raises(bioaccel.BackendUnavailableError, match="'gpu'"):
        bioaccel.nj(d, backend="gpu")
    assert bioaccel.nj(d, backend="auto").to_newick() == bioaccel.nj(d).to_newick()


def test_nj_is_a_registry_operation(monkeypatch):
    # every backend that lists neighbor_joining runs it through the registry, with the same tree
    from bioaccel.backends import AUTO_GPU_FROM, _instances, get_backend
    from bioaccel.backends.cupy import CupyBackend
    from bioaccel.backends.numba import NumbaCudaBackend
    from bioaccel.trees import _tree as tree_mod

    rng = np.random.default_rng(11)
    d = rng.integers(1, 5, (30, 30)).astype(float)
    d = d + d.T
    np.fill_diagonal(d, 0)
    cpu = bioaccel.nj(d)
    for name in ("cpu", "reference"):
        assert "neighbor_joining" in get_backend(name, "neighbor_joining").operations
        assert bioaccel.nj(d, backend=name).to_newick() == cpu.to_newick()
    # the CuPy backend's array code, on NumPy (the same class a GPU runs)
    on_numpy = CupyBackend(xp=np)
    parent, child, length, root = on_numpy.neighbor_joining(d, 1)
    assert bioaccel.Tree(cpu.labels, parent, child, length, root).to_newick() == cpu.to_newick()
    # a backend without NJ kernels is refused by name, never silently replaced
    assert "neighbor_joining" not in NumbaCudaBackend.operations
    with pytest.raises(bioaccel.BackendUnavailableError, match="numba-cuda"):
        bioaccel.nj(d, backend="numba-cuda")
    # auto: a usable GPU backend with NJ kernels from the registry's size rule on, the C++
    # core below
    monkeypatch.setitem(_instances, "cupy", on_numpy)
    gpu_from = 4096  # a rule's mechanism; the measured rule keeps NJ on the C++ core
    monkeypatch.setitem(AUTO_GPU_FROM, "neighbor_joining", gpu_from)
    assert tree_mod._nj_backend("auto", gpu_from).name == "cupy"
    assert tree_mod._nj_backend("auto", gpu_from - 1).name == "cpu"
    assert bioaccel.nj(d, backend="cupy").to_newick() == cpu.to_newick()


def test_nj_in_place_gives_the_same_tree_and_uses_the_input():
    rng = np.random.default_rng(3)
    n = 200
    x = rng.normal(size=(n, 5))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    expected = bioaccel.nj(d, threads=1).to_newick()
    work = d.copy()
    assert bioaccel.nj(work, threads=1, inplace=True).to_newick() == expected
    assert not np.array_equal(work, d)  # the working matrix was the input's own memory
    # inputs that cannot be worked in place are copied: same tree, input untouched
    frozen = d.copy()
    frozen.flags.writeable = False
    assert bioaccel.nj(frozen, inplace=True).to_newick() == expected
    fortran = np.asfortranarray(d)
    assert bioaccel.nj(fortran, inplace=True).to_newick() == expected
    np.testing.assert_array_equal(fortran, d)
    assert bioaccel.nj(d.copy(), backend="reference", inplace=True).to_newick() == expected
