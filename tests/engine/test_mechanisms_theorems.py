"""The registry's theorem functions: pld over validated Releases, zcdp with CKS20, curves and the profile."""

from __future__ import annotations

import math
from types import SimpleNamespace

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner import engine
from dpplanner.engine.theorem_inputs import optimal
from dpplanner.engine.mechanisms import (Gaussian, Laplace, compose_mechanisms, gaussian_multiplier,
                                         pld_composition, pld_curve, pld_delta, zcdp_composition, zcdp_curve)
from dpplanner.engine.mechanisms.zcdp import cks_alpha, cks_epsilon
from dpplanner.engine.validation import Releases, validate_plan

mpmath.mp.dps = 40


def plan(eps, delta, mech, mult=None):
    return validate_plan(eps, delta, mult, mech)


MIXED = dict(eps=[0.1, 0.2, 0.05, 0.3], delta=[0.0, 1e-8, 1e-9, 1e-8],
             mech=["laplace", "gaussian", "eps-delta", "gaussian"], mult=[5, 2, 3, 1])


@pytest.mark.parametrize("rho, delta, expected", [(0.5, 1e-5, 4.728386985), (0.1, 1e-6, 2.141938928),
                                                  (0.005, 1e-6, 0.4299414688), (2.0, 1e-9, 14.15014755)])
def test_cks_vectors(rho, delta, expected):
    assert cks_epsilon(rho, delta) == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.floats(1e-8, 50.0), st.floats(1e-15, 0.5))
def test_cks_is_the_published_formula_rounded_up_at_a_near_optimal_alpha(rho, delta):
    eps = cks_epsilon(rho, delta)
    alpha = float(cks_alpha(rho, delta))
    assert eps >= max(cks_exact(rho, delta, alpha), 0)  # directed rounding at the alpha used
    centre = 1 + math.sqrt(math.log(1 / delta) / rho)
    grid = min(cks_exact(rho, delta, 1 + (centre - 1) * f) for f in np.geomspace(0.05, 20, 60))
    assert eps <= max(grid, 0) + 1e-9 * (1 + abs(eps))  # as good as a fine search


def cks_exact(rho, delta, alpha):
    r, d, a = mpmath.mpf(rho), mpmath.mpf(delta), mpmath.mpf(alpha)
    return a * r + mpmath.log1p(-1 / a) - (mpmath.log(d) + mpmath.log(a)) / (a - 1)


def test_zcdp_composition_charges_each_release():
    p = plan(**MIXED)
    r = zcdp_composition(p, 1e-6)
    m1, m2 = gaussian_multiplier(0.2, 1e-8), gaussian_multiplier(0.3, 1e-8)
    rho = 5 * 0.1 ** 2 / 2 + 3 * 0.05 ** 2 / 2 + 2 / (2 * m1 ** 2) + 1 / (2 * m2 ** 2)
    assert r.theorem == "zcdp"
    assert r.extra["rho"] == pytest.approx(rho, rel=1e-12) and r.extra["rho"] >= rho
    assert r.extra["delta_used"] <= 1e-6 - 3e-9
    assert r.epsilon == pytest.approx(cks_epsilon(rho, 1e-6 - 3e-9), rel=1e-9)
    bad = zcdp_composition(plan([0.1], [1e-5], ["eps-delta"], [1]), 1e-6)
    assert bad.epsilon == math.inf and "too small" in bad.reason


def test_pld_equals_optimal_on_eps_delta_only_plans():
    p = plan([0.1, 0.3, 0.02], [1e-8, 0.0, 1e-9], ["eps-delta"] * 3, [10, 2, 40])
    got, want = pld_composition(p, 1e-6, 1e-3), optimal(p, 1e-6, 1e-3)
    assert got.theorem == "pld"
    assert (got.epsilon, got.epsilon_lower, got.detail) == (want.epsilon, want.epsilon_lower, want.detail)


