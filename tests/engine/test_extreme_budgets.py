"""Extreme budgets and epsilons: refused with a message naming the value and the range, or
answered soundly; never an OverflowError, a total below a single release, or a search giving up."""

from __future__ import annotations

import math

import pytest

from dpplanner.engine import THEOREMS, allocate, compose, curve

TOO_MUCH = r"the epsilons add up to .* \(multiplicities counted\); the engine totals at most 1e\+305"


@pytest.mark.parametrize("theorem", THEOREMS)
@pytest.mark.parametrize("eps, mult, part", [
    ([1e308], [10 ** 6], r"epsilons\[0\] = 1e\+308 x 1,000,000 \(its multiplicity\)"),
    ([0.5, 1.7976931348623157e308], [1, 1], r"epsilons\[1\] = 1.7976931348623157e\+308$"),
    ([1e300], [10 ** 6], r"epsilons\[0\] = 1e\+300 x 1,000,000"),
])
def test_epsilons_adding_up_beyond_the_limit_are_refused(theorem, eps, mult, part):
    """10^6 copies of 1e308 gave 2.2e298 under optimal, pld, kov and concurrent (far below the
    one release), and basic said the deltas (0) were more than delta_g."""
    with pytest.raises(ValueError, match=TOO_MUCH + ": the largest part is " + part):
        compose(eps, [0.0] * len(eps), 1e-6, theorem, multiplicities=mult)


@pytest.mark.parametrize("theorem", THEOREMS)
def test_a_total_at_the_limit_is_an_upper_bound(theorem):
    """About 1e305 in all (10^9 releases): every theorem's total is the sum there (the privacy loss
    of releases this large is below their sum with probability ~e^-1e295 only)."""
    if theorem == "kov":
        eps, mult = [1e296], [10 ** 9]
    else:
        eps, mult = [1e296, 5e295], [10 ** 9 - 2, 2]
    c = compose(eps, [0.0] * len(eps), 1e-6, theorem, multiplicities=mult)
    assert c.epsilon >= sum(e * m for e, m in zip(eps, mult)) * (1 - 1e-12)
    assert c.epsilon_lower is None or c.epsilon_lower <= c.epsilon


@pytest.mark.parametrize("epsilon_g", [1e306, 1e308, 1.7976931348623157e308, math.nan, -1e-300])
def test_a_target_epsilon_out_of_range_is_refused(epsilon_g):
    """epsilon_g = 1e308 ended in an OverflowError (an allocation's scales summed to inf)."""
    with pytest.raises(ValueError, match=r"epsilon_g = .* is not allowed; the target epsilon must be a number "
                                         r"from 0 to 1e\+305"):
        allocate([0.1, 0.2], [0.0, 0.0], [False, False], [1, 2], epsilon_g, 1e-6)


def test_a_curve_of_too_large_epsilons_is_refused():
    with pytest.raises(ValueError, match=TOO_MUCH):
        curve([1e308, 1e308], [0.0, 0.0], 1e-6, points=2)


@pytest.mark.parametrize("theorem, epsilon_g", [(t, g) for t in ("optimal", "pld") for g in (5e-324, 1e-300, 1e-200)]
                         + [("advanced", 1e-300), ("advanced", 1e-200)])
def test_a_tiny_budget_is_allocated(theorem, epsilon_g):
    """Below ~1e-7 per query the optimal total at delta_g 1e-6 is 0 (delta_g absorbs it): the search
    for the scale that spends epsilon_g climbs from epsilon_g to there (it gave up after 2^200).
    Advanced's bounds absorb nothing: its best there is the plain sum."""
    a = allocate([0.1, 0.2], [0.0, 0.0], [False, False], [1, 2], epsilon_g, 1e-6, theorem=theorem)
    assert a.composition.epsilon <= epsilon_g
    climbed = epsilon_g / 4 if theorem == "advanced" else 1e-200
    assert a.epsilons[1] == pytest.approx(2 * a.epsilons[0]) and a.epsilons[0] > climbed
    assert a.epsilons[0] > 0 and compose(list(a.epsilons), [0.0, 0.0], 1e-6, theorem).epsilon <= epsilon_g


def test_a_budget_below_any_release_under_advanced_gives_nothing():
    """5e-324 cannot be split as 0.1 : 0.2 (x1, x2) in doubles: the queries get 0, never more."""
    a = allocate([0.1, 0.2], [0.0, 0.0], [False, False], [1, 2], 5e-324, 1e-6, theorem="advanced")
    assert list(a.epsilons) == [0.0, 0.0] and a.composition.epsilon <= 5e-324
