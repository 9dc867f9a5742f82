"""The discrete release tags and objects through every engine entry point, their zCDP accounting,
bracket properties, and clear refusals of hostile arguments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine import (DiscreteGaussian, DiscreteLaplace, allocate, compose, compose_all,
                              compose_mechanisms, curve, discrete_gaussian_sigma, discrete_laplace_scale,
                              privacy_profile)
from dpplanner.engine.mechanisms.zcdp import cks_epsilon

SET = settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
EPS = [0.1, 0.2, 0.3, 0.05]
DELTAS = [0.0, 0.0, 1e-7, 1e-7]
TAGS = ["discrete-laplace", "discrete-laplace:7", "discrete-gaussian:1048576", "discrete-gaussian"]


def test_every_entry_point_accepts_the_discrete_tags():
    res = compose_all(EPS, DELTAS, 1e-5, mechanisms=TAGS, theorems=["basic", "optimal", "pld", "zcdp"])
    assert res["pld"].epsilon_lower <= res["pld"].epsilon <= res["optimal"].epsilon + 1e-12
    assert res["basic"].epsilon == pytest.approx(0.65)
    c = curve(EPS, DELTAS, 1e-5, mechanisms=TAGS, theorems=["pld", "zcdp"], multiplicities=[2, 2, 2, 2])
    assert np.all(np.diff(c.upper["pld"]) >= -1e-12)
    assert np.all(c.lower["pld"] <= c.upper["pld"])
    assert c.upper["pld"][-1] == pytest.approx(compose(EPS, DELTAS, 1e-5, theorem="pld", multiplicities=[2] * 4,
                                                        mechanisms=TAGS, eta=1e-2).epsilon, abs=1e-2)
    p = privacy_profile(EPS, DELTAS, mechanisms=TAGS, eps_values=[0.2, 0.4])
    assert np.all(p.delta_lower <= p.delta_upper)
    a = allocate(EPS, DELTAS, [False] * 4, [1.0] * 4, 1.0, 1e-5, theorem="pld", mechanisms=TAGS)
    assert compose(a.epsilons, DELTAS, 1e-5, theorem="pld", mechanisms=TAGS).epsilon <= 1.0


def test_zcdp_charges_cks_rho_for_the_discrete_gaussian_and_eps_squared_for_discrete_laplace():
    S = 1 << 20
    sigma = discrete_gaussian_sigma(0.3, 1e-7, S)
    rho = 0.1 ** 2 / 2 + S ** 2 / (2 * sigma ** 2)
    got = compose([0.1, 0.3], [0.0, 1e-7], 1e-5, theorem="zcdp", mechanisms=["discrete-laplace:3",
                                                                            "discrete-gaussian:1048576"])
    assert got.extra["rho"] == pytest.approx(rho, rel=1e-12)
    assert got.extra["rho"] >= rho * (1 - 1e-15)
    assert got.epsilon == pytest.approx(cks_epsilon(rho, 1e-5), rel=1e-12)


def test_pld_never_reports_more_than_the_generic_optimal_bound():
    eps, deltas = [0.5] * 3, [0.0] * 3
    pld = compose(eps, deltas, 1e-9, theorem="pld", mechanisms=["discrete-laplace:2"] * 3)
    opt = compose(eps, deltas, 1e-9, theorem="optimal")
    assert pld.epsilon <= opt.epsilon


def test_discrete_gaussian_needs_delta_g_positive():
    r = compose_mechanisms([DiscreteGaussian(3.0, 1)], 0.0)
    assert math.isinf(r.epsilon) and "delta_g > 0" in r.reason
    pure = compose_mechanisms([DiscreteLaplace(4.0, 2)], 0.0)
    assert pure.epsilon == pytest.approx(0.5) and pure.epsilon >= 0.5 and pure.epsilon_lower <= 0.5


@SET
@given(st.floats(0.01, 1.0), st.sampled_from([1, 2, 5, 1 << 30]), st.integers(1, 30),
       st.sampled_from([1e-4, 1e-7]))
def test_discrete_laplace_bracket_properties(eps, S, k, delta_g):
    eta = 1e-2
    tag = [f"discrete-laplace:{S}"]
    r = compose([eps], [0.0], delta_g, theorem="pld", eta=eta, multiplicities=[k], mechanisms=tag)
    assert 0 <= r.epsilon_lower <= r.epsilon <= k * eps * (1 + 1e-12)
    assert r.epsilon - r.epsilon_lower <= eta or "width" in r.detail
    more = compose([eps * 1.5], [0.0], delta_g, theorem="pld", eta=eta, multiplicities=[k], mechanisms=tag)
    assert more.epsilon >= r.epsilon_lower         # monotone in eps: more loss is never certified less


@SET
@given(st.floats(0.05, 2.0), st.sampled_from([1e-5, 1e-8]), st.sampled_from([1, 3, 1 << 40]),
       st.integers(1, 20))
def test_discrete_gaussian_bracket_properties(eps, delta, S, k):
    eta = 1e-2
    tag = [f"discrete-gaussian:{S}"]
    r = compose([eps], [delta], 1e-4, theorem="pld", eta=eta, multiplicities=[k], mechanisms=tag)
    assert 0 <= r.epsilon_lower <= r.epsilon
    assert r.epsilon - r.epsilon_lower <= eta or "width" in r.detail
    more = compose([eps * 1.5], [delta], 1e-4, theorem="pld", eta=eta, multiplicities=[k], mechanisms=tag)
    assert more.epsilon >= r.epsilon_lower


@pytest.mark.parametrize("make, match", [
    (lambda: DiscreteLaplace(5e-324), "scale = 5e-324 is not allowed"),
    (lambda: DiscreteLaplace(1e308), "scale = 1e\\+308 is not allowed"),
    (lambda: DiscreteLaplace(float("nan")), "scale = nan is not allowed"),
    (lambda: DiscreteLaplace("3"), "is not a number"),
    (lambda: DiscreteLaplace(2.0, 0), "shift = 0 is not allowed"),
    (lambda: DiscreteLaplace(2.0, 2 ** 63), "shift = 9223372036854775808 is not allowed"),
    (lambda: DiscreteLaplace(2.0, 1.5), "shift = 1.5 is not allowed"),
    (lambda: DiscreteLaplace(2.0, True), "is not a number"),
    (lambda: DiscreteGaussian(5e-324), "sigma = 5e-324 is not allowed"),
    (lambda: DiscreteGaussian(1e308), "sigma = 1e\\+308 is not allowed"),
    (lambda: DiscreteGaussian(float("inf"), 3), "sigma = inf is not allowed"),
    (lambda: DiscreteGaussian(2.0, -1), "shift = -1 is not allowed"),
    (lambda: discrete_laplace_scale(0.0), "epsilon = 0.0 is not allowed"),
    (lambda: discrete_laplace_scale(float("nan"), 3), "epsilon = nan is not allowed"),
    (lambda: discrete_laplace_scale(1e-300), "outside what discrete Laplace noise can be calibrated"),
    (lambda: discrete_laplace_scale(0.5, 2 ** 63), "shift = 9223372036854775808 is not allowed"),
    (lambda: discrete_gaussian_sigma(0.5, 0.0), "delta = 0.0 is not allowed"),
    (lambda: discrete_gaussian_sigma(-1.0, 1e-6), "epsilon = -1.0 is not allowed"),
    (lambda: discrete_gaussian_sigma(0.5, 1e-6, 0), "shift = 0 is not allowed"),
    (lambda: discrete_gaussian_sigma(1e-300, 1e-6), "outside what discrete Gaussian noise can be calibrated"),
    (lambda: discrete_gaussian_sigma(2000.0, 1e-6, 1, 3), "between 5.43e-20 and 1024"),
    (lambda: compose([0.1], [0.0], 1e-6, mechanisms=["discrete-laplace:0"]), "shift '0'"),
    (lambda: compose([0.1], [0.0], 1e-6, mechanisms=["discrete-laplace:9223372036854775808"]), "shift"),
    (lambda: compose([0.1], [0.0], 1e-6, mechanisms=["discrete-laplace:x"]), "shift 'x'"),
    (lambda: compose([0.1], [0.0], 1e-6, mechanisms=["laplace:3"]), "'laplace:3' is not allowed"),
    (lambda: compose([0.1], [1e-6], 1e-5, mechanisms=["discrete-laplace"]), "delta 0"),
    (lambda: compose([0.1], [0.0], 1e-5, mechanisms=["discrete-gaussian:2"]), "needs delta > 0"),
    (lambda: compose([5000.0], [0.0], 1e-5, mechanisms=["discrete-laplace"]), "between 5.43e-20 and 1024"),
    (lambda: compose_mechanisms([DiscreteLaplace(2.0, 3), "x"], 1e-6), "use Laplace"),
])
def test_hostile_arguments_get_clear_messages(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_remembered_calibration_never_answers_an_argument_it_would_refuse():
    # 1.0 is calibrated (and remembered) first; True compares equal to it but is not a number
    assert discrete_laplace_scale(1.0, 1) == discrete_laplace_scale(1, True + 0) == 1.0
    with pytest.raises(ValueError, match="True is not a number"):
        discrete_laplace_scale(True, 1)
    with pytest.raises(ValueError, match="shift"):
        discrete_laplace_scale(1.0, True)


def test_an_edits_zcdp_total_and_curves_calibrate_once(monkeypatch):
    """The zcdp total of a plan is remembered (each pld composition caps its upper end with it,
    and the "zcdp" row asks again) and a curve's per-query discrete releases are calibrated once
    for pld's curve and zcdp's: the same numbers as made afresh, made again after forget()."""
    from dpplanner.engine import curve
    from dpplanner.engine.memo import forget
    from dpplanner.engine.mechanisms import discrete, theorems

    eps, dels = [0.3, 0.2, 0.25], [0.0, 1e-7, 1e-7]
    mech = ["discrete-laplace:1", "discrete-gaussian:1", "gaussian"]
    forget()
    totals, rows = [], []
    real_total, real_rows = theorems._zcdp_composition, discrete._rows
    monkeypatch.setattr(theorems, "_zcdp_composition", lambda *a: totals.append(1) or real_total(*a))
    monkeypatch.setattr(discrete, "_rows", lambda *a: rows.append(1) or real_rows(*a))
    both = compose_all(eps, dels, 1e-5, mechanisms=mech, theorems=("pld", "zcdp"))
    c = curve(eps, dels, 1e-5, mechanisms=mech, theorems=("pld", "zcdp"), multiplicities=[2, 1, 2], lower=False)
    assert len(totals) == 1 and len(rows) == 1
    forget()
    assert compose(eps, dels, 1e-5, "zcdp", mechanisms=mech).epsilon == both["zcdp"].epsilon
    again = curve(eps, dels, 1e-5, mechanisms=mech, theorems=("pld", "zcdp"), multiplicities=[2, 1, 2], lower=False)
    assert len(totals) == 2 and len(rows) == 2
    for name in ("pld", "zcdp"):
        assert np.array_equal(again.upper[name], c.upper[name])
