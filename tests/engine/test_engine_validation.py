"""Bad input raises ValueError naming the item, its value and what is allowed."""

from __future__ import annotations

import math

import pytest

from dpplanner.engine import (THEOREMS, BudgetError, Laplace, allocate, compose, compose_all, compose_mechanisms,
                              curve, filter_admits, privacy_profile)


@pytest.mark.parametrize("eps, match", [
    ([0.1, -0.5], r"epsilons\[1\] = -0.5 .*finite number >= 0"),
    ([0.1, math.nan], r"epsilons\[1\] = nan .*finite number >= 0"),
    ([math.inf], r"epsilons\[0\] = inf .*finite number >= 0"),
    (["a", 0.1], r"epsilons\[0\] = 'a' is not a number"),
])
def test_bad_epsilon(eps, match):
    with pytest.raises(ValueError, match=match):
        compose(eps, [0.0] * len(eps), 1e-6, "basic")


@pytest.mark.parametrize("delta, match", [
    (1.0, r"deltas\[1\] = 1.0 .*in \[0, 1\)"),
    (-1e-9, r"deltas\[1\] = -1e-09 .*in \[0, 1\)"),
    (math.nan, r"deltas\[1\] = nan .*in \[0, 1\)"),
])
def test_bad_delta(delta, match):
    with pytest.raises(ValueError, match=match):
        compose([0.1, 0.1], [0.0, delta], 1e-6, "basic")


@pytest.mark.parametrize("delta_g", [1.0, -0.1, math.nan, 2])
def test_bad_delta_g(delta_g):
    with pytest.raises(ValueError, match=r"delta_g = .* target delta must be in \[0, 1\)"):
        compose([0.1], [0.0], delta_g, "basic")


def test_mismatched_lengths_and_empty_plan():
    with pytest.raises(ValueError, match=r"epsilons has 2 entries but deltas has 1"):
        compose([0.1, 0.2], [0.0], 1e-6)
    with pytest.raises(ValueError, match=r"plan is empty"):
        compose([], [], 1e-6)
    with pytest.raises(ValueError, match=r"epsilons has 1 entries but multiplicities has 2"):
        compose([0.1], [0.0], 1e-6, multiplicities=[1, 2])


@pytest.mark.parametrize("eta", [0, -1e-3, math.nan, math.inf, 5e-324, 1e-300, 9e-13])
def test_bad_eta(eta):
    with pytest.raises(ValueError, match=r"eta = .* finite number >= 1e-12"):
        compose([0.1], [0.0], 1e-6, "basic", eta=eta)


BAD_ETA = r"eta = 5e-324 is not allowed; the accuracy eta must be a finite number >= 1e-12"


@pytest.mark.parametrize("call", [
    lambda: compose([0.1, 0.2], [0, 0], 1e-6, "optimal", eta=5e-324),
    lambda: compose([0.1, 0.2], [0, 1e-9], 1e-6, "pld", eta=5e-324, mechanisms=["laplace", "gaussian"]),
    lambda: compose_all([0.1, 0.2], [0, 0], 1e-6, eta=5e-324),
    lambda: curve([0.1, 0.2], [0, 0], 1e-6, eta=5e-324),
    lambda: privacy_profile([0.1, 0.2], [0, 0], eta=5e-324),
    lambda: allocate([0.1, 0.2], [0, 0], [False] * 2, [1, 1], 1.0, 1e-6, eta=5e-324),
    lambda: compose_mechanisms([Laplace(1.0)], 1e-6, eta=5e-324),
], ids=["compose", "pld", "compose_all", "curve", "privacy_profile", "allocate", "compose_mechanisms"])
def test_an_eta_of_5e_324_is_refused_everywhere(call):
    """Issue 23.12: not an OverflowError from deep inside a lattice."""
    with pytest.raises(ValueError, match=BAD_ETA):
        call()


