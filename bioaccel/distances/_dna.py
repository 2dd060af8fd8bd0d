"""Evolutionary distances between aligned DNA sequences, with ``ape::dist.dna`` semantics.

Every backend reduces a pair of sequences to integer site counts; this module turns
the counts into distances, once, in NumPy, so every backend gives bit-identical values.

Missing data: only A, C, G and T (U) are observed bases. Every other code (IUPAC
ambiguity, N, gap, ``?``) is missing. With ``pairwise_deletion=False`` a site missing in
*any* sequence is dropped for all pairs (ape's default); with ``True`` a site is dropped
only for the pairs in which it is missing.

Formulas, with L the number of compared sites, P1/P2 the proportions of purine (A<->G)
and pyrimidine (C<->T) transitions, P = P1 + P2, Q the proportion of transversions and
p = P + Q the proportion of differences (as in ape's C code):

=======  ===================================================================
raw      p
jc69     -3/4 ln(1 - 4p/3)                                    (Jukes & Cantor 1969)
k80      -1/2 ln((1 - 2P - Q) sqrt(1 - 2Q))                   (Kimura 1980)
f81      -E ln(1 - p/E), E = 1 - sum(pi_i^2)                  (Felsenstein 1981)
tn93     -k1 ln w1 - k2 ln w2 - k3 ln w3                      (Tamura & Nei 1993)
logdet   -ln(det F) / 4 - ln 4, F the 4x4 table of site pairs / L   (ape's LogDet)
=======  ===================================================================

Base frequencies pi (f81, tn93) come from the whole alignment *before* any deletion:
counts of A, C, G, T over all sequences and sites, as ``ape::base.freq``.

Undefined values are what ape returns, never clamped: L = 0 gives NaN; saturation
(a log argument of exactly 0) gives +Inf; a negative log argument gives NaN. For example,
two sequences differing at 3/4 of the sites have jc69 = +Inf, and at more than 3/4, NaN.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError
from ..sequences import base_frequencies, kept_sites, pack_planes  # noqa: F401 (re-exported)

MODELS = ("raw", "jc69", "k80", "f81", "tn93", "logdet")
#: models whose counts are the full 4x4 table rather than the 4 summary counts
TABLE_MODELS = frozenset({"logdet"})
_LN4 = float(np.log(4.0))

# Order of the summary counts every backend returns (matches csrc/dna_counts.hpp).
SITES, TS_PURINE, TS_PYRIMIDINE, TRANSVERSIONS = range(4)


# ape lays the LogDet table out column-major with bases in A, G, C, T order; our counts
# are row-major A, C, G, T. _APE_CELL[k] is our cell for ape's cell k.
_AGCT = (0, 2, 1, 3)  # position of A, C, G, T in ape's order
_APE_CELL = [0] * 16
for _a in range(4):
    for _b in range(4):
        _APE_CELL[_AGCT[_a] + 4 * _AGCT[_b]] = 4 * _a + _b


def _det4(x: list[np.ndarray]) -> np.ndarray:
    """4x4 determinant, entries in ape's column-major cell order.

    The Laplace expansion by 2x2 minors, with its terms summed in the order ape's
    ``detFourByFour`` sums them, so that singular tables give exactly 0 (and +Inf
    distances) where ape does, instead of a rounding residue.
    """
    m1 = x[10] * x[15] - x[14] * x[11]
    m2 = x[14] * x[7] - x[6] * x[15]
    m3 = x[6] * x[11] - x[10] * x[7]
    m4 = x[2] * x[15] - x[14] * x[3]
    m5 = x[10] * x[3] - x[2] * x[11]
    m6 = x[14] * x[11] - x[10] * x[15]
    m7 = x[2] * x[7] - x[6] * x[3]
    m8 = x[6] * x[15] - x[14] * x[7]
    m9 = x[14] * x[3] - x[2] * x[15]
    m10 = x[10] * x[7] - x[6] * x[11]
    m11 = x[2] * x[11] - x[10] * x[3]
    m12 = x[6] * x[3] - x[2] * x[7]
    return (
        x[0] * x[5] * m1
        + x[0] * x[9] * m2
        + x[0] * x[13] * m3
        + x[4] * x[9] * m4
        + x[4] * x[13] * m5
        + x[4] * x[1] * m6
        + x[8] * x[13] * m7
        + x[8] * x[1] * m8
        + x[8] * x[5] * m9
        + x[12] * x[1] * m10
        + x[12] * x[5] * m11
        + x[12] * x[9] * m12
    )


def distances_from_counts(
    model: str, counts: np.ndarray, freqs: np.ndarray, threads: int = 0
) -> np.ndarray:
    """Distances for a tile of pairs.

    The compiled formulas, shared by every backend bit for bit (:func:`numpy_distances`
    is their NumPy twin, tested against them).

    Parameters
    ----------
    model : str
        One of :data:`MODELS`.
    counts : ndarray of int, shape (4, rows, cols) or (16, rows, cols) for ``logdet``
        Summary counts (sites, purine transitions, pyrimidine transitions, transversions),
        or the 4x4 A/C/G/T contingency table flattened row-major.
    freqs : ndarray, shape (4,)
        Base frequencies (A, C, G, T), used by ``f81`` and ``tn93``.
    """
    from .._core import load_native

    return load_native().dna_distances_from_counts(
        MODELS.index(model),
        np.asarray(counts, np.int32),
        np.asarray(freqs, np.float64),
        int(threads),
    )


def numpy_distances(model: str, counts: np.ndarray, freqs: np.ndarray) -> np.ndarray:
    """The same formulas in NumPy, tested against the compiled ones."""
    c = counts.astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if model == "logdet":
            sites = c.sum(axis=0)
            return -np.log(_det4([c[k] / sites for k in _APE_CELL])) / 4 - _LN4
        sites = c[SITES]
        p1, p2, q = c[TS_PURINE] / sites, c[TS_PYRIMIDINE] / sites, c[TRANSVERSIONS] / sites
        p = (c[TS_PURINE] + c[TS_PYRIMIDINE] + c[TRANSVERSIONS]) / sites
        if model == "raw":
            return p
        if model == "jc69":
            return -0.75 * np.log(1 - 4 * p / 3)
        if model == "k80":
            ts = (c[TS_PURINE] + c[TS_PYRIMIDINE]) / sites
            return -0.5 * np.log((1 - 2 * ts - q) * np.sqrt(1 - 2 * q))
        a, cc, g, t = (float(x) for x in freqs)
        if model == "f81":
            e = 1 - a * a - cc * cc - g * g - t * t
            return -e * np.log(1 - p / e)
        if model == "tn93":
            g_r, g_y = a + g, cc + t
            k1 = 2 * a * g / g_r
            k2 = 2 * cc * t / g_y
            k3 = 2 * (g_r * g_y - a * g * g_y / g_r - cc * t * g_r / g_y)
            w1 = 1 - p1 / k1 - q / (2 * g_r)
            w2 = 1 - p2 / k2 - q / (2 * g_y)
            w3 = 1 - q / (2 * g_r * g_y)
            return -k1 * np.log(w1) - k2 * np.log(w2) - k3 * np.log(w3)
    raise ModelError(f"unknown aligned-DNA model {model!r}; expected one of {list(MODELS)}")
