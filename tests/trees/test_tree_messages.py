"""The tree's message about a distance it cannot join gives hints only where they apply:
the model's when a model made the distances, pairwise deletion only when it is off."""

from __future__ import annotations

import numpy as np
import pytest

import bioaccel
from bioaccel import DistanceMatrix

#: a and b share no site; every site is missing in some sequence
SEQS = {"a": "ACGTAC------", "b": "------ACGTAC", "c": "ACGTACACGTAC", "d": "ACGTTCACGAAC"}


def _message(d, **kw) -> str:
    with pytest.raises(ValueError) as err:
        bioaccel.nj(d, **kw)
    return str(err.value)


def _dm(**kw) -> DistanceMatrix:
    batch = bioaccel.SeqBatch.from_strings(list(SEQS.values()), ids=list(SEQS))
    return bioaccel.distance_matrix(batch, "k80", backend="reference", **kw)


def test_nan_without_pairwise_deletion_hints_at_it_and_at_saturation():
    # once: a NaN was always "no site left"; jc69 past p = 3/4 (and tn93 or logdet on a
    # divergent pair) gives NaN with every site compared: both causes are named
    said = _message(_dm())
    assert said.startswith("distance between 'a' and 'b' is nan; tree building needs finite")
    assert "try pairwise deletion" in said and "past k80's saturation" in said


def test_nan_with_pairwise_deletion_on_does_not_hint_at_it():
    # once: "(try pairwise deletion)" when it was on already
    said = _message(_dm(pairwise_deletion=True))
    assert said.startswith("distance between 'a' and 'b' is nan; tree building needs finite")
    assert "try pairwise deletion" not in said and "saturation" in said
    assert "no site where both have a letter" in said and "pairwise deletion is on" in said


def test_a_saturated_pair_with_every_site_compared_is_named_as_such():
    """24 sites, none missing, p = 1: jc69's log argument is negative (NaN); the message
    names saturation and a model that stays finite, not only missing sites."""
    from bioaccel.distances import distance_matrix

    aln = [("a", "ACGT" * 6), ("b", "CATG" * 6), ("c", "ACGT" * 5 + "ACGA")]
    dm = distance_matrix(aln, "jc69")
    said = _message(dm)
    assert "past jc69's saturation" in said and "'raw'" in said


@pytest.mark.parametrize("value", [np.nan, np.inf])
@pytest.mark.parametrize("low_memory", [False, True])
def test_a_matrix_gets_no_hint_about_models(tmp_path, value, low_memory):
    # once: a matrix has no model nor pairwise deletion to change here
    d = np.array([[0, 1, 2, 3], [1, 0, value, 2], [2, value, 0, 1], [3, 2, 1, 0.0]])
    path = tmp_path / "m.phy"
    DistanceMatrix(d, list("wxyz")).write(path)
    read = DistanceMatrix.read_condensed if low_memory else DistanceMatrix.read
    said = _message(read(path), low_memory=low_memory)
    assert said == (
        f"distance between 'x' and 'y' is {value!r}; tree building needs finite distances "
        "(the matrix holds it: no model made it here to change)"
    )