@pytest.mark.parametrize("mult, match", [
    ([2 ** 63], r"multiplicities\[0\] = 9223372036854775808 is too large; a plan composes at most 1,000,000,000"),
    ([10 ** 400], r"multiplicities\[0\] = 1000.*\(401 characters\) is too large; it must be at most 1.798e\+308"),
    ([1, 2 ** 53 + 1], r"multiplicities\[1\] = 9007199254740993 is too large"),
    ([600_000_000, 600_000_000], r"the multiplicities add up to 1,200,000,000 queries; a plan composes at most"),
    ([1.5], r"multiplicities\[0\] = 1.5 is not allowed; a multiplicity must be a whole number >= 1"),
])
@pytest.mark.parametrize("theorem", ["basic", "optimal", "kov"])
def test_huge_multiplicities_are_refused(mult, match, theorem):
    """Issue 23.12: not 'Python int too large to convert to C long' nor a MemoryError."""
    with pytest.raises(ValueError, match=match):
        compose([0.1] * len(mult), [0.0] * len(mult), 1e-6, theorem, multiplicities=mult)


def test_numbers_beyond_the_largest_double_are_refused():
    with pytest.raises(ValueError, match=r"epsilons\[0\] = 1000.* is too large; it must be at most"):
        compose([10 ** 400], [0.0], 1e-6, "basic")
    with pytest.raises(ValueError, match=r"delta_g = 1000.* is too large"):
        compose([0.1], [0.0], 10 ** 400, "basic")


def test_the_largest_plan_is_answered():
    """A billion queries of one epsilon (the most a plan may compose): the exact homogeneous root
    reads only the binomial's window that matters."""
    r = compose([0.001], [0.0], 1e-6, "optimal", multiplicities=[10 ** 9])
    assert r.detail.startswith("exact (homogeneous)") and r.epsilon - r.epsilon_lower < 1e-3
    k = compose([0.001], [0.0], 1e-6, "kov", multiplicities=[10 ** 9])
    assert k.epsilon == r.epsilon


@pytest.mark.parametrize("limit", [0, -1.0, math.nan, "1"])
def test_bad_time_limit(limit):
    with pytest.raises(ValueError, match=r"time_limit = .* give a number of seconds > 0, or None|is not a number"):
        compose([0.1, 0.2], [0.0, 0.0], 1e-6, time_limit=limit)


def test_unknown_theorem_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown theorem 'renyi'; known theorems are " + ", ".join(THEOREMS)):
        compose([0.1], [0.0], 1e-6, "renyi")
    with pytest.raises(ValueError, match="unknown theorem 'x'"):
        compose_all([0.1], [0.0], 1e-6, theorems=["basic", "x"])


@pytest.mark.parametrize("m", [0, 2.5, -3, math.nan, True])
def test_bad_multiplicity(m):
    with pytest.raises(ValueError, match=r"multiplicities\[1\] = .*(whole number >= 1|not a number)"):
        compose([0.1, 0.2], [0.0, 0.0], 1e-6, "basic", multiplicities=[1, m])


def test_float_multiplicity_that_is_whole_is_accepted():
    r = compose([0.1, 0.2], [0.0, 0.0], 1e-6, "basic", multiplicities=[3.0, 1])
    assert r.epsilon == pytest.approx(0.5, rel=1e-12)


def test_bad_curve_arguments():
    with pytest.raises(ValueError, match="unknown curve mode 'both'"):
        curve([0.1], [0.0], 1e-6, mode="both", theorems=["basic"])
    with pytest.raises(ValueError, match=r"points = 0 is not allowed"):
        curve([0.1], [0.0], 1e-6, points=0, theorems=["basic"])
    with pytest.raises(ValueError, match=r"k_max = 2.5 is not allowed"):
        curve([0.1], [0.0], 1e-6, mode="repeat", k_max=2.5, theorems=["basic"])


def test_bad_filter_arguments():
    with pytest.raises(ValueError, match="unknown filter 'odometer'; known filters are basic, rruv, wrrw"):
        filter_admits([0.1], [0.0], 1.0, 1e-6, filter="odometer")
    with pytest.raises(ValueError, match=r"RRUV filter needs 0 < delta_g < 1/e"):
        filter_admits([0.1], [0.0], 1.0, 0.5, filter="rruv")
    with pytest.raises(ValueError, match=r"epsilon_g = -1.0 is not allowed"):
        filter_admits([0.1], [0.0], -1.0, 1e-6)


