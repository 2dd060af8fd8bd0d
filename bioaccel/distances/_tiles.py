"""All-vs-all distances as independent tiles (one job each), and their merge.

The n x n matrix is cut into a B x B grid of blocks by cumulative sequence length (so the
blocks carry about equal work); tile ``(a, b)`` with ``a <= b`` holds rows of block ``a``
against columns of block ``b``. The B (B + 1) / 2 upper tiles cover every pair once; each
is computed by :func:`distance_block` and saved (``.npz`` with its coordinates);
:func:`merge_tiles` checks that every pair is covered exactly once and assembles the
matrix. Every value comes from the pair in (i < j) orientation, as in
:func:`~bioaccel.distances._compute.distance_matrix`, so the merged matrix equals it bit for bit.
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np

from .._core import (
    TILE,
    atomic_output,
    balanced_cuts,
    check_threads,
    output_format,
    without_negative_zero,
)
from ..errors import MatrixFormatError
from ..sequences import SeqBatch
from ._matrix import DistanceMatrix


def tile_bounds(batch: SeqBatch, a: int, b: int, blocks: int) -> tuple[int, int, int, int]:
    if not (0 <= a <= b < blocks):
        raise ValueError(
            f"tile ({a}, {b}) is not an upper tile of a {blocks} x {blocks} grid "
            f"(need 0 <= a <= b < {blocks})"
        )
    if int(blocks) != blocks or blocks < 1:
        raise ValueError(f"blocks must be a positive integer, got {blocks!r}")
    cuts = balanced_cuts(np.asarray(batch.lengths, dtype=np.float64) + 1.0, int(blocks))
    return cuts[a], cuts[a + 1], cuts[b], cuts[b + 1]


def distance_block(
    seqs,
    model: str,
    rows: tuple[int, int],
    cols: tuple[int, int],
    *,
    pairwise_deletion: bool = False,
    backend: str = "auto",
    threads: int = 0,
    matrix=None,
    gap_open: int | None = None,
    gap_extend: int | None = None,
    k: int | None = None,
    sketch_size: int | None = None,
    seed: int | None = None,
) -> np.ndarray:
    """``distance_matrix(seqs, model, ...).data[i0:i1, j0:j1]`` without the rest of the matrix.

    Values depending on the whole input (base frequencies of F81/TN93, the sites kept
    without pairwise deletion, scoredist's background) are computed from the whole input;
    the model and its checks are :func:`bioaccel.distances._models.prepare`'s.
    """
    return distance_tile(
        seqs,
        model,
        rows,
        cols,
        pairwise_deletion=pairwise_deletion,
        backend=backend,
        threads=threads,
        matrix=matrix,
        gap_open=gap_open,
        gap_extend=gap_extend,
        k=k,
        sketch_size=sketch_size,
        seed=seed,
    )[0]


def distance_tile(
    seqs, model: str, rows: tuple[int, int], cols: tuple[int, int], **options
) -> tuple[np.ndarray, dict]:
    """(:func:`distance_block`'s values, the model and every option that changes them,
    resolved, with ``input``: the fingerprint of the sequences' ids and residues,
    :func:`bioaccel.sequences._batch.input_fingerprint`) -- what :func:`write_tile` records."""
    from ..sequences import as_batch, input_fingerprint
    from ._kmers import Sketches
    from ._models import prepare

    options["threads"] = check_threads(options.get("threads", 0))
    batch = seqs if isinstance(seqs, Sketches) else as_batch(seqs)
    pm = prepare(batch, model, **options)
    params = {**pm.params(), "input": input_fingerprint(batch)}
    (i0, i1), (j0, j1) = rows, cols
    n = pm.n
    if not (0 <= i0 <= i1 <= n and 0 <= j0 <= j1 <= n):
        raise ValueError(f"block rows {rows} x columns {cols} outside {n} sequences")
    if i1 == i0 or j1 == j0:
        return np.zeros((i1 - i0, j1 - j0)), params
    return pm.block(i0, i1, j0, j1), params


def write_tile(
    path,
    values: np.ndarray,
    bounds: tuple[int, int, int, int],
    n: int,
    ids: list[str],
    params: dict,
) -> None:
    """Save a tile with its coordinates, the input's size and ids, and ``params`` (the
    model and its value-changing options, from :func:`distance_tile`) plus the values'
    dtype: :func:`merge_tiles` refuses tiles that differ in any of them."""
    output_format(path, TILE, "tile", default="npz")
    params = {**params, "dtype": np.asarray(values).dtype.name}
    with atomic_output(path, "wb") as f:
        np.savez(
            f,
            data=without_negative_zero(np.asarray(values)),
            bounds=np.array(bounds, dtype=np.int64),
            n=np.int64(n),
            ids=np.array(ids, dtype=str),
            params=np.array(json.dumps(params, sort_keys=True)),
        )


def _differences(params: dict, first: dict) -> str:
    keys = sorted(set(params) | set(first), key=lambda k: (k != "model", k))
    return ", ".join(
        f"{k}={params.get(k, '(none)')!r} (not {first.get(k, '(none)')!r})"
        for k in keys
        if params.get(k) != first.get(k)
    )


def merge_tiles(paths: list[str | Path]) -> DistanceMatrix:
    """Assemble the matrix from upper tiles; every pair must be covered exactly once.

    Raises
    ------
    MatrixFormatError
        A tile of another input (different n or ids), of another model or options (the
        tile and the differing options are named), an overlap, or uncovered pairs (the
        first missing pair is named).
    """
    if not paths:
        raise MatrixFormatError("no tiles to merge")
    n = ids = first = None
    out = cover = None
    for path in paths:
        try:
            loaded = np.load(path, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):  # a plain .npy array
                raise ValueError("not an .npz archive")
            with loaded as z:
                data, bounds, tn, tids = (
                    z["data"],
                    z["bounds"].tolist(),
                    int(z["n"]),
                    list(z["ids"]),
                )
                params = json.loads(str(z["params"])) if "params" in z.files else None
        except (OSError, KeyError, ValueError, TypeError, EOFError, zipfile.BadZipFile):
            # NumPy's own words ("pickled data", "allow_pickle") would mislead here
            raise MatrixFormatError(
                f"{path}: not a bioaccel distance tile; expected an .npz "
                "written by `bioaccel distance --tile A,B --tiles N`"
            ) from None
        if not isinstance(params, dict):
            raise MatrixFormatError(
                f"{path}: the tile records no model and options (made by an "
                "older bioaccel?); compute it again"
            )
        if "input" not in params:
            raise MatrixFormatError(
                f"{path}: the tile records no fingerprint of its input (made "
                "by an older bioaccel?); compute it again"
            )
        if n is None:
            n, ids, first = tn, [str(i) for i in tids], (path, params)
            out, cover = np.zeros((n, n)), np.zeros((n, n), dtype=np.int32)
        elif tn != n:
            raise MatrixFormatError(
                f"{path}: tile of a different input ({tn} sequences, not {n} as in {first[0]})"
            )
        elif [str(i) for i in tids] != ids:
            k = next(k for k, (a, b) in enumerate(zip(tids, ids)) if str(a) != b)
            raise MatrixFormatError(
                f"{path}: tile of a different input (sequence {k + 1} is "
                f"{str(tids[k])!r}, not {ids[k]!r} as in {first[0]})"
            )
        elif params != first[1]:
            options = {key: v for key, v in params.items() if key != "input"}
            first_options = {key: v for key, v in first[1].items() if key != "input"}
            if options != first_options:
                raise MatrixFormatError(
                    f"{path}: tile made with "
                    f"{_differences(options, first_options)} as in "
                    f"{first[0]}; the tiles of one matrix must share the "
                    "model and its options"
                )
            raise MatrixFormatError(
                f"{path}: tile of a different input: the same ids but other "
                f"residues than {first[0]} (input fingerprint "
                f"{str(params.get('input'))[:12]}, not "
                f"{str(first[1].get('input'))[:12]}); the tiles of one matrix "
                "must come from one file"
            )
        i0, i1, j0, j1 = bounds
        if data.shape != (i1 - i0, j1 - j0) or i0 > j0:
            raise MatrixFormatError(
                f"{path}: rows {i0}:{i1} x columns {j0}:{j1} is not an upper "
                f"tile of shape {data.shape}"
            )
        block = np.triu(np.ones_like(cover[i0:i1, j0:j1]), 1) if i0 == j0 else 1
        cover[i0:i1, j0:j1] += block
        out[i0:i1, j0:j1] = np.where(block == 1, data, out[i0:i1, j0:j1])
    upper = np.triu_indices(n, 1)
    twice = np.nonzero(cover[upper] > 1)[0]
    if twice.size:
        raise MatrixFormatError(
            f"pair ({ids[upper[0][twice[0]]]}, {ids[upper[1][twice[0]]]}) is "
            "covered by more than one tile"
        )
    missing = np.nonzero(cover[upper] == 0)[0]
    if missing.size:
        i, j = upper[0][missing[0]], upper[1][missing[0]]
        raise MatrixFormatError(
            f"{missing.size} pair(s) are in no tile, e.g. ({ids[i]}, {ids[j]}) "
            f"at rows/columns ({i}, {j})"
        )
    out[(upper[1], upper[0])] = out[upper]
    return DistanceMatrix(out, ids)
