"""Squares and products of tiny epsilons (below 1e-154) underflow below the smallest normal double,
where rounding to nearest can give 0 and no relative margin covers the error: every closed-form
total and every allocation still bounds the true cost (engine/numerics.tiny_up)."""

from fractions import Fraction

import numpy as np
import pytest

from dpplanner.engine import allocate, compose, compose_all
from dpplanner.engine.mechanisms.zcdp import rho_gaussian, rho_pure
from dpplanner.engine.stats import eps_tanh, plan_sums, prefix_sums, squares
from dpplanner.engine.validation import validate_plan

TINY_EPS = [1e-170, 1e-160, 1.5e-154, 3e-162, 5e-324]


def _exact(x: float) -> Fraction:
    return Fraction(x)


@pytest.mark.parametrize("eps", TINY_EPS)
def test_a_tiny_square_bounds_the_true_one(eps):
    e = np.array([eps])
    assert _exact(float(squares(e)[0])) >= _exact(eps) ** 2
    assert _exact(float(rho_pure(e)[0])) >= _exact(eps) ** 2 / 2
    assert float(eps_tanh(e)[0]) > 0 and float(squares(e)[0]) > 0


@pytest.mark.parametrize("m", [1e154, 2e154, 1e200, 1e300, 1.7e308])
def test_a_huge_noise_multiplier_has_a_positive_rho_above_the_true_one(m):
    assert _exact(float(rho_gaussian(m))) >= 1 / (2 * _exact(m) ** 2)


def test_the_sums_of_tiny_epsilons_are_positive():
    eps = np.array([1e-170, 1e-170])
    plan = validate_plan(list(eps), [0.0, 0.0], multiplicities=[10, 10])
    assert _exact(float(plan_sums(plan).sum_sq[0])) >= 20 * _exact(1e-170) ** 2
    assert prefix_sums(eps, np.zeros(2), np.array([1, 2])).sum_sq.min() > 0


@pytest.mark.parametrize("theorem", ["advanced", "filter", "zcdp", "pld", "optimal", "concurrent"])
def test_a_total_of_tiny_epsilons_is_no_smaller_than_the_true_one(theorem):
    # Ten eps-RR of eps = 1e-170: the true optimal total is ~1e-169 (all ten agree with
    # probability 2^-10 >> delta); a square that rounded to 0 had made KOV's bound, and with it
    # every theorem meeting it, 0.
    total = compose([1e-170], [0.0], 1e-300, theorem=theorem, multiplicities=[10])
    assert total.epsilon >= 1e-169


@pytest.mark.parametrize("theorem", ["advanced", "optimal", "zcdp"])
def test_an_allocation_of_a_tiny_budget_never_overspends(theorem):
    budget = 1e-165
    done = allocate([1.0] * 10, [0.0] * 10, [False] * 10, [1.0] * 10, budget, 1e-300, theorem=theorem)
    # Ten pure releases at delta_g 1e-300 cost exactly the sum of their epsilons (their privacy
    # losses all agree with probability >= 2^-10, far above delta_g): it must stay within budget.
    spent = sum(_exact(float(e)) for e in done.epsilons)
    assert spent <= _exact(budget)


def test_the_noise_aware_total_of_tiny_laplace_releases_is_no_smaller_than_one_of_them():
    # (its cheap bounds squared on their own: zCDP's rho and KOV's sums were 0, and so the total)
    total = compose_all([1.572e-162] * 10, [0.0] * 10, 1e-300, mechanisms=["laplace"] * 10)["pld"]
    assert total.epsilon >= 1.572e-162 and total.epsilon >= (total.epsilon_lower or 0.0)


def test_the_noise_aware_total_of_gaussians_with_huge_multipliers_is_no_smaller_than_one_of_them():
    # (m = 3.6e161: m * m overflowed, every 1/m^2 was 0, "no release adds privacy loss")
    total = compose_all([1e-160] * 10, [1e-300] * 10, 1e-290, mechanisms=["gaussian"] * 10)["pld"]
    assert total.epsilon >= 1e-160


def test_a_noise_aware_allocation_of_a_tiny_budget_never_overspends():
    budget = 1e-165
    done = allocate([1.0] * 10, [0.0] * 10, [False] * 10, [1.0] * 10, budget, 1e-300, theorem="pld",
                    mechanisms=["laplace"] * 10)
    spent = sum(_exact(float(e)) for e in done.epsilons)   # (exact here, as above)
    assert spent <= _exact(budget)