def test_pld_maps_rows_to_their_mechanisms():
    p = plan(**MIXED)
    got = pld_composition(p, 1e-6, 1e-3)
    m1, m2 = gaussian_multiplier(0.2, 1e-8), gaussian_multiplier(0.3, 1e-8)
    from dpplanner.engine import EpsDelta
    ref = compose_mechanisms([Laplace(10.0), Gaussian(m1), EpsDelta(0.05, 1e-9), Gaussian(m2)], 1e-6,
                             multiplicities=[5, 2, 3, 1])
    assert got.epsilon == pytest.approx(ref.epsilon, abs=2e-3)
    assert max(got.epsilon_lower, ref.epsilon_lower) <= min(got.epsilon, ref.epsilon)
    assert got.epsilon <= optimal(p, 1e-6, 1e-3).epsilon


def test_pld_never_reports_more_than_optimal():
    p = plan([0.05] * 3, [0.0] * 3, ["laplace"] * 3, [40, 1, 1])  # Laplace-only: pld ~ optimal
    assert pld_composition(p, 1e-6, 1e-3).epsilon <= optimal(p, 1e-6, 1e-3).epsilon


def test_zero_epsilon_rows_add_nothing():
    # allocation builds such plans directly (a release with epsilon 0 adds infinite noise)
    with_zero = Releases(np.array([0.2, 0.0, 0.0]), np.array([1e-8, 1e-8, 0.0]), np.ones(3, dtype=np.int64),
                     ("gaussian", "gaussian", "laplace"))
    without = plan([0.2], [1e-8], ["gaussian"], [1])
    assert pld_composition(with_zero, 1e-6, 1e-3).epsilon == pld_composition(without, 1e-6, 1e-3).epsilon
    assert zcdp_composition(with_zero, 1e-6).epsilon == zcdp_composition(without, 1e-6).epsilon


def curve_inputs(eps, delta, mech, ks, eta=1e-2):
    return SimpleNamespace(eps=np.asarray(eps, float), delta=np.asarray(delta, float), mech=list(mech),
                           ks=np.asarray(ks, dtype=np.int64), delta_g=1e-6, eta=eta, mode="prefix",
                           cancel=None, progress=None)


def test_curves_bracket_each_prefix():
    eps = [0.1, 0.2, 0.05, 0.3, 0.1, 0.02]
    delta = [0.0, 1e-8, 1e-9, 1e-8, 0.0, 1e-9]
    mech = ["laplace", "gaussian", "eps-delta", "gaussian", "laplace", "eps-delta"]
    ks = [1, 2, 3, 4, 5, 6]
    up, lo = pld_curve(curve_inputs(eps, delta, mech, ks))[:2]
    z, none = zcdp_curve(curve_inputs(eps, delta, mech, ks))
    assert none is None
    for j, k in enumerate(ks):
        p = plan(eps[:k], delta[:k], mech[:k])
        c = pld_composition(p, 1e-6, 1e-2)
        assert max(lo[j], c.epsilon_lower) <= min(up[j], c.epsilon) + 1e-12
        assert z[j] == pytest.approx(zcdp_composition(p, 1e-6).epsilon, rel=1e-12)
    assert np.all(np.diff(up) >= -1e-3)  # roughly increasing: each prefix adds a release


@pytest.mark.parametrize("mode", ["prefix", "repeat"])
def test_pld_curve_of_generic_releases_is_optimals_and_brackets_each_prefix(mode):
    """Releases known only by (eps_i, delta_i): pld composes the worst-case pairs "optimal" does, so
    its curve is optimal's (computed once for both rows), and every point brackets the same exact
    value as compose() of that prefix alone, within eta or saying why not."""
    rng = np.random.default_rng(7)
    eps, delta = rng.uniform(0.01, 0.3, 80).tolist(), [1e-9] * 40 + [0.0] * 40
    c = engine.curve(eps, delta, 1e-6, mode=mode, eta=1e-3, points=12, theorems=("optimal", "pld"))
    for side in (c.upper, c.lower, c.notes):
        np.testing.assert_array_equal(side["pld"], side["optimal"])
    for j, k in enumerate(c.ks.tolist()):
        head = (eps[:k], delta[:k], None) if mode == "prefix" else (eps[:1], delta[:1], [k])
        ref = engine.compose(head[0], head[1], 1e-6, "pld", eta=1e-3, multiplicities=head[2])
        assert c.lower["pld"][j] <= ref.epsilon and ref.epsilon_lower <= c.upper["pld"][j], k
        assert c.upper["pld"][j] - c.lower["pld"][j] <= 1e-3 or c.notes["pld"][j], k
    plot = engine.curve(eps, delta, 1e-6, mode=mode, eta=1e-3, points=12, theorems=("optimal", "pld"),
                        lower=False)
    np.testing.assert_array_equal(plot.upper["pld"], plot.upper["optimal"])


