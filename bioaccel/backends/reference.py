"""The NumPy reference: one pair at a time, straight from the definitions. Slow, plain."""

from __future__ import annotations

import numpy as np

from ..sequences._alphabet import DNA_KNOWN
from .base import Backend, DnaData

_A, _C, _G, _T = 0, 1, 2, 3


class ReferenceBackend(Backend):
    name = "reference"
    operations = frozenset(
        {
            "dna_counts",
            "align_scores",
            "edit_distances",
            "edit_pairs",
            "lcs_lengths",
            "neighbor_joining",
        }
    )

    def dna_counts(self, data: DnaData, i0, i1, j0, j1, *, table, upper_only, threads):
        aln = data.alignment
        out = np.zeros((16 if table else 4, i1 - i0, j1 - j0), dtype=np.int32)
        for i in range(i0, i1):
            for j in range(j0, j1):
                if upper_only and j <= i:
                    continue
                x, y = aln[i], aln[j]
                both = (x < DNA_KNOWN) & (y < DNA_KNOWN)  # sites observed in both
                x, y = x[both], y[both]
                if table:
                    for a in range(4):
                        for b in range(4):
                            out[4 * a + b, i - i0, j - j0] = np.count_nonzero((x == a) & (y == b))
                    continue
                purine_ts = ((x == _A) & (y == _G)) | ((x == _G) & (y == _A))
                pyrimidine_ts = ((x == _C) & (y == _T)) | ((x == _T) & (y == _C))
                different = x != y
                out[0, i - i0, j - j0] = x.size
                out[1, i - i0, j - j0] = np.count_nonzero(purine_ts)
                out[2, i - i0, j - j0] = np.count_nonzero(pyrimidine_ts)
                out[3, i - i0, j - j0] = np.count_nonzero(different & ~purine_ts & ~pyrimidine_ts)
        return out

    def neighbor_joining(self, d, threads, inplace=False, low_memory=False):
        if low_memory:
            from ..errors import BackendUnavailableError

            raise BackendUnavailableError(
                f"backend {self.name!r} has no low-memory neighbour joining (it holds the "
                "float64 square); low_memory=True runs on the cpu backend"
            )
        from .nj_array import neighbor_joining_arrays

        return neighbor_joining_arrays(d, np)  # the whole Q matrix each step, in NumPy

    def edit_distances(self, queries, targets, mode, max_distance, symmetric, threads):
        from .base import all_pairs, scatter_pairs

        pq, pt = all_pairs(len(queries), len(targets), symmetric)
        values = np.array(
            [
                edit_distance_reference(queries[int(i)], targets[int(j)], mode)
                for i, j in zip(pq, pt)
            ],
            dtype=np.int64,
        )
        if max_distance >= 0:
            values = np.minimum(values, max_distance + 1)
        return scatter_pairs(values.astype(np.int32), pq, pt, len(queries), len(targets), symmetric)

    def edit_pairs(self, seqs, pair_i, pair_j, max_distance, threads):
        values = np.array(
            [
                edit_distance_reference(seqs[int(a)], seqs[int(b)], 0)
                for a, b in zip(pair_i, pair_j)
            ],
            dtype=np.int64,
        )
        return np.minimum(values, int(max_distance) + 1).astype(np.int32)

    def lcs_lengths(self, queries, targets, letters, symmetric, threads):
        from .base import all_pairs, scatter_pairs

        pq, pt = all_pairs(len(queries), len(targets), symmetric)
        values = [
            lcs_length_reference(queries[int(i)], targets[int(j)], letters) for i, j in zip(pq, pt)
        ]
        return scatter_pairs(
            np.array(values, dtype=np.int32), pq, pt, len(queries), len(targets), symmetric
        )

    def align_scores(self, queries, targets, scoring, mode, symmetric, threads):
        from .base import all_pairs, scatter_pairs

        pq, pt = all_pairs(len(queries), len(targets), symmetric)
        values = np.array(
            [gotoh_score(queries[int(i)], targets[int(j)], scoring, mode) for i, j in zip(pq, pt)],
            dtype=np.int64,
        )
        if values.size and (values.max() > 2**31 - 1 or values.min() < -(2**31)):
            raise OverflowError("an alignment score does not fit int32")
        return scatter_pairs(values.astype(np.int32), pq, pt, len(queries), len(targets), symmetric)


def lcs_length_reference(a: np.ndarray, b: np.ndarray, letters: int) -> int:
    """Longest common subsequence of two code arrays by the textbook DP, one row of a at a
    time: row[j] = max(row[j - 1], above[j], above[j - 1] + (a_i == b_j)), the running
    maximum taken by ``np.maximum.accumulate``. Codes >= ``letters`` never match."""
    b = np.asarray(b)
    above = np.zeros(len(b) + 1, dtype=np.int64)
    for x in np.asarray(a).tolist():
        match = (b == x) & (x < letters)
        row = np.empty_like(above)
        row[0] = 0
        row[1:] = np.maximum(above[1:], above[:-1] + match)
        above = np.maximum.accumulate(row)
    return int(above[-1])


def gotoh_score(a: np.ndarray, b: np.ndarray, scoring, mode: int) -> int:
    """Gotoh (1982) affine-gap score, cell by cell in Python integers.

    H = best score ending in a match/mismatch or anywhere, E = ending in a gap in ``a``
    (horizontal), F = ending in a gap in ``b`` (vertical). Global: both sequences end to
    end; local (mode 1): scores floored at 0, best cell anywhere; semi-global (mode 2):
    leading and trailing gaps free on both sequences.
    """
    o, e = scoring.gap_open, scoring.gap_extend
    m, n = len(a), len(b)
    glob, local = mode == 0, mode == 1

    def border(k):
        return -(o + (k - 1) * e) if (glob and k > 0) else 0

    if m == 0 or n == 0:
        return border(m + n)
    table = scoring.table
    neg = float("-inf")
    h_prev = [border(j) for j in range(n + 1)]
    f_prev = [neg] * (n + 1)
    best = 0 if not glob else None
    if mode == 2:
        best = h_prev[n]
    for i in range(1, m + 1):
        h = [border(i)] + [0] * n
        f = [neg] * (n + 1)
        e_run = neg
        for j in range(1, n + 1):
            e_run = max(e_run - e, h[j - 1] - o)
            f[j] = max(f_prev[j] - e, h_prev[j] - o)
            v = max(h_prev[j - 1] + int(table[a[i - 1], b[j - 1]]), e_run, f[j])
            if local:
                v = max(v, 0)
                best = max(best, v)
            h[j] = v
        if mode == 2:
            best = max(best, h[n])
        h_prev, f_prev = h, f
    if glob:
        return int(h_prev[n])
    if mode == 2:
        best = max([best] + h_prev)
    return int(best)


def edit_distance_reference(a: np.ndarray, b: np.ndarray, mode: int) -> int:
    """The textbook DP, one row at a time; the left-to-right dependency of a row is a
    running minimum: D[i][j] = min_k<=j (X[k] + j - k) = j + cummin(X - k)."""
    n = len(b)
    prev = np.arange(n + 1) if mode != 1 else np.zeros(n + 1, dtype=np.int64)
    j = np.arange(n + 1)
    for i in range(1, len(a) + 1):
        x = np.empty(n + 1, dtype=np.int64)
        x[0] = i
        x[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (b != a[i - 1]))
        prev = j + np.minimum.accumulate(x - j)
    return int(prev[n] if mode == 0 else prev.min())
