"""The one walk over a CIGAR string (``M``: query and target letter, ``I``: query letter
against a gap, ``D``: target letter against a gap), shared by the rendering of alignments
(:mod:`bioaccel.pairwise._align`) and the column counts of alignment distances
(:mod:`bioaccel.distances._protein`)."""

from __future__ import annotations

import re
from collections.abc import Iterator

_CIGAR = re.compile(r"(\d+)([MID])")


def cigar_ops(cigar: str) -> list[tuple[int, str]]:
    """(length, op) runs of ``cigar``.

    >>> cigar_ops("3M1I4M")
    [(3, 'M'), (1, 'I'), (4, 'M')]
    """
    return [(int(n), op) for n, op in _CIGAR.findall(cigar)]


def cigar_runs(cigar: str) -> Iterator[tuple[str, int, int, int]]:
    """(op, length, query start, target start) of each run: ``M`` runs cover
    query[i:i+n] and target[j:j+n], ``I`` runs query[i:i+n], ``D`` runs target[j:j+n].

    >>> list(cigar_runs("2M1D1M"))
    [('M', 2, 0, 0), ('D', 1, 2, 2), ('M', 1, 2, 3)]
    """
    i = j = 0
    for n, op in cigar_ops(cigar):
        yield op, n, i, j
        if op in "MI":
            i += n
        if op in "MD":
            j += n


def cigar_columns(cigar: str) -> int:
    """Alignment columns (gap columns included)."""
    return sum(n for n, _ in cigar_ops(cigar))
