"""The optimal engine against the brute-force oracle on hypothesis-generated plans."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine.optimal import optimal_bracket
from dpplanner.engine.optimal.bracket import _bracket
from oracle import Oracle

# a small pool makes equal epsilons common; zeros are allowed
_eps_value = st.one_of(
    st.floats(min_value=0.0, max_value=2.0, allow_nan=False),
    st.sampled_from([0.0, 0.05, 0.1, 0.3, 0.5, 1.0]),
)
plans = st.lists(_eps_value, min_size=1, max_size=12)
delta_bars = st.floats(min_value=-12.0, max_value=math.log10(0.5)).map(lambda t: 10.0 ** t)
etas = st.sampled_from([1e-1, 1e-2, 1e-3])

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _check(b, exact: float, eta: float):
    assert b.lower <= exact, (b, exact)
    assert exact <= b.upper, (b, exact)
    assert b.upper - exact <= eta, (b, exact)


@pytest.mark.slow
@SETTINGS
@given(plans, delta_bars, etas)
def test_dispatch_contains_exact(eps, delta_bar, eta):
    exact = Oracle(eps).opt_comp(delta_bar)
    b = optimal_bracket(np.array(eps), np.ones(len(eps), dtype=int), delta_bar, eta)
    _check(b, float(exact), eta)


@pytest.mark.slow
@SETTINGS
@given(plans, delta_bars, etas)
def test_forced_pld_contains_exact(eps, delta_bar, eta):
    exact = Oracle(eps).opt_comp(delta_bar)
    b = _bracket(np.array(eps), np.ones(len(eps), dtype=int), delta_bar, eta, force_pld=True)
    _check(b, float(exact), eta)


@pytest.mark.slow
@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(min_value=0.01, max_value=1.5), min_size=2, max_size=10), etas)
def test_tiny_delta_stays_sound(eps, eta):
    """delta_bar = 1e-15: no rounding or truncation may push the upper bound below the truth."""
    exact = float(Oracle(eps).opt_comp(1e-15))
    for force in (False, True):
        b = _bracket(np.array(eps), np.ones(len(eps), dtype=int), 1e-15, eta, force_pld=force)
        assert b.lower <= exact <= b.upper, (force, b, exact)
