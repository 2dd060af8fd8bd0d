"""``rinterop._int_vector``: whole numbers past R's integers are refused, naming the first,
whatever their sign (the most negative int64 included: its absolute value overflows)."""

from __future__ import annotations

import numpy as np
import pytest

from bioaccel.rinterop import _int_vector


@pytest.mark.parametrize(
    "values,named",
    [
        ([1, 2**31], str(2**31)),
        ([-(2**31), 0], str(-(2**31))),
        ([0, np.iinfo(np.int64).min], str(np.iinfo(np.int64).min)),
    ],
)
def test_past_r_integers_is_refused_naming_the_value(values, named):
    with pytest.raises(ValueError, match=f"^{named}: past R's integers"):
        _int_vector(None, values)
