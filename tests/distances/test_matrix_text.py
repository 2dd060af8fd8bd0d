"""Matrix text: the compiled formatter writes Python's ``repr`` of every float byte for byte
(checked on more than a million seeded doubles of every magnitude), files written with and
without the compiled core are identical, and the compiled number parser reads what the
Python reader reads, leaving the error messages to it."""

from __future__ import annotations

import numpy as np
import pytest

from bioaccel.distances import _text
from bioaccel.distances._matrix import DistanceMatrix
from bioaccel.errors import DuplicateIdError, MatrixFormatError
from tests.cli_runner import invoke
from tests.datasets import require

native = require("bioaccel._native", "the compiled core")


def _doubles() -> np.ndarray:
    rng = np.random.default_rng(20261202)
    exact = [0.0, 5e-324, 2.2250738585072014e-308, 2.225073858507201e-308, 1e16, 1e15]
    exact += [9999999999999998.0, 1e-4, 1e-5, 9.999999999999999e-05, 0.1, 1 / 3, 0.5, 100.0]
    exact += [1.7976931348623157e308, 123456789012345680.0, 2.0**53, 2.0**53 + 2, 1e22, 1e23]
    powers = 10.0 ** np.arange(-323, 309, dtype=np.float64)
    places = rng.integers(1, 8, 100_000)
    parts = [
        np.array(exact),
        powers,
        np.nextafter(powers, 0),
        np.nextafter(powers, np.inf),
        rng.random(300_000),
        10.0 ** rng.uniform(-330, 308.2, 300_000),
        rng.random(200_000).astype(np.float32).astype(np.float64),
        (10.0 ** rng.uniform(-40, 38, 200_000)).astype(np.float32).astype(np.float64),
        rng.integers(0, 2**63, 100_000, dtype=np.uint64).view(np.float64),  # subnormals too
        np.round(rng.random(100_000) * 10.0**places) / 10.0**places,  # short decimals
        rng.integers(0, 10**17, 50_000).astype(np.float64),  # whole numbers around 1e16
    ]
    x = np.abs(np.concatenate(parts))
    x = x[np.isfinite(x)]
    return np.concatenate([x, -x[:1000], [np.inf, -np.inf, np.nan]])


def test_native_text_is_python_repr_of_a_million_doubles():
    x = _doubles()
    assert x.size > 1_000_000
    got = native.format_matrix_rows(x.reshape(1, -1), 0, [b""], False, " ", 0).decode()
    want = " ".join(map(repr, x.tolist())) + "\n"
    if got != want:
        bad = [(g, w) for g, w in zip(got.split(" "), want.split(" ")) if g != w]
        pytest.fail(f"{len(bad)} values differ from repr, e.g. {bad[:5]}")


@pytest.fixture
def python_only(monkeypatch):
    """Matrix text written and read without the compiled core."""

    def use():
        monkeypatch.setattr(_text, "_compiled", lambda: None)

    return use


def _matrix_of(n: int, seed: int = 1) -> DistanceMatrix:
    rng = np.random.default_rng(seed)
    d = rng.random((n, n)) * 10.0 ** rng.integers(-7, 18, (n, n))
    d = np.triu(d, 1)
    d = d + d.T
    d[0, 1] = d[1, 0] = np.inf
    d[2, 3] = d[3, 2] = np.nan
    d[1, 2] = d[2, 1] = 1e-5
    ids = [f"t{k}" for k in range(n)]
    ids[1], ids[2], ids[3] = "a much longer name", "café ü", "x"
    return DistanceMatrix(d, ids)