def test_curve_infeasible_tail_is_inf():
    up, lo = pld_curve(curve_inputs([0.1, 0.1], [0.0, 2e-6], ["laplace", "eps-delta"], [1, 2]))[:2]
    assert math.isfinite(up[0]) and up[1] == math.inf and lo[1] == math.inf


def test_profile_brackets_the_closed_form_and_the_composition():
    g = plan([0.5, 0.5], [1e-7, 1e-7], ["gaussian", "gaussian"])
    m = gaussian_multiplier(0.5, 1e-7)
    mu = mpmath.sqrt(2) / m
    up, lo = pld_delta(g, [0.5, 1.0], 1e-3)
    for j, x in enumerate([0.5, 1.0]):
        exact = mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)
        assert lo[j] <= exact * (1 + 1e-9) and up[j] >= exact * (1 - 1e-9)
    p = plan(**MIXED)
    c = pld_composition(p, 1e-6, 1e-3)
    up, lo = pld_delta(p, [c.epsilon_lower, c.epsilon], 1e-3)
    assert up[1] <= 1e-6 * (1 + 1e-3) and lo[0] >= 1e-6 * (1 - 1e-3)
    assert np.all(lo <= up)


def test_curve_widths_stay_within_eta_at_every_k():
    from dpplanner.model import examples, files

    plan = files.load_plan(examples.example_path("synthetic-100"))
    inp = plan.composition_inputs()
    mech = [s.mechanism.value for s in plan.statistics]
    reps = inp.multiplicities
    eps, delta = np.repeat(inp.epsilons, reps), np.repeat(inp.deltas, reps)
    ci = curve_inputs(eps, delta, np.repeat(mech, reps), np.arange(1, eps.size + 1))
    ci.delta_g = inp.delta_g
    up, lo = pld_curve(ci)[:2]
    assert np.all(up - lo <= 1e-2)
    assert np.all(np.diff(up) >= -1e-2) and np.all(np.diff(lo) >= -1e-2)


def test_curve_with_an_epsilon_no_lattice_fits_falls_back_to_optimal_above_and_zero_below():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # the closed forms overflow to inf, as they should
        c = engine.curve([1e300, 2.0, 3.0], [0.0] * 3, 1e-6, mechanisms=["laplace"] * 3)
    assert np.array_equal(c.upper["pld"], c.upper["optimal"])
    assert np.all(c.lower["pld"][:-1] == 0.0)
    # (the whole plan's own bracket is certified too: its floor, the largest release's epsilon)
    whole = engine.compose([1e300, 2.0, 3.0], [0.0] * 3, 1e-6, "pld", mechanisms=["laplace"] * 3)
    assert c.lower["pld"][-1] == min(whole.epsilon_lower, c.upper["pld"][-1])


def test_pld_shares_the_optimal_total_with_the_optimal_row(monkeypatch):
    """Where pld's cheap floor cannot rule "optimal" out (releases known only by their (eps, delta)
    next to a few Laplace ones), compose_all computes the generic optimal total once for both rows."""
    import dpplanner.engine.optimal as optimal_core
    from dpplanner.engine import compose_all

    calls = []
    real = optimal_core.optimal_bracket
    monkeypatch.setattr(optimal_core, "optimal_bracket", lambda *a, **k: calls.append(1) or real(*a, **k))
    eps, deltas, mult = [0.1, 0.2, 0.05], [1e-8, 1e-9, 0.0], [10, 5, 2]
    got = compose_all(eps, deltas, 1e-6, multiplicities=mult, mechanisms=["eps-delta", "eps-delta", "laplace"],
                      theorems=("optimal", "pld"))
    assert len(calls) == 1
    assert got["pld"].epsilon <= got["optimal"].epsilon


