"""Tiles record the model and every option that changes values; ``merge-tiles`` refuses a
mix, naming the odd tile and the differing option. Sketches are compared only with the k,
sketch size and seed they were made with.

Before: tiles made with ``-m tn93`` merged with one made with ``-m k80`` (or mash, or
pairwise deletion) into one matrix, exit 0; sketches compared with another
``--sketch-size``/``--seed`` were silently accepted.
"""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel.distances._kmers import sketch
from bioaccel.distances._ondisk import stream_distances
from bioaccel.distances._tiles import distance_tile, merge_tiles, tile_bounds, write_tile
from bioaccel.errors import MatrixFormatError, ModelError
from tests.cli_runner import run_process
from tests.datasets import random_alignment

PROTEINS = [
    "MKTAYIAKQRQISFVKSHFSRQ",
    "MKTAYIAKQRQISFVKSHFSRQLEERLGLIEVQ",
    "MKVAYIAKQRQLSFVKSHF",
    "MSTNPKPQRKTKRNTNRRPQDVKFPGG",
    "MKTAYIAKQRHISFVKSAFSRQ",
    "MKTAYIAKQRQIS",
]


@pytest.fixture
def dna():
    return bioaccel.SeqBatch.from_strings(random_alignment(np.random.default_rng(5), 9, 120))


def _tiles(tmp_path, seqs, blocks, per_tile_options, model_of=lambda a, b: None):
    """Every upper tile of a blocks x blocks grid; ``per_tile_options(a, b)``: its options."""
    paths = []
    for a in range(blocks):
        for b in range(a, blocks):
            bounds = tile_bounds(seqs, a, b, blocks)
            model, options = per_tile_options(a, b)
            values, params = distance_tile(seqs, model, bounds[:2], bounds[2:], **options)
            p = tmp_path / f"t{a}{b}.npz"
            write_tile(p, values, bounds, len(seqs), seqs.ids, params)
            paths.append(p)
    return paths


ODD_ONES = [  # (the common settings, the odd tile's, the option named)
    (("tn93", {}), ("k80", {}), "model='k80' (not 'tn93')"),
    (("tn93", {}), ("tn93", {"pairwise_deletion": True}), "pairwise_deletion=True (not False)"),
    (("mash", {"k": 9}), ("mash", {"k": 11}), "k=11 (not 9)"),
    (("mash", {"k": 9}), ("mash", {"k": 9, "sketch_size": 64}), "sketch_size=64 (not 1000)"),
    (("mash", {"k": 9}), ("mash", {"k": 9, "seed": 7}), "seed=7 (not 42)"),
    (("jaccard", {"k": 9}), ("mash", {"k": 9}), "model='mash' (not 'jaccard')"),
]


@pytest.mark.parametrize("common, odd, named", ODD_ONES, ids=[n for *_, n in ODD_ONES])
def test_merge_refuses_tiles_of_other_settings(tmp_path, dna, common, odd, named):
    if common[0] in ("mash", "jaccard"):
        dna = bioaccel.SeqBatch.from_strings(
            [dna.sequence(i).replace("-", "") for i in range(len(dna))], ids=dna.ids
        )
    paths = _tiles(tmp_path, dna, 3, lambda a, b: odd if (a, b) == (1, 2) else common)
    good = [p for p in paths if p.name != "t12.npz"]
    with pytest.raises(MatrixFormatError) as info:
        merge_tiles(paths)
    text = str(info.value)
    assert text.startswith(f"{tmp_path / 't12.npz'}: tile made with {named}"), text
    assert str(paths[0]) in text
    # the same tiles without the odd one merge (and the gap is named, not filled)
    with pytest.raises(MatrixFormatError, match="pair"):
        merge_tiles(good)


def test_alignment_scoring_is_recorded(tmp_path):
    seqs = bioaccel.SeqBatch.from_strings(PROTEINS)
    paths = _tiles(
        tmp_path, seqs, 2, lambda a, b: ("identity", {"gap_open": 8} if a == b == 1 else {})
    )
    with pytest.raises(MatrixFormatError, match=r"t11\.npz: tile made with gap_open=8 \(not 11\)"):
        merge_tiles(paths)


def test_matching_tiles_merge_to_the_matrix(tmp_path, dna):
    paths = _tiles(tmp_path, dna, 3, lambda a, b: ("tn93", {"pairwise_deletion": True}))
    np.testing.assert_array_equal(
        merge_tiles(paths).data, bioaccel.distance_matrix(dna, "tn93", pairwise_deletion=True).data
    )


def test_a_tile_without_options_is_refused(tmp_path, dna):
    p = tmp_path / "old.npz"
    with open(p, "wb") as f:  # the format before this fix: data, bounds, n, ids only
        np.savez(
            f,
            data=np.zeros((9, 9)),
            bounds=np.array([0, 9, 0, 9]),
            n=np.int64(9),
            ids=np.array(dna.ids),
        )
    with pytest.raises(MatrixFormatError, match=r"old\.npz: the tile records no model and options"):
        merge_tiles([p])


def test_cli_merge_tiles_of_two_models_fails(tmp_path, dna):
    aln = tmp_path / "aln.fa"
    aln.write_text(
        "".join(f">{i}\n{s}\n" for i, s in zip(dna.ids, (dna.sequence(i) for i in range(len(dna)))))
    )

    tiles = []
    for a, b in [(0, 0), (0, 1), (1, 1)]:
        out = tmp_path / f"t{a}{b}.npz"
        model = "k80" if (a, b) == (1, 1) else "tn93"
        res = run_process(
            "distance", aln, "-m", model, "--tile", f"{a},{b}", "--tiles", 2, "-o", out
        )
        assert res.returncode == 0, res.stderr
        tiles.append(out)
    res = run_process("merge-tiles", *tiles, "-o", tmp_path / "m.phy")
    assert res.returncode != 0
    assert f"{tiles[2]}: tile made with model='k80' (not 'tn93')" in res.stderr, res.stderr
    assert not (tmp_path / "m.phy").exists()


