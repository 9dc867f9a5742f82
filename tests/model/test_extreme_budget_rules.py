"""A global epsilon so small that a free statistic's share underflows to 0 is refused where it
is typed, naming the statistic (the redistribution failed naming an engine release)."""

from __future__ import annotations

import pytest

from dpplanner.model import Budget, Kind, Plan, PlanError, Statistic
from dpplanner.model.statistic import Noise


def _stats():
    return [Statistic("a", kind=Kind.COUNT, epsilon=0.1, noise=Noise.CONTINUOUS),
            Statistic("b", kind=Kind.COUNT, epsilon=0.1, weight=2, noise=Noise.CONTINUOUS)]


def test_a_share_that_underflows_to_zero_is_refused():
    with pytest.raises(PlanError, match=r"statistic 1 \('a'\): its share of the spendable ε by weight \(global ε "
                                        r"5e-324, weight 1.0 of 3\) underflows to 0") as refused:
        Plan(Budget(epsilon=5e-324, delta=1e-6, theorem="basic"), _stats())
    assert refused.value.field == "weight" and refused.value.index == 0


def test_a_tiny_share_above_zero_is_accepted():
    plan = Plan(Budget(epsilon=1e-300, delta=1e-6, theorem="basic"), _stats())
    assert plan.budget.epsilon == 1e-300
