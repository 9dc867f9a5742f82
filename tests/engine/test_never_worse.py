"""Issue 27: `optimal` (and `concurrent`) is never worse than a cheaper theorem, and its lower
bound never rises above the exact optimum; the curve says, per point, whether it met eta."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine import compose, compose_all, curve
from dpplanner.engine.never_worse import ZCDP, cheap_bounds
from dpplanner.engine.stats import plan_sums
from dpplanner.engine.validation import validate_plan

import composition_oracle as oracle

CHEAP = ("basic", "advanced", "zcdp")


@st.composite
def large_plans(draw):
    """Up to 3000 queries, epsilons over four decades, some with their own delta."""
    n = draw(st.integers(1, 60))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    lo = 10.0 ** draw(st.floats(-4, -1))
    eps = (lo * 10.0 ** rng.uniform(0, draw(st.floats(0, 2.5)), n)).tolist()
    mult = rng.integers(1, draw(st.sampled_from([2, 50, 200])), n).tolist()
    with_delta = draw(st.booleans())
    deltas = [1e-10 if with_delta and i % 3 == 0 else 0.0 for i in range(n)]
    delta_g = 10.0 ** draw(st.floats(-12, -3))
    return eps, deltas, mult, delta_g


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(large_plans())
def test_optimal_never_above_a_cheaper_theorem(plan):
    eps, deltas, mult, delta_g = plan
    r = compose_all(eps, deltas, delta_g, eta=1e-2, multiplicities=mult,
                    theorems=("optimal", "concurrent") + CHEAP)
    for name in CHEAP:
        assert r["optimal"].epsilon <= r[name].epsilon, (name, r["optimal"].detail)
        assert r["concurrent"].epsilon <= r[name].epsilon, name
    if math.isfinite(r["optimal"].epsilon):
        assert r["optimal"].epsilon_lower <= r["optimal"].epsilon


def test_the_issue_plan_is_never_worse_than_advanced():
    """Issue 27's k = 10^5 plan returned [0, sum eps] = [0, 224.41] where advanced gives 4.357
    (here 20,000 queries of the same kind, the one the lattices resolve least well per query)."""
    eps = np.random.default_rng(27).uniform(0.0005, 0.004, 20_000).tolist()
    r = compose_all(eps, [0.0] * len(eps), 1e-6, eta=1e-3, theorems=("optimal", "advanced", "zcdp"))
    assert r["optimal"].epsilon <= min(r["advanced"].epsilon, r["zcdp"].epsilon)
    assert r["optimal"].epsilon < 0.5 * sum(eps)


def test_optimal_is_never_above_the_zcdp_theorem_in_the_last_digits():
    """32 small epsilons at delta_g = 1e-3: zCDP is the best bound, and optimal reports it. The
    registry's zcdp theorem and the running sums round rho differently (13th digit), so optimal
    took the sums' slightly larger figure and came out above the theorem's by 4e-16."""
    eps = np.random.default_rng(0).uniform(1e-4, 1e-3, 32).tolist()
    r = compose_all(eps, [0.0] * 32, 1e-3, eta=1e-2, theorems=("optimal", "concurrent", "zcdp"))
    assert "upper end from zCDP" in r["optimal"].detail
    assert r["optimal"].epsilon <= r["zcdp"].epsilon
    assert r["concurrent"].epsilon <= r["zcdp"].epsilon


def test_a_plan_too_large_to_refine_gets_the_best_cheap_bound_and_says_so():
    """A billion queries of 20 near-equal epsilons: their sum (5e7) is beyond every lattice, so the
    optimal engine alone certifies only the plain sum; the result is the best cheap bound instead
    (KOV Thm 3.5, 40x smaller), and the detail names it and says why the bracket is wide."""
    eps, mult = [0.05 + i * 1e-6 for i in range(20)], [5 * 10**7] * 20
    r = compose_all(eps, [0.0] * 20, 1e-6, multiplicities=mult, theorems=("optimal", "advanced", "basic"))
    assert r["optimal"].epsilon == r["advanced"].epsilon < r["basic"].epsilon / 30
    assert "upper end from KOV Thm 3.5 (c)" in r["optimal"].detail
    assert "beyond every lattice" in r["optimal"].detail
    assert 0 < r["optimal"].epsilon_lower < r["optimal"].epsilon


def test_zcdp_bound_for_generic_releases_matches_the_zcdp_theorem():
    """The zCDP bound the optimal engine uses is the registry's zcdp total of the same releases."""
    eps, deltas = [0.05] * 40 + [0.2] * 10, [0.0] * 40 + [1e-9] * 10
    z = compose(eps, deltas, 1e-6, "zcdp")
    bound = cheap_bounds(plan_sums(validate_plan(eps, deltas)), 1e-6)[ZCDP][0]
    assert bound == pytest.approx(z.epsilon, rel=1e-12)
    assert compose(eps, deltas, 1e-6).epsilon <= bound


@settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(eps=st.lists(st.floats(0.01, 1.5), min_size=1, max_size=4),
       mult=st.lists(st.integers(1, 3), min_size=4, max_size=4),
       delta_g=st.floats(1e-9, 0.1), eta=st.sampled_from([1e-1, 1e-3]))
def test_the_bracket_holds_the_exact_optimum(eps, mult, delta_g, eta):
    """lower <= OptComp <= upper against an independent exact oracle (mpmath enumeration)."""
    mult = mult[: len(eps)]
    r = compose(eps, [0.0] * len(eps), delta_g, eta=eta, multiplicities=mult)
    exact = float(oracle.opt_comp(eps, [0.0] * len(eps), delta_g, mult))
    assert r.epsilon_lower <= exact * (1 + 1e-12) + 1e-12
    assert r.epsilon >= exact * (1 - 1e-12) - 1e-12


