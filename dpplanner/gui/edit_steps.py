"""An edit while it waits for its redistribution (``Pending``: the steps chained onto it, each
where it was made), the redistribution's answer shown to the views before the plan takes it
(``Precomputed``), and the rules the editor (gui/editing.py) applies to edits: whether a budget
edit needs a redistribution, what a refusal says (of one edit, of the waiting ones, of an edit
whose row a waiting one removed) and which pins it names, a field change refused like a bad
value."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence

from dpplanner.compute import jobs
from dpplanner.gui.compute import Handlers
from dpplanner.model import Plan, PlanError, Statistic
from dpplanner.model.engine_inputs import allocation_budget
from dpplanner.model.validation import release_clause


@dataclass(frozen=True)
class Refusal:
    message: str
    row: Optional[int] = None
    field: Optional[str] = None


def refusal(exc: PlanError, trial: Plan, row: Optional[int], field: Optional[str],
            cause: Optional[Callable[[Plan], tuple[str, str]]], note: str = "",
            held_in: Optional[Plan] = None) -> Refusal:
    """``held_in``: the state exc's held indices number (the last waiting edit's, when edits
    waited together); ``row`` numbers ``trial``'s statistics."""
    message = str(exc)
    if exc.held_indices and cause is not None:
        asked, remedy = cause(trial)
        held_in = trial if held_in is None else held_in
        named = others_named(message, exc.held_indices, row if held_in is trial else None, held_in)
        message = f"{asked}: {named}; {remedy}"
    where_row = row if row is not None or field is not None else exc.index
    return Refusal(message + note, where_row, field or exc.field)


def pending_refusals(pending: Pending, exc: PlanError, causes: bool = True) -> list[Refusal]:
    """Each waiting edit refused where it was made, in order (none of them is made); ``causes``:
    say what each asked for, when its state's pins are what refused it."""
    note = ""
    if len(pending.steps) > 1:
        note = (f" (the {len(pending.steps)} edits made before the redistribution answered "
                f"were tried together and none was made: {pending.text})")
    return [refusal(exc, trial, step.row, step.field, step.cause if causes else None, note,
                    held_in=pending.trial)
            for step, trial in zip(pending.steps, pending.trials)]


def gone_refusal(row: int, text: str) -> Refusal:
    """An edit of row ``row`` on screen that a waiting edit removed or replaced."""
    return Refusal(f"{text}: statistic {row + 1} was removed or replaced by the edit made just "
                   "before, so this one was not applied")


@dataclass(frozen=True)
class Step:
    """One edit waiting for its redistribution: where it was made, to report a refusal there."""

    text: str
    row: Optional[int]                  # on screen, in the settled plan the table shows
    field: Optional[str]
    cause: Optional[Callable[[Plan], tuple[str, str]]]      # of the state right after this edit


@dataclass(frozen=True)
class Pending:
    """Edits tried, valid, not yet in the plan: ``trials[i]`` is the settled plan with the first
    i + 1 of ``steps`` made (each a trial of the one before), none redistributed yet."""

    trials: tuple[Plan, ...]
    steps: tuple[Step, ...]
    rebalance: bool                     # one of the steps asks for a redistribution

    @property
    def trial(self) -> Plan:
        return self.trials[-1]

    @property
    def text(self) -> str:
        return " + ".join(s.text for s in self.steps)


@dataclass(frozen=True)
class Precomputed:
    """A redistribution's answer: the state the plan takes next, (budget, statistics, view), and
    its evaluation; None while the job computes it: ``follow(channel, handlers)`` makes the job
    ``channel``'s, its evaluation going to ``handlers`` (ComputeController.hand_on)."""

    state: tuple
    evaluation: Optional[jobs.EvaluateResult]
    follow: Callable[[str, Handlers], bool] = lambda _channel, _handlers: False


def changes_allocation(plan: Plan, trial: Plan) -> bool:
    """Whether a budget edit needs a redistribution: it is on and what it reads changed (ε_g, δ_g,
    theorem, η, reserve, δ split, amplification by N: ``allocation_budget``, which the model tests
    against the request itself, so a new budget field cannot be forgotten here)."""
    if not trial.budget.redistribute:
        return False
    if not plan.budget.redistribute:
        return True                 # just switched on
    if allocation_budget(plan.budget) != allocation_budget(trial.budget):
        return True
    # a target error's ε_i followed the edit (a new confidence, say): the free rows must follow it
    return any(a.epsilon != b.epsilon for a, b in zip(plan.statistics, trial.statistics))


def others_named(message: str, held: Sequence[int], row: Optional[int], trial: Plan) -> str:
    """The pins to release, without the statistic being edited: the user just asked for its ε_i
    or error, so "unpin or lower 'mean b'" (itself) is no advice."""
    clause = release_clause(trial.statistics, held)
    if row is None or row not in held or not message.endswith(clause):
        return message
    others = [i for i in held if i != row]
    head = message[:-len(clause)].rstrip("; ")
    return f"{head}; {release_clause(trial.statistics, others, other=True)}" if others else head


def replaced(stat: Statistic, changes: Mapping[str, Any]) -> Statistic:
    try:
        return stat.replace(**changes)
    except ValueError as exc:       # e.g. an unknown kind: refused like any other bad value
        raise PlanError(str(exc)) from exc
