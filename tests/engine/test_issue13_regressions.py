"""The examples of issue 13 (certified lower bounds, no inf on feasible plans, exact widths, binary
numbers, bounded work), each against its exact value."""

from __future__ import annotations

import math
import warnings

import mpmath as mp
import numpy as np
import pytest

from dpplanner.engine import allocate, compose, curve
from dpplanner.engine.delta import delta_bar_bounds
from dpplanner.engine.optimal.pld import kernel_points
from dpplanner.engine.optimal.prefix_sides import _lattice_kernel
from oracle import Oracle


def _exact_delta_bar(delta_g, deltas, mult):
    with mp.workdps(80):
        prod = mp.mpf(1)
        for d, m in zip(deltas, mult):
            prod *= (1 - mp.mpf(float(d))) ** int(m)
        return 1 - (1 - mp.mpf(float(delta_g))) / prod


@pytest.mark.parametrize("eps, delta, dg, k, exact", [
    (0.4068463862751918, 3.850252529329472e-14, 3.850252529341023e-12, 100, 40.36499998596988),
    (0.16331989653346185, 2.5582240919116e-16, 4.12897368434592e-13, 1614, 87.95069546303526),
    (1.0, 0.8999999999999999, 0.9, 1, 0.9999999999999984),
])
def test_lower_bound_below_exact_when_own_deltas_use_up_delta_g(eps, delta, dg, k, exact):
    for theorem in ("optimal", "kov", "concurrent"):
        r = compose([eps], [delta], dg, theorem, multiplicities=[k])
        assert r.epsilon_lower <= exact <= r.epsilon, theorem
        assert r.epsilon - r.epsilon_lower <= 1e-8 * exact


@pytest.mark.slow
def test_prefix_curve_lower_bound_below_exact():
    e, d, k, dg = 0.16331989653346185, 2.5582240919116e-16, 1614, 4.12897368434592e-13
    c = curve([e], [d], dg, mode="prefix", points=3, multiplicities=[k])
    assert c.lower["optimal"][-1] <= 87.95069546303526 <= c.upper["optimal"][-1]
    assert c.upper["optimal"][-1] - c.lower["optimal"][-1] < 1e-2


@pytest.mark.parametrize("dg, deltas, mult", [
    (3.850252529341023e-12, [3.850252529329472e-14], [100]),
    (0.9, [0.8999999999999999], [1]),
    (9e-20, [3e-20], [3]),
    (1e-6, [1e-9, 2e-9], [300, 100]),
    (0.75, [0.5], [2]),
])
def test_delta_bar_bounds_bracket_the_exact_value(dg, deltas, mult):
    lo, hi = delta_bar_bounds(dg, np.array(deltas), np.array(mult))
    exact = _exact_delta_bar(dg, deltas, mult)
    assert lo <= exact <= hi
    assert hi - lo <= 1e-9 * abs(exact) + 1e-300


def test_feasible_plans_never_get_inf():
    r = compose([2.0 + 0.01 * i for i in range(13)], [0.0] * 13, 1e-12)
    assert r.epsilon_lower <= 26.779999999995 <= r.epsilon < math.inf


@pytest.mark.slow
def test_feasible_lattice_plan_at_tiny_delta_is_finite_and_says_why_it_is_wide():
    r = compose([809 / 4096, 1845 / 4096, 1001 / 4096, 1377 / 4096], [0] * 4, 1e-14, eta=0.01,
                multiplicities=[300] * 4)
    assert math.isfinite(r.epsilon) and r.epsilon <= sum(x * 300 for x in [809, 1845, 1001, 1377]) / 4096 + 1e-9
    assert r.epsilon - r.epsilon_lower <= 0.01 or "width > eta" in r.detail


def test_exact_paths_are_narrow():
    r = compose([50.0], [0.0], 0.5, multiplicities=[20])
    assert r.epsilon_lower <= 999.3068528194400546 <= r.epsilon and r.epsilon - r.epsilon_lower < 1e-8
    r = compose([0.2, 0.25, 0.3, 0.4, 0.5], [0] * 5, 1e-6, eta=1e-6, multiplicities=[139, 116, 189, 208, 197])
    assert r.epsilon - r.epsilon_lower <= 1e-6 and r.detail.startswith("exact")


def test_near_equal_values_are_clustered_onto_an_exact_path():
    e = [0.36925816267351436 * (1 + 1e-9 * i / 8937) for i in range(8937)]
    r = compose(e, [0] * 8937, 1.12e-12, eta=1e-4)
    assert r.epsilon_lower <= 841.2715639 and r.epsilon >= 841.27156257
    assert r.epsilon - r.epsilon_lower <= 1e-4 and "clusters" in r.detail


def test_a_clustered_plans_groups_are_read_exactly_not_clustered_again(monkeypatch):
    """The clusters' groups go to the exact paths once: clustering them again (at the infinite
    eta the clustered path passes on) lumped them into one group, two homogeneous reads per side
    for a bracket as wide as the clusters' spread, before the two enumerated sets read them."""
    import dpplanner.engine.optimal.bracket as bracket

    calls = []
    real = bracket.homogeneous_bracket
    monkeypatch.setattr(bracket, "homogeneous_bracket", lambda *a: calls.append(a) or real(*a))
    e = [c * (1 + 1e-9 * i) for c in (0.05, 0.08, 0.1, 0.13, 0.2) for i in range(20)]
    r = compose(e, [0] * 100, 1e-6, eta=1e-2)
    assert "5 clusters" in r.detail and r.epsilon - r.epsilon_lower <= 1e-2
    assert calls == []


