"""DistanceMatrix: condensed order, file round trips, atomic writes, read errors."""

from __future__ import annotations

import numpy as np
import pytest

from bioaccel import DistanceMatrix
from bioaccel._core import atomic_output
from bioaccel.errors import DuplicateIdError, MatrixFormatError
from tests.datasets import require

IDS = ["name with spaces", "A/Sao_Paulo/43812/2009", "c", "d"]


@pytest.fixture
def dm(rng):
    x = rng.random((4, 4))
    data = x + x.T
    np.fill_diagonal(data, 0)
    data[0, 3] = data[3, 0] = np.nan
    data[1, 2] = data[2, 1] = np.inf
    return DistanceMatrix(data, IDS)


def test_condensed_is_scipy_order(dm):
    from scipy.spatial.distance import squareform

    clean = DistanceMatrix(np.nan_to_num(dm.data, posinf=9.0, nan=7.0), IDS)
    assert np.array_equal(clean.condensed(), squareform(clean.data, checks=False))
    assert DistanceMatrix.from_condensed(clean.condensed(), IDS) == clean


@pytest.mark.parametrize("fmt", ["phylip", "phylip-lower", "tsv", "npy", "npz"])
def test_round_trip_exact(tmp_path, dm, fmt):
    p = tmp_path / ("m.phy" if fmt.startswith("phylip") else f"m.{fmt}")
    dm.write(p, fmt)
    back = DistanceMatrix.read(p, fmt)
    assert back == dm  # bit-exact, NaN and Inf included, full names kept


def test_phylip_full_names_no_truncation(tmp_path, dm):
    p = tmp_path / "m.phy"
    dm.write(p)
    text = p.read_text().splitlines()
    assert text[0] == "4" and text[1].startswith("name with spaces  ")
    assert text[2].startswith("A/Sao_Paulo/43812/2009  ")


def test_duplicate_ids_rejected():
    with pytest.raises(DuplicateIdError):
        DistanceMatrix(np.zeros((2, 2)), ["a", "a"])


@pytest.mark.parametrize(
    "content,message",
    [
        ("", "file is empty"),
        ("x\n", "expected the number of taxa"),
        ("3\na 0 1 2\nb 1 0 3\n", "header says 3 taxa, found 2 rows"),
        ("2\na 0 1\nb 1 zero\n", r"line 3, column 5: 'zero' is not a number"),
        ("2\na 0 1\nb 2 0\n", "not symmetric"),
        # a short first row must not turn the file lower-triangular, and the row named is
        # the short one (most rows hold 3 values: a square)
        (
            "3\na 0 1\nb 1 0 2\nc 1 2 0\n",
            r"line 2: a name and 2 value\(s\); a square matrix of 3 taxa needs a name and 3 here",
        ),
        (
            "3\na 0\nb 1 0 2\nc 1 2 0\n",
            r"line 2: a name and 1 value\(s\); a square matrix of 3 taxa needs a name and 3 here",
        ),
        # a row too long in a lower triangle is still a ragged row
        (
            "3\na\nb 1 0\nc 1 2\n",
            r"line 3: 2 value\(s\) after the first word, but a lower matrix of 3 taxa has 1",
        ),
    ],
)
def test_phylip_read_errors(tmp_path, content, message):
    p = tmp_path / "m.phy"
    p.write_text(content)
    with pytest.raises(MatrixFormatError, match=message):
        DistanceMatrix.read(p)


def test_atomic_output_leaves_nothing_on_failure(tmp_path):
    target = tmp_path / "out.txt"
    with pytest.raises(RuntimeError):
        with atomic_output(target) as f:
            f.write("half")
            raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


def test_atomic_output_unwritable_directory(tmp_path):
    with pytest.raises(OSError, match="cannot write"):
        with atomic_output(tmp_path / "no" / "such" / "dir.txt") as f:
            f.write("x")


def test_to_skbio(rng):
    skbio = require("skbio", "the scikit-bio oracle")
    data = np.array([[0, 1.5], [1.5, 0]])
    s = DistanceMatrix(data, ["a", "b"]).to_skbio()
    assert isinstance(s, skbio.DistanceMatrix) and list(s.ids) == ["a", "b"]


