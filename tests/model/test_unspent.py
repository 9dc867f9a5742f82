"""The reason a redistribution may leave budget unspent: from the engine's allocation to the
model's result (``rebalanced``), and remembered by state for a window's Undo/Redo."""

from __future__ import annotations

import json

from dpplanner.model import Budget, Kind, Statistic, files
from dpplanner.model.examples import example_path
from dpplanner.model.redistribution import UnspentReasons, allocated, rebalanced


def test_rebalanced_carries_the_engines_reason_word_for_word():
    """Discrete Laplace counts at eta = 1e-6: the total cannot be certified within eta."""
    doc = json.loads(example_path("census").read_text(encoding="utf-8"))
    base = doc["statistics"][0]
    doc["budget"].update(epsilon=2.0, eta=1e-6)
    doc["statistics"] = [dict(base, name="pinned", held=True, epsilon=0.01),
                         dict(base, name="free 1"), dict(base, name="free 2")]
    plan = files.loads_plan(json.dumps(doc))
    done = rebalanced(plan.budget, plan.statistics)
    stats, allocation = allocated(plan.budget, plan.statistics)
    assert done.statistics == stats
    assert done.unspent_reason == allocation.composition.extra["waste_reason"]
    assert "more than eta = 1e-06" in done.unspent_reason


def test_rebalanced_says_nothing_when_the_budget_is_spent():
    budget = Budget(epsilon=2.0, delta=1e-6, theorem="basic")
    done = rebalanced(budget, (Statistic("a", kind=Kind.COUNT, epsilon=0.5),
                               Statistic("b", kind=Kind.COUNT, epsilon=0.25)))
    assert sum(s.epsilon for s in done.statistics) <= 2.0 and done.unspent_reason is None


def test_reasons_are_remembered_by_state_and_forgotten_when_a_redistribution_has_none():
    budget, other = Budget(epsilon=1.0), Budget(epsilon=0.5)
    a = (Statistic("a", epsilon=0.5),)
    b = (Statistic("a", epsilon=0.25),)
    reasons = UnspentReasons(kept=2)
    reasons.remember(budget, a, "why a")
    reasons.remember(budget, b, "why b")
    assert reasons.of(budget, a) == "why a" and reasons.of(budget, b) == "why b"
    assert reasons.of(other, a) is None                         # another budget: another state
    assert reasons.of(budget, (Statistic("a", epsilon=0.5),)) == "why a"     # equal, not the same
    reasons.remember(budget, a, None)
    assert reasons.of(budget, a) is None and reasons.of(budget, b) == "why b"
    reasons.remember(other, a, "why c")
    reasons.remember(other, b, "why d")                         # kept = 2: the oldest goes
    assert reasons.of(budget, b) is None and reasons.of(other, b) == "why d"
