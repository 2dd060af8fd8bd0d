"""Distances between aligned protein sequences from their differing sites.

``p`` (proportion of differing sites), ``poisson`` (-ln(1 - p)), ``kimura`` (Kimura 1983:
-ln(1 - p - 0.2 p^2)). Only the 20 amino acids are observed; gaps, X, B, Z, J, U, O, ``*``
and ``?`` are missing data. Without pairwise deletion a site missing in any sequence is
dropped for every pair (``ape::dist.aa``'s default); with it, only for the pairs in which it
is missing. ``ape::dist.aa(pairwise.deletion = TRUE, scaled = TRUE)`` deletes only ``X``, so
it gives the same ``p`` once gaps and other unknown letters are coded ``X``. A pair with no
site left gets NaN, a pair past the model's saturation +Inf: never a clamped value.
"""

from __future__ import annotations

import numpy as np

from ..errors import ModelError

#: the aligned-protein models
AA_MODELS = ("p", "poisson", "kimura")
#: codes below this are the 20 amino acids (the order of ``bioaccel.PROTEIN``'s letters)
_AMINO_ACIDS = 20


def difference_counts(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(differences, compared sites) of every row of ``a`` against every row of ``b``
    (aligned code rows of one width), by one-hot matrix products (exact in float64)."""
    ka = (a < _AMINO_ACIDS).astype(np.float64)
    kb = (b < _AMINO_ACIDS).astype(np.float64)
    sites = ka @ kb.T
    same = np.zeros_like(sites)
    for aa in range(_AMINO_ACIDS):
        oa, ob = (a == aa), (b == aa)
        if oa.any() and ob.any():
            same += oa.astype(np.float64) @ ob.astype(np.float64).T
    return sites - same, sites


def kept_columns(codes: np.ndarray) -> np.ndarray:
    """Columns where every row has an amino acid (deletion for all pairs)."""
    return (codes < _AMINO_ACIDS).all(axis=0) if codes.shape[0] else np.ones(codes.shape[1], bool)


def aa_distances(model: str, diff: np.ndarray, sites: np.ndarray) -> np.ndarray:
    """Distances of ``model`` from difference and site counts (NaN with no site, +Inf past
    saturation)."""
    if model not in AA_MODELS:
        raise ModelError(
            f"unknown aligned-protein model {model!r}; expected one of {list(AA_MODELS)}"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        p = diff / sites
        if model == "poisson":
            d = -np.log1p(-p)
        elif model == "kimura":
            d = -np.log(1.0 - p - 0.2 * p * p)
        else:
            d = p
    return np.where(np.isnan(d) & (sites > 0), np.inf, d) + 0.0  # past saturation; no -0.0
