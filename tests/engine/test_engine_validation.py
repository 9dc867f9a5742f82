"""Bad input raises ValueError naming the item, its value and what is allowed."""

from __future__ import annotations

import math

import pytest

from dpplanner.engine import THEOREMS, BudgetError, allocate, compose, compose_all, curve, filter_admits


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


@pytest.mark.parametrize("eta", [0, -1e-3, math.nan, math.inf])
def test_bad_eta(eta):
    with pytest.raises(ValueError, match=r"eta = .* finite number > 0"):
        compose([0.1], [0.0], 1e-6, "basic", eta=eta)


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
    c = curve([0.1, 0.2], [0.0, 0.0], 1e-6, k_max=3, multiplicities=[2, 10**9], theorems=["basic"])
    assert c.ks.tolist() == [1, 2, 3]
    assert c.upper["basic"] == pytest.approx([0.1, 0.2, 0.4], rel=1e-12)
