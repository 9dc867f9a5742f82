"""Redistribution: give the free statistics the epsilon the plan's theorem leaves them.

Plain functions over the model (no Qt, no threads). The command line and scripts call them
synchronously; the window calls ``rebalanced`` inside its allocate job on the compute worker, so
neither the pin check nor the allocation ever composes on the GUI thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from dpplanner.engine.theorems import KOV

from .engine_inputs import allocation_request, with_epsilons
from .plan import Plan
from .statistic import Budget, Statistic
from .validation import PlanError, amplification_ratio, check_discrete_shares, check_holds, floors_refusal


@dataclass(frozen=True)
class Redistribution:
    """What ``rebalanced`` gives: the statistics, and why part of the budget may be left unspent
    (``unspent_reason``; None: nothing to say)."""

    statistics: tuple[Statistic, ...]
    unspent_reason: Optional[str] = None


def unspent_reason(total) -> Optional[str]:
    """Why a redistribution whose certified total is ``total`` may leave part of the budget
    unspent, in the engine's words (its ``waste_reason``): the command line's ``note:`` line and
    the window's note under the Spent bar. None: nothing to say, or nothing was redistributed."""
    return total.extra.get("waste_reason") if total is not None else None


class UnspentReasons:
    """The ``unspent_reason`` of the last few states redistributions left, by state (budget and
    statistics): a window says it while its plan is in one of them, after Undo or Redo back to
    it too. States are compared by equality, which costs next to nothing per statistic a state
    shares with the plan (the same object); older states are said again by redistributing them."""

    def __init__(self, kept: int = 32) -> None:
        self._kept = kept
        self._states: list[tuple[Budget, tuple[Statistic, ...], str]] = []

    def remember(self, budget: Budget, stats: tuple[Statistic, ...], why: Optional[str]) -> None:
        """A redistribution left (budget, stats) with reason ``why`` (None: nothing to say)."""
        others = [s for s in self._states if (s[0], s[1]) != (budget, stats)]
        self._states = (others[-(self._kept - 1):] + [(budget, stats, why)]) if why else others

    def of(self, budget: Budget, stats: tuple[Statistic, ...]) -> Optional[str]:
        return next((why for b, s, why in reversed(self._states) if b == budget and s == stats), None)


def rebalanced(budget: Budget, stats: Sequence[Statistic], *, cancel=None,
               progress=None, found=None) -> Redistribution:
    """The statistics after redistribution, with the reason it may leave budget unspent; PlanError
    if there is none (with ``held_indices`` when the pins alone use the budget; with the field,
    where redistribution is off, when an OpenDP weight or the global epsilon leaves a statistic too
    little for its noise). Pinned (held) statistics keep their epsilon. ``found`` as
    engine.allocate takes it."""
    stats, allocation = allocated(budget, stats, cancel=cancel, progress=progress, found=found)
    return Redistribution(stats, unspent_reason(allocation.composition if allocation is not None else None))


def allocated(budget: Budget, stats: Sequence[Statistic], *, cancel=None, progress=None,
              time_limit=None, found=None):
    """``rebalanced``'s statistics and the engine's Allocation (its ``composition``: the certified
    total of those statistics; None for an empty plan). ``time_limit`` and ``found`` as
    engine.allocate takes them."""
    if not stats:
        return tuple(stats), None
    if not budget.redistribute and amplification_ratio(budget) == 1.0:
        check_discrete_shares(budget, stats)    # (validate_state checks it where redistribution is on)
    request = allocation_request(budget, stats)
    if all(request.held) or not _pins_leave_room(request):
        check_holds(budget, stats)      # a refusal is likely: say so at once, naming the pins
    from dpplanner import engine
    try:
        result = request.run(cancel=cancel, progress=progress, time_limit=time_limit, found=found)
    except engine.BudgetError as exc:
        # the pins alone using the budget is the usual reason; otherwise it is checked only now (a
        # composition of the pinned statistics), as an allocation that succeeds proves they leave room
        check_holds(budget, stats)
        held = list(exc.held_indices or [i for i, h in enumerate(request.held) if h])
        why = floors_refusal(budget, stats, exc.floored, exc.needed) if exc.floored else str(exc)
        raise PlanError(f"redistribution refused: {why}", held_indices=held) from None
    except ValueError as exc:
        if request.theorem == KOV and isinstance(exc, engine.NotApplicable):   # (the plan's shape)
            raise PlanError(f"{engine.theorem(KOV).label} applies only when every statistic gets the "
                            "same ε_i and δ_i, and this plan's weights, pins or noise (a Gaussian's δ_i) "
                            "give them different ones; choose optimal, which takes unequal statistics") from None
        raise PlanError(f"redistribution failed under {engine.theorem(request.theorem).label}: {exc}") from None
    return with_epsilons(stats, list(result.epsilons), [not h for h in request.held]), result


def _pins_leave_room(request) -> bool:
    """Whether the pinned statistics surely leave part of the budget to the free ones: their plain
    sum is below it (with their deltas within delta_g), or a certified upper end of their
    composition is (engine.allocate's upper_bound: under pld a closed form, or its first lattice
    alone). False says only that a refusal is likely: it is decided on the pins' whole certified
    total (check_holds), the number the window shows, so a pin is never refused where that total
    leaves room; an allocation then runs and checks it again."""
    held = [i for i, h in enumerate(request.held) if h]
    # The plain sum bounds every theorem's total only where the pins' deltas add up to at most
    # delta_g: basic composition then gives (sum eps_i, sum delta_i), and no theorem is worse than
    # basic. A plan's delta split keeps that (validate_state), statistics handed in directly need
    # not: there the deltas alone may exceed delta_g, and the refusal is said at once.
    if sum(request.epsilons[i] * request.multiplicities[i] for i in held) < request.epsilon_g and \
            sum(request.deltas[i] * request.multiplicities[i] for i in held) <= request.delta_g:
        return True
    from dpplanner.engine.allocate import upper_bound
    try:
        return upper_bound([request.epsilons[i] for i in held], [request.deltas[i] for i in held],
                           request.delta_g, request.theorem, request.eta,
                           [request.multiplicities[i] for i in held],
                           mechanisms=[request.mechanisms[i] for i in held] if request.mechanisms else None,
                           enough=request.epsilon_g) < request.epsilon_g
    except ValueError:      # (kov on unequal pins: check_holds says what applies)
        return False


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
