"""The analytic Gaussian in the engine: bounds against mpmath, calibration, model agreement."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine import memo
from dpplanner.engine.mechanisms import gaussian as g
from dpplanner.engine.mechanisms import gaussian_inverse as gi
from dpplanner.model import accuracy as acc

mpmath.mp.dps = 50
SET = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def exact_delta(mu, eps) -> mpmath.mpf:
    mu, eps = mpmath.mpf(mu), mpmath.mpf(eps)
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


@SET
@given(st.floats(1e-3, 30.0), st.floats(-5.0, 60.0))
def test_log_delta_bounds_bracket_the_exact_delta(mu, eps):
    lo, hi = g.log_delta_bounds(mu, eps)
    d = exact_delta(mu, eps)
    assert d <= mpmath.exp(hi)
    assert lo == -math.inf or mpmath.exp(lo) <= d


@pytest.mark.parametrize("eps, delta, sigma", [(0.5, 1e-5, 7.031826676), (2.0, 1e-6, 2.230476271)])
def test_calibration_vectors(eps, delta, sigma):
    m = g.gaussian_multiplier(eps, delta)
    assert m == pytest.approx(sigma, rel=1e-9)
    assert exact_delta(1 / m, eps) <= delta  # the rounded-up multiplier really is (eps, delta)-DP
    assert g.gaussian_delta(1 / 3, 1.0) == pytest.approx(0.7876007414, rel=1e-9)


@pytest.mark.parametrize("m, eps", [(1.0, 50.0), (1.0, 1e3), (0.1, 1e4), (1.0, 1e200)])
def test_a_delta_below_every_double_is_bounded_by_the_smallest_one(m, eps):
    """Where exp underflows (or log Phi overflows) the true delta is still > 0: 0 is no bound."""
    assert g.gaussian_delta(m, eps) == 5e-324


@SET
@given(st.floats(1e-6, 50.0), st.floats(1e-14, 0.5))
def test_calibrated_multiplier_is_valid_and_nearly_least(eps, delta):
    m = g.gaussian_multiplier(eps, delta)
    assert exact_delta(1 / m, eps) <= delta
    assert exact_delta(1 / (m * (1 - 1e-5)), eps) > delta  # at most 1e-5 more noise than needed


def test_vectorised_calibration_is_bit_for_bit_the_scalar_one():
    eps = np.random.default_rng(3).uniform(1e-3, 3.0, 40)
    many = g.gaussian_multipliers(eps, 1e-8)
    assert [g.gaussian_multiplier(float(e), 1e-8) for e in eps] == many.tolist()


@pytest.mark.parametrize("l2", [1.0, math.sqrt(2.0), 0.037, 250.0])
def test_model_sigma_is_sensitivity_times_the_engine_multiplier(l2):
    for eps, delta in [(0.3, 1e-7), (1.7, 1e-9), (1e-4, 1e-6)]:
        m = g.gaussian_multiplier(eps, delta)
        assert acc.gaussian_sigma(l2, eps, delta) == l2 * m
        assert acc.gaussian_delta(l2 * m, l2, eps) == g.gaussian_delta(l2 * m / l2, eps)
        assert acc.gaussian_epsilon(l2 * m, l2, delta, 0.0) == gi.gaussian_epsilon(l2 * m / l2, delta)


def test_tiny_epsilon_is_answered_fast_and_soundly(monkeypatch):
    """A few steps of the calibration's search, as for any epsilon (it once hung here): counted,
    not timed, so that a busy machine cannot fail it."""
    memo.forget()                       # (an earlier test may have calibrated it already)
    steps, real = [], g.log_delta_bound
    monkeypatch.setattr(g, "log_delta_bound", lambda *a, **k: steps.append(1) or real(*a, **k))
    m = g.gaussian_multiplier(1e-310, 1e-6)
    sigma = acc.gaussian_sigma(1.0, 1e-310, 1e-6)
    assert 0 < len(steps) <= 100
    assert sigma == m
    assert exact_delta(1 / m, 0.0) <= 1e-6  # delta(eps) <= delta(0): valid for every eps >= 0


@pytest.mark.parametrize("call, match", [
    (lambda: g.gaussian_multiplier(0.0, 1e-6), "finite epsilon > 0"),
    (lambda: g.gaussian_multiplier(math.inf, 1e-6), "finite epsilon > 0"),
    (lambda: g.gaussian_multiplier(1.0, 0.0), "0 < delta < 1"),
    (lambda: g.gaussian_multiplier(1.0, 1.0), "0 < delta < 1"),
    (lambda: g.gaussian_multiplier("x", 1e-6), "not a number"),
    (lambda: g.gaussian_delta(0.0, 1.0), "finite number > 0"),
    (lambda: g.gaussian_delta(1.0, math.nan), "nan"),
    (lambda: gi.gaussian_epsilon(-1.0, 1e-6), "finite number > 0"),
    (lambda: acc.gaussian_sigma(1.0, 1.0, 0.0), "needs delta > 0"),
])
def test_bad_inputs_are_refused_with_a_reason(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_gaussian_epsilon_inverts_the_multiplier():
    m = g.gaussian_multiplier(0.8, 1e-7)
    e = gi.gaussian_epsilon(m, 1e-7)
    assert e <= 0.8 * (1 + 1e-12)
    assert exact_delta(1 / m, e) <= 1e-7
    assert gi.gaussian_epsilon(1e6, 0.5) == 0.0  # so much noise that delta(0) already fits


def test_remembered_multipliers_are_the_same_bits_as_a_fresh_calibration():
    """The calibration memo (filled by scalar and batch calls alike) never changes a value."""
    from dpplanner.engine.mechanisms import gaussian as g

    eps = np.array([0.01, 0.3, 1.0, 7.5])
    delta = np.array([1e-9, 1e-6, 1e-5, 0.2])
    g._KNOWN.clear()
    fresh = [g.gaussian_multiplier(e, d) for e, d in zip(eps.tolist(), delta.tolist())]
    g._KNOWN.clear()
    batch = g.gaussian_multipliers(eps, delta)
    assert [g.gaussian_multiplier(e, d) for e, d in zip(eps.tolist(), delta.tolist())] == fresh
    assert batch.tolist() == fresh


def test_a_batch_calibrates_only_what_it_has_not_seen(monkeypatch):
    """Every evaluation calibrates the plan's Gaussians three or four times (pld, zcdp, their
    curves): remembered pairs are not bisected again, and the answers are the same bits."""
    from dpplanner.engine.mechanisms import forget
    from dpplanner.engine.mechanisms import gaussian as g

    forget()
    first = g.gaussian_multipliers([0.3, 0.5], [1e-7, 1e-9])
    computed = []
    real = g._calibrate
    monkeypatch.setattr(g, "_calibrate", lambda e, d: computed.append(e.tolist()) or real(e, d))
    both = g.gaussian_multipliers([0.5, 0.7, 0.3], [1e-9, 1e-8, 1e-7])
    assert computed == [[0.7]]
    assert both.tolist() == [first[1], g.gaussian_multiplier(0.7, 1e-8), first[0]]
    forget()
    assert g.gaussian_multipliers([0.7], [1e-8]).tolist() == [both[1]] and len(computed) == 2


def test_calibration_needs_few_passes(monkeypatch):
    """A read around the formula's root (or, where that misses, one pass over a grid lo * 2^k)
    brackets the crossing, then Newton's or the secant's estimate and points around it close the
    bracket: ~20 vectorised passes where halving took ~50."""
    calls = []
    real = g.log_delta_bound
    monkeypatch.setattr(g, "log_delta_bound", lambda *a: calls.append(1) or real(*a))
    rng = np.random.default_rng(5)
    eps, delta = 10 ** rng.uniform(-4, 1, 40), 10 ** rng.uniform(-12, -3, 40)
    m = g._calibrate(eps, delta)
    assert len(calls) <= 24           # (halving: 55 here; doubling to a bracket first: 29)
    mu = 1 / m
    assert np.all(g._fits(mu * (1 - 1e-9), eps, np.log(delta)))     # nearly least: a hair less noise
    assert not np.any(g._fits(mu * (1 + 1e-9), eps, np.log(delta)))  # would not fit


def test_one_calibration_starts_from_the_formula_s_own_root(monkeypatch):
    """An allocation calibrates a few Gaussians at new epsilons for each scale it tries: Newton's
    method on the plain formula (no bound read) lands within ~1e-9 of the bound's crossing, which
    one read around it brackets; ~4.5 reads of the bound per calibration, where a grid of
    doublings and Newton's steps on the bound took ~9 (359 here)."""
    calls = []
    real = g.log_delta_bound
    monkeypatch.setattr(g, "log_delta_bound", lambda *a: calls.append(1) or real(*a))
    draws = [(10 ** rng.uniform(-2.5, 0, 1), 10 ** rng.uniform(-10, -6, 1))
             for rng in map(np.random.default_rng, range(40))]
    mus = [1 / g._calibrate(eps, delta) for eps, delta in draws]
    assert len(calls) <= 200
    for mu, (eps, delta) in zip(mus, draws):
        assert g._fits(mu, eps, np.log(delta)) and not g._fits(mu * (1 + 1e-12), eps, np.log(delta))


