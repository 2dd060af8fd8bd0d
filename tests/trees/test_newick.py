"""The Newick reader against the writer (round trips of real trees) and the texts other tools
write; malformed text names the position."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel.errors import DuplicateIdError
from bioaccel.trees._newick import NewickError, parse_newick, read_newick


def splits(tree):
    """The tip sets below every edge (the topology, whatever the node numbering)."""
    kids = {}
    for p, c in zip(tree.parent.tolist(), tree.child.tolist()):
        kids.setdefault(p, []).append(c)

    def below(node):
        if node < tree.n_tips:
            return frozenset([tree.labels[node]])
        return frozenset().union(*(below(c) for c in kids[node]))

    return {below(c) for c in tree.child.tolist()}


def test_round_trip_of_an_nj_tree_with_awkward_labels(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.random((12, 5))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    labels = [f"A/Sao_Paulo/{k}/2009" for k in range(9)] + ["with space", "it's", "Bacteria;Firm"]
    tree = bioaccel.nj(d, labels)
    tree.write(tmp_path / "t.nwk")
    back = read_newick(tmp_path / "t.nwk")
    assert sorted(back.labels) == sorted(labels)
    assert splits(back) == splits(tree)
    np.testing.assert_allclose(
        back.patristic()[np.argsort(back.labels)][:, np.argsort(back.labels)],
        tree.patristic()[np.argsort(labels)][:, np.argsort(labels)],
    )


def test_texts_other_tools_write():
    # support values, internal labels, comments, no lengths, whitespace and newlines
    t = parse_newick("((a:0.1,b:0.2)95:0.3, [note] (c,d)node:0.4,\n e);")
    assert t.labels == ["a", "b", "c", "d", "e"]
    assert splits(t) >= {frozenset("ab"), frozenset("cd")}


@pytest.mark.parametrize(
    "text,where",
    [
        ("(a,b", "no ';'"),
        ("(a,b));", "unbalanced"),
        ("(a,,b);", "empty node"),
        ("(a:x,b);", "'x'"),
        ("(a:,b);", "without a branch length"),
        ("(a,a);", "'a' appears twice"),
        ("('a,b);", "never closed"),
        ("(a[x,b);", "never closed"),
        ("", "no tree"),
    ],
)
def test_malformed_text_is_named(text, where):
    with pytest.raises((NewickError, DuplicateIdError), match=where):
        parse_newick(text)


def test_missing_file_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match="none.nwk"):
        read_newick(tmp_path / "none.nwk")
