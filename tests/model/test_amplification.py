"""Issue 14: amplification by sampling in log space, rounded the safe way, loops with a proven
bound; issue 15 item 7: sensitivities that underflow are refused at validation."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpplanner.model import Budget, Kind, Mechanism, Plan, PlanError, Statistic
from dpplanner.model.statistic import Noise
from dpplanner.model import accuracy as acc

mpmath.mp.dps = 60


def _exact_functioning(eps: float, ratio: float) -> mpmath.mpf:
    return mpmath.log(1 + mpmath.mpf(ratio) * mpmath.expm1(mpmath.mpf(eps)))


_eps = st.floats(1e-9, 100.0)
_ratio = st.one_of(st.just(1.0 + 2 ** -40), st.floats(1.0, 1e13).filter(lambda r: r > 1.0))


@settings(max_examples=300, deadline=None)
@given(_eps, _ratio)
def test_functioning_epsilon_never_overstates_and_is_tight(eps, ratio):
    # the noise is calibrated to it: overstating it would add too little noise
    f = acc.functioning_epsilon(eps, ratio)
    exact = _exact_functioning(eps, ratio)
    assert f <= exact
    assert f >= exact * (1 - mpmath.mpf(2) ** -44)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.floats(1e-9, 800.0), st.floats(800.0, 1e300)), _ratio)
def test_nominal_epsilon_is_a_tight_upper_inverse_for_any_functioning_value(f, ratio):
    eps = acc.nominal_epsilon(f, ratio)
    assert acc.functioning_epsilon(eps, ratio) >= f
    if ratio != 1.0:
        exact = mpmath.log1p(mpmath.expm1(mpmath.mpf(f)) / mpmath.mpf(ratio))
        assert eps >= exact * (1 - mpmath.mpf(2) ** -50) and eps <= exact * (1 + mpmath.mpf(2) ** -36)


def test_the_round_up_loop_reports_instead_of_looping():
    with pytest.raises(ValueError, match="could not be computed"):
        acc._round_up_until(1.0, lambda x: x >= 1e5, "a test value")


def test_functioning_delta_is_rounded_down():
    for delta, ratio in ((1e-7, 3.0), (1e-10, 1e13 / 7), (0.3, 1.0 + 2 ** -30)):
        assert acc.functioning_delta(delta, ratio) <= mpmath.mpf(delta) * mpmath.mpf(ratio)


def _amplified(mechanism=Mechanism.LAPLACE, kind=Kind.COUNT, **budget) -> Plan:
    b = Budget(dataset_size=5000, population=6000, **budget)
    extra = {"lower": 0.0, "upper": 10.0} if kind is Kind.SUM else {}
    # continuous noise: its error falls without end as epsilon grows (OpenDP's discrete noise
    # reaches an error of 0 at a finite epsilon, see tests/release/test_opendp_noise.py)
    return Plan(b, [Statistic("s", kind=kind, mechanism=mechanism, noise=Noise.CONTINUOUS, **extra)])


@pytest.mark.parametrize("mechanism", [Mechanism.LAPLACE, Mechanism.GAUSSIAN])
@pytest.mark.parametrize("error", [1e-3, 1e-8, 1e-300, 5e-324])
def test_a_small_target_error_with_a_population_is_refused_at_the_cell(mechanism, error):
    plan = _amplified(mechanism, reserve=0.5)
    with pytest.raises(PlanError) as info:
        plan.set_target_error(0, error)
    assert info.value.index == 0 and info.value.field == "error"
    assert plan[0].epsilon == 0.1          # nothing changed


@pytest.mark.parametrize("mechanism", [Mechanism.LAPLACE, Mechanism.GAUSSIAN])
@pytest.mark.parametrize("kind", [Kind.COUNT, Kind.SUM])
@pytest.mark.parametrize("error", [0.5, 3.0, 40.0, 1e4, 1e15])
def test_a_reachable_target_error_with_a_population_is_met(mechanism, kind, error):
    plan = _amplified(mechanism, kind)
    try:
        plan.set_target_error(0, error)
    except PlanError as exc:            # out of reach for epsilon <= 100: said so at the cell
        assert exc.field == "error" and "epsilon" in str(exc)
        return
    # Laplace: exactly; Gaussian: within the analytic calibration's bisection tolerance
    assert plan.privacy(0).error <= error * (1 + (0 if mechanism is Mechanism.LAPLACE else 1e-12))


def test_a_mean_whose_sensitivity_is_too_small_is_refused_naming_the_bounds():
    mean = Statistic("m", kind=Kind.MEAN, mechanism=Mechanism.GAUSSIAN, lower=0.0, upper=1e-300, n=10)
    with pytest.raises(PlanError, match=r"statistic 1 \('m'\): the bounds \[0, 1e-300\] give "
                                        r"a sensitivity .* of 1e-301; it must be at least 1e-100") as info:
        Plan(Budget(), [mean])
    assert (info.value.index, info.value.field) == (0, "upper")


def test_a_sensitivity_can_become_too_small_through_the_dataset_size():
    plan = Plan(Budget(delta=1e-9, dataset_size=10), [Statistic("m", kind=Kind.MEAN, lower=0.0, upper=1e-95)])
    with pytest.raises(PlanError, match="the bounds") as info:     # 1e-95 / 1e6 < 1e-100
        plan.set_budget(plan.budget.replace(dataset_size=10**6))
    assert info.value.field == "upper" and plan.budget.dataset_size == 10


@pytest.mark.parametrize("lower, upper", [(0.0, 1e-100), (-1e-100, 0.0), (1.0, 1.0 + 2 ** -52)])
def test_small_but_representable_sensitivities_are_kept(lower, upper):
    plan = Plan(Budget(), [Statistic("s", kind=Kind.SUM, lower=lower, upper=upper)])
    assert math.isfinite(plan.privacy(0).error) and plan.privacy(0).error > 0
