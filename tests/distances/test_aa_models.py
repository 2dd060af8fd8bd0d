"""Aligned-protein distances (p, poisson, kimura) go through the one model dispatch: every
path (matrix, tiles, rows, MultipleAlignment.distance_matrix) gives the same values as a
pair-by-pair count written here."""

from __future__ import annotations

import math

import numpy as np
import pytest

import bioaccel
from bioaccel.distances._models import prepare
from bioaccel.errors import ModelError

AA = "ARNDCQEGHILKMFPSTWYV"


def pair_distance(a: str, b: str, model: str, keep=None) -> float:
    """Textbook count: sites where both rows hold one of the 20 amino acids."""
    sites = diff = 0
    for k, (x, y) in enumerate(zip(a, b)):
        if keep is not None and not keep[k]:
            continue
        if x in AA and y in AA:
            sites += 1
            diff += x != y
    if sites == 0:
        return math.nan
    p = diff / sites
    arg = {"p": None, "poisson": 1 - p, "kimura": 1 - p - 0.2 * p * p}[model]
    if arg is None:
        return p
    return math.inf if arg <= 0 else -math.log(arg)


def family(seed=3, n=7, width=40):
    rng = np.random.default_rng(seed)
    letters = list(AA) + ["-", "X", "*", "B"]
    weights = np.r_[np.full(20, 0.9 / 20), [0.06, 0.02, 0.01, 0.01]]
    return ["".join(rng.choice(letters, width, p=weights)) for _ in range(n)]


@pytest.mark.parametrize("model", ["p", "poisson", "kimura"])
@pytest.mark.parametrize("deletion", [False, True])
def test_aa_models_equal_a_pair_by_pair_count(model, deletion):
    rows = family()
    keep = None if deletion else [all(r[k] in AA for r in rows) for k in range(len(rows[0]))]
    dm = bioaccel.distance_matrix(rows, model, pairwise_deletion=deletion)
    for i in range(len(rows)):
        for j in range(len(rows)):
            want = 0.0 if i == j else pair_distance(rows[i], rows[j], model, keep)
            got = dm.data[i, j]
            assert (math.isnan(want) and math.isnan(got)) or got == pytest.approx(want, rel=1e-12)


def test_every_path_of_the_dispatch_agrees():
    rows = family(seed=9, n=9)
    whole = bioaccel.distance_matrix(rows, "kimura", pairwise_deletion=True).data
    pm = prepare(rows, "kimura", pairwise_deletion=True)
    assert np.array_equal(pm.block(2, 5, 0, 9), whole[2:5], equal_nan=True)
    n = len(rows)
    cond = pm.rows(0, n)
    assert np.array_equal(cond, whole[np.triu_indices(n, 1)], equal_nan=True)
    aln = bioaccel.MultipleAlignment([f"s{i}" for i in range(n)], rows)
    assert np.array_equal(aln.distance_matrix("kimura").data, whole, equal_nan=True)
    assert np.array_equal(aln.distance_matrix().data, whole, equal_nan=True)  # auto = kimura


def test_saturation_is_inf_and_no_site_is_nan():
    dm = bioaccel.distance_matrix(["EEEE", "FFFF", "----"], "poisson", pairwise_deletion=True)
    assert dm.data[0, 1] == math.inf
    assert math.isnan(dm.data[0, 2])


def test_aa_model_on_dna_is_named():
    with pytest.raises(ModelError, match="needs aligned protein"):
        bioaccel.distance_matrix(["ACGT", "ACGA"], "kimura")
    with pytest.raises(ModelError, match="does nothing for model 'kimura'"):
        bioaccel.distance_matrix(family(), "kimura", k=5)
