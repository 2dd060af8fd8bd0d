"""Messages about matrix files name the culprit: the row that went wrong, whatever the
layout and whichever reader (in memory, streamed into a triangle, streamed to the scratch
file of the low-memory tree)."""

from __future__ import annotations

import re
import shutil

import numpy as np
import pytest

from bioaccel import DistanceMatrix
from bioaccel.distances import write_triangle_file
from bioaccel.errors import MatrixFormatError
from tests.cli_runner import invoke

N = 30


def _square(rng) -> np.ndarray:
    x = rng.random((N, N))
    d = np.round(x + x.T, 6)
    np.fill_diagonal(d, 0)
    return d


def _layout_text(d: np.ndarray, layout: str) -> list[str]:
    """The lines of ``d`` written as PHYLIP ``layout``: square/lower, relaxed/strict, or
    square wrapped (each row's values on the name line and one indented line)."""
    ids = [f"taxon{k:02d}" for k in range(N)]
    lines = [str(N)]
    for k, name in enumerate(ids):
        values = [repr(float(v)) for v in (d[k, :k] if "lower" in layout else d[k])]
        if layout.startswith("strict"):
            lines.append(f"{name:<10}" + " ".join(values))
        elif layout == "wrapped":
            lines.append(f"{name}  " + " ".join(values[:20]))
            lines.append("    " + " ".join(values[20:]))
        else:
            lines.append(f"{name}  " + " ".join(values))
    return lines


def _readers(path, tmp_path):
    yield lambda: DistanceMatrix.read(path)
    yield lambda: DistanceMatrix.read_condensed(path)
    yield lambda: write_triangle_file(path, tmp_path / "scratch.tri")


@pytest.mark.parametrize("layout", ["square", "strict square", "wrapped", "lower", "strict lower"])
def test_a_short_row_is_named_in_every_layout_and_reader(tmp_path, rng, layout):
    # once: one value missing on line 9 was reported at line 2 ("a lower
    # matrix of 30 taxa has 0 on this row"): the layout is the one most rows fit, and the
    # row that does not fit it is the one named
    lines = _layout_text(_square(rng), layout)
    row = 8 if layout != "wrapped" else 15  # row 7's first line (wrapped: two lines a row)
    lines[row] = lines[row].rsplit(" ", 1)[0]  # its last value dropped
    path = tmp_path / "m.phy"
    path.write_text("\n".join(lines) + "\n")
    square = "square" in layout or layout == "wrapped"
    want = N if square else 7
    for read in _readers(path, tmp_path):
        with pytest.raises(MatrixFormatError) as err:
            read()
        message = str(err.value)
        assert message.startswith(f"{path}, line {row + 1}: "), message
        kind = "square" if square else "lower-triangular"
        assert f"a {kind} matrix of {N} taxa needs a name and {want} here" in message, message
        assert f"{want - 1} value(s)" in message, message
        assert "\n" not in message
    assert not (tmp_path / "scratch.tri").exists()


def test_a_short_first_row_of_a_square_is_named(tmp_path):
    path = tmp_path / "m.phy"
    path.write_text("3\na 0 1\nb 1 0 2\nc 1 2 0\n")
    with pytest.raises(MatrixFormatError, match=re.escape(f"{path}, line 2: a name and 2 value")):
        DistanceMatrix.read(path)


def _lonely(tmp_path, n=68):
    x = np.random.default_rng(3).random((n, n))
    d = x + x.T
    np.fill_diagonal(d, 0)
    path = tmp_path / "lonely.npy"
    np.save(path, d)
    return path


def test_an_npy_matrix_without_its_ids_file_is_refused_by_every_reader(tmp_path):
    # once: the tips were named 0..67 silently
    path = _lonely(tmp_path)
    want = (
        f"{path}: no ids file {path}.ids.txt beside it (one id a line, row order); "
        "bioaccel distance -o x.npy writes one, DistanceMatrix.write(x.npy) too"
    )
    for read in _readers(path, tmp_path):
        with pytest.raises(MatrixFormatError) as err:
            read()
        assert str(err.value) == want
    assert not (tmp_path / "scratch.tri").exists()


@pytest.mark.parametrize("low_memory", [[], ["--low-memory"]])
def test_tree_of_an_npy_matrix_without_its_ids_file_says_which_file_is_missing(
    tmp_path, low_memory
):

    path = _lonely(tmp_path)
    res = invoke("tree", str(path), *low_memory, "-o", str(tmp_path / "t.nwk"))
    assert res.exit_code == 2
    assert res.stderr == f"bioaccel: error: {path}: no ids file {path}.ids.txt beside it " + (
        "(one id a line, row order); bioaccel distance -o x.npy writes one, "
        "DistanceMatrix.write(x.npy) too\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lonely.npy"]
    (tmp_path / "lonely.npy.ids.txt").write_text("".join(f"s{i}\n" for i in range(68)))
    res = invoke("tree", str(path), *low_memory, "-o", str(tmp_path / "t.nwk"))
    assert res.exit_code == 0, res.stderr
    assert "s67" in (tmp_path / "t.nwk").read_text()


