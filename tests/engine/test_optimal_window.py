"""The loss-window path of the optimal engine (engine/optimal/window.py): a sound bracket within
eta for plans of up to a few thousand queries, against exact enumeration and the FFT path."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpplanner.engine.optimal import optimal_bracket
from dpplanner.engine.optimal.bracket import _bracket
from dpplanner.engine.optimal.exact import grouped_bracket
from dpplanner.engine.optimal.window import ctd_upper, key_set_lower, window_bracket


@pytest.mark.parametrize("seed", range(12))
def test_the_window_bracket_holds_the_exact_optimum(seed):
    """Up to 14 distinct epsilons every outcome is enumerated exactly: the window's bracket must
    contain that answer and be within eta."""
    rng = np.random.default_rng(seed)
    k = int(rng.integers(3, 15))
    eps = np.sort(rng.uniform(0.001, [0.05, 0.5, 2.0][seed % 3], k))
    ones = np.ones(k, dtype=np.int64)
    delta_bar = float(10 ** rng.uniform(-12, -2))
    eta = float(10 ** rng.uniform(-6, -3))
    exact = grouped_bracket(eps, ones, delta_bar)
    b = window_bracket(eps, ones, delta_bar, delta_bar, eta)
    assert b is not None and b.method.startswith("window")
    assert b.lower <= exact.upper and exact.lower <= b.upper   # both hold the optimum
    assert b.upper - b.lower <= eta


def test_each_side_is_a_bound_on_its_own():
    """The test set's value is below the optimum and connect-the-dots above it, on any grid."""
    rng = np.random.default_rng(3)
    eps = np.sort(rng.uniform(0.01, 0.6, 13))
    exact = grouped_bracket(eps, np.ones(eps.size, dtype=np.int64), 1e-6)
    total = float(np.sum(eps))
    log_z = -float(np.sum(np.log1p(np.exp(-eps))))
    for h in (2.0 ** -4, 2.0 ** -9, 2.0 ** -14):
        lo = key_set_lower(eps, 1e-6, h, 0.0, log_z)
        assert 0 < lo <= exact.upper
        assert ctd_upper(eps, 1e-6, h, lo) >= exact.lower
    assert lo > exact.lower - 1e-7     # second order: a fine key grid is all but exact
    assert total > exact.upper


def test_the_issue_plan_k50_is_answered_by_the_window_within_eta():
    """k = 50, eps ~ U[0.01, 0.5], width <= 1e-4: the window path answers, and its bracket overlaps
    the FFT path's (both are certified)."""
    eps = np.random.default_rng(20261101).uniform(0.01, 0.5, 50)
    ones = np.ones(50, dtype=np.int64)
    b = optimal_bracket(eps, ones, 1e-6, 1e-4)
    assert b.method.startswith("window") and b.upper - b.lower <= 1e-4
    fft = _bracket(eps, ones, 1e-6, 1e-3, force_pld=True)
    assert b.lower <= fft.upper and fft.lower <= b.upper


def test_multiplicities_are_spelled_out_and_tiny_deltas_stay_sound():
    """Groups of equal epsilons (expanded), delta_bar 1e-14: still inside the exact answer."""
    eps = np.array([0.03, 0.11, 0.4])
    mult = np.array([5, 3, 4], dtype=np.int64)
    exact = grouped_bracket(eps, mult, 1e-14)
    b = window_bracket(eps, mult, 1e-14, 1e-14, 1e-4)
    assert b.lower <= exact.upper and exact.lower <= b.upper and b.upper - b.lower <= 1e-4


def test_plans_beyond_the_window_are_left_to_the_other_paths():
    eps = np.random.default_rng(1).uniform(0.002, 0.1, 5000)
    assert window_bracket(eps, np.ones(eps.size, dtype=np.int64), 1e-7, 1e-7, 1e-3) is None


@pytest.mark.parametrize("big", [710.0, 2000.0, 1e300])
def test_an_epsilon_whose_weight_overflows_leaves_the_plan_to_the_other_paths(big):
    """One epsilon beyond exp's range (e^710 overflows) among small ones: the window path steps
    aside instead of raising OverflowError, and compose still brackets the plan."""
    import warnings

    from dpplanner.engine import compose

    small = np.random.default_rng(1).uniform(0.01, 0.5, 40)
    eps = np.concatenate([[big], small])
    assert window_bracket(eps, np.ones(eps.size, dtype=np.int64), 1e-6, 1e-6, 1e-3) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = compose(eps.tolist(), [0.0] * eps.size, 1e-6, theorem="optimal")
    assert big * (1 - 1e-9) <= r.epsilon_lower <= r.epsilon <= math.fsum(eps.tolist()) * (1 + 1e-12)
