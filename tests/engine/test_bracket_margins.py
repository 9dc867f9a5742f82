"""A bracket's ends are widened outward past the root finders' error (engine/numerics.py)."""

import math

from dpplanner.engine.numerics import widen_down, widen_up


def test_the_upper_end_only_grows_and_the_lower_end_only_shrinks_to_zero():
    for x in (0.0, 5e-324, 1e-300, 1e-9, 0.25, 1.0, 37.5, 1e300, 1.7e308):
        assert widen_up(x) > x
        assert 0.0 <= widen_down(x) <= x
    assert widen_up(math.inf) == math.inf and widen_down(math.inf) == math.inf


def test_a_nan_lower_end_certifies_nothing_and_a_nan_upper_end_stays_unknown():
    assert widen_down(math.nan) == 0.0
    assert math.isnan(widen_up(math.nan))