def _matrix_file(tmp_path, d, fmt):
    ids = [f"t{i}" for i in range(len(d))]
    if fmt == "npy":
        np.save(tmp_path / "m.npy", d)
        (tmp_path / "m.npy.ids.txt").write_text("".join(i + "\n" for i in ids))
        return tmp_path / "m.npy"
    path = tmp_path / "m.phy"
    path.write_text(
        f"{len(d)}\n"
        + "".join(f"{i}  " + " ".join(map(repr, r.tolist())) + "\n" for i, r in zip(ids, d))
    )
    return path


def _tree_messages(tmp_path, path):
    """The one line of each path of ``bioaccel tree``: the exact tree, the low-memory tree
    in-process, and the checks before the ``bioaccel-nj`` program takes over."""

    from bioaccel.trees import prepare_input

    said = []
    for extra in ([], ["--low-memory"]):
        res = invoke("tree", str(path), *extra, "-o", str(tmp_path / "t.nwk"))
        said.append(res.stderr.removeprefix("bioaccel: error: ").rstrip("\n"))
        said[-1] = "ok" if res.exit_code == 0 else said[-1]
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    try:
        prepare_input(path, scratch)
        said.append("ok")
    except ValueError as exc:
        said.append(str(exc))
    return said


@pytest.mark.parametrize("fmt", ["phy", "npy"])
def test_an_asymmetric_pair_is_named_with_the_files_value_by_every_tree_path(tmp_path, rng, fmt):
    # once: the low-memory paths named the float32 rounding of the value
    # (0.06663662195205688 for 0.06663661988262083), not in the file
    d = _square(rng)[:6, :6]
    d[1, 3], d[3, 1] = 0.06663661988262083, 0.0666
    said = _tree_messages(tmp_path, _matrix_file(tmp_path, d, fmt))
    assert len(set(said)) == 1, said
    assert "'t1'/'t3' = 0.06663661988262083 but 't3'/'t1' = 0.0666" in said[0], said


@pytest.mark.parametrize("fmt", ["phy", "npy"])
def test_values_past_float32_are_named_alike_by_every_tree_path(tmp_path, rng, fmt):
    # once: with 1e39 cells the paths named different things (a symmetry
    # error; an Inf that is not in the file)
    d = _square(rng)[:6, :6]
    d[1, 3], d[2, 4] = 1e39, 1e39  # the lower cells keep their values: not symmetric
    said = _tree_messages(tmp_path, _matrix_file(tmp_path, d, fmt))
    assert len(set(said)) == 1, said
    assert said[0].endswith(
        f"'t1'/'t3' = 1e+39 but 't3'/'t1' = {float(d[3, 1])!r} "
        + ("(distances must agree to a relative 1e-09)")
    ), said
    d[3, 1], d[4, 2] = 1e39, 1e39  # symmetric: the exact tree takes them, float32 cannot
    shutil.rmtree(tmp_path / "scratch")
    said = _tree_messages(tmp_path, _matrix_file(tmp_path, d, fmt))
    assert said[0] == "ok"
    assert said[1] == said[2], said
    assert "'t1'/'t3' = 1e+39 is past float32's range" in said[1], said
    assert "inf" not in said[1].lower(), said


def test_a_float64_cdist_names_its_values_as_read_on_every_low_memory_path(tmp_path, rng):
    # the .cdist reader rounded float64 values to float32 before its checks named them
    d = _square(rng)[:6, :6]
    d[1, 3] = d[3, 1] = 1e39
    path = tmp_path / "m.cdist"
    DistanceMatrix(d, [f"t{i}" for i in range(6)]).write(path)
    said = _tree_messages(tmp_path, path)
    assert said[0] == "ok" and said[1] == said[2], said
    assert said[1] == (
        f"{path}: 't1'/'t3' = 1e+39 is past float32's range (at most 3.4028234663852886e+38), "
        "in which the low-memory tree stores distances; build the tree without --low-memory "
        "(low_memory=False), or scale the distances"
    )
    values = DistanceMatrix(d, [f"t{i}" for i in range(6)]).condensed()
    values[values == 1e39] = 0.5
    values[4] = -0.06663661988262083
    from bioaccel.distances import cdist_header

    path.write_bytes(cdist_header([f"t{i}" for i in range(6)], 8) + values.astype("<f8").tobytes())
    shutil.rmtree(tmp_path / "scratch")
    said = _tree_messages(tmp_path, path)
    assert len(set(said)) == 1 and "'t0'/'t5' = -0.06663661988262083 is negative" in said[0], said


def test_pamls_lower_triangular_matrix_with_long_names_is_read(tmp_path):
    # PAML's distance files (2NG.dN, ...): lower-triangular, names past 10 characters
    path = tmp_path / "2NG.dN"
    path.write_text(
        "    3\nHuman_long_name_x\nGoat-cow_long_name   0.0123\nRabbit              0.2000  0.3000\n"
    )
    for read in (DistanceMatrix.read, DistanceMatrix.read_condensed):
        d = read(path, "phylip")
        assert d.ids == ["Human_long_name_x", "Goat-cow_long_name", "Rabbit"]
    assert DistanceMatrix.read(path, "phylip").data.tolist() == [
        [0.0, 0.0123, 0.2],
        [0.0123, 0.0, 0.3],
        [0.2, 0.3, 0.0],
    ]
