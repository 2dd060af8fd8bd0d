"""Low-memory neighbour joining (``nj(..., low_memory=True)``, ``bioaccel tree --low-memory``):
a float32 condensed triangle instead of the float64 square. Without near-ties (Q gaps far
above float32 rounding) the tree is the exact mode's, the slow reference's and ape::nj's;
its input checks say what the exact mode says; the whole chain from a file stays within
the triangle plus a fixed overhead."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import bioaccel
from bioaccel.distances import CondensedDistances, CondensedMatrix, DistanceMatrix
from bioaccel.errors import BackendUnavailableError, MatrixFormatError
from bioaccel.trees import read_newick
from tests.cli_runner import invoke
from tests.datasets import bundled, child_env
from tests.nj_reference import assert_same_nj_tree, nj_reference


def _points(rng, n: int, dims: int = 6) -> np.ndarray:
    x = rng.random((n, dims))
    return np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))


def _tree_from_edges(edges, n):
    parent = [p for p, _, _ in edges]
    child = [c for _, c, _ in edges]
    length = [w for _, _, w in edges]
    return parent, child, length


def _splits(tree) -> set[frozenset]:
    """Nontrivial splits of an unrooted tree, by tip label, each as the side without tips[0]."""
    labels = tree.labels
    everyone = frozenset(labels)
    below: dict[int, frozenset] = {}
    order, stack = [], [tree.root]
    while stack:
        v = stack.pop()
        order.append(v)
        stack.extend(int(tree.child[e]) for e in tree._children[v])
    for v in reversed(order):
        kids = [int(tree.child[e]) for e in tree._children[v]]
        below[v] = (
            frozenset([labels[v]])
            if v < tree.n_tips
            else frozenset().union(*(below[c] for c in kids))
        )
    out = set()
    for side in below.values():
        if 1 < len(side) < len(labels) - 1:
            out.add(side if labels[0] not in side else everyone - side)
    return out


@pytest.mark.parametrize("n", [3, 4, 5, 30, 200, 700])
def test_low_memory_equals_exact_and_reference_without_near_ties(rng, n):
    d = _points(rng, n)
    edges, gaps = nj_reference(d)
    # no ties (these seeded points have none near enough to float32 rounding to flip a join:
    # the smallest Q gap of a join is 2e-5 at n = 700, where Q is about 1e3)
    assert len(gaps) == 0 or np.min(gaps) > 1e-5
    exact = bioaccel.nj(d)
    low = bioaccel.nj(d, low_memory=True)
    # same joins in the same order: the same edge arrays, lengths to float32 rounding
    assert np.array_equal(exact.parent, low.parent)
    assert np.array_equal(exact.child, low.child)
    assert low.root == exact.root
    np.testing.assert_allclose(low.length, exact.length, rtol=0, atol=1e-5)
    assert_same_nj_tree(low, bioaccel.nj(d), atol=1e-5)
    if n > 3:
        parent, child, length = _tree_from_edges(edges, n)
        ref = bioaccel.Tree(exact.labels, parent, child, length, exact.root)
        assert _splits(low) == _splits(ref)


def test_low_memory_rows_past_their_kept_prefix(rng):
    """Clustered data: many rows' kept prefixes (64 candidates) do not stop the bounded
    search, so those rows are finished from the matrix; still the exact mode's joins."""
    centres = rng.random((12, 5)) * 10
    x = np.concatenate([c + rng.random((150, 5)) * 0.5 for c in centres])
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    exact, low = bioaccel.nj(d, threads=2), bioaccel.nj(d, low_memory=True, threads=2)
    assert np.array_equal(exact.child, low.child)
    assert np.array_equal(exact.parent, low.parent)
    one = bioaccel.nj(d, low_memory=True, threads=1)
    assert np.array_equal(one.child, low.child)