def test_lower_triangular_names_ending_in_numbers_still_read(tmp_path):
    p = tmp_path / "m.phy"
    p.write_text("3\nstrain 1\nstrain 2 0.5\nstrain 3 0.25 0.75\n")
    dm = DistanceMatrix.read(p)
    assert dm.ids == ["strain 1", "strain 2", "strain 3"] and dm.data[2, 1] == 0.75


def test_asymmetric_matrices_refused_everywhere_with_one_tolerance(tmp_path):
    # one symmetry rule: DistanceMatrix, every reader, nj and upgma share one check
    import bioaccel
    from bioaccel.distances._checks import SYMMETRY_RTOL

    d = np.array([[0, 1, 2, 4], [1, 0, 3, 4], [2, 3.5, 0, 4], [4, 4, 4, 0.0]])
    message = r"not symmetric: 'b'/'c' = 3.0 but 'c'/'b' = 3.5 \(distances must agree to a relative 1e-09\)"
    with pytest.raises(MatrixFormatError, match=message):
        DistanceMatrix(d, list("abcd"))
    for build in (bioaccel.nj, bioaccel.upgma):
        with pytest.raises(MatrixFormatError, match=message):
            build(d, list("abcd"))
    p = tmp_path / "m.tsv"
    p.write_text(
        "\ta\tb\tc\td\n"
        + "".join(f"{n}\t" + "\t".join(map(str, row)) + "\n" for n, row in zip("abcd", d))
    )
    with pytest.raises(MatrixFormatError, match=f"{p}: matrix is " + message):
        DistanceMatrix.read(p)
    np.save(tmp_path / "m.npy", d)
    (tmp_path / "m.npy.ids.txt").write_text("".join(f"{k}\n" for k in range(len(d))))
    with pytest.raises(MatrixFormatError, match="m.npy: matrix is not symmetric"):
        DistanceMatrix.read(tmp_path / "m.npy")
    # rounding-level differences are within the tolerance
    d[2, 1] = 3.0 * (1 + SYMMETRY_RTOL / 10)
    assert bioaccel.nj(d, list("abcd")).n_tips == 4
    DistanceMatrix(d, list("abcd"))
    nan = np.array([[0, np.nan, np.inf], [np.nan, 0, 1], [np.inf, 1, 0]])
    DistanceMatrix(nan, list("xyz"))


def test_distance_matrix_pair_indexing_and_array(dm):
    # dm[i, j] by index or id, and np.asarray(dm)
    n = len(dm)
    for i in range(n):
        for j in range(n):
            want = dm.data[i, j]
            for got in (dm[i, j], dm[dm.ids[i], dm.ids[j]], dm[i, dm.ids[j]], dm[i - n, j - n]):
                assert got == want or (np.isnan(got) and np.isnan(want))
    assert np.asarray(dm) is dm.data
    assert np.asarray(dm, dtype=np.float32).dtype == np.float32
    assert np.array(dm) is not dm.data and np.array_equal(np.array(dm), dm.data, equal_nan=True)
    with pytest.raises(KeyError, match="no id 'nope'"):
        dm["nope", 0]
    with pytest.raises(IndexError, match=f"index {n} outside"):
        dm[0, n]
    with pytest.raises(TypeError, match="by a pair"):
        dm[0]


@pytest.mark.parametrize("n", [1, 2, 3, 127, 128, 129, 300])
def test_from_condensed_mirrors_every_pair(n):
    """The square from a condensed triangle, against an index-by-index reference, for sizes
    below, at and across the mirroring block (128)."""
    values = np.random.default_rng(n).random(n * (n - 1) // 2)
    want = np.zeros((n, n))
    k = 0
    for i in range(n):
        for j in range(i + 1, n):
            want[i, j] = want[j, i] = values[k]
            k += 1
    got = DistanceMatrix.from_condensed(values, [f"t{i}" for i in range(n)]).data
    assert np.array_equal(got, want)