def test_a_fitting_multiplier_is_one_read_of_the_bound_within_1e_9_of_the_least(monkeypatch):
    """A discrete Gaussian's twin needs a multiplier that fits, not the least to 1e-14: the largest
    fitting point of the one read around the formula's root (a calibration narrows on from there)."""
    rng = np.random.default_rng(7)
    eps, delta = 10 ** rng.uniform(-2.5, 0, 40), 10 ** rng.uniform(-10, -6, 40)
    calls, real = [], g.log_delta_bound
    monkeypatch.setattr(g, "log_delta_bound", lambda *a: calls.append(1) or real(*a))
    m = g.fitting_multipliers(eps, delta)
    assert len(calls) == 1
    assert np.all(g._fits(1 / m, eps, np.log(delta)))
    assert np.all(m / g.gaussian_multipliers(eps, delta) - 1 <= 1e-9)


@SET
@given(st.floats(1e-5, 20.0), st.floats(1e-13, 1e-3))
def test_the_delta_reported_for_a_calibrated_multiplier_is_within_the_target(eps, delta):
    """gaussian_delta (what the window shows for a statistic's sigma) of the calibrated multiplier
    never exceeds the delta typed: near the crossing the bound's rounding noise (~1e-13 of mu at
    small eps and delta) could put it a hair over, e.g. at eps = 1.214e-4, delta = 1.871e-11."""
    m = g.gaussian_multiplier(eps, delta)
    assert g.gaussian_delta(m, eps) <= delta