def test_low_memory_inputs_give_one_tree(tmp_path, rng):
    n = 60
    dm = DistanceMatrix(_points(rng, n), [f"t{i}" for i in range(n)])
    want = bioaccel.nj(dm, low_memory=True)
    for ext in ("npy", "cdist", "phy", "tsv"):
        dm.write(tmp_path / f"m.{ext}")
        cm = DistanceMatrix.read_condensed(tmp_path / f"m.{ext}")
        assert isinstance(cm, CondensedMatrix) and cm.ids == dm.ids
        got = bioaccel.nj(cm, low_memory=True)
        assert np.array_equal(got.child, want.child), ext
        assert got.labels == dm.ids
    got = bioaccel.nj(CondensedDistances(tmp_path / "m.cdist"), low_memory=True)
    assert np.array_equal(got.child, want.child)
    # a CondensedMatrix is kept unless inplace=True, when it is the working matrix
    cm = DistanceMatrix.read_condensed(tmp_path / "m.npy")
    before = cm.values.copy()
    bioaccel.nj(cm, low_memory=True)
    assert np.array_equal(cm.values, before)
    bioaccel.nj(cm, low_memory=True, inplace=True)
    assert not np.array_equal(cm.values, before)


def _first_line(exc) -> str:
    return str(exc.value).split("\n")[0]


def test_low_memory_input_checks_say_what_the_exact_mode_says(tmp_path, rng):
    n = 8
    ids = [f"t{i}" for i in range(n)]
    good = _points(rng, n)

    def both(data, exc_type):
        """The exact reader's and the low-memory reader's errors for one .npy file."""
        np.save(tmp_path / "m.npy", data)
        (tmp_path / "m.npy.ids.txt").write_text("".join(i + "\n" for i in ids))
        with pytest.raises(exc_type) as exact:
            bioaccel.nj(DistanceMatrix.read(tmp_path / "m.npy"))
        with pytest.raises(exc_type) as low:
            bioaccel.nj(DistanceMatrix.read_condensed(tmp_path / "m.npy"), low_memory=True)
        return _first_line(exact), _first_line(low)

    bad = good.copy()
    bad[2, 5] = bad[5, 2] = -0.5
    exact, low = both(bad, MatrixFormatError)
    assert exact == low and "'t2'/'t5' = -0.5 is negative (row 3, column 6)" in low
    bad = good.copy()
    bad[3, 3] = 1.0
    exact, low = both(bad, MatrixFormatError)
    assert exact == low and "the distance of 't3' to itself" in low
    bad = good.copy()
    bad[1, 4] = 0.25
    bad[4, 1] = 0.75
    exact, low = both(bad, MatrixFormatError)
    assert exact == low and "not symmetric: 't1'/'t4' = 0.25 but 't4'/'t1' = 0.75" in low
    bad = good.copy()
    bad[2, 6] = bad[6, 2] = np.nan
    exact, low = both(bad, ValueError)
    assert exact == low and "distance between 't2' and 't6' is nan" in low
    exact, low = both(np.zeros((3, 4)), ValueError)
    assert exact == low and "must be square, got shape (3, 4)" in low
    # arrays, as nj takes them
    for data, words in ((np.zeros((3, 4)), "must be square"), (-good, "is negative")):
        with pytest.raises(ValueError, match=words):
            bioaccel.nj(data, low_memory=True)
    with pytest.raises(ValueError, match="at least 2 taxa"):
        bioaccel.nj(np.zeros((1, 1)), low_memory=True)
    two = bioaccel.nj([[0, 3], [3, 0]], ["a", "b"], low_memory=True)
    assert two.to_newick() == bioaccel.nj([[0, 3], [3, 0]], ["a", "b"]).to_newick()


def test_low_memory_backends():
    d = _points(np.random.default_rng(1), 10)
    assert np.array_equal(
        bioaccel.nj(d, low_memory=True, backend="auto").child,
        bioaccel.nj(d, low_memory=True).child,
    )
    with pytest.raises(BackendUnavailableError, match="cpu backend only, not on 'reference'"):
        bioaccel.nj(d, low_memory=True, backend="reference")
    from bioaccel.backends import get_backend

    with pytest.raises(BackendUnavailableError, match="backend 'reference' has no low-memory"):
        get_backend("reference", "neighbor_joining").neighbor_joining(
            np.zeros(45, np.float32), 1, low_memory=True
        )
    native = bioaccel._core.native.load_native()
    with pytest.raises(ValueError, match="float32"):
        native.neighbor_joining_condensed(np.zeros(45), 10, 1)
    with pytest.raises(ValueError, match="do not fit 11 taxa"):
        native.neighbor_joining_condensed(np.zeros(45, np.float32), 11, 1)
    with pytest.raises(ValueError, match="row 0, column 2 is not finite"):
        native.neighbor_joining_condensed(np.array([1, np.inf, 1], np.float32), 3, 1)