@pytest.mark.parametrize("theorem", ["optimal", "pld"])
def test_clusters_whose_first_exact_path_finds_nothing_still_get_a_bracket(theorem):
    """Six clusters of 200 releases each: the clusters' first exact path gives no bracket, and the
    next one must be tried (the check of the first's width read None's upper end and raised)."""
    e = [x for i in range(1, 7) for x in (0.01 * i, 0.01 * i + 1e-9)]
    r = compose(e, [0.0] * 12, 1e-6, theorem, multiplicities=[100] * 12)
    assert r.epsilon_lower <= r.epsilon <= sum(e) * 100 and r.epsilon - r.epsilon_lower <= 1e-3


def test_binary_doubles_not_decimals():
    # 3 x the double 3e-20 exceeds the double 9e-20: no finite epsilon, with the reason
    r = compose([1.0], [3e-20], 9e-20, multiplicities=[3])
    assert r.epsilon == math.inf and "too small" in r.reason
    # Steinke / WRRW take delta' = delta_g - sum delta_i of the binary values
    args = ([0.9582332013494967], [4.701088334918023e-10], 1.4103265004754071e-09)
    adv = compose(*args, "advanced", multiplicities=[3])
    with mp.workdps(60):
        room = mp.mpf(args[2]) - 3 * mp.mpf(args[1][0])
        s2 = 3 * mp.mpf(args[0][0]) ** 2
        steinke = s2 / 2 + mp.sqrt(2 * mp.log(1 / room) * s2)
    assert adv.extra["Steinke"] >= steinke and adv.extra["Steinke"] == pytest.approx(float(steinke), rel=1e-9)
    # basic never exceeds eps_g in binary
    a = allocate([0.1] * 7, [0] * 7, [False] * 7, [1] * 7, 0.7, 1e-6, theorem="basic")
    total = sum(mp.mpf(float(x)) for x in a.epsilons)
    assert total <= mp.mpf(0.7)


def test_kernels_refuse_unbounded_allocations():
    with pytest.raises(ValueError, match="too large for a lattice step"):
        kernel_points(1e300, 2.0 ** -10)
    with pytest.raises(ValueError, match="beyond what the prefix curve"):
        _lattice_kernel(1 << 40, 0.5, True)


def test_huge_epsilons_get_a_sound_bracket_fast():
    r = compose([1e300, 2.0, 3.0], [0] * 3, 1e-9)
    assert r.epsilon >= 1e300 and r.epsilon_lower <= r.epsilon
    c = curve([1e300, 2.0, 3.0] * 10, [0] * 30, 1e-9, points=5, theorems=("optimal",))
    up = c.upper["optimal"]
    assert np.all(up >= 1e300) and np.all(np.diff(up) >= 0)


def test_a_huge_epsilons_far_outcomes_do_not_blur_the_others():
    """Beside an epsilon of 1e300 the outcomes on its other side have logs ~ -1e300, with error
    bounds ~ 1e285 that say nothing about the outcomes that carry mass: the grouped exact path
    keeps a certified lower bound (it was 0) and computes no overflow on the way."""
    from dpplanner.engine.optimal.exact import grouped_bracket

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        b = grouped_bracket(np.array([1e300, 2.0, 3.0]), np.array([1, 1, 1]), 1e-9)
    assert b.upper >= 1e300 and b.lower >= 1e300 * (1 - 1e-9)
    # an epsilon whose other side underflows (e^-750), beside outcomes in the normal range
    for delta_bar in (1e-9, 1e-3):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            b = grouped_bracket(np.array([750.0, 2.0, 3.0, 0.5]), np.array([1, 2, 1, 3]), delta_bar)
        exact = Oracle([750.0, 2.0, 2.0, 3.0, 0.5, 0.5, 0.5]).opt_comp(delta_bar)
        assert b.lower <= exact <= b.upper and b.upper - b.lower < 1e-8


def test_every_exact_path_is_clamped_to_the_sum():
    from dpplanner.engine.optimal import optimal_bracket

    # at delta_bar = 1e-305 the read-out's underflow allowance swamps delta_bar: no root, yet
    # OptComp <= the plain sum always
    b = optimal_bracket(np.array([0.5, 0.7, 0.9]), np.array([10, 10, 10]), 1e-305, 1e-3)
    assert b.upper == pytest.approx(21.0) and b.lower <= b.upper


def test_allocation_wastes_below_1e_6_of_the_budget_on_a_fast_path_plan():
    rng = np.random.default_rng(5)
    n = 36
    a = allocate([0.01] * n, [0.0] * n, [False] * n, rng.uniform(0.5, 3, n).tolist(), 0.5, 4.9e-10, eta=0.1,
                 multiplicities=rng.integers(1, 20, n).tolist())
    assert a.composition.detail.startswith(("pld", "window"))   # a lattice path, not an exact one
    assert a.composition.epsilon <= 0.5 and a.waste < 1e-6