def test_a_noisy_crossing_reports_within_the_target():
    rng = np.random.default_rng(1)
    eps, delta = 10 ** rng.uniform(-4, 1, 2000), 10 ** rng.uniform(-12, -3, 2000)
    m = g.gaussian_multipliers(eps, delta)
    assert all(g.gaussian_delta(mi, e) <= d for mi, e, d in zip(m.tolist(), eps.tolist(), delta.tolist()))


@SET
@given(st.floats(1e-3, 300.0), st.floats(-37.0, -0.05), st.booleans(), st.sampled_from([1e-15, 1e-14]))
def test_epsilon_bracket_straddles_the_bound(mu, log_target, upper, rel_tol):
    """The Gaussian's epsilon at a delta (a prefix of Gaussians in a curve, an all-Gaussian plan,
    a typed noise scale's epsilon): the directed bound is above the target at lo and meets it at
    hi, rel_tol apart."""
    lo, hi = gi.epsilon_bracket(mu, log_target, upper, rel_tol)
    assert g.log_delta_bound(mu, hi, upper) <= log_target
    assert (lo == hi == 0.0) or (0.0 <= lo < hi and hi - lo <= rel_tol * hi)
    assert lo == 0.0 or g.log_delta_bound(mu, lo, upper) > log_target


def test_epsilon_bracket_takes_a_dozen_evaluations(monkeypatch):
    """False position and straddling points: about a dozen evaluations of the bound per search
    (halving took about fifty; where the bound is noisy at the last digits, a few dozen)."""
    calls = []
    real = gi.log_delta_bound
    monkeypatch.setattr(gi, "log_delta_bound", lambda *args: calls.append(1) or real(*args))
    rng = np.random.default_rng(5)
    for _ in range(200):
        gi.epsilon_bracket(10 ** rng.uniform(-2, 1.5), -rng.uniform(2, 30), bool(rng.integers(2)), 1e-15)
    assert len(calls) / 200 <= 15
    # a bound flat at the last digits around the root (two straddling points both meet the
    # target): the points move apart after each miss (a fixed spread walked down 5e-15 a time)
    calls.clear()
    gi.epsilon_bracket(0.001, -7.84380364761547, False, 1e-15)
    assert len(calls) <= 32