def test_cli_low_memory_from_phy_cdist_and_npy(tmp_path, rng):
    n = 40
    dm = DistanceMatrix(_points(rng, n), [f"t{i}" for i in range(n)])
    want = _splits(bioaccel.nj(dm))
    for ext in ("phy", "cdist", "npy"):
        dm.write(tmp_path / f"m.{ext}")
        out = tmp_path / f"{ext}.nwk"
        res = invoke("tree", str(tmp_path / f"m.{ext}"), "--low-memory", "-o", str(out))
        assert res.exit_code == 0, res.output
        assert _splits(read_newick(out)) == want, ext
    res = invoke(
        "tree", str(tmp_path / "m.npy"), "--low-memory", "--method", "upgma", "-o", "x.nwk"
    )
    assert res.exit_code != 0 and "--low-memory applies to --method nj" in res.output
    res = invoke("tree", str(tmp_path / "m.npy"), "--low-memory", "-b", "reference", "-o", "x.nwk")
    assert res.exit_code != 0 and "cpu backend only, not -b reference" in res.output


def test_cli_low_memory_from_sequences_streams_a_cdist(tmp_path):
    """Sequences with --low-memory: the distances go to a scratch .cdist beside the output
    (removed after) or to --matrix-output when it is a .cdist, never a square; the tree is the
    low-memory tree of that matrix, the same splits as the exact CLI tree here."""
    fasta = bundled("msx2_mRNA.aln")
    out, exact = tmp_path / "lm.nwk", tmp_path / "exact.nwk"
    res = invoke("tree", str(fasta), "--low-memory", "-t", "1", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert [p.name for p in tmp_path.iterdir()] == ["lm.nwk"]  # the scratch folder is gone
    res = invoke("tree", str(fasta), "-t", "1", "-o", str(exact))
    assert res.exit_code == 0, res.output
    assert _splits(read_newick(out)) == _splits(read_newick(exact))
    # the streamed matrix kept when asked for as .cdist; another format is refused up front
    res = invoke(
        "tree",
        str(fasta),
        "--low-memory",
        "--matrix-output",
        str(tmp_path / "m.cdist"),
        "-o",
        str(tmp_path / "kept.nwk"),
    )
    assert res.exit_code == 0, res.output
    assert read_newick(tmp_path / "kept.nwk").to_newick() == read_newick(out).to_newick()
    assert (tmp_path / "m.cdist").exists()
    res = invoke(
        "tree",
        str(fasta),
        "--low-memory",
        "--matrix-output",
        str(tmp_path / "m.phy"),
        "-o",
        str(tmp_path / "no.nwk"),
    )
    assert res.exit_code != 0 and "name it .cdist" in res.output
    assert not (tmp_path / "no.nwk").exists() and not (tmp_path / "m.phy").exists()


@pytest.mark.r
def test_low_memory_equals_ape_nj(rng):
    from tests.rhelpers import r, to_r_matrix

    ro = r()
    for n in (5, 17, 120, 400):
        d = _points(rng, n)
        labels = [f"t{i}" for i in range(n)]
        ours = bioaccel.nj(DistanceMatrix(d, labels), low_memory=True)
        ro.globalenv["bioaccel_d"] = to_r_matrix(ro, d, labels)
        ro.globalenv["bioaccel_nwk"] = ours.to_newick()
        ro.r("bioaccel_ape_nj <- ape::nj(bioaccel_d)")
        assert ro.r("ape::dist.topo(ape::read.tree(text=bioaccel_nwk), bioaccel_ape_nj)")[0] == 0


@pytest.mark.slow
@pytest.mark.parametrize("ext", ["cdist", "npy", "phy"])
def test_low_memory_peak_from_a_file_is_the_triangle(tmp_path, ext):
    """The whole chain in a child process, file to Newick, at n = 3,000: the triangle
    (n^2 / 2 x 4 bytes = 18 MB) plus a fixed overhead (the interpreter, NumPy, bioaccel and
    read blocks: ~60 MB), far below the float64 square alone (72 MB) and its copy."""
    n = 3000
    rng = np.random.default_rng(4)
    x = rng.random((n, 4))
    path = tmp_path / f"m.{ext}"
    if ext == "phy":
        with open(path, "w") as f:  # square PHYLIP text, written row by row
            f.write(f"{n}\n")
            for i in range(n):
                row = np.sqrt(((x - x[i]) ** 2).sum(-1))
                f.write(f"t{i} " + " ".join(map(repr, row.tolist())) + "\n")
    elif ext == "npy":
        with open(path, "wb") as f:  # written in row blocks: this process stays small too
            np.lib.format.write_array_header_1_0(
                f, {"descr": "<f8", "fortran_order": False, "shape": (n, n)}
            )
            for r0 in range(0, n, 500):
                block = np.sqrt(((x[r0 : r0 + 500, None] - x[None]) ** 2).sum(-1))
                f.write(block.astype("<f8").tobytes())
        Path(f"{path}.ids.txt").write_text("".join(f"t{i}\n" for i in range(n)))
    else:
        values = np.concatenate(
            [np.sqrt(((x[i + 1 :] - x[i]) ** 2).sum(-1)) for i in range(n - 1)]
        ).astype("<f4")
        from bioaccel.distances._ondisk import cdist_header

        path.write_bytes(cdist_header([str(i) for i in range(n)], 4) + values.tobytes())
        del values
    code = (
        "import re, sys\n"
        "from bioaccel.cli import main\n"
        f"sys.argv = ['bioaccel', 'tree', {str(path)!r}, '--low-memory', '-t', '1', "
        f"'-o', {str(tmp_path / 'out.nwk')!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1)\n"
        "print(hwm)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=child_env()
    )
    peak_kb = int(out.stdout.split()[-1])
    triangle_kb = n * (n - 1) // 2 * 4 // 1024
    assert peak_kb < triangle_kb + 64 * 1024, (peak_kb, triangle_kb)
    assert read_newick(tmp_path / "out.nwk").n_tips == n


_PHYLIP_CASES = {
    "ragged": "3\na 0 1 2\nb 1 0\nc 2 1 0\n",
    "header": "x y\na 0\n",
    "rows": "3\na 0 1 2\nb 1 0 1\n",
    "not a number": "3\na 0 1 NA\nb 1 0 1\nc NA 1 0\n",
    "negative": "3\na 0 -1 2\nb -1 0 1\nc 2 1 0\n",
    "diagonal": "3\na 0 1 2\nb 1 0 1\nc 2 1 5\n",
    "asymmetric": "3\na 0 1 2\nb 1 0 1\nc 2.5 1 0\n",
    "duplicate": "3\na 0 1 2\na 1 0 1\nc 2 1 0\n",
    "lower negative": "3\na\nb 1\nc 2 -1\n",
    "empty": "\n\n",
    "binary": "3\na 0\x01 1\n",
    "gzip": "\x1f\x8b\x08",
}


@pytest.mark.parametrize("case", sorted(_PHYLIP_CASES))
def test_streamed_phylip_fails_as_the_reader_does(tmp_path, case):
    path = tmp_path / "bad.phy"
    path.write_text(_PHYLIP_CASES[case])
    with pytest.raises(Exception) as exact:
        DistanceMatrix.read(path)
    with pytest.raises(Exception) as low:
        DistanceMatrix.read_condensed(path)
    assert type(low.value) is type(exact.value)
    assert str(low.value) == str(exact.value)


@pytest.mark.parametrize("fmt", ["phylip", "phylip-lower"])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_streamed_phylip_layouts(tmp_path, rng, fmt, newline):
    n = 12
    dm = DistanceMatrix(_points(rng, n), [f"taxon {i}" for i in range(n)])
    dm.write(tmp_path / "m.phy", fmt)
    text = (tmp_path / "m.phy").read_text()
    (tmp_path / "m.phy").write_bytes(text.replace("\n", newline).encode())
    cm = DistanceMatrix.read_condensed(tmp_path / "m.phy")
    assert cm.ids == dm.ids
    assert np.array_equal(cm.values, dm.condensed().astype(np.float32))
    # wrapped rows (indented continuation lines) and strict 10-character names
    (tmp_path / "w.phy").write_text("3\na 0 1\n  2\nb 1 0\n  1\nc 2 1\n  0\n")
    assert DistanceMatrix.read_condensed(tmp_path / "w.phy").values.tolist() == [1, 2, 1]
    (tmp_path / "s.phy").write_text("3\nalpha     0 1 2\nbeta      1 0 1\ngamma     2 1 0\n")
    assert DistanceMatrix.read_condensed(tmp_path / "s.phy").ids == ["alpha", "beta", "gamma"]
