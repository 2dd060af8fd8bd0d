"""Edit distances and LCS lengths on the CuPy backend: array code builds the match masks
(Peq), the CUDA C kernels in ``kernels/edit_distance.cu`` (Myers' recurrences) and
``kernels/lcs_lengths.cu`` (the MSA guide tree's LCS) run one pair per thread.

``build_peq`` (:mod:`bioaccel.backends.bitmasks`) takes the array module ``xp``, so it runs (and is tested) with NumPy.
"""

from __future__ import annotations

import numpy as np

from ..bitmasks import build_peq

_THREADS = 128
#: pairs per launch: bounds the (words, pairs) work arrays
_CHUNK = 1 << 18


def _device_inputs(xp, queries, targets, kernel_file: str, kernel_name: str):
    """What both pair kernels read: the queries' match masks and word offsets, the target
    codes and offsets, the query lengths, the work-array height and the compiled kernel."""
    from ...kernels import cuda_source

    alpha = int(queries.alphabet.size)
    peq, word_off = build_peq(xp, queries.codes, queries.offsets, alpha)
    kernel = xp.RawModule(code=cuda_source(kernel_file)).get_function(kernel_name)
    words = max(1, int((queries.lengths.max(initial=0) + 63) // 64))
    return (
        alpha,
        peq,
        word_off,
        xp.asarray(targets.codes),
        xp.asarray(targets.offsets, dtype=xp.int64),
        xp.asarray(queries.lengths, dtype=xp.int64),
        words,
        kernel,
    )


def edit_distances_cupy(
    xp, queries, targets, mode: int, max_distance: int, pair_q: np.ndarray, pair_t: np.ndarray
) -> np.ndarray:
    """Distances of the listed (query, target) pairs on the current CUDA device."""
    alpha, peq, word_off, t_codes, t_off, q_len, words, kernel = _device_inputs(
        xp, queries, targets, "edit_distance.cu", "edit_distance_pairs"
    )
    out = np.empty(len(pair_q), dtype=np.int32)
    for s in range(0, len(pair_q), _CHUNK):
        pq = xp.asarray(pair_q[s : s + _CHUNK], dtype=xp.int64)
        pt = xp.asarray(pair_t[s : s + _CHUNK], dtype=xp.int64)
        k = len(pq)
        pv = xp.empty((words, k), dtype=xp.uint64)
        mv = xp.empty((words, k), dtype=xp.uint64)
        d = xp.empty(k, dtype=xp.int32)
        kernel(
            ((k + _THREADS - 1) // _THREADS,),
            (_THREADS,),
            (
                t_codes,
                q_len,
                t_off,
                word_off,
                peq,
                np.int32(alpha),
                pq,
                pt,
                np.int64(k),
                np.int32(mode),
                np.int32(max_distance),
                pv,
                mv,
                d,
            ),
        )
        out[s : s + k] = xp.asnumpy(d)
    return out


def lcs_lengths_cupy(
    xp, queries, targets, letters: int, pair_q: np.ndarray, pair_t: np.ndarray
) -> np.ndarray:
    """LCS lengths of the listed (query, target) pairs on the current CUDA device (the MSA
    guide tree's distance stage); codes >= ``letters`` never match."""
    alpha, peq, word_off, t_codes, t_off, q_len, words, kernel = _device_inputs(
        xp, queries, targets, "lcs_lengths.cu", "lcs_length_pairs"
    )
    out = np.empty(len(pair_q), dtype=np.int32)
    for s in range(0, len(pair_q), _CHUNK):
        pq = xp.asarray(pair_q[s : s + _CHUNK], dtype=xp.int64)
        pt = xp.asarray(pair_t[s : s + _CHUNK], dtype=xp.int64)
        k = len(pq)
        v = xp.empty((words, k), dtype=xp.uint64)
        d = xp.empty(k, dtype=xp.int32)
        kernel(
            ((k + _THREADS - 1) // _THREADS,),
            (_THREADS,),
            (
                t_codes,
                q_len,
                t_off,
                word_off,
                peq,
                np.int32(alpha),
                np.int32(letters),
                pq,
                pt,
                np.int64(k),
                v,
                d,
            ),
        )
        out[s : s + k] = xp.asnumpy(d)
    return out
