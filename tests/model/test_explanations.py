"""The plain-language sentence never fails: a quantile whose ε_i is so small that its error bound
is infinite still gets its sentence (the soak test typed ε_i = 1e-320 into the table and the
median's percentile range raised OverflowError on the GUI thread)."""

from __future__ import annotations

import math

from dpplanner.model import Budget, Kind, Plan, Statistic
from dpplanner.model.statistic import Noise


def test_a_quantile_with_an_unbounded_error_still_has_its_sentence():
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=2500, redistribute=False),
                [Statistic("median", "income", Kind.QUANTILE, lower=0, upper=1000, granularity=10,
                           epsilon=1e-320, noise=Noise.CONTINUOUS)])
    p = plan.privacy(0)
    assert p.problem is None and math.isinf(p.error)
    assert "0th and 100th percentiles" in p.explanation     # anywhere: what an unbounded error means