def test_the_curve_is_never_worse_than_the_cheaper_curves():
    eps = np.random.default_rng(5).uniform(0.0005, 0.01, 3000).tolist()
    c = curve(eps, [0.0] * len(eps), 1e-6, points=40, theorems=("optimal", "concurrent", "advanced", "zcdp"),
              lower=False)
    for name in ("optimal", "concurrent"):
        assert np.all(c.upper[name] <= c.upper["advanced"])
        assert np.all(c.upper[name] <= c.upper["zcdp"])


def test_the_curve_is_never_worse_than_kov_where_the_prefix_is_homogeneous():
    """Three equal releases, then others: on k = 1..3 the optimal row (and pld's, never above it)
    is met with the exact homogeneous root (kov's row), as the totals are, not left at the lattice's
    wider bound (the plain sums here, 2.8e-5 relative above); the same bits whether or not the kov
    row is asked for in the same call."""
    eps, deltas, mult = [0.08485981294661854, 0.3, 0.05], [1.451416671187035e-10, 0.0, 1e-9], [3, 2, 10]
    delta_g = 1e-6 + 3 * 1.451416671187035e-10 + 10 * 1e-9
    kw = dict(eta=1e-2, multiplicities=mult, mechanisms=["eps-delta", "laplace", "gaussian"])
    c = curve(eps, deltas, delta_g, theorems=("optimal", "pld", "kov"), **kw)
    hom = ~np.isnan(c.upper["kov"])
    assert c.ks[hom].tolist() == [1, 2, 3]
    assert np.all(c.upper["optimal"][hom] <= c.upper["kov"][hom])
    assert np.all(c.upper["pld"] <= c.upper["optimal"])
    assert c.upper["optimal"][2] < 3 * eps[0] * (1 - 1e-5)
    alone = curve(eps, deltas, delta_g, theorems=("optimal",), **kw)
    assert np.array_equal(alone.upper["optimal"], c.upper["optimal"])
    assert np.all(c.lower["optimal"] <= c.upper["optimal"])


def test_curve_notes_say_where_a_point_missed_eta():
    """Every point of every row has a note: "" where it met eta, else the width and why not."""
    eps = np.random.default_rng(11).uniform(0.05, 0.6, 60).tolist()
    c = curve(eps, [0.0] * 60, 1e-6, eta=1e-9, theorems=("basic", "optimal", "kov"))
    assert set(c.notes) == {"basic", "optimal", "kov"}
    assert all(len(v) == len(c.ks) for v in c.notes.values())
    assert c.met_eta("basic").all()            # a closed form has no bracket to miss
    widths = c.upper["optimal"] - c.lower["optimal"]
    met = c.met_eta("optimal")
    assert np.array_equal(met, ~(widths > 1e-9))
    assert not met.all()
    for j in np.flatnonzero(~met):
        assert c.notes["optimal"][j].startswith(f"width {widths[j]:.3g} > eta = 1e-09")


def test_the_advanced_candidates_of_one_plan_are_never_another_plans():
    """advanced_candidates keeps the last plan's candidates for the next caller asking about the
    same sums: a new plan, or the same one at another delta_g, gets its own."""
    from dpplanner.engine.advanced import advanced_candidates

    a, b = (plan_sums(validate_plan(eps, [0.0] * 3)) for eps in ([0.1, 0.2, 0.3], [0.1, 0.2, 0.4]))
    first = advanced_candidates(a, 1e-6)["Steinke"][0]
    assert advanced_candidates(a, 1e-6)["Steinke"][0] == first
    assert advanced_candidates(b, 1e-6)["Steinke"][0] > first
    assert advanced_candidates(a, 1e-3)["Steinke"][0] < first
    assert advanced_candidates(a, 1e-6)["Steinke"][0] == first


def test_the_candidates_kept_are_a_small_plans_only():
    """The candidates of a curve of more than KEEP_POINTS points are not kept after the call (its
    sums and candidates would stay in memory until the next one)."""
    import dpplanner.engine.advanced as advanced
    from dpplanner.engine.stats import prefix_sums

    eps = np.full(5000, 0.01)
    for n, kept in ((advanced.KEEP_POINTS, True), (advanced.KEEP_POINTS + 1, False)):
        s = prefix_sums(eps, np.zeros(eps.size), np.arange(1, n + 1))
        advanced.advanced_candidates(s, 1e-6)
        assert any(held is s for held, _d, _out in advanced._last) == kept


def test_a_plans_candidates_and_its_curves_are_each_computed_once(monkeypatch):
    """An evaluation asks about its plan's sums and its curve's in turn (optimal's total and
    curve, then the advanced row's total and curve): each one's candidates are computed once."""
    import dpplanner.engine.advanced as advanced
    from dpplanner.engine.stats import prefix_sums

    computed = []
    real = advanced._candidates
    monkeypatch.setattr(advanced, "_candidates", lambda s, d: computed.append(s) or real(s, d))
    eps = [0.1, 0.2, 0.3]
    plan = plan_sums(validate_plan(eps, [0.0] * 3))
    curve = prefix_sums(np.array(eps), np.zeros(3), np.arange(1, 4))
    first = [advanced.advanced_candidates(s, 1e-6) for s in (plan, curve)]
    again = [advanced.advanced_candidates(s, 1e-6) for s in (plan, curve)]
    assert again[0] is first[0] and again[1] is first[1] and computed == [plan, curve]
