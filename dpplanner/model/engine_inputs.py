"""What the engine is asked for a plan, built from its budget and statistics alone: the inputs of
a composition (``composition_inputs``), the frozen request of a redistribution
(``allocation_request``, and ``allocation_budget``, the part of a budget it depends on), and the
redistributed epsilons written back (``with_epsilons``). ``Plan`` and the compute jobs both use them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from .statistic import Budget, Statistic
from .releases import statistic_mechanisms
from .validation import (FIELD_RULES, MIN_NORMAL, PlanError, amplification_ratio, ok_range,
                         statistic_deltas)


@dataclass(frozen=True)
class CompositionInputs:
    """What the engine composes: one row per statistic, repetitions as multiplicities."""

    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    multiplicities: tuple[int, ...]
    delta_g: float
    eta: float
    mechanisms: tuple[str, ...] = ()      # engine.MECHANISMS per row (see statistic_mechanisms)

    @property
    def k(self) -> int:
        return sum(self.multiplicities)


@dataclass(frozen=True)
class AllocationRequest:
    """Everything ``engine.allocate`` needs, frozen; ``revision`` identifies the plan state."""

    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    held: tuple[bool, ...]
    weights: tuple[float, ...]
    multiplicities: tuple[int, ...]
    epsilon_g: float
    delta_g: float
    theorem: str
    eta: float
    revision: int = 0
    mechanisms: tuple[str, ...] = ()

    def run(self, cancel=None, progress=None, time_limit=None, found=None):
        """Call ``engine.allocate``; returns its Allocation (raises BudgetError / ValueError)."""
        from dpplanner import engine
        return engine.allocate(list(self.epsilons), list(self.deltas), list(self.held),
                               list(self.weights), self.epsilon_g, self.delta_g,
                               theorem=self.theorem, eta=self.eta,
                               multiplicities=list(self.multiplicities),
                               mechanisms=list(self.mechanisms) or None, cancel=cancel,
                               progress=progress, time_limit=time_limit, found=found)


def composition_inputs(budget: Budget, stats: Sequence[Statistic]) -> CompositionInputs:
    deltas = tuple(statistic_deltas(budget, stats))
    return CompositionInputs(tuple(float(s.epsilon) for s in stats), deltas,
                             tuple(int(s.repetitions) for s in stats), budget.delta, budget.eta,
                             statistic_mechanisms(budget, stats))


def allocation_request(budget: Budget, stats: Sequence[Statistic], revision: int = 0) -> AllocationRequest:
    inputs = composition_inputs(budget, stats)
    return AllocationRequest(inputs.epsilons, inputs.deltas, tuple(bool(s.held) for s in stats),
                             tuple(float(s.weight) for s in stats), inputs.multiplicities,
                             budget.spendable_epsilon, budget.delta, budget.theorem, budget.eta,
                             revision, inputs.mechanisms)


def allocation_budget(budget: Budget) -> tuple:
    """What of ``budget`` an allocation request depends on: two budgets with the same key give the
    same request for any statistics (tested field by field), so whether a budget edit needs a
    redistribution is decided without building the request (O(n)) on the GUI thread."""
    return (budget.spendable_epsilon, budget.delta, budget.delta_to_statistics, budget.eta,
            budget.theorem, amplification_ratio(budget) != 1.0, budget.contributions,
            budget.neighbouring, budget.dataset_size)


def with_epsilons(stats: Sequence[Statistic], epsilons: Sequence[float],
                  only: Optional[Sequence[bool]] = None) -> tuple[Statistic, ...]:
    """Statistics with new epsilons (where ``only`` is True, if given)."""
    if len(epsilons) != len(stats):
        raise PlanError(f"got {len(epsilons)} epsilons for {len(stats)} statistics")
    rule = FIELD_RULES["epsilon"]
    out = []
    for i, (s, e) in enumerate(zip(stats, epsilons)):
        if only is None or only[i]:
            e = float(e)
            if not (ok_range(rule, e) and e >= MIN_NORMAL):   # (what rule.check refuses: its
                # message built only then)
                rule.check(e, f"statistic {i + 1} ({s.name!r}) after redistribution", i)
            # s.replace(epsilon=e) without dataclasses.replace's pass of every field through
            # __init__ (the others are checked and coerced already), and a shallow copy through
            # its __dict__ rather than copy.copy's __reduce_ex__: an edit of 1000 statistics
            # writes them back ~14 -> ~2.5 ms, in the window and again in the engine process.
            copied = object.__new__(type(s))
            copied.__dict__.update(s.__dict__)
            copied.__dict__["epsilon"] = e
            s = copied
        out.append(s)
    return tuple(out)