@pytest.mark.parametrize("fmt", ["phylip", "phylip-lower", "tsv"])
def test_native_and_python_write_the_same_bytes(tmp_path, monkeypatch, python_only, fmt):
    monkeypatch.setattr(_text, "_TEXT_CHUNK_VALUES", 100)  # many chunks of rows
    dm = _matrix_of(37)
    ext = ".tsv" if fmt == "tsv" else ".phy"
    fast, slow = tmp_path / f"native{ext}", tmp_path / f"python{ext}"
    dm.write(fast, fmt, threads=2)
    python_only()
    dm.write(slow, fmt)
    assert fast.read_bytes() == slow.read_bytes()
    assert DistanceMatrix.read(fast) == dm


def test_small_and_empty_layouts(tmp_path):
    for n in (0, 1, 2):
        dm = DistanceMatrix(np.zeros((n, n)), [f"s{k}" for k in range(n)])
        for fmt in ("phylip", "phylip-lower", "tsv"):
            path = tmp_path / ("m.tsv" if fmt == "tsv" else "m.phy")
            dm.write(path, fmt)
            if fmt == "phylip-lower" and n:
                assert path.read_text().splitlines()[1] == "s0"
            if n:
                assert DistanceMatrix.read(path) == dm


TEXTS = {
    "relaxed square": "3\na  0 1.5 2\nb c  1.5 0 +3E0\nd 2 3 0\n",
    "relaxed lower": "3\na\nb  .5\nc  2. 3e-1\n",
    "strict square": "2\nabcdefghij0 1e400\nabcdefghi21e400 0\n",
    "strict lower": "3\nname000001\nname0000020.5\nname0000031 2\n",
    "non-ascii": "2\ncafé  0 INF\nb  Infinity 0\n",
    "special": "2\na  0 nan\nb  NaN 0\n",
    "tsv": "\ta\tb\na\t0\t1e-5\nb\t1e-05\t0\n",
    "tsv out of range": "\ta\tb\na\t0\t1e-400\nb\t0.0\t0\n",
    "wrapped": "2\na          0\n  1\nb          1\n  0\n",
}


@pytest.mark.parametrize("case", sorted(TEXTS))
def test_native_and_python_read_the_same_matrix(tmp_path, python_only, case):
    path = tmp_path / ("m.tsv" if case.startswith("tsv") else "m.phy")
    path.write_text(TEXTS[case])
    fast = DistanceMatrix.read(path)
    python_only()
    assert DistanceMatrix.read(path) == fast


