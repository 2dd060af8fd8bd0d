"""Reading Newick trees into :class:`~bioaccel.trees._tree.Tree` (the writer is ``Tree.to_newick``).

Accepts what ``Tree.to_newick`` and ape/phangorn, FastTree, IQ-TREE and RAxML write:
quoted labels (``'a b'``, with ``''`` for a quote), unquoted labels (``_`` kept as is),
branch lengths, internal node labels or support values (ignored), ``[...]`` comments
(ignored), multifurcations, and whitespace anywhere between tokens. Tips keep their
labels; internal nodes are numbered after the tips.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import BioaccelError, DuplicateIdError

if TYPE_CHECKING:
    from ._tree import Tree

_PUNCT = set("(),:;[")


class NewickError(BioaccelError, ValueError):
    """A Newick text that cannot be parsed (the message names the position)."""


def _tokens(text: str, source: str):
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch == "[":
            j = text.find("]", i)
            if j < 0:
                raise NewickError(f"{source}: comment opened at character {i + 1} is never closed")
            i = j + 1
        elif ch in "(),:;":
            yield ch, i
            i += 1
        elif ch == "'":
            out, j = [], i + 1
            while True:
                if j >= n:
                    raise NewickError(
                        f"{source}: quoted label at character {i + 1} is never closed"
                    )
                if text[j] == "'":
                    if j + 1 < n and text[j + 1] == "'":
                        out.append("'")
                        j += 2
                        continue
                    break
                out.append(text[j])
                j += 1
            yield "label", ("".join(out), i)
            i = j + 1
        else:
            j = i
            while j < n and text[j] not in _PUNCT and text[j] not in ")'" and not text[j].isspace():
                j += 1
            yield "label", (text[i:j], i)
            i = j


def parse_newick(text: str, source: str = "newick") -> Tree:
    """Parse one Newick tree (the first, when the text holds several).

    Raises
    ------
    NewickError
        Unbalanced parentheses, a missing ``;``, a bad branch length, an empty or
        repeated tip label; the message gives the character position.
    """
    from ._tree import Tree

    tips: list[str] = []
    n_internal = 0
    edges: list[tuple[tuple[str, int], tuple[str, int], float]] = []
    stack: list[int] = []  # open internal nodes
    current: tuple[str, int] | None = None  # the node just closed or read
    expect_length = False
    done = False
    toks = _tokens(text, source)
    pending_length: dict[tuple[str, int], float] = {}
    for tok in toks:
        kind, val = tok
        if done:
            break
        if kind == "(":
            stack.append(n_internal)
            n_internal += 1
            current = None
        elif kind == "label":
            label, pos = val
            if expect_length:
                try:
                    pending_length[current] = float(label)
                except ValueError:
                    raise NewickError(
                        f"{source}: branch length {label!r} at character {pos + 1} is not a number"
                    ) from None
                expect_length = False
            elif current is not None and current[0] == "internal":
                pass  # internal node label or support value: ignored
            else:
                if not stack and tips:
                    raise NewickError(
                        f"{source}: label {label!r} at character {pos + 1} is "
                        "outside the tree's parentheses"
                    )
                current = ("tip", len(tips))
                tips.append(label)
        elif kind == ":":
            if current is None:
                raise NewickError(f"{source}: ':' at character {val + 1} follows no node")
            expect_length = True
        elif kind in (",", ")", ";") and expect_length:
            raise NewickError(
                f"{source}: ':' without a branch length before {kind!r} at character {val + 1}"
            )
        elif kind in (",", ")"):
            if not stack:
                raise NewickError(f"{source}: unbalanced {kind!r} at character {val + 1}")
            if current is None:
                raise NewickError(f"{source}: empty node before {kind!r} at character {val + 1}")
            edges.append((("internal", stack[-1]), current, pending_length.pop(current, 0.0)))
            current = None
            if kind == ")":
                current = ("internal", stack.pop())
        elif kind == ";":
            if stack:
                raise NewickError(
                    f"{source}: ';' at character {val + 1} inside "
                    f"{len(stack)} open parenthes{'is' if len(stack) == 1 else 'es'}"
                )
            done = True
    if not done:
        raise NewickError(
            f"{source}: no ';' ends the tree" if tips or n_internal else f"{source}: no tree found"
        )
    seen: dict[str, int] = {}
    for k, label in enumerate(tips):
        if label == "":
            raise NewickError(f"{source}: tip {k + 1} has no label")
        if label in seen:
            raise DuplicateIdError(f"{source}: tip label {label!r} appears twice")
        seen[label] = k
    n = len(tips)
    if not n_internal:  # a single tip: ';'-terminated label
        return Tree(tips, [], [], [], 0)

    def node_id(ref: tuple[str, int]) -> int:
        return ref[1] if ref[0] == "tip" else n + ref[1]

    parent = [node_id(p) for p, _, _ in edges]
    child = [node_id(c) for _, c, _ in edges]
    length = [ln for _, _, ln in edges]
    return Tree(tips, parent, child, length, n)


def read_newick(path_or_text: str | os.PathLike) -> Tree:
    """A :class:`Tree` from a Newick file (or from Newick text that starts with ``(``).

    >>> t = read_newick("((a:1,'b c':2):0.5,d:3);")
    >>> t.labels, t.to_newick()
    (['a', 'b c', 'd'], "((a:1.0,'b c':2.0):0.5,d:3.0);")
    """
    if isinstance(path_or_text, str) and path_or_text.lstrip().startswith("("):
        return parse_newick(path_or_text)
    path = Path(path_or_text)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise FileNotFoundError(f"Newick file {str(path)!r} does not exist") from None
    except UnicodeDecodeError:
        raise NewickError(f"{path}: not a text file") from None
    return parse_newick(text, str(path))
