"""All-vs-all distances as independent tiles (one job each), and their merge.

The n x n matrix is cut into a B x B grid of blocks by cumulative sequence length (so the
blocks carry about equal work); tile ``(a, b)`` with ``a <= b`` holds rows of block ``a``
against columns of block ``b``. The B (B + 1) / 2 upper tiles cover every pair once; each
is computed by :func:`distance_block` and saved (``.npz`` with its coordinates);
:func:`merge_tiles` checks that every pair is covered exactly once and assembles the
matrix. Every value comes from the pair in (i < j) orientation, as in
:func:`~bioaccel.distance.distance_matrix`, so the merged matrix equals it bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .distmatrix import DistanceMatrix
from .errors import MatrixFormatError, ModelError
from .io import as_batch, atomic_output
from .outputs import TILE, output_format, without_negative_zero
from .seqbatch import SeqBatch


def grid_cuts(lengths: np.ndarray, blocks: int) -> list[int]:
    """``blocks + 1`` boundaries (some blocks may be empty when n < blocks)."""
    if int(blocks) != blocks or blocks < 1:
        raise ValueError(f"blocks must be a positive integer, got {blocks!r}")
    n = len(lengths)
    csum = np.concatenate([[0.0], np.cumsum(np.asarray(lengths, dtype=np.float64) + 1.0)])
    inner = np.searchsorted(csum, np.linspace(0, csum[-1], blocks + 1)[1:-1], side="left")
    return [0, *[int(min(max(c, 0), n)) for c in inner], n]


def tile_bounds(batch: SeqBatch, a: int, b: int, blocks: int) -> tuple[int, int, int, int]:
    if not (0 <= a <= b < blocks):
        raise ValueError(f"tile ({a}, {b}) is not an upper tile of a {blocks} x {blocks} grid "
                         f"(need 0 <= a <= b < {blocks})")
    cuts = grid_cuts(batch.lengths, blocks)
    return cuts[a], cuts[a + 1], cuts[b], cuts[b + 1]


def distance_block(seqs, model: str, rows: tuple[int, int], cols: tuple[int, int], *,
                   pairwise_deletion: bool = False, backend: str = "auto", threads: int = 0,
                   matrix=None, gap_open: int | None = None, gap_extend: int | None = None,
                   k: int | None = None, sketch_size: int = 1000, seed: int = 42) -> np.ndarray:
    """``distance_matrix(seqs, model, ...).data[i0:i1, j0:j1]`` without the rest of the matrix.

    Values depending on the whole input (base frequencies of F81/TN93, the sites kept
    without pairwise deletion, scoredist's background) are computed from the whole input.
    """
    from .dna_models import MODELS, TABLE_MODELS, check_model
    from .kmers import KMER_MODELS, kmer_distance_matrix
    from .model_options import check_model_options, given_options

    check_model_options(model, given_options(pairwise_deletion, k, matrix, gap_open, gap_extend))
    batch = as_batch(seqs)
    (i0, i1), (j0, j1) = rows, cols
    n = len(batch)
    if not (0 <= i0 <= i1 <= n and 0 <= j0 <= j1 <= n):
        raise ValueError(f"block rows {rows} x columns {cols} outside {n} sequences")
    key = str(model).lower()
    out = np.zeros((i1 - i0, j1 - j0))
    if out.size == 0:
        return out
    ii, jj = np.meshgrid(np.arange(i0, i1), np.arange(j0, j1), indexing="ij")
    if key == "edit":
        from .edit import edit_distances
        d = edit_distances(batch.slice(i0, i1), batch.slice(j0, j1), backend=backend,
                           threads=threads).astype(np.float64)
        d[ii == jj] = 0.0
        return d
    if key in KMER_MODELS:  # pairwise values depend on the two sequences only
        union = sorted(set(range(i0, i1)) | set(range(j0, j1)))
        where = {g: k_ for k_, g in enumerate(union)}
        sub = kmer_distance_matrix(batch.subset(union), key, k=k, sketch_size=sketch_size,
                                   seed=seed, threads=threads).data
        return sub[np.ix_([where[i] for i in range(i0, i1)], [where[j] for j in range(j0, j1)])]
    if key in ("identity", "scoredist"):
        from .align_distances import alignment_pair_distances
        from .scoring import default_scoring
        scoring = default_scoring(batch.alphabet, matrix, gap_open, gap_extend)
        scoring.check_batch(batch)
        lo, hi = np.minimum(ii, jj).ravel(), np.maximum(ii, jj).ravel()
        off = lo != hi
        values = np.zeros(lo.size)
        values[off] = alignment_pair_distances(batch, key, scoring,
                                               np.stack([lo[off], hi[off]], 1), threads)
        return values.reshape(out.shape)
    model = check_model(key)
    if model not in MODELS:
        raise ModelError(f"unknown model {model!r}")
    from .backends import DnaData, get_backend
    from .distance import dna_alignment
    data, freqs = dna_alignment(batch, model, pairwise_deletion)
    engine = get_backend(backend)
    from .dna_models import distances_from_counts
    table = model in TABLE_MODELS
    # (i < j) orientation everywhere: compute the block and its mirror, take each pair once
    d = distances_from_counts(model, engine.dna_counts(DnaData(data), i0, i1, j0, j1, table=table,
                                                       upper_only=False, threads=threads),
                              freqs, threads)
    below = ii > jj
    if below.any():
        mirror = distances_from_counts(model, engine.dna_counts(DnaData(data), j0, j1, i0, i1,
                                                                table=table, upper_only=False,
                                                                threads=threads), freqs, threads).T
        d[below] = mirror[below]
    d[ii == jj] = 0.0
    return d


def write_tile(path, values: np.ndarray, bounds: tuple[int, int, int, int], n: int,
               ids: list[str]) -> None:
    output_format(path, TILE, "tile", default="npz")
    with atomic_output(path, "wb") as f:
        np.savez(f, data=without_negative_zero(np.asarray(values)), bounds=np.array(bounds, dtype=np.int64), n=np.int64(n),
                 ids=np.array(ids, dtype=str))


def merge_tiles(paths: list[str | Path]) -> DistanceMatrix:
    """Assemble the matrix from upper tiles; every pair must be covered exactly once.

    Raises
    ------
    MatrixFormatError
        A tile of another input (different n or ids), an overlap, or uncovered pairs
        (the first missing pair is named).
    """
    if not paths:
        raise MatrixFormatError("no tiles to merge")
    n = ids = None
    out = cover = None
    for path in paths:
        try:
            with np.load(path, allow_pickle=False) as z:
                data, bounds, tn, tids = z["data"], z["bounds"].tolist(), int(z["n"]), list(z["ids"])
        except (OSError, KeyError, ValueError) as exc:
            raise MatrixFormatError(f"{path}: not a bioaccel distance tile ({exc})") from None
        if n is None:
            n, ids = tn, [str(i) for i in tids]
            out, cover = np.zeros((n, n)), np.zeros((n, n), dtype=np.int32)
        elif tn != n or [str(i) for i in tids] != ids:
            raise MatrixFormatError(f"{path}: tile of a different input ({tn} sequences, not {n})")
        i0, i1, j0, j1 = bounds
        if data.shape != (i1 - i0, j1 - j0) or i0 > j0:
            raise MatrixFormatError(f"{path}: rows {i0}:{i1} x columns {j0}:{j1} is not an upper "
                                    f"tile of shape {data.shape}")
        block = np.triu(np.ones_like(cover[i0:i1, j0:j1]), 1) if i0 == j0 else 1
        cover[i0:i1, j0:j1] += block
        out[i0:i1, j0:j1] = np.where(block == 1, data, out[i0:i1, j0:j1])
    upper = np.triu_indices(n, 1)
    twice = np.nonzero(cover[upper] > 1)[0]
    if twice.size:
        raise MatrixFormatError(f"pair ({ids[upper[0][twice[0]]]}, {ids[upper[1][twice[0]]]}) is "
                                "covered by more than one tile")
    missing = np.nonzero(cover[upper] == 0)[0]
    if missing.size:
        i, j = upper[0][missing[0]], upper[1][missing[0]]
        raise MatrixFormatError(f"{missing.size} pair(s) are in no tile, e.g. ({ids[i]}, {ids[j]}) "
                                f"at rows/columns ({i}, {j})")
    out[(upper[1], upper[0])] = out[upper]
    return DistanceMatrix(out, ids)