def test_bad_allocation_arguments():
    with pytest.raises(ValueError, match=r"held has 1 entries but the plan has 2 queries"):
        allocate([0.1, 0.1], [0, 0], [True], [1, 1], 1.0, 1e-6, theorem="basic")
    with pytest.raises(BudgetError, match=r"weights\[1\] = 0 is not allowed; a free query needs a finite weight > 0"):
        allocate([0.1, 0.1], [0, 0], [True, False], [1, 0], 1.0, 1e-6, theorem="basic")
    with pytest.raises(ValueError, match=r"held\[0\] = 1 is not allowed; each entry must be True or False"):
        allocate([0.1, 0.1], [0, 0], [1, 0], [1, 1], 1.0, 1e-6, theorem="basic")


def test_per_query_work_refuses_absurd_sizes_but_prefix_k_max_limits_it():
    with pytest.raises(ValueError, match=r"curve works query by query and supports at most 5,000,000"):
        curve([0.1], [0.0], 1e-6, mode="repeat", k_max=10**9, theorems=["basic"])
    with pytest.raises(ValueError, match=r"filter_admits works query by query"):
        filter_admits([0.1], [0.0], 1.0, 1e-6, multiplicities=[10**9])
    c = curve([0.1, 0.2], [0.0, 0.0], 1e-6, k_max=3, multiplicities=[2, 10**9 - 2], theorems=["basic"])
    assert c.ks.tolist() == [1, 2, 3]
    assert c.upper["basic"] == pytest.approx([0.1, 0.2, 0.4], rel=1e-12)


def test_a_long_plan_is_checked_in_one_pass_with_the_same_numbers_and_messages():
    """Plain floats and ints (and numpy doubles) are converted in one numpy pass (a 10^5-query
    plan spent 1.8 s in per-value checks): the doubles are float(x)'s, and a bad value anywhere
    is still named by its index, the first in query order (a query's epsilon before its delta)."""
    import numpy as np

    from dpplanner.engine.validation import validate_plan

    eps = [0.1, 3, np.float64(0.25), 2 ** 60 + 1, 1e-320] * 2000
    deltas = [0, 1e-9, np.float64(0.5), 0.0, 5e-324] * 2000
    plan = validate_plan(eps, deltas, [1, 2, 3, 4, np.int64(5)] * 2000)
    assert plan.eps.tolist() == [float(x) for x in eps] and plan.delta.tolist() == [float(x) for x in deltas]
    assert plan.mult.tolist() == [1, 2, 3, 4, 5] * 2000
    bad_eps, bad_deltas = list(eps), list(deltas)
    bad_eps[9500] = math.nan
    with pytest.raises(ValueError, match=r"epsilons\[9500\] = nan is not allowed"):
        validate_plan(bad_eps, deltas)
    bad_eps[9000] = -0.5
    with pytest.raises(ValueError, match=r"epsilons\[9000\] = -0.5 is not allowed"):
        validate_plan(bad_eps[:9001], deltas[:9001])
    bad_deltas[9000] = 1.0
    with pytest.raises(ValueError, match=r"epsilons\[9000\] = -0.5 is not allowed"):
        validate_plan(bad_eps, bad_deltas)
    bad_deltas[8999] = math.inf
    with pytest.raises(ValueError, match=r"deltas\[8999\] = inf is not allowed"):
        validate_plan(bad_eps, bad_deltas)
    with pytest.raises(ValueError, match=r"epsilons\[9999\] = 1000.* is too large"):
        validate_plan(eps[:-1] + [10 ** 400], deltas)
    with pytest.raises(ValueError, match=r"multiplicities\[3\] = 0 is not allowed"):
        validate_plan(eps, deltas, [1, 2, 3, 0, 5] * 2000)
