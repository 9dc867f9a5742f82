"""round_up / round_down of one float give the bits of the same value rounded in an array
(engine/numerics.py): the scalar path is only faster."""

import math
import sys

import numpy as np
import pytest

from dpplanner.engine.numerics import round_down, round_up

EDGES = [0.0, -0.0, math.inf, -math.inf, 5e-324, -5e-324, 2.2250738585072014e-308, 1.0, 0.1, -3.5,
         2.0 ** 1023, sys.float_info.max, -sys.float_info.max, 1e300, -1e-300]


@pytest.mark.parametrize("rounding", [round_up, round_down])
@pytest.mark.parametrize("rel", [1e-13, 1e-12, 0.0])
def test_a_float_is_rounded_as_in_an_array(rounding, rel):
    values = EDGES + list(np.random.default_rng(7).uniform(-1, 1, 500) * 10.0 ** np.arange(-250, 250))
    with np.errstate(over="ignore"):
        in_array = rounding(np.array(values), rel)
    for x, expected in zip(values, in_array.tolist()):
        for given in (x, np.float64(x)):
            got = rounding(given, rel)
            assert type(got) is float and repr(got) == repr(expected), (x, rel)
    assert math.isnan(rounding(math.nan, rel))
