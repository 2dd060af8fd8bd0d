"""Evolutionary distances between aligned DNA sequences, with ``ape::dist.dna`` semantics.

Every backend reduces a pair of sequences to integer site counts; this module turns
the counts into distances, once, in the compiled core, so every backend gives bit-identical
values.

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

from ..sequences import base_frequencies, kept_sites, pack_planes  # noqa: F401 (re-exported)

MODELS = ("raw", "jc69", "k80", "f81", "tn93", "logdet")
#: models whose counts are the full 4x4 table rather than the 4 summary counts
TABLE_MODELS = frozenset({"logdet"})


def distances_from_counts(
    model: str, counts: np.ndarray, freqs: np.ndarray, threads: int = 0
) -> np.ndarray:
    """Distances for a tile of pairs.

    The compiled formulas (csrc/distances), shared by every backend bit for bit.

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
