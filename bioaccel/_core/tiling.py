"""The one tiler: how bioaccel cuts a set of sequences, or the pairs among them, into parts
of about equal work. Every splitter uses one of these two functions:

- :func:`balanced_cuts`: boundaries of consecutive runs of items of about equal total weight
  (the blocks of a workflow's tile grid, the row and column blocks of the multi-GPU runner);
- :func:`triangle_row_ranges`: row ranges [i0, i1) of the upper triangle of pairs (i < j),
  about equal in work, each within a cap on pairs or on the rectangular block it needs (the
  in-memory DNA counts and the on-disk streamed matrix).

And the one offset helper of the condensed upper triangle (pairs (i, j > i) row by row, R's
``dist`` order), which every condensed reader, writer and tiler uses:
:func:`pairs_before` (where row i starts), :func:`condensed_pair` (the pair of entry k).
"""

from __future__ import annotations

import numpy as np


def balanced_cuts(weights, parts: int) -> list[int]:
    """``parts + 1`` non-decreasing boundaries splitting ``weights`` into ``parts`` runs of
    about equal total weight (a run may be empty when there are fewer items than parts).

    >>> balanced_cuts([1, 1, 1, 1], 2)
    [0, 2, 4]
    >>> balanced_cuts([5, 1, 1, 1], 2)
    [0, 1, 4]
    """
    if int(parts) != parts or parts < 1:
        raise ValueError(f"parts must be a positive integer, got {parts!r}")
    w = np.asarray(weights, dtype=np.float64)
    n = len(w)
    csum = np.concatenate([[0.0], np.cumsum(w)])
    inner = np.searchsorted(csum, np.linspace(0, csum[-1], int(parts) + 1)[1:-1], side="left")
    return [0, *[int(min(max(c, 0), n)) for c in inner], n]


def triangle_row_ranges(
    row_work,
    *,
    rows: int | None = None,
    parts: int,
    min_work: float = 0.0,
    max_pairs: int | None = None,
    max_block_cells: int | None = None,
) -> list[tuple[int, int]]:
    """Row ranges [i0, i1) covering rows ``[0, rows)`` (default: every row of ``row_work``)
    of the upper triangle of an n x n pair matrix (n = ``len(row_work)``; row i holds the
    n - i - 1 pairs (i, j > i)), each of about ``total work / parts`` (at least
    ``min_work``). A range never exceeds ``max_pairs`` pairs, nor a rectangular block
    (i1 - i0) x (n - i0) of more than ``max_block_cells`` cells, unless it is one row.

    >>> triangle_row_ranges([3, 2, 1, 0], parts=2)
    [(0, 1), (1, 4)]
    """
    work = np.asarray(row_work, dtype=np.float64)
    n = len(work)
    rows = n if rows is None else int(rows)
    total = float(work[:rows].sum())
    target = max(total / max(1, parts) if total > 0 else 1.0, float(min_work))
    ranges, i0 = [], 0
    while i0 < rows:
        i1, acc, pairs = i0, 0.0, 0
        while i1 < rows and (
            i1 == i0
            or (
                acc + work[i1] <= target
                and (max_pairs is None or pairs + (n - i1 - 1) <= max_pairs)
                and (max_block_cells is None or (i1 + 1 - i0) * (n - i0) <= max_block_cells)
            )
        ):
            acc += work[i1]
            pairs += n - i1 - 1
            i1 += 1
        ranges.append((i0, i1))
        i0 = i1
    return ranges


def pairs_before(i, n: int):
    """Pairs (a, b > a) before row ``i`` of the condensed upper triangle of ``n`` items: the
    offset of entry (i, i + 1); d(i, j), i < j, is entry ``pairs_before(i, n) + j - i - 1``.
    ``i`` may be an integer array (every row's offset at once).

    >>> pairs_before(0, 4), pairs_before(1, 4), pairs_before(3, 4)
    (0, 3, 6)
    """
    return i * n - i * (i + 1) // 2


def condensed_pair(k: int, n: int) -> tuple[int, int]:
    """(i, j), i < j, of entry ``k`` of a condensed upper triangle of ``n`` (row by row).

    >>> condensed_pair(0, 4), condensed_pair(3, 4), condensed_pair(5, 4)
    ((0, 1), (1, 2), (2, 3))
    """
    starts = pairs_before(np.arange(n, dtype=np.int64), n)
    i = int(np.searchsorted(starts, k, side="right")) - 1
    return i, int(k - starts[i] + i + 1)
