"""Redistribution: give the free statistics the epsilon the plan's theorem leaves them.

Plain functions over the model (no Qt, no threads). The command line and scripts call them
synchronously; the window calls ``rebalanced`` inside its allocate job on the compute worker, so
neither the pin check nor the allocation ever composes on the GUI thread.
"""

from __future__ import annotations

from typing import Callable, Sequence

from .engine_inputs import allocation_request, with_epsilons
from .plan import Plan
from .statistic import Budget, Statistic
from .validation import PlanError, check_holds


def rebalanced(budget: Budget, stats: Sequence[Statistic], *, cancel=None,
               progress=None) -> tuple[Statistic, ...]:
    """The statistics after redistribution; PlanError (with ``held_indices`` when the pins alone
    use the budget) if there is none. Pinned (held) statistics keep their epsilon."""
    return allocated(budget, stats, cancel=cancel, progress=progress)[0]


def allocated(budget: Budget, stats: Sequence[Statistic], *, cancel=None, progress=None,
              time_limit=None):
    """``rebalanced``'s statistics and the engine's Allocation (its ``composition``: the certified
    total of those statistics; None for an empty plan). ``time_limit`` as engine.allocate takes it."""
    if not stats:
        return tuple(stats), None
    pinned = sum(s.epsilon * s.repetitions for s in stats if s.held)
    if all(s.held for s in stats) or pinned >= budget.spendable_epsilon:
        check_holds(budget, stats)      # a refusal is likely: say so at once, naming the pins
    request = allocation_request(budget, stats)
    from dpplanner import engine
    try:
        result = request.run(cancel=cancel, progress=progress, time_limit=time_limit)
    except engine.BudgetError as exc:
        # the pins alone using the budget is the usual reason; otherwise it is checked only now (a
        # composition of the pinned statistics), as an allocation that succeeds proves they leave room
        check_holds(budget, stats)
        held = list(exc.held_indices or [i for i, h in enumerate(request.held) if h])
        raise PlanError(f"redistribution refused: {exc}", held_indices=held) from None
    except ValueError as exc:
        raise PlanError(f"redistribution failed under the {request.theorem} theorem: {exc}") from None
    return with_epsilons(stats, list(result.epsilons), [not h for h in request.held]), result


def rebalance(plan: Plan, *, progress=None, time_limit=None):
    """Redistribute ``plan`` now (one "changed" event), or raise PlanError and change nothing.
    Returns the engine's Allocation (``progress`` and ``time_limit`` as engine.allocate takes them)."""
    stats, allocation = allocated(plan.budget, plan.statistics, progress=progress, time_limit=time_limit)
    plan.apply_allocation([s.epsilon for s in stats], held=[s.held for s in stats])
    return allocation


def rebalanced_edit(plan: Plan, edit: Callable[[Plan], object], *, progress=None, time_limit=None):
    """Make ``edit`` and redistribute as one change (one event), or raise and change nothing.
    Returns the engine's Allocation (``progress`` and ``time_limit`` as engine.allocate takes them)."""
    trial = plan.trial()
    edit(trial)
    allocation = rebalance(trial, progress=progress, time_limit=time_limit)
    plan.adopt(trial)
    return allocation
