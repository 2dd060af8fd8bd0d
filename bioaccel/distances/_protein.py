"""Distances from pairwise alignments of unaligned sequences.

``identity``: 1 - (identical columns / alignment columns) of the optimal global alignment,
gap columns counted in the denominator (so two sequences of different lengths are never at
distance 0).

``scoredist`` (Sonnhammer & Hollich 2005, BMC Bioinformatics 6:108), for proteins::

    d = -ln(sigma_N / sigma_UN) * c
    sigma_N  = sigma - sigma_r                 sigma: the global alignment score
    sigma_UN = (sigma_aa + sigma_bb) / 2 - sigma_r
    sigma_r  = L * sum_xy p_x p_y s(x, y)      expected score of L random aligned pairs

with L the number of aligned (non-gap) columns, sigma_aa and sigma_bb the self-scores of
the residues in those columns, p the residue composition of the whole input, and
c = 1.3370 (the paper's calibration to PAM distances). Where sigma_N <= 0 (no more similar
than random) the distance is +Inf, not a capped value.
"""

from __future__ import annotations

import numpy as np

from ..pairwise import Scoring, cigar_columns, cigar_runs
from ._matrix import DistanceMatrix

SCOREDIST_CALIBRATION = 1.3370
ALIGNMENT_MODELS = ("identity", "scoredist")


def alignment_distances(
    batch, model: str, scoring: Scoring, threads: int = 0, progress=None
) -> DistanceMatrix:
    n = len(batch)
    i, j = np.triu_indices(n, k=1)
    pairs = np.stack([i, j], axis=1).astype(np.int64)
    data = np.zeros((n, n))
    data[i, j] = alignment_pair_distances(batch, model, scoring, pairs, threads, progress)
    data[j, i] = data[i, j]
    return DistanceMatrix(data, batch.ids)


def alignment_pair_distances(
    batch, model: str, scoring: Scoring, pairs: np.ndarray, threads: int = 0, progress=None
) -> np.ndarray:
    """Distances of the listed (i, j) pairs; scoredist's background is the composition of
    the whole batch."""
    from .._core import load_native

    native = load_native()
    pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
    out = np.zeros(len(pairs))
    table = scoring.table
    if model == "scoredist":
        counts = np.bincount(batch.codes, minlength=scoring.alphabet.size).astype(float)
        counts[~scoring.covered] = 0
        p = counts / counts.sum()
        expected = float(p @ table @ p)
    chunk = 4096
    for s in range(0, len(pairs), chunk):
        part = pairs[s : s + chunk]
        rows = native.align_pairs(
            batch.codes,
            batch.offsets,
            batch.codes,
            batch.offsets,
            part,
            table,
            0,
            scoring.gap_open,
            scoring.gap_extend,
            int(threads),
        )
        for k, ((a, b), (score, _qs, _qe, _ts, _te, cigar)) in enumerate(zip(part.tolist(), rows)):
            x, y = _columns(batch[a], batch[b], cigar)
            if model == "identity":
                columns = cigar_columns(cigar)
                d = 1.0 - (np.count_nonzero(x == y) / columns) if columns else float("nan")
            else:
                sigma_r = len(x) * expected
                sigma_u = (table[x, x].sum() + table[y, y].sum()) / 2
                sigma_n, sigma_un = score - sigma_r, sigma_u - sigma_r
                with np.errstate(divide="ignore", invalid="ignore"):
                    d = (
                        0.0 - np.log(sigma_n / sigma_un) * SCOREDIST_CALIBRATION
                        if sigma_n > 0 and sigma_un > 0
                        else np.inf
                    )
            out[s + k] = d
        if progress is not None:
            progress(min(s + chunk, len(pairs)), len(pairs))
    return out


def _columns(a: np.ndarray, b: np.ndarray, cigar: str) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the aligned (non-gap) column pairs of a global alignment."""
    runs = [(i, j, n) for op, n, i, j in cigar_runs(cigar) if op == "M"]
    if not runs:
        return np.zeros(0, np.uint8), np.zeros(0, np.uint8)
    return (
        np.concatenate([a[i : i + n] for i, _, n in runs]),
        np.concatenate([b[j : j + n] for _, j, n in runs]),
    )
