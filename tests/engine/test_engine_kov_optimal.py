"""kov (§3) and optimal (§4) through the public API: §9 vectors and the oracle."""

from __future__ import annotations

import math
from dataclasses import replace

import mpmath as mp
import pytest

from dpplanner.engine import compose, delta_for_epsilon, privacy_profile
from dpplanner.engine.kov import kov_grid_epsilon

import composition_oracle as oracle


@pytest.mark.parametrize("eps, delta, k, delta_g, grid, continuous", [
    (0.1, 0.0, 100, 1e-6, 4.8, 4.774567588),
    (1.0, 0.0, 10, 1e-5, 10.0, 9.999770635),
    (0.001, 0.0, 500, 1e-6, 0.08, 0.07978885417),
    (1.0, 0.001, 30, 0.06, 22.0, 21.70961262),
    (1.0, 0.001, 30, 0.1, 20.0, 19.81737917),
    (0.1, 1e-9, 100, 1e-6, 4.8, 4.787723761),
])
def test_kov_vectors(eps, delta, k, delta_g, grid, continuous):
    r = compose([eps], [delta], delta_g, "kov", multiplicities=[k])
    assert r.epsilon >= continuous * (1 - 1e-9)
    assert r.epsilon == pytest.approx(continuous, rel=1e-8)
    assert r.epsilon_lower <= r.epsilon and r.epsilon_lower == pytest.approx(continuous, rel=1e-8)
    assert r.extra["grid (Thm 3.3)"] == pytest.approx(grid, rel=1e-12)
    assert r.delta == delta_g


def test_kov_of_tiny_releases_is_at_most_their_sum_and_a_budget_of_1e_15_is_spent():
    """The continuous root's upper end carries 1e-15 of its finder's margin: two free discrete
    releases, at least at the least epsilon their noise is calibrated for (5.4e-20), were refused
    at epsilon_g 1e-15 ("need epsilon = 1e-15")."""
    from dpplanner.engine import allocate
    from dpplanner.engine.validation import DISCRETE_MIN_EPSILON

    mechanisms = ["discrete-laplace:1"] * 2
    r = compose([DISCRETE_MIN_EPSILON] * 2, [0.0, 0.0], 1e-6, "kov", mechanisms=mechanisms)
    assert 0.0 <= r.epsilon_lower <= r.epsilon <= 2 * DISCRETE_MIN_EPSILON * (1 + 1e-12)
    spent = allocate([0.1, 0.1], [0.0, 0.0], [False, False], [1.0, 1.0], 1e-15, 1e-6, theorem="kov",
                     mechanisms=mechanisms)
    assert spent.composition.epsilon <= 1e-15 and sum(spent.epsilons) >= 0.99e-15


def test_a_kov_allocation_left_short_by_a_jump_does_not_speak_of_a_lattice(monkeypatch):
    """(A total in steps of 0.01 stands in for one that jumps at the scale found.)"""
    from dpplanner.engine import allocate, kov as kov_module

    real = kov_module.kov

    def stepped(plan, delta_g):
        c = real(plan, delta_g)
        return replace(c, epsilon=math.ceil(c.epsilon * 100) / 100)

    monkeypatch.setattr(kov_module, "kov", stepped)
    spent = allocate([0.1, 0.1], [0.0, 0.0], [False, False], [1.0, 1.0], 1.005, 1e-6, theorem="kov")
    assert spent.waste > 1e-3 and spent.composition.epsilon <= 1.005
    reason = spent.composition.extra["waste_reason"]
    assert f"{100 * spent.waste:.3g}% of the budget is left unspent: at this scale the total jumps by more " \
        "than the 0.0001% a redistribution may leave; the allocation" in reason and "lattice" not in reason


def test_kov_infeasible_vector():
    r = compose([0.1], [1e-7], 1e-6, "kov", multiplicities=[100])
    assert r.epsilon == math.inf and "too small" in r.reason


def test_kov_grid_is_never_below_continuous():
    for eps, k, dg in [(0.3, 40, 1e-5), (0.05, 200, 1e-8), (2.0, 7, 1e-3)]:
        r = compose([eps], [0.0], dg, "kov", multiplicities=[k])
        assert kov_grid_epsilon(eps, k, r.epsilon_lower, r.epsilon, dg) >= r.epsilon


