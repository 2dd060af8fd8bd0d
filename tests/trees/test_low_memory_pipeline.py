"""The low-memory tree pipeline as a library function (:func:`bioaccel.trees.low_memory_tree`):
callable from Python with the trees of the in-process join, its scratch folder gone
whatever happens, and the command line a thin call of it (no library work left in the CLI)."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

import bioaccel
from bioaccel.trees import low_memory_tree

ROOT = Path(__file__).resolve().parents[2]


def sequences(n=12, length=60, seed=3):
    rng = np.random.default_rng(seed)
    root = rng.choice(list("ACGT"), length)
    seqs = []
    for _ in range(n):
        s = root.copy()
        flip = rng.random(length) < 0.15
        s[flip] = rng.choice(list("ACGT"), int(flip.sum()))
        seqs.append("".join(s))
    return bioaccel.SeqBatch.from_strings(seqs, ids=[f"s{k}" for k in range(n)])


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_from_sequences_equals_the_low_memory_join_and_leaves_no_scratch(tmp_path):
    batch = sequences()
    out = tmp_path / "t.nwk"
    tree = low_memory_tree(batch, out, model="k80")
    expected = bioaccel.nj(bioaccel.distance_matrix(batch, "k80"), low_memory=True)
    assert tree.to_newick() == expected.to_newick()
    assert out.read_text() == expected.to_newick() + "\n"
    assert leftovers(tmp_path) == []


def test_matrix_output_keeps_the_streamed_cdist(tmp_path):
    batch = sequences()
    kept = tmp_path / "d.cdist"
    tree = low_memory_tree(batch, tmp_path / "t.nwk", matrix_output=kept)
    again = low_memory_tree(kept, tmp_path / "u.nwk")
    assert again.to_newick() == tree.to_newick()
    assert bioaccel.DistanceMatrix.read(kept).ids == batch.ids


def test_matrix_output_must_be_cdist_and_nothing_is_written(tmp_path):
    with pytest.raises(ValueError, match=r"d\.phy: .*name it \.cdist"):
        low_memory_tree(sequences(), tmp_path / "t.nwk", matrix_output=tmp_path / "d.phy")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_stream_removes_its_scratch_folder(tmp_path):
    with pytest.raises(ValueError):
        low_memory_tree(sequences(), tmp_path / "t.nwk", model="no-such-model")
    assert list(tmp_path.iterdir()) == []


def test_a_matrix_file_is_joined_as_it_is(tmp_path):
    dm = bioaccel.distance_matrix(sequences(), "jc69")
    for name in ("m.phy", "m.npy", "m.cdist", "m.tsv"):
        dm.write(tmp_path / name)
        tree = low_memory_tree(tmp_path / name, tmp_path / f"{name}.nwk")
        assert tree.to_newick() == bioaccel.nj(dm, low_memory=True).to_newick(), name


def test_the_cli_holds_no_pipeline_work():
    """``bioaccel tree`` calls :func:`low_memory_tree`: streaming, scratch folders and the
    program hand-over are the library's."""
    tree = ast.parse((ROOT / "bioaccel/cli/_main.py").read_text(encoding="utf-8"))
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    inside = names & {"mkdtemp", "rmtree", "prepare_input", "run_joiner", "joiner_program"}
    assert not inside, f"the CLI does library work: {sorted(inside)}"
    assert "low_memory_tree" in names
