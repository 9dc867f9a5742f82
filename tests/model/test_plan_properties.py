"""Property test: any sequence of edits either applies (and the plan stays valid) or raises
PlanError and leaves the plan, its revision and its listeners' view exactly unchanged."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from dpplanner.model import Budget, Kind, Mechanism, Plan, PlanError, Statistic
from dpplanner.model.plan import validate_state
from dpplanner.model.redistribution import rebalanced_edit

_numbers = st.one_of(st.floats(-10, 200, allow_nan=False), st.integers(-3, 40), st.none(),
                     st.sampled_from([0.0, 1e-9, float("nan"), float("inf")]))

_statistics = st.builds(
    Statistic, name=st.sampled_from(["a", "b", "", "mean x"]),
    kind=st.sampled_from(list(Kind)), mechanism=st.sampled_from(list(Mechanism)),
    epsilon=_numbers, delta=st.sampled_from([0.0, 1e-8, 0.5]), weight=_numbers,
    held=st.booleans(), repetitions=st.sampled_from([1, 2, 0, 1.5]),
    lower=st.sampled_from([None, 0, 10]), upper=st.sampled_from([None, 5, 100]),
    bins=st.sampled_from([None, 3, 0]), granularity=st.sampled_from([None, 1.0, 0.0]),
    n=st.sampled_from([None, 50, 10**7]))

_valid_statistics = st.one_of(
    st.builds(Statistic, name=st.just("count"), epsilon=st.floats(0.01, 2), held=st.booleans(),
              weight=st.floats(0.1, 5), repetitions=st.integers(1, 3)),
    st.builds(Statistic, name=st.just("hist"), kind=st.just(Kind.HISTOGRAM), bins=st.integers(1, 9),
              mechanism=st.sampled_from(list(Mechanism)), epsilon=st.floats(0.01, 2),
              held=st.booleans()),
    st.builds(Statistic, name=st.just("mean"), kind=st.just(Kind.MEAN), lower=st.just(0),
              upper=st.floats(1, 100), mechanism=st.sampled_from(list(Mechanism)),
              epsilon=st.floats(0.01, 2), held=st.booleans()),
    st.builds(Statistic, name=st.just("q"), kind=st.just(Kind.QUANTILE), lower=st.just(0),
              upper=st.just(10), granularity=st.sampled_from([0.5, 1, 2.5]),
              epsilon=st.floats(0.01, 2)),
)
_statistics = st.one_of(_valid_statistics, _statistics)

_edits = st.one_of(
    st.tuples(st.just("insert"), st.integers(-1, 6), _statistics, st.booleans()),
    st.tuples(st.just("update"), st.integers(-1, 6), _statistics, st.booleans()),
    st.tuples(st.just("remove"), st.integers(-1, 6), st.none(), st.booleans()),
    st.tuples(st.just("move"), st.integers(-1, 6), st.integers(-1, 6), st.just(False)),
    st.tuples(st.just("budget"), st.sampled_from(["epsilon", "delta", "delta_split", "reserve",
                                                   "dataset_size", "population", "confidence"]),
              _numbers, st.booleans()),
    st.tuples(st.just("target"), st.integers(-1, 6), st.floats(1e-3, 1e4), st.booleans()),
)


def _apply(plan: Plan, edit) -> None:
    op, a, b, rebalance = edit
    if op == "insert":
        change = lambda p: p.insert(a, b)  # noqa: E731
    elif op == "update":
        change = lambda p: p.update_statistic(a, b)  # noqa: E731
    elif op == "remove":
        change = lambda p: p.remove(a)  # noqa: E731
    elif op == "move":
        change = lambda p: p.move(a, b)  # noqa: E731
    elif op == "budget":
        change = lambda p: p.set_budget(**{a: b})  # noqa: E731
    else:
        change = lambda p: p.set_target_error(a, b)  # noqa: E731
    if rebalance:
        rebalanced_edit(plan, change)
    else:
        change(plan)


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_edits, max_size=8))
def test_edits_apply_or_change_nothing(edits):
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=1000, theorem="basic"),
                [Statistic("c", epsilon=0.3), Statistic("h", kind=Kind.HISTOGRAM, bins=4)])
    seen = []
    plan.subscribe(seen.append)
    for edit in edits:
        before, revision, n_events = plan.snapshot(), plan.revision, len(seen)
        try:
            _apply(plan, edit)
        except PlanError:
            event(f"{edit[0]} refused")
            assert plan.snapshot() == before
            assert plan.revision == revision and len(seen) == n_events
            continue
        event(f"{edit[0]} applied")
        # whatever was accepted is a valid plan, and listeners heard about it
        assert validate_state(plan.budget, plan.statistics) == (plan.budget, plan.statistics)
        assert plan.revision > revision or plan.snapshot() == before
        if edit[3] and len(plan) and edit[0] != "move":   # rebalanced: the budget is spent
            spent = sum(s.epsilon * s.repetitions for s in plan)
            assert spent <= plan.budget.spendable_epsilon * (1 + 1e-9)
            assert spent == pytest.approx(plan.budget.spendable_epsilon, rel=1e-6)