def _literal_grid(eps, k, delta_bar):
    """Thm 3.3 read literally in 60 digits: the least (k - 2i) eps with delta_i <= delta_bar."""
    with mp.workdps(60):
        e = mp.mpf(eps)
        for i in range(k // 2, -1, -1):
            d = mp.fsum(mp.binomial(k, l) * (mp.exp((k - l) * e) - mp.exp((k - 2 * i + l) * e))
                        for l in range(i)) / (1 + mp.exp(e)) ** k
            if d <= delta_bar:
                return float((k - 2 * i) * eps)
    return float(k * eps)


@pytest.mark.parametrize("eps, k, delta_g", [
    (0.1, 100, 1e-6), (0.3, 41, 1e-3), (1.0, 10, 0.3), (0.002, 60, 0.05),  # (0.05: a root at 0)
    (3.0, 9, 1e-9), (0.7, 1, 0.5),
])
def test_kov_grid_is_the_literal_theorem(eps, k, delta_g):
    r = compose([eps], [0.0], delta_g, "kov", multiplicities=[k])
    assert r.extra["grid (Thm 3.3)"] == _literal_grid(eps, k, delta_g)


def test_kov_grid_is_given_at_any_multiplicity():
    # The grid comes from the continuous root's bracket (the sums delta_i cost O(k) each: at 10^6
    # queries they were most of an allocation's minutes), so it is given up to the plan's limit.
    r = compose([1e-4], [0.0], 1e-6, "kov", multiplicities=[10**9])
    grid = r.extra["grid (Thm 3.3)"]
    assert r.epsilon <= grid < r.epsilon + 2e-4 and round(grid / 1e-4) % 2 == 0


@pytest.mark.parametrize("eps, deltas, delta_g, exact", [
    ([0.1] * 5 + [0.5] * 5, [0.0] * 10, 1e-5, 2.997312688),
    ([0.1] * 5 + [0.5] * 5, [0.0] * 10, 1e-2, 2.469764492),
    ([0.2, 0.4, 0.7], [1e-6] * 3, 1e-5, 1.299968174),
    ([0.01] * 50 + [0.05] * 50, [0.0] * 100, 1e-6, 1.527469144),
    ([0.013] * 50 + [0.047] * 50, [0.0] * 100, 1e-6, 1.458584073),
])
@pytest.mark.parametrize("eta", [1e-1, 1e-3])
def test_optimal_vectors_are_bracketed(eps, deltas, delta_g, exact, eta):
    r = compose(eps, deltas, delta_g, "optimal", eta=eta)
    assert r.epsilon >= exact * (1 - 1e-9)
    assert r.epsilon_lower <= exact * (1 + 1e-9)
    assert r.epsilon - exact <= eta * (1 + 1e-9)
    assert r.delta == delta_g


def test_optimal_with_multiplicities_equals_expanded():
    a = compose([0.1, 0.5], [0.0, 1e-7], 1e-5, "optimal", eta=1e-3, multiplicities=[5, 5])
    b = compose([0.1] * 5 + [0.5] * 5, [0.0] * 5 + [1e-7] * 5, 1e-5, "optimal", eta=1e-3)
    exact = float(oracle.opt_comp([0.1, 0.5], [0.0, 1e-7], 1e-5, [5, 5]))
    for r in (a, b):
        assert r.epsilon_lower <= exact <= r.epsilon <= exact + 1e-3


def test_homogeneous_optimal_delta_vector():
    up, lo = delta_for_epsilon([0.1], [0.0], 4.0, multiplicities=[100])
    assert lo <= 3.422312319e-5 * (1 + 1e-9)
    assert up >= 3.422312319e-5 * (1 - 1e-9)
    assert up == pytest.approx(3.422312319e-5, rel=1e-2)


def test_privacy_profile_includes_query_deltas_and_is_sound():
    eps, deltas = [0.2, 0.4, 0.7], [1e-6] * 3
    p = privacy_profile(eps, deltas, eta=1e-3, eps_values=[0.5, 1.0, 1.299968174, 1.3, 2.0])
    assert p.eps.tolist() == [0.5, 1.0, 1.299968174, 1.3, 2.0]
    assert (p.delta_lower <= p.delta_upper).all()
    # at eps = 1.299968174 (10 s.f.) the exact total delta is 1e-5 (§9 vector)
    assert p.delta_upper[2] == pytest.approx(1e-5, rel=1e-5) and p.delta_lower[2] == pytest.approx(1e-5, rel=1e-5)
    # beyond sum eps only the queries' own deltas remain: 1 - (1 - 1e-6)^3
    forced = -math.expm1(3 * math.log1p(-1e-6))
    assert p.delta_upper[4] >= forced * (1 - 1e-12) and p.delta_upper[4] == pytest.approx(forced, rel=1e-9)
    for j, e in enumerate(p.eps):
        exact_bar = oracle.opt_delta(eps, e)
        exact_total = 1 - (1 - exact_bar) * (1 - oracle.mp.mpf("1e-6")) ** 3
        assert p.delta_lower[j] <= exact_total * (1 + 1e-12) and p.delta_upper[j] >= exact_total * (1 - 1e-12)


def test_privacy_profile_default_grid_and_monotone():
    p = privacy_profile([0.1, 0.3], [0.0, 0.0], num=50)
    assert p.eps.size == 50 and p.eps[0] == 0 and p.eps[-1] == pytest.approx(0.4, rel=1e-12)
    assert (p.delta_upper[:-1] >= p.delta_upper[1:] - 1e-15).all()
    with pytest.raises(ValueError, match=r"num = 1 is not allowed"):
        privacy_profile([0.1], [0.0], num=1)
    with pytest.raises(ValueError, match=r"eps_values\[1\] = -1.0 is not allowed"):
        privacy_profile([0.1], [0.0], eps_values=[0.1, -1.0])


@pytest.mark.parametrize("theorem", ["optimal", "kov", "advanced", "filter"])
def test_tiny_delta_g_stays_sound(theorem):
    eps, k = 0.3, 12
    r = compose([eps], [0.0], 1e-15, theorem, eta=1e-3, multiplicities=[k])
    exact = float(oracle.opt_comp([eps], [0.0], 1e-15, [k]))
    assert r.epsilon >= exact
    if r.epsilon_lower is not None:
        assert r.epsilon_lower <= exact
