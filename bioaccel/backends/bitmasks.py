"""Match masks of the bit-parallel kernels (Myers/Hyyro edit distance, LCS), shared by the
CuPy and Numba backends. ``build_peq`` takes the array module ``xp``: NumPy builds them on
the host (Numba, tests), CuPy on the device."""

from __future__ import annotations

from typing import Any

import numpy as np


def build_peq(xp: Any, codes: Any, offsets: Any, alpha: int) -> tuple[Any, Any]:
    """Match masks of every query: ``peq[(word_off[q] + w) * alpha + c]`` has bit b set when
    letter 64 w + b of query q is c. Returns (peq, word_off) with word_off of size n + 1."""
    codes = xp.asarray(codes)
    offsets = xp.asarray(offsets, dtype=xp.int64)
    lengths = offsets[1:] - offsets[:-1]
    words = (lengths + 63) // 64
    word_off = xp.zeros(len(lengths) + 1, dtype=xp.int64)
    xp.cumsum(words, out=word_off[1:])
    total_words = int(word_off[-1])
    peq = xp.zeros(max(1, total_words) * alpha, dtype=xp.uint64)
    if codes.size:
        seq = xp.repeat(xp.arange(len(lengths), dtype=xp.int64), lengths)
        pos = xp.arange(codes.size, dtype=xp.int64) - offsets[seq]
        slot = (word_off[seq] + pos // 64) * alpha + codes.astype(xp.int64)
        bit = xp.left_shift(xp.uint64(1), (pos % 64).astype(xp.uint64))
        # each (word, letter) bit is set by exactly one position: adding equals or-ing
        if xp is np:
            np.add.at(peq, slot, bit)
        else:
            import cupyx

            cupyx.scatter_add(peq, slot, bit)
    return peq, word_off
