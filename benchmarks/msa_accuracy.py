"""SP and TC of a test alignment against a true alignment, for families of any size.

Definitions (qscore's Q and TC, which ``../shared/msa/msa_score.py`` reports as ``q`` and ``tc_q``,
with every true column counted):

* SP: residue pairs aligned in the true alignment (same true column) that the test alignment also
  aligns (same test column) / residue pairs aligned in the true alignment.
* TC: true columns of two or more residues whose residues all land in one test column / true columns
  of two or more residues.

Both are exact and cost O(R log R) for R residues (one sort of (true column, test column) keys): no
pair sampling, no O(N^2) step, so 10^5 sequences x 250 residues score in seconds.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

GAP_BYTES = (ord("-"), ord("."))
_CHUNK = 4096


def residue_columns(rows: Sequence[str], what: str = "alignment"):
    """(column of every residue, residues per row, upper-case residue letters), row-major.

    Raises ValueError when the rows differ in length (the message names the first odd row).
    """
    if not rows:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.uint8)
    width = len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width:
            raise ValueError(f"{what}: row {i} is {len(r)} columns long, row 0 is {width}")
    cols, counts, letters = [], [], []
    for start in range(0, len(rows), _CHUNK):  # in row chunks: memory ~ residues, not rows x width
        part = rows[start : start + _CHUNK]
        grid = np.frombuffer("".join(part).encode("ascii"), dtype=np.uint8).reshape(
            len(part), width
        )
        residue = (grid != GAP_BYTES[0]) & (grid != GAP_BYTES[1])
        row_of, col = np.nonzero(residue)
        got = grid[row_of, col]
        letters.append(
            np.where((got >= ord("a")) & (got <= ord("z")), got - 32, got).astype(np.uint8)
        )
        cols.append(col.astype(np.int64))
        counts.append(residue.sum(axis=1))
    return np.concatenate(cols), np.concatenate(counts), np.concatenate(letters)


def score_columns(test_col: np.ndarray, true_col: np.ndarray) -> dict[str, float]:
    """SP and TC from two aligned arrays: the test and the true column of every residue."""
    if len(test_col) != len(true_col):
        raise ValueError(
            f"score_columns: {len(test_col)} test residues vs {len(true_col)} true residues"
        )
    if len(true_col) == 0:
        return {"sp": 0.0, "tc": 0.0, "true_pairs": 0, "true_columns": 0}
    true_col = np.asarray(true_col, dtype=np.int64)
    test_col = np.asarray(test_col, dtype=np.int64)
    span = int(test_col.max()) + 1
    keys, together = np.unique(true_col * span + test_col, return_counts=True)
    per_true = np.bincount(true_col)
    true_pairs = int((per_true * (per_true - 1) // 2).sum())
    kept_pairs = int((together * (together - 1) // 2).sum())
    pieces = np.bincount(keys // span, minlength=len(per_true))  # test columns per true column
    multi = per_true >= 2
    n_multi = int(multi.sum())
    return {
        "sp": kept_pairs / true_pairs if true_pairs else 0.0,
        "tc": int((multi & (pieces == 1)).sum()) / n_multi if n_multi else 0.0,
        "true_pairs": true_pairs,
        "true_columns": n_multi,
    }


def _check_residues(ids, test_counts, test_letters, true_counts, true_letters) -> None:
    """Raise ValueError naming the first row whose residues differ between the alignments."""
    if len(test_counts) != len(true_counts):
        raise ValueError(f"{len(test_counts)} test rows vs {len(true_counts)} true rows")
    if np.array_equal(test_counts, true_counts) and np.array_equal(test_letters, true_letters):
        return
    test_start = np.cumsum(test_counts) - test_counts
    true_start = np.cumsum(true_counts) - true_counts
    for i in range(len(true_counts)):
        got = test_letters[test_start[i] : test_start[i] + test_counts[i]]
        want = true_letters[true_start[i] : true_start[i] + true_counts[i]]
        if not np.array_equal(got, want):
            name = ids[i] if ids is not None else f"row {i}"
            raise ValueError(
                f"{name}: the test row's residues ({got.tobytes().decode()[:30]}..., "
                f"{len(got)}) are not the true row's ({want.tobytes().decode()[:30]}..., "
                f"{len(want)}) with gaps removed"
            )


def sp_tc(test_rows: Sequence[str], true_rows: Sequence[str], ids: Sequence[str] | None = None):
    """SP and TC of ``test_rows`` against ``true_rows`` (gapped strings, the same sequences in the
    same order; ``ids`` only names rows in errors). Case is ignored; '-' and '.' are gaps.

    Returns {"sp", "tc", "true_pairs", "true_columns"}. Raises ValueError when a row's residues
    differ between the two alignments or the rows of one alignment differ in length.
    """
    test_col, test_counts, test_letters = residue_columns(test_rows, "test alignment")
    true_col, true_counts, true_letters = residue_columns(true_rows, "true alignment")
    _check_residues(ids, test_counts, test_letters, true_counts, true_letters)
    return score_columns(test_col, true_col)


def sp_tc_family(test: dict[str, str], family) -> dict[str, float]:
    """Score ``test`` ({id: gapped row}) against a simulated ``family`` (benchmarks.family_sim),
    using its compact true alignment (no rendering of the true rows)."""
    missing = [i for i in family.ids if i not in test]
    extra = len(test) - (len(family.ids) - len(missing))
    if missing or extra:
        raise ValueError(
            f"test alignment: {len(missing)} ids missing (first: {missing[:1]}), "
            f"{extra} ids not in the family"
        )
    rows = [test[i] for i in family.ids]
    test_col, test_counts, test_letters = residue_columns(rows, "test alignment")
    true_counts = np.array([len(s) for s in family.sequences])
    true_letters = np.frombuffer("".join(family.sequences).encode("ascii"), dtype=np.uint8)
    _check_residues(family.ids, test_counts, test_letters, true_counts, true_letters)
    return score_columns(test_col, np.concatenate(family.columns))


def shared_msa_dir():
    """The shared MSA oracle folder (msa_score.py, balibase-rv11-rv12/), or None: $BIOACCEL_SHARED_MSA,
    else ``../shared/msa`` beside the repository root (or beside the folder of worktrees)."""
    import os
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    env = os.environ.get("BIOACCEL_SHARED_MSA")
    for cand in ([Path(env)] if env else []) + [
        root.parent / "shared" / "msa",
        root.parent.parent / "shared" / "msa",
    ]:
        if (cand / "msa_score.py").is_file():
            return cand
    return None


def load_msa_score(directory):
    """Import ``msa_score.py`` from ``directory`` (the shared oracle scorer)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("msa_score", str(directory / "msa_score.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