def test_cks_alpha_is_found_in_a_few_newton_steps(monkeypatch):
    """Newton's method on eps'(alpha) (8 vectorised steps) instead of 48 golden-section steps, each
    of which evaluated the formula twice: the zcdp row and curve of every evaluation paid ~1.3 ms
    for one rho. The least eps is the same to 1e-12 (a 400-step golden section here), also where
    it is 0 (tiny rho, large delta: the optimum lies below alpha = 1/delta)."""
    import dpplanner.engine.mechanisms.zcdp as zcdp

    rng = np.random.default_rng(7)
    rho = np.concatenate([10 ** rng.uniform(-8, 3, 300), [2.3e-8, 8.6e-7]])
    delta = np.concatenate([10 ** rng.uniform(-15, math.log10(0.5), 300), [1.4e-3, 2.9e-2]])
    evaluations = []
    real = zcdp.cks_eps_at
    monkeypatch.setattr(zcdp, "cks_eps_at", lambda *a: evaluations.append(1) or real(*a))
    got = cks_epsilon(rho, delta)
    assert len(evaluations) <= 2

    a, b = np.full(rho.size, -12.0), np.full(rho.size, 40.0)    # reference: a long golden section
    g = (math.sqrt(5) - 1) / 2
    for _ in range(400):
        c, d = b - g * (b - a), a + g * (b - a)
        left = real(rho, delta, 1 + np.exp(c)) < real(rho, delta, 1 + np.exp(d))
        a, b = np.where(left, a, c), np.where(left, d, b)
    best = np.maximum(real(rho, delta, 1 + np.exp(0.5 * (a + b))), 0.0)
    assert np.all(got >= best * (1 - 1e-12))            # (rounded up: never below the formula)
    assert np.all(got <= best * (1 + 1e-12) + 1e-300)


def test_one_rho_converts_to_the_same_bits_as_in_an_array():
    """cks_epsilon of one (rho, delta) runs on Python floats (zcdp._cks_scalar): the same number,
    bit for bit, as the same pair in an array (a plan's zCDP total and its curve's last point)."""
    rng = np.random.default_rng(11)
    rho = np.concatenate([10 ** rng.uniform(-12, 6, 2000), [2.3e-8, 8.6e-7, 1e-300, 1e300]])
    delta = np.concatenate([10 ** rng.uniform(-300, math.log10(0.9), 2000), [1.4e-3, 2.9e-2, 0.5, 1e-6]])
    together = cks_epsilon(rho, delta)
    alone = np.array([cks_epsilon(float(r), float(d)) for r, d in zip(rho.tolist(), delta.tolist())])
    assert np.array_equal(together, alone)


@pytest.mark.parametrize("eps, mech", [([1e155], ["laplace"]), ([1e200, 1.0], ["eps-delta", "gaussian"])])
def test_zcdp_says_why_rho_beyond_the_doubles_has_no_finite_total(eps, mech):
    # eps_i^2 / 2 overflows from eps_i ~ 1.34e154 (sums of eps up to 1e305 are allowed): zCDP's
    # epsilon, at least rho less 711, has no finite bound; it was inf with no reason.
    r = engine.compose(eps, [0.0 if m == "laplace" else 1e-9 for m in mech], 1e-6, "zcdp", mechanisms=mech)
    assert r.epsilon == math.inf and r.extra["rho"] == math.inf
    assert r.detail == "no finite bound" and "above the largest double" in r.reason
    r = engine.compose([1e154], [0.0], 1e-6, "zcdp", mechanisms=["laplace"])     # rho 5e307: finite
    assert 5e307 < r.epsilon < math.inf and r.reason is None
