"""One place for each piece of logic: every distance path (the matrix, its tiles, the
streamed file) shares one model dispatch -- same values, same refusals; one CIGAR walk;
one check of a mode name; the type stub lists every native function.

Before: the tiled path computed ``scoredist`` on DNA (the other two refused it), an unknown
edit-distance mode raised a plain ValueError (an unknown alignment mode a ScoringError),
and ``_native.pyi`` lacked the three k-mer functions.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import bioaccel
from bioaccel import _native
from bioaccel._core.tiling import balanced_cuts
from bioaccel.distances._kmers import sketch
from bioaccel.distances._ondisk import stream_distances
from bioaccel.distances._tiles import distance_block, distance_tile, merge_tiles, write_tile
from bioaccel.errors import ModelError
from bioaccel.pairwise._cigar import cigar_columns, cigar_ops, cigar_runs
from bioaccel.pairwise._scoring import ScoringError
from tests.datasets import random_alignment

ROOT = Path(__file__).resolve().parents[2]
PROTEINS = [
    "MKTAYIAKQRQISFVKSHFSRQ",
    "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQ",
    "MKVAYIAKQRQLSFVKSHF",
    "MSTNPKPQRKTKRNTNRRPQDVKFPGG",
    "MKTAYIAKQRHISFVKSAFSRQ",
]
DNA = ["ACGTACGTACGTTGCA", "ACGTACGTACGTTGCT", "ACGAACGTACGATGCA", "TCGAACGTTCGATGCA"]


def _paths(tmp_path):
    """Each path computing all-vs-all distances, called the same way."""
    counter = iter(range(10**6))
    return {
        "distance_matrix": lambda seqs, model, **kw: bioaccel.distance_matrix(seqs, model, **kw),
        "distance_block": lambda seqs, model, **kw: distance_block(
            seqs, model, (0, 1), (0, 2), **kw
        ),
        "stream_distances": lambda seqs, model, **kw: stream_distances(
            seqs, model, tmp_path / f"d{next(counter)}.cdist", **kw
        ),
    }


BAD_INPUTS = {
    "scoredist on DNA": (DNA, "scoredist", {}),
    "unknown model": (DNA, "k81x", {}),
    "DNA model on protein": (PROTEINS, "k80", {}),
    "one sequence": (DNA[:1], "k80", {}),
    "one sequence, k-mer model": (DNA[:1], "jaccard", {"k": 3}),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_every_path_refuses_the_same_input_the_same_way(tmp_path, case):
    seqs, model, kw = BAD_INPUTS[case]
    seen = {}
    for name, path in _paths(tmp_path).items():
        with pytest.raises(ValueError) as info:
            path(seqs, model, **kw)
        seen[name] = (type(info.value), str(info.value))
    assert len(set(seen.values())) == 1, seen
    if case != "one sequence" and not case.startswith("one sequence"):
        assert seen["distance_matrix"][0] is ModelError


def test_sketches_refuse_other_models_on_every_path(tmp_path):
    s = sketch(DNA, k=5, size=16)
    seen = set()
    for path in _paths(tmp_path).values():
        with pytest.raises(ModelError) as info:
            path(s, "jaccard")
        seen.add(str(info.value))
    assert seen == {"sketches give mash distances, not 'jaccard'"}


MODELS = [
    ("k80", "dna", {}),
    ("tn93", "dna", {"pairwise_deletion": True}),
    ("logdet", "dna", {}),
    ("edit", "dna", {}),
    ("identity", "protein", {}),
    ("scoredist", "protein", {}),
    ("jaccard", "dna", {"k": 5}),
    ("kmer", "protein", {}),
    ("mash", "dna", {"k": 7, "sketch_size": 50}),
    ("mash", "sketches", {}),
]


@pytest.mark.parametrize("model, kind, kw", MODELS, ids=[f"{m}-{k}" for m, k, _ in MODELS])
def test_tiles_and_streams_equal_the_matrix(tmp_path, model, kind, kw):
    rng = np.random.default_rng(7)
    if kind == "protein":
        seqs = (PROTEINS * 3)[:11]
        seqs = [s[: len(s) - i] for i, s in enumerate(seqs)]
    else:
        seqs = random_alignment(rng, 11, 90)
        if model in ("edit", "jaccard", "mash"):  # unaligned-input models refuse gaps
            seqs = [s.replace("-", "") for s in seqs]
    if kind == "sketches":
        seqs = sketch([s.replace("-", "") for s in seqs], k=7, size=50)
    whole = bioaccel.distance_matrix(seqs, model, **kw).data
    n = len(whole)
    # any block, also across the diagonal, equals the matrix's
    for rows, cols in [((0, 4), (2, 9)), ((5, 11), (0, 6)), ((3, 3), (0, 5))]:
        got = distance_block(seqs, model, rows, cols, **kw)
        np.testing.assert_array_equal(got, whole[rows[0] : rows[1], cols[0] : cols[1]])
    # the tiles of a 3 x 3 grid merge into the matrix
    cuts = balanced_cuts(np.ones(n) + 1.0, 3)
    ids = bioaccel.distance_matrix(seqs, model, **kw).ids
    paths = []
    for a in range(3):
        for b in range(a, 3):
            bounds = (cuts[a], cuts[a + 1], cuts[b], cuts[b + 1])
            p = tmp_path / f"t{a}{b}.npz"
            values, params = distance_tile(seqs, model, bounds[:2], bounds[2:], **kw)
            write_tile(p, values, bounds, n, ids, params)
            paths.append(p)
    np.testing.assert_array_equal(merge_tiles(paths).data, whole)
    streamed = stream_distances(seqs, model, tmp_path / "d.cdist", dtype="float64", **kw)
    np.testing.assert_array_equal(streamed.to_memory().data, whole)


def test_one_cigar_walk():
    assert cigar_ops("3M1I4M2D") == [(3, "M"), (1, "I"), (4, "M"), (2, "D")]
    assert list(cigar_runs("3M1I4M2D")) == [
        ("M", 3, 0, 0),
        ("I", 1, 3, 3),
        ("M", 4, 4, 3),
        ("D", 2, 8, 7),
    ]
    assert cigar_columns("3M1I4M2D") == 10
    rng = np.random.default_rng(3)
    q = ["".join(rng.choice(list("ACGT"), int(rng.integers(5, 40)))) for _ in range(6)]
    for a in bioaccel.align(q, matrix=(2, -3), gap_open=5, gap_extend=2):
        # the rendered strings (one walk) against the CIGAR read independently, by regex
        pos = 0
        for n, op in re.findall(r"(\d+)([MID])", a.cigar):
            n = int(n)
            qa, ta = a.query_aligned[pos : pos + n], a.target_aligned[pos : pos + n]
            assert ("-" in qa) == (op == "D") and ("-" in ta) == (op == "I")
            assert set(qa) == {"-"} if op == "D" else "-" not in qa
            pos += n
        assert pos == len(a.query_aligned) == cigar_columns(a.cigar)


def test_identity_counts_the_columns_of_the_alignment():
    seqs = ["ACGTTGCAAC", "ACGTGCAACT", "TTACGTTGCA"]
    dm = bioaccel.distance_matrix(seqs, "identity", matrix=(2, -3), gap_open=5, gap_extend=2)
    for a in bioaccel.align(seqs, matrix=(2, -3), gap_open=5, gap_extend=2):
        i, j = (
            seqs.index(a.query_aligned.replace("-", "")),
            seqs.index(a.target_aligned.replace("-", "")),
        )
        assert dm.data[i, j] == pytest.approx(1 - a.identity, abs=0)


@pytest.mark.parametrize(
    "call",
    [
        lambda: bioaccel.edit_distances(["ACGT"], ["ACG"], mode="local"),
        lambda: bioaccel.align_scores(["ACGT"], ["ACG"], mode="glocal", matrix=(2, -3)),
        lambda: bioaccel.align(["ACGT"], ["ACG"], mode="glocal", matrix=(2, -3)),
        lambda: bioaccel.edit_distances(["ACGT"], ["ACG"], mode=None),
        lambda: bioaccel.align_scores(["ACGT"], ["ACG"], mode=1, matrix=(2, -3)),
    ],
)
def test_an_unknown_mode_is_a_scoring_error_everywhere(call):
    with pytest.raises(
        ScoringError,
        match=r"^unknown (alignment|edit-distance) mode .*; expected "
        r"one of \[",
    ):
        call()


def _cpp_functions() -> set[str]:
    text = "".join(p.read_text() for p in sorted((ROOT / "csrc" / "bindings").glob("*.cpp")))
    return set(re.findall(r'\bm\.def\(\s*"(\w+)"', text)) | set(
        re.findall(r'py::class_<[\w:<>, ]+>\(\s*m,\s*"(\w+)"', text)
    )


def _stub_functions() -> set[str]:
    tree = ast.parse((ROOT / "bioaccel" / "_native.pyi").read_text())
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def test_native_stub_lists_every_bound_function():
    bound = {n for n in dir(_native) if not n.startswith("_") and callable(getattr(_native, n))}
    assert _cpp_functions() == bound, "csrc/bindings/*.cpp and the built module disagree: rebuild"
    assert _stub_functions() == bound, (
        f"missing from _native.pyi: {bound - _stub_functions()}; "
        f"not bound: {_stub_functions() - bound}"
    )


def test_a_kmer_tile_sketches_only_its_own_sequences():
    from bioaccel.distances._models import prepare

    seqs = ["ACGTACGTTGCAAGGC" * 3, "ACGTACGTTGCAAGGA" * 3, "TTTTGGGGCCCCAAAA" * 3, "ACGTTT" * 8]
    pm = prepare(seqs, "mash", k=7, sketch_size=20)
    assert pm.params() == {"model": "mash", "k": 7, "sketch_size": 20, "seed": 42}
    got = pm.block(0, 2, 2, 4)
    assert "kmer_rows" not in vars(pm)  # the whole input was never sketched for the tile
    np.testing.assert_array_equal(
        got, bioaccel.distance_matrix(seqs, "mash", k=7, sketch_size=20).data[0:2, 2:4]
    )
