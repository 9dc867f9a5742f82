"""Exact sums of the plan's doubles (engine/exact.py): the vectorised total is the running one's
last value, for any doubles (subnormal, huge, negative) and multiplicities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpplanner.engine.exact import exact_cumsum, exact_total

_DOUBLES = st.floats(allow_nan=False, allow_infinity=False)


@given(st.lists(st.tuples(_DOUBLES, st.integers(1, 10 ** 9)), min_size=1, max_size=80))
def test_the_exact_total_is_the_last_running_sum(rows):
    v = np.array([x for x, _ in rows])
    m = np.array([k for _, k in rows], dtype=np.int64)
    assert exact_total(v, m) == exact_cumsum(v, m)[-1]
    assert exact_total(v) == exact_cumsum(v)[-1]


def test_the_exact_total_of_many_values_of_one_binade():
    """Pieces of 32 values per exponent keep every int64 partial sum exact: 10^4 values just
    below 1 (one exponent), each a billion times, and the subnormals' trailing zeros."""
    rng = np.random.default_rng(5)
    v = np.concatenate([1.0 - rng.uniform(0, 2 ** -20, 10_000), [5e-324, 1e-310, 2.2250738585072014e-308]])
    m = np.full(v.size, 10 ** 9, dtype=np.int64)
    assert exact_total(v, m) == exact_cumsum(v, m)[-1]
    assert exact_total(np.zeros(0)) == 0


def test_an_infinite_or_nan_value_has_no_total():
    """frexp passes inf on as a garbage int64 (INT64_MIN), so the vectorised total came out
    negative (-1023 for [inf, 1]) and a composition of such releases reported a negative epsilon;
    it raises, as the running sum always did."""
    for bad in (np.inf, -np.inf):
        with pytest.raises(OverflowError):
            exact_total(np.array([bad, 1.0]))
    with pytest.raises(ValueError):
        exact_total(np.array([1.0, np.nan]), np.array([1, 2]))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_a_double_in_units_is_its_exact_value(x):
    """to_units(x) = x 2^1074 exactly (every finite double is a whole multiple of 2^-1074), and
    back to a double rounded either way it is x again."""
    from fractions import Fraction

    from dpplanner.engine.exact import to_units, units_to_float

    assert Fraction(to_units(x)) == Fraction(x) * 2 ** 1074
    assert units_to_float(to_units(x), True) == x == units_to_float(to_units(x), False)


@given(st.integers(-(1 << 2200), 1 << 2200) | st.integers(-(1 << 60), 1 << 60), st.booleans())
def test_units_round_to_the_next_double_in_their_direction(s, upper):
    """units_to_float(s) is s 2^-1074 rounded up (or down) to a double, as exact rational
    arithmetic rounds it: +-inf or +-the largest double beyond the range."""
    from fractions import Fraction

    from dpplanner.engine.exact import directed, units_to_float

    try:
        want = directed(Fraction(s, 1 << 1074), upper)
    except OverflowError:
        big = 1.7976931348623157e308
        want = (math.inf if upper else big) if s > 0 else (-big if upper else -math.inf)
    assert units_to_float(s, upper) == want
