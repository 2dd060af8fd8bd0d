"""Site-level views of a DNA alignment shared by every backend: A/C/G/T frequencies, the
sites every sequence observes, and the bit planes the pair-count kernels read."""

from __future__ import annotations

import numpy as np

from ._alphabet import DNA_KNOWN


def base_frequencies(alignment: np.ndarray) -> np.ndarray:
    """Frequencies of A, C, G, T over every site of every sequence (ape's ``base.freq``)."""
    counts = np.bincount(alignment.ravel(), minlength=DNA_KNOWN)[:DNA_KNOWN].astype(np.float64)
    total = counts.sum()
    if total == 0:
        return np.full(4, np.nan)
    return counts / total


def kept_sites(alignment: np.ndarray) -> np.ndarray:
    """Boolean mask of sites where every sequence has an observed base (global deletion)."""
    if alignment.shape[0] == 0:
        return np.ones(alignment.shape[1], dtype=bool)
    return np.all(alignment < DNA_KNOWN, axis=0)


def pack_planes(alignment: np.ndarray) -> np.ndarray:
    """Bit planes (n, 3, words) uint64: known, pyrimidine, G-or-T; sites LSB first.

    With A=00, G=01, C=10, T=11 in (pyrimidine, G-or-T), a transversion is a pyrimidine
    bit that differs and a transition a G-or-T bit that differs within one class.
    """
    n, s = alignment.shape
    words = max(1, -(-s // 64))
    known = alignment < DNA_KNOWN
    # codes: A=0, C=1, G=2, T=3
    pyr = known & ((alignment == 1) | (alignment == 3))
    gt = known & ((alignment == 2) | (alignment == 3))
    planes = np.zeros((n, 3, words * 8), dtype=np.uint8)
    for k, bits in enumerate((known, pyr, gt)):
        packed = np.packbits(bits, axis=1, bitorder="little")
        planes[:, k, : packed.shape[1]] = packed
    return planes.view("<u8").astype(np.uint64, copy=False).reshape(n, 3, words)