def test_a_curves_gaussian_only_prefixes_are_read_to_a_few_ulps_in_fewer_evaluations(monkeypatch):
    """A curve's prefixes of Gaussians alone are read to 1e-13 (a few ulps; the total's read is to
    1e-15): each within the total's bracket widened by 1e-13, the last in at most 11 evaluations of
    the bound where 1e-15 took 13 (and up to 19 at other mu)."""
    from dpplanner.engine import compose, curve
    from dpplanner.engine.mechanisms import curves

    eps, dels = [0.3, 0.5, 0.2, 0.4], [1e-8, 2e-8, 1e-8, 3e-8]
    reads, count = [], []
    memo.forget()
    real_root, real_bound = curves._gaussian_root, g.log_delta_bound
    monkeypatch.setattr(curves, "_gaussian_root", lambda *a: reads.append(1) or real_root(*a))
    monkeypatch.setattr(g, "log_delta_bound", lambda *a: count.append(len(reads)) or real_bound(*a))
    c = curve(eps, dels, 1e-6, theorems=("pld",), mechanisms=["gaussian"] * 4, lower=False)
    assert len(reads) == 4 and count.count(4) <= 11     # (the last read's evaluations)
    for k, up in zip(c.ks.tolist(), c.upper["pld"].tolist()):
        total = compose(eps[:k], dels[:k], 1e-6, "pld", mechanisms=["gaussian"] * k)
        assert total.epsilon_lower <= up <= total.epsilon * (1 + 1e-13)


def test_a_curves_gaussian_only_prefixes_are_read_once_across_curves(monkeypatch):
    """The prefixes of Gaussians alone that another curve has read (an edit further on keeps a
    plan's first releases) are not read again, and give the same points bit for bit."""
    from dpplanner.engine import curve
    from dpplanner.engine.mechanisms import curves

    mechs = ["gaussian"] * 3 + ["laplace", "gaussian"]
    eps, dels = [0.3, 0.5, 0.2, 0.4, 0.3], [1e-8, 2e-8, 1e-8, 0.0, 1e-8]
    reads = []
    real_root = curves._gaussian_root
    monkeypatch.setattr(curves, "_gaussian_root", lambda *a: reads.append(a) or real_root(*a))
    memo.forget()
    first = curve(eps, dels, 1e-6, theorems=("pld",), mechanisms=mechs, lower=False).upper["pld"]
    assert len(reads) == 3
    edited = curve(eps[:4] + [0.35], dels, 1e-6, theorems=("pld",), mechanisms=mechs, lower=False).upper["pld"]
    assert len(reads) == 3
    assert first[:3].tobytes() == edited[:3].tobytes() and edited[4] != first[4]
    memo.forget()
    cold = curve(eps[:4] + [0.35], dels, 1e-6, theorems=("pld",), mechanisms=mechs, lower=False).upper["pld"]
    assert cold.tobytes() == edited.tobytes() and len(reads) == 6
    for delta_g, lower in ((2e-6, False), (1e-6, True)):     # another delta_bar, the other side
        warm = _points(curve(eps, dels, delta_g, theorems=("pld",), mechanisms=mechs, lower=lower))
        memo.forget()
        assert warm == _points(curve(eps, dels, delta_g, theorems=("pld",), mechanisms=mechs, lower=lower))
    # (a curve's two sides never share a (mu, delta_bar); a read of both still gives each its own)
    ends = [curves._read(None, False, 0.0, 0.01, 1e-7, upper) for upper in (True, False)]
    assert ends == [real_root(0.01, 1e-7, upper, 1e-13) for upper in (True, False)] and ends[0] > ends[1]


def _points(c) -> list:
    return [None if c.upper["pld"] is None else c.upper["pld"].tobytes(),
            None if c.lower is None or c.lower.get("pld") is None else c.lower["pld"].tobytes()]