@pytest.mark.parametrize(
    "option, value, named",
    [
        ("k", 11, "k=9, not k=11"),
        ("sketch_size", 1000, "sketch_size=50, not sketch_size=1000"),
        ("seed", 42, "seed=3, not seed=42"),
    ],
)
def test_sketches_refuse_other_parameters_on_every_path(tmp_path, option, value, named):
    from bioaccel.distances._tiles import distance_block

    s = sketch(PROTEINS, k=9, size=50, seed=3)
    calls = [
        lambda **kw: bioaccel.distance_matrix(s, "mash", **kw),
        lambda **kw: distance_block(s, "mash", (0, 2), (0, 6), **kw),
        lambda **kw: stream_distances(s, "mash", tmp_path / "d.cdist", **kw),
    ]
    for call in calls:
        with pytest.raises(ModelError, match=f"^the sketches were made with {named}"):
            call(**{option: value})
    # the parameters they were made with, or none, are fine
    want = bioaccel.distance_matrix(PROTEINS, "mash", k=9, sketch_size=50, seed=3).data
    np.testing.assert_array_equal(bioaccel.distance_matrix(s, "mash").data, want)
    np.testing.assert_array_equal(
        bioaccel.distance_matrix(s, "mash", k=9, sketch_size=50, seed=3).data, want
    )


def test_cli_sketches_with_another_sketch_size_fail(tmp_path):
    src = tmp_path / "p.fa"
    src.write_text("".join(f">p{i}\n{s}\n" for i, s in enumerate(PROTEINS)))
    sk = tmp_path / "s.npz"

    assert (
        run_process("sketch", src, "-k", "5", "-s", "50", "--seed", "3", "-o", sk).returncode == 0
    )
    for extra, named in (
        (["--sketch-size", "100"], "sketch_size=50, not sketch_size=100"),
        (["--seed", "42"], "seed=3, not seed=42"),
    ):
        res = run_process("distance", sk, "-m", "mash", *extra, "-o", tmp_path / "d.tsv")
        assert res.returncode == 2, res.stderr
        assert named in res.stderr
        assert not (tmp_path / "d.tsv").exists()
    assert run_process("distance", sk, "-m", "mash", "-o", tmp_path / "d.tsv").returncode == 0


# -- tiles record their input and --ungap, so tiles of different inputs never merge ----------
def test_tiles_of_an_edited_alignment_with_the_same_ids_are_refused(tmp_path, dna):
    rows = [dna.sequence(i) for i in range(len(dna))]
    edited = list(rows)
    edited[3] = ("T" if edited[3][0] != "T" else "A") + edited[3][1:]
    for name, seqs in (("a.fa", rows), ("b.fa", edited)):
        (tmp_path / name).write_text("".join(f">{i}\n{s}\n" for i, s in zip(dna.ids, seqs)))
    tiles = []
    for (a, b), src in zip([(0, 0), (0, 1), (1, 1)], ["a.fa", "a.fa", "b.fa"]):
        out = tmp_path / f"t{a}{b}.npz"
        res = run_process("distance", tmp_path / src, "--tile", f"{a},{b}", "--tiles", 2, "-o", out)
        assert res.returncode == 0, res.stderr
        tiles.append(out)
    res = run_process("merge-tiles", *tiles, "-o", tmp_path / "m.phy")
    assert res.returncode == 2
    assert (
        f"{tiles[2]}: tile of a different input: the same ids but other residues than "
        f"{tiles[0]}" in res.stderr
    ), res.stderr
    assert not (tmp_path / "m.phy").exists()


def test_gapped_and_ungapped_tiles_are_refused_naming_ungap(tmp_path):
    # (gapped input is refused by edit without --ungap: the sequences hold no gap here, and
    # the tiles still record whether --ungap was given)
    (tmp_path / "a.fa").write_text(
        ">a\nACGTACGTAC\n>b\nACGTTTACGAC\n>c\nACTTACGTAC\n>d\nTCGTTTACGTAA\n"
    )
    tiles = []
    for (a, b), extra in zip([(0, 0), (0, 1), (1, 1)], [[], [], ["--ungap"]]):
        out = tmp_path / f"t{a}{b}.npz"
        res = run_process(
            "distance",
            tmp_path / "a.fa",
            "-m",
            "edit",
            "--tile",
            f"{a},{b}",
            "--tiles",
            2,
            "-o",
            out,
            *extra,
        )
        assert res.returncode == 0, res.stderr
        tiles.append(out)
    res = run_process("merge-tiles", *tiles, "-o", tmp_path / "m.phy")
    assert res.returncode == 2
    assert f"{tiles[2]}: tile made with ungap=True (not False)" in res.stderr, res.stderr


def test_a_tile_without_an_input_fingerprint_is_refused(tmp_path, dna):
    p = tmp_path / "old.npz"
    bounds = tile_bounds(dna, 0, 0, 1)
    values, params = distance_tile(dna, "k80", bounds[:2], bounds[2:])
    del params["input"]
    write_tile(p, values, bounds, len(dna), dna.ids, params)
    with pytest.raises(MatrixFormatError, match=r"old\.npz: the tile records no fingerprint"):
        merge_tiles([p])
