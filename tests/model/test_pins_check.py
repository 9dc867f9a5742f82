"""The pins check before a redistribution: pins whose epsilons add up to the budget or more are
refused only on their whole certified total (the number the window shows); a cheaper certified
upper end of their composition lets pins that clearly fit skip that total."""

from __future__ import annotations

import sys

import pytest

from dpplanner.model import Budget, Mechanism, Statistic
from dpplanner.model.redistribution import rebalanced
from dpplanner.model.validation import PlanError


def _pinned(n_pinned: int, epsilon: float = None):
    """Twelve Gaussian counts under pld, redistributed, then the first ``n_pinned`` pinned (at
    ``epsilon`` if given): ten pins of ~0.31 add up to 3.1 of a budget of 1, yet compose to less."""
    budget = Budget(epsilon=1.0, delta=1e-6, dataset_size=10_000, theorem="pld")
    stats = [Statistic(f"c{i}", mechanism=Mechanism.GAUSSIAN, noise="continuous") for i in range(12)]
    stats = list(rebalanced(budget, stats).statistics)
    for i in range(n_pinned):
        stats[i] = stats[i].replace(held=True, epsilon=epsilon or stats[i].epsilon)
    return budget, stats


def _counting_check_holds(monkeypatch) -> list:
    import dpplanner.model.redistribution as redistribution

    calls = []
    real = redistribution.check_holds
    monkeypatch.setattr(redistribution, "check_holds", lambda *a: calls.append(1) or real(*a))
    return calls


def test_pins_over_the_budget_by_their_sum_but_fitting_by_an_upper_end_skip_their_whole_total(monkeypatch):
    budget, stats = _pinned(10)
    assert sum(s.epsilon for s in stats if s.held) > 3 * budget.epsilon
    calls = _counting_check_holds(monkeypatch)
    done = rebalanced(budget, stats).statistics
    assert calls == []
    assert [s.epsilon for s in done[:10]] == [s.epsilon for s in stats[:10]]


def test_pins_that_fit_by_a_closed_form_compose_no_lattice_of_their_own(monkeypatch):
    """Under pld the pins' zcdp total (a closed form, never below pld's) tells they fit: none of
    the compositions the redistribution makes is of the ten pins alone."""
    allocate = sys.modules["dpplanner.engine.allocate"]
    budget, stats = _pinned(10)
    sizes, real = [], allocate.compose_one
    monkeypatch.setattr(allocate, "compose_one", lambda name, inputs: sizes.append(inputs.plan.eps.size)
                        or real(name, inputs))
    calls = _counting_check_holds(monkeypatch)
    done = rebalanced(budget, stats).statistics
    assert 10 not in sizes and 12 in sizes and calls == []
    assert [s.epsilon for s in done[:10]] == [s.epsilon for s in stats[:10]]


def test_an_upper_end_over_the_budget_never_refuses_pins_whose_whole_total_fits(monkeypatch):
    """Where the upper end says nothing (above the budget), the whole total decides: the pins
    are kept and the others redistributed."""
    budget, stats = _pinned(10)
    monkeypatch.setattr(sys.modules["dpplanner.engine.allocate"], "upper_bound", lambda *a, **k: float("inf"))
    calls = _counting_check_holds(monkeypatch)
    done = rebalanced(budget, stats).statistics
    assert calls == [1]
    assert [s.epsilon for s in done[:10]] == [s.epsilon for s in stats[:10]]


def test_pins_whose_whole_total_uses_the_budget_are_refused_by_name(monkeypatch):
    budget, stats = _pinned(10, epsilon=0.9)
    calls = _counting_check_holds(monkeypatch)
    with pytest.raises(PlanError, match="the pinned statistics alone need") as info:
        rebalanced(budget, stats)
    assert calls == [1] and info.value.held_indices == tuple(range(10))


def test_pins_whose_deltas_alone_exceed_delta_g_are_refused_before_any_allocation(monkeypatch):
    """Their plain sum of epsilons is far below the budget, but it bounds their total only where
    their deltas fit delta_g: here they do not (statistics handed in without a plan's delta
    split), so the pins check refuses them at once instead of letting an allocation run first."""
    from dpplanner.model import Kind
    from dpplanner.model.engine_inputs import AllocationRequest

    budget = Budget(epsilon=1.0, delta=1e-6, dataset_size=10_000, theorem="pld")
    stats = [Statistic("a", kind=Kind.CUSTOM, epsilon=0.1, delta=8e-7, held=True),
             Statistic("b", kind=Kind.CUSTOM, epsilon=0.1, delta=8e-7, held=True), Statistic("c")]
    runs = []
    real = AllocationRequest.run
    monkeypatch.setattr(AllocationRequest, "run", lambda self, **k: runs.append(1) or real(self, **k))
    with pytest.raises(PlanError, match="the pinned statistics alone need") as info:
        rebalanced(budget, stats)
    assert runs == [] and info.value.held_indices == (0, 1)
