"""A global epsilon (or weight) so small that a free statistic's share underflows to 0, or comes
nearer 0 than an epsilon that can be typed, is refused where it is typed, naming the statistic (the
redistribution failed naming an engine release)."""

from __future__ import annotations

import pytest

from dpplanner.model import Budget, Kind, Mechanism, Plan, PlanError, Statistic
from dpplanner.model.statistic import Noise
from dpplanner.model.validation import MIN_NORMAL as LEAST     # the least global ε a plan holds


def _stats():
    return [Statistic("a", kind=Kind.COUNT, epsilon=0.1, noise=Noise.CONTINUOUS),
            Statistic("b", kind=Kind.COUNT, epsilon=0.1, weight=2, noise=Noise.CONTINUOUS)]


def test_a_share_that_underflows_to_zero_is_refused():
    stats = [_stats()[0].replace(weight=LEAST), _stats()[1].replace(weight=1e6)]
    with pytest.raises(PlanError, match=r"statistic 1 \('a'\): its share of the spendable ε by weight \(global ε "
                                        r"2.2250738585072014e-308, weight 2.2250738585072014e-308 of 1e\+06\) "
                                        r"underflows to 0") as refused:
        Plan(Budget(epsilon=LEAST, delta=1e-6, theorem="basic"), stats)
    assert refused.value.field == "weight" and refused.value.index == 0


def test_a_share_nearer_0_than_a_typed_epsilon_is_refused():
    """Global ε 2.2e-308 over three Gaussian releases under basic: each share 7.4e-309, subnormal
    (with a global ε of 1e-323 each share, 3.3e-324, was stored as 4.94e-324); the search's probes below it were 0, and the redistribution failed with "a Gaussian
    release needs epsilon > 0"."""
    stats = [Statistic("a", mechanism=Mechanism.GAUSSIAN, noise=Noise.CONTINUOUS),
             Statistic("b", mechanism=Mechanism.GAUSSIAN, noise=Noise.CONTINUOUS, repetitions=2)]
    with pytest.raises(PlanError, match=r"statistic 1 \('a'\): its share of the spendable ε by weight \(global ε "
                                        r"2.2250738585072014e-308, weight 1.0 of 3\) = 7.4\d+e-309 is too close to 0 to "
                                        r"store exactly "
                                        r".*; raise the global ε or its weight") as refused:
        Plan(Budget(epsilon=LEAST, delta=1e-6, theorem="basic"), stats)
    assert refused.value.field == "weight" and refused.value.index == 0


def test_one_free_statistic_with_opendp_noise_is_told_of_the_global_epsilon_not_its_weight():
    """(Its weight is the whole of the weights: the advice was "raise its weight to at least ∞".)"""
    with pytest.raises(PlanError, match=r"global ε = 1e-30 is too small for the statistics with OpenDP "
                                        r"noise: statistic 1 \('a'\) would get ε 1e-30") as refused:
        Plan(Budget(epsilon=1e-30, delta=1e-6, theorem="basic"), [Statistic("a")])
    assert refused.value.field == "epsilon"


def test_a_tiny_share_above_zero_is_accepted():
    plan = Plan(Budget(epsilon=1e-300, delta=1e-6, theorem="basic"), _stats())
    assert plan.budget.epsilon == 1e-300
