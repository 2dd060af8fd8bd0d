"""Small rpy2 helpers for the R-oracle tests (plain vectors only: no converter contexts)."""

from __future__ import annotations

import numpy as np

from .datasets import require_r_package


def r():
    ro = require_r_package("ape")
    require_r_package("phangorn")
    ro.r("suppressMessages({library(ape); library(phangorn)})")
    return ro


def to_r_matrix(ro, data: np.ndarray, labels: list[str]):
    n = data.shape[0]
    m = ro.r["matrix"](
        ro.FloatVector(np.asarray(data, dtype=float).ravel(order="F")), nrow=n, ncol=n
    )
    ro.globalenv["bioaccel_tmp"] = m
    ro.globalenv["bioaccel_labels"] = ro.StrVector(labels)
    ro.r("dimnames(bioaccel_tmp) <- list(bioaccel_labels, bioaccel_labels)")
    return ro.globalenv["bioaccel_tmp"]


def r_matrix_to_numpy(ro, m, labels: list[str]) -> np.ndarray:
    """An R matrix with dimnames, reordered to ``labels``."""
    names = list(ro.r["rownames"](m))
    order = [names.index(lbl) for lbl in labels]
    n = len(names)
    arr = np.array(list(m), dtype=float).reshape(n, n, order="F")
    return arr[np.ix_(order, order)]