BAD = {
    "decimal comma": "2\na  0 1,5\nb  1,5 0\n",
    "missing": "2\na  0 NA\nb  NA 0\n",
    "dash": "\ta\tb\na\t0\t-\nb\t-\t0\n",
    "question": "3\na\nb  ?\nc  1 2\n",
    "strict": "2\nabcdefghij0 x\nabcdefghij1 0\n",
    "hex": "2\na  0 0x1\nb  0x1 0\n",
    "nan(1)": "2\na  0 nan(1)\nb  nan(1) 0\n",
    "tsv space": "\ta\tb\na\t0\t 1\nb\t1\t0\n",
    "tsv empty": "\ta\tb\na\t0\t\nb\t1\t0\n",
    "exponent": "2\na  0 1e\nb  1e 0\n",
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_native_and_python_refuse_with_the_same_message(tmp_path, python_only, case):
    path = tmp_path / ("m.tsv" if BAD[case].startswith("\t") else "m.phy")
    path.write_text(BAD[case])
    with pytest.raises(MatrixFormatError) as fast:
        DistanceMatrix.read(path)
    python_only()
    with pytest.raises(MatrixFormatError) as slow:
        DistanceMatrix.read(path)
    assert str(fast.value) == str(slow.value)
    assert "is not a number" in str(fast.value)


def test_native_parser_takes_every_number_form_python_takes():
    forms = ["0", "1.", ".5", "+1.5", "-0.0", "1e5", "1E+05", "2.5e-3", "00012", "inf", "-Inf"]
    forms += ["INFINITY", "nan", "1.7976931348623157e308", "5e-324", "0.30000000000000004"]
    lines = ["x  " + " ".join(forms)]
    out = np.zeros((1, len(forms)))
    ends = native.parse_matrix_rows(
        lines, np.zeros(1, np.int64), np.array([len(forms)]), out, False, False, 1
    )
    assert ends.tolist() == [3]
    want = np.array([float(f) for f in forms])
    assert np.array_equal(out[0], want, equal_nan=True)
    assert np.array_equal(np.signbit(out[0]), np.signbit(want))


def test_the_cli_writes_text_through_the_native_formatter(tmp_path, monkeypatch):

    calls = []

    class Spy:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(native, name)

    monkeypatch.setattr(_text, "_compiled", lambda: Spy())
    fasta = tmp_path / "s.fa"
    fasta.write_text(">a\nACGTACGTAC\n>b\nACGTACGTAT\n>c\nACCTACGTAT\n")
    out = tmp_path / "d.phy"
    result = invoke("distance", str(fasta), "-m", "raw", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "format_matrix_rows" in calls
    assert out.read_text().splitlines()[1] == "a           0.0 0.1 0.2"


def test_text_and_utf8_chunks_agree(python_only):
    dm = _matrix_of(9)
    formats = ("phylip", "phylip-lower", "tsv")
    texts = {fmt: "".join(_text.matrix_text(dm.ids, dm.data, fmt)) for fmt in formats}
    for fmt in formats:
        utf8 = b"".join(_text.matrix_text(dm.ids, dm.data, fmt, utf8=True))
        assert utf8 == texts[fmt].encode()
    python_only()
    for fmt in formats:
        assert "".join(_text.matrix_text(dm.ids, dm.data, fmt)) == texts[fmt]
        assert b"".join(_text.matrix_text(dm.ids, dm.data, fmt, utf8=True)) == texts[fmt].encode()


@pytest.mark.parametrize("fmt", ["phylip", "phylip-lower", "tsv"])
@pytest.mark.parametrize("compiled", [True, False])
def test_a_condensed_matrix_writes_the_bytes_of_its_square(
    tmp_path, monkeypatch, python_only, fmt, compiled
):
    """A matrix made from a condensed triangle writes its text from the triangle (no square
    is made) with the bytes of the same matrix made square, with and without the compiled
    core, in many chunks of rows."""
    monkeypatch.setattr(_text, "_TEXT_CHUNK_VALUES", 100)
    square = _matrix_of(37)
    if not compiled:
        python_only()
    ext = ".tsv" if fmt == "tsv" else ".phy"
    want, got = tmp_path / f"square{ext}", tmp_path / f"condensed{ext}"
    square.write(want, fmt, threads=2)
    dm = DistanceMatrix.from_condensed(square.condensed(), square.ids)
    dm.write(got, fmt, threads=2)
    assert dm._data is None  # written without the square
    assert got.read_bytes() == want.read_bytes()
    assert dm == square and dm._data is not None


def test_a_condensed_matrix_is_checked_and_cleaned_as_a_square():
    values = np.array([1.0, -0.0, 2.0])  # a b c: d(a,b) d(a,c) d(b,c)
    dm = DistanceMatrix.from_condensed(values, ["a", "b", "c"])
    assert not np.signbit(dm.condensed()).any() and np.signbit(values[1])  # the caller's kept
    assert dm["a", "c"] == 0.0 and dm["c", "b"] == 2.0
    with pytest.raises(MatrixFormatError, match="'b'.*'c'.*-2"):
        DistanceMatrix.from_condensed([1.0, 0.5, -2.0], ["a", "b", "c"])
    with pytest.raises(DuplicateIdError, match="duplicate id 'a'"):
        DistanceMatrix.from_condensed([1.0], ["a", "a"])
    with pytest.raises(ValueError, match="2 condensed values do not fit 3 ids"):
        DistanceMatrix.from_condensed([1.0, 2.0], ["a", "b", "c"])
    assert DistanceMatrix.from_condensed([], ["a"]).data.tolist() == [[0.0]]
