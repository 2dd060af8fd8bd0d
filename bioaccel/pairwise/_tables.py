"""Writers of pairwise results: the alignment table (one row per aligned pair) and the score
matrix (labelled TSV, or ``.npy`` with the ids beside it), for the CLI and for scripts."""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np

from .._core import NPY_COLUMN_IDS, NPY_ROW_IDS, SCORES, atomic_output, output_format

#: the columns of :func:`write_alignment_table`, in order
ALIGNMENT_COLUMNS = (
    "query",
    "target",
    "score",
    "query_start",
    "query_end",
    "target_start",
    "target_end",
    "cigar",
    "identity",
    "aligned_length",
    "query_aligned",
    "target_aligned",
)


def write_alignment_table(alignments: Iterable, fh: TextIO) -> int:
    """One tab-separated line per :class:`~bioaccel.pairwise.Alignment` after a header;
    returns the number of alignments written."""
    fh.write("\t".join(ALIGNMENT_COLUMNS) + "\n")
    count = 0
    for a in alignments:
        fh.write(
            f"{a.query_id}\t{a.target_id}\t{a.score}\t{a.query_start}\t{a.query_end}\t"
            f"{a.target_start}\t{a.target_end}\t{a.cigar}\t{a.identity:.6f}\t"
            f"{a.aligned_length}\t{a.query_aligned}\t{a.target_aligned}\n"
        )
        count += 1
    return count


def write_score_table(
    scores: np.ndarray, query_ids: Sequence[str], target_ids: Sequence[str], fh: TextIO
) -> None:
    """The score matrix as TSV: a header of target ids, then one row per query."""
    fh.write("\t" + "\t".join(target_ids) + "\n")
    for name, row in zip(query_ids, scores):
        fh.write(name + "\t" + "\t".join(str(int(v)) for v in row) + "\n")


def save_scores(
    scores: np.ndarray,
    path: str | os.PathLike,
    query_ids: Sequence[str],
    target_ids: Sequence[str] | None = None,
) -> None:
    """The score matrix as ``.npy`` (atomic), the query ids in ``PATH.ids.txt`` and, for a
    query-vs-target matrix, the target ids in ``PATH.target_ids.txt`` (as
    :meth:`~bioaccel.DistanceMatrix.write` does for ``.npy``). The name goes through the one
    output-name rule (:func:`bioaccel._core.output_format`): ``.npy`` or no extension; a
    ``.tsv`` name is for :func:`write_score_table`, any other extension is refused."""
    if output_format(path, SCORES, "score matrix", default="npy") != "npy":
        raise ValueError(
            f"{path}: save_scores writes a .npy score matrix; name it .npy, or write the TSV "
            "score matrix with write_score_table"
        )
    with atomic_output(path, "wb") as f:
        np.save(f, scores)
    with atomic_output(Path(str(path) + NPY_ROW_IDS)) as f:
        f.write("".join(i + "\n" for i in query_ids))
    if target_ids is not None:
        with atomic_output(Path(str(path) + NPY_COLUMN_IDS)) as f:
            f.write("".join(i + "\n" for i in target_ids))
