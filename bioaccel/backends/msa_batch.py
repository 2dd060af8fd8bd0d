"""A batch of profile pairs packed for the GPU stages of the MSA profile-profile DP
(``kernels/msa_profile_dp.cu`` on CuPy, ``kernels/msa_numba.py`` on Numba CUDA).

Each pair is a mapping of the host arrays the CPU engine's DP reads, as
``_native.msa_dp_inputs`` returns them: ``letters`` (K), ``sa`` (n, K), ``fbt`` (K, m) and
``used`` (K,), or ``single`` (m,) when B is one gap-free sequence; ``occ_a``/``occ_b``;
``start_a``/``cont_a`` (n + 1), ``own_a``/``credit_a`` (n), and the same for B. The kernels
take them unchanged, so their arithmetic is the CPU's. The layout (``desc`` fields and the
per-side terms) is the one documented at the top of ``msa_profile_dp.cu``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: int64 fields per pair in ``desc`` (MSA_D_* in msa_profile_dp.cu)
DESC = 11
(D_N, D_M, D_SA, D_FBT, D_USED, D_SINGLE, D_TERMS_A, D_TERMS_B, D_TRACE, D_PATH, D_SCRATCH) = range(
    DESC
)
#: float scratch per pair: three diagonals (or two rows) of M, X, Y
SCRATCH_PER_CELL = 9


@dataclass
class PackedBatch:
    letters: int
    desc: np.ndarray  # (pairs, DESC) int64
    fdata: np.ndarray  # float32: sa, fbt and both sides' terms of every pair
    single: np.ndarray  # int16: B's letters of the pairs whose B is single
    used: np.ndarray  # uint8: B's used letters of the other pairs
    trace_size: int  # bytes of traceback: sum of n (m + 1)
    path_size: int  # bytes of paths: sum of n + m
    scratch_size: int  # floats of scratch: sum of 9 (max(n, m) + 1)
    max_n: int
    max_m: int


def _vector(pair: Mapping[str, Any], key: str, length: int, index: int) -> np.ndarray:
    v = np.asarray(pair[key])
    if v.dtype != np.float32 or v.shape != (length,):
        raise ValueError(
            f"profile pair {index}: {key} must be float32 of shape ({length},), "
            f"got {v.dtype} {v.shape}"
        )
    return v


def _terms(pair: Mapping[str, Any], side: str, length: int, index: int) -> np.ndarray:
    """occ, start, cont, own, credit of one side, concatenated (5 length + 2 floats)."""
    return np.concatenate(
        [
            _vector(pair, f"occ_{side}", length, index),
            _vector(pair, f"start_{side}", length + 1, index),
            _vector(pair, f"cont_{side}", length + 1, index),
            _vector(pair, f"own_{side}", length, index),
            _vector(pair, f"credit_{side}", length, index),
        ]
    )


def pack_batch(pairs: Sequence[Mapping[str, Any]]) -> PackedBatch:
    """The pairs' arrays in flat buffers with a descriptor row per pair. Raises ValueError
    naming the pair and the array when shapes or types disagree (nothing is converted: the
    kernels must see exactly the CPU's float32 values)."""
    if not pairs:
        raise ValueError("no profile pairs to align")
    letters = int(pairs[0]["letters"])
    desc = np.zeros((len(pairs), DESC), dtype=np.int64)
    floats: list[np.ndarray] = []
    singles: list[np.ndarray] = []
    useds: list[np.ndarray] = []
    f_at = s_at = u_at = trace_at = path_at = scratch_at = 0
    for k, pair in enumerate(pairs):
        if int(pair["letters"]) != letters:
            raise ValueError(
                f"profile pair {k}: {pair['letters']} letters, the batch has {letters}"
            )
        sa = np.asarray(pair["sa"])
        if sa.dtype != np.float32 or sa.ndim != 2 or sa.shape[1] != letters:
            raise ValueError(
                f"profile pair {k}: sa must be float32 of shape (n, {letters}), "
                f"got {sa.dtype} {sa.shape}"
            )
        n = sa.shape[0]
        m = np.asarray(pair["occ_b"]).shape[0]
        desc[k, D_N], desc[k, D_M] = n, m
        desc[k, D_SA] = f_at
        floats.append(sa.ravel())
        f_at += sa.size
        if pair.get("single") is not None:
            single = np.asarray(pair["single"])
            if single.dtype != np.int16 or single.shape != (m,):
                raise ValueError(f"profile pair {k}: single must be int16 of shape ({m},)")
            if m and (single.min() < 0 or single.max() >= letters):
                raise ValueError(
                    f"profile pair {k}: single holds a letter outside 0..{letters - 1}"
                )
            desc[k, D_FBT] = desc[k, D_USED] = -1
            desc[k, D_SINGLE] = s_at
            singles.append(single)
            s_at += m
        else:
            fbt, used = np.asarray(pair["fbt"]), np.asarray(pair["used"])
            if fbt.dtype != np.float32 or fbt.shape != (letters, m):
                raise ValueError(
                    f"profile pair {k}: fbt must be float32 of shape "
                    f"({letters}, {m}), got {fbt.dtype} {fbt.shape}"
                )
            if used.dtype != np.uint8 or used.shape != (letters,):
                raise ValueError(f"profile pair {k}: used must be uint8 of shape ({letters},)")
            desc[k, D_FBT], desc[k, D_USED], desc[k, D_SINGLE] = f_at, u_at, -1
            floats.append(fbt.ravel())
            f_at += fbt.size
            useds.append(used)
            u_at += letters
        for side, length, field in (("a", n, D_TERMS_A), ("b", m, D_TERMS_B)):
            t = _terms(pair, side, length, k)
            desc[k, field] = f_at
            floats.append(t)
            f_at += t.size
        desc[k, D_TRACE], desc[k, D_PATH], desc[k, D_SCRATCH] = trace_at, path_at, scratch_at
        trace_at += n * (m + 1)
        path_at += n + m
        scratch_at += SCRATCH_PER_CELL * (max(n, m) + 1)

    def cat(parts, dtype):
        return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(1, dtype)

    return PackedBatch(
        letters,
        desc,
        cat(floats, np.float32),
        cat(singles, np.int16),
        cat(useds, np.uint8),
        trace_at,
        path_at,
        scratch_at,
        int(desc[:, D_N].max()),
        int(desc[:, D_M].max()),
    )


def unpack_paths(batch: PackedBatch, path: np.ndarray, path_len: np.ndarray) -> list[np.ndarray]:
    """Each pair's path: the last ``path_len`` of its n + m bytes (the kernels write it
    backwards from the end)."""
    out = []
    for k in range(batch.desc.shape[0]):
        end = int(batch.desc[k, D_PATH] + batch.desc[k, D_N] + batch.desc[k, D_M])
        out.append(np.array(path[end - int(path_len[k]) : end], dtype=np.uint8))
    return out
