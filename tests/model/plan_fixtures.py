"""The plan the model's plan tests start from, and the check that a refused edit left it as it was."""

from __future__ import annotations

import pytest

from dpplanner.model import Budget, Kind, Mechanism, Plan, PlanError, PlanEvent, Statistic

G = Mechanism.GAUSSIAN


def sample_plan(theorem="basic", **budget):
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=10_000, theorem=theorem, **budget)
    stats = [Statistic("count", epsilon=0.2),
             Statistic("mean", "income", Kind.MEAN, G, epsilon=0.3, lower=0, upper=100),
             Statistic("hist", "age", Kind.HISTOGRAM, epsilon=0.1, bins=10, weight=2.0)]
    # the continuous noise's closed-form errors (OpenDP noise: tests/release)
    return Plan(b, [s.replace(noise="continuous") for s in stats])


class Recorder:
    def __init__(self, plan):
        self.events: list[PlanEvent] = []
        plan.subscribe(self.events.append)


def assert_refused(plan, rec, call, match):
    before = plan.snapshot()
    revision = plan.revision
    with pytest.raises(PlanError, match=match):
        call()
    assert plan.snapshot() == before and plan.revision == revision and rec.events == []
