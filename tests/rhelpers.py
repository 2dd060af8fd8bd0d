"""Small rpy2 helpers for the R-oracle tests (plain vectors only: no converter contexts)."""

from __future__ import annotations

import numpy as np
import pytest


def r():
    ro = pytest.importorskip("rpy2.robjects", reason="rpy2 is needed for the R oracle")
    for pkg in ("ape", "phangorn"):
        if not bool(ro.r(f'c(requireNamespace("{pkg}", quietly=TRUE))')[0]):
            pytest.skip(f"R package {pkg} missing (apt-get install r-cran-{pkg})")
    ro.r("suppressMessages({library(ape); library(phangorn)})")
    return ro


def to_r_matrix(ro, data: np.ndarray, labels: list[str]):
    n = data.shape[0]
    m = ro.r["matrix"](ro.FloatVector(np.asarray(data, dtype=float).ravel(order="F")), nrow=n, ncol=n)
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
