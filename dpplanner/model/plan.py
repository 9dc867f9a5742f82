"""The plan document: a Budget and a list of Statistics, with change notifications.

Every mutating method validates the whole resulting state first (``validation.py``), gives each
statistic with a target error the epsilon that error needs in it (``targets.py``), and only then
swaps it in, so after a PlanError the plan is exactly as it was and no event was sent.
Redistribution is not done here: ``allocation_request()`` snapshots what ``engine.allocate`` needs
into a frozen request and ``apply_allocation(epsilons)`` writes a result back; ``redistribution.py``
runs the two synchronously for the command line and scripts, the window runs them on its worker.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional, Sequence

from .statistic import SENSITIVITY_TIERS, TIERS_BY_KEY, Budget, Statistic
from .engine_inputs import (AllocationRequest, CompositionInputs, allocation_request,
                            composition_inputs, with_epsilons)
from .events import Listener, PlanEvent
from .privacy import BudgetBalance, StatisticPrivacy, statistic_privacy, statistics_privacy
from .requests import CurveView, EvaluateRequest, evaluation_request
from .saveable import check_saveable
from .targets import ended_targets, epsilon_for_target, meet_targets, typed_fields
from .validation import (PlanError, amplification_ratio, budget_warnings, validate_metadata,
                         statistic_deltas, validate_state)


@dataclass(frozen=True)
class PlanSnapshot:
    """The complete state of a plan, for undo and for handing to another thread."""

    budget: Budget
    statistics: tuple[Statistic, ...]
    title: str = ""
    description: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)
    #: Taken from a plan (whose state is always valid): restoring it needs no second validation
    #: (~0.1 ms a statistic: opening or undoing on a plan of thousands held the window that long).
    _validated: bool = field(default=False, compare=False, repr=False)


# --- the document ------------------------------------------------------------------------------

class Plan:
    """A privacy-budget plan: budget settings plus an ordered list of statistics.

    Read it with ``plan.budget``, ``plan.statistics`` (a tuple), ``len(plan)``, ``plan[i]``.
    Change it only through the methods below; listeners registered with ``subscribe`` get a
    PlanEvent after every change. ``revision`` increases with every change (used to drop stale
    worker results).
    """

    def __init__(self, budget: Optional[Budget] = None, statistics: Sequence[Statistic] = (), *,
                 title: str = "", description: str = "", extra: Optional[Mapping] = None):
        b, stats = _valid(budget or Budget(), tuple(statistics))
        title, description = validate_metadata(title, description)
        check_saveable(b, stats, title, description, dict(extra or {}))
        self._budget = b
        self._stats: tuple[Statistic, ...] = stats
        self._title = title
        self._description = description
        self._extra = dict(extra or {})
        self._listeners: list[Listener] = []
        self._revision = 0
        #: What the user should be told about how this plan was read (e.g. a file migrated from
        #: an older format version); not part of the document, not saved.
        self.notes: tuple[str, ...] = ()
        #: The defaults its file's missing optional fields took ("budget reserve = 0.0"), read
        #: from a file only; `dpplanner-cli validate` lists them.
        self.defaults: tuple[str, ...] = ()

    # reading
    @property
    def budget(self) -> Budget:
        return self._budget

    @property
    def statistics(self) -> tuple[Statistic, ...]:
        return self._stats

    @property
    def title(self) -> str:
        return self._title

    @property
    def description(self) -> str:
        return self._description

    @property
    def extra(self) -> dict:
        """Unknown top-level file fields, kept for the round trip (a copy)."""
        return dict(self._extra)

    @property
    def revision(self) -> int:
        return self._revision

    def __len__(self) -> int:
        return len(self._stats)

    def __getitem__(self, i: int) -> Statistic:
        return self._stats[i]

    def __iter__(self) -> Iterator[Statistic]:
        return iter(self._stats)

    @property
    def k(self) -> int:
        """Number of queries the engine composes (repetitions counted)."""
        return sum(s.repetitions for s in self._stats)

    # notifications
    def subscribe(self, listener: Listener) -> None:
        if listener not in self._listeners:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def _emit(self, events: Sequence[PlanEvent]) -> None:
        for event in events:
            for listener in list(self._listeners):
                listener(event)

    def _commit(self, budget: Budget, stats: Sequence[Statistic], events: list[PlanEvent]) -> None:
        """Validate the candidate state (targets met; a plan file must be able to hold it), then
        swap it in and notify. Under an unchanged budget the statistics the plan holds now are valid
        as they are (only the edited ones are checked)."""
        known = self._stats if budget == self._budget else ()
        budget, stats = _valid(budget, tuple(stats), known)
        check_saveable(budget, stats, self._title, self._description, self._extra)
        self._budget, self._stats = budget, stats
        self._revision += 1
        self._emit(events)

    def _index(self, i: int, *, allow_end: bool = False) -> int:
        n = len(self._stats)
        if isinstance(i, bool) or not isinstance(i, int) or not (0 <= i < n + (1 if allow_end else 0)):
            top = n if allow_end else n - 1
            if top < 0:
                raise PlanError(f"row {i!r} does not exist; the plan has no statistics")
            raise PlanError(f"row {i!r} does not exist; rows run from 0 to {top}")
        return i

    # editing
    def set_budget(self, budget: Optional[Budget] = None, **changes) -> None:
        """Replace the budget (or change some of its fields by keyword)."""
        unknown = sorted(set(changes) - set(Budget.__dataclass_fields__))
        if unknown:
            raise PlanError(f"unknown budget setting {unknown[0]!r}; the settings are: "
                            f"{', '.join(f for f in Budget.__dataclass_fields__ if f != 'extra')}")
        try:
            new = (budget or self._budget).replace(**changes)
        except ValueError as exc:       # e.g. an unknown neighbouring relation
            raise PlanError(f"budget: {exc}", field="neighbouring") from None
        self._commit(new, self._stats, [PlanEvent("budget")])

    def apply_tier(self, key: str) -> None:
        """Set epsilon_g and delta_g from a sensitivity preset (see SENSITIVITY_TIERS)."""
        if key not in TIERS_BY_KEY:
            raise PlanError(f"unknown sensitivity tier {key!r}; use one of: "
                            f"{', '.join(t.key for t in SENSITIVITY_TIERS)}", field="tier")
        t = TIERS_BY_KEY[key]
        self.set_budget(epsilon=t.epsilon, delta=t.delta)

    def set_metadata(self, *, title: Optional[str] = None, description: Optional[str] = None) -> None:
        title, description = validate_metadata(self._title if title is None else title,
                                               self._description if description is None else description)
        check_saveable(self._budget, self._stats, title, description, self._extra)
        self._title, self._description = title, description
        self._revision += 1
        self._emit([PlanEvent("metadata")])

    def update_statistic(self, i: int, stat: Statistic) -> None:
        i = self._index(i)
        stats = list(self._stats)
        stats[i] = _as_meant(self._stats[i], stat, i)
        self._commit(self._budget, stats, [PlanEvent("changed", (i,))])

    def update_statistics(self, changes: Mapping[int, Statistic]) -> None:
        """Several rows at once (one validation, one event)."""
        stats = list(self._stats)
        for i, s in changes.items():
            stats[self._index(i)] = _as_meant(self._stats[i], s, i)
        self._commit(self._budget, stats, [PlanEvent("changed", tuple(sorted(changes)))])

    def insert(self, i: int, stat: Statistic) -> None:
        i = self._index(i, allow_end=True)
        stats = list(self._stats)
        stats.insert(i, stat)
        self._commit(self._budget, stats, [PlanEvent("inserted", (i,))])

    def append(self, stat: Statistic) -> None:
        self.insert(len(self._stats), stat)

    def remove(self, i: int) -> Statistic:
        i = self._index(i)
        stats = list(self._stats)
        removed = stats.pop(i)
        self._commit(self._budget, stats, [PlanEvent("removed", (i,))])
        return removed

    def move(self, i: int, j: int) -> None:
        """Move row i so that it ends up at row j (order matters for the prefix curve only)."""
        i, j = self._index(i), self._index(j)
        if i == j:
            return
        stats = list(self._stats)
        stats.insert(j, stats.pop(i))
        self._commit(self._budget, stats, [PlanEvent("moved", (i, j), source=i, destination=j)])

    def replace_all(self, statistics: Sequence[Statistic], budget: Optional[Budget] = None) -> None:
        """New contents (e.g. a CSV import); listeners get one "reset"."""
        self._commit(budget or self._budget, statistics, [PlanEvent("reset")])

    def snapshot(self) -> PlanSnapshot:
        return PlanSnapshot(self._budget, self._stats, self._title, self._description,
                            dict(self._extra), _validated=True)

    def restore(self, snapshot: PlanSnapshot) -> None:
        """Go back to a snapshot exactly (no redistribution); listeners get one "reset"."""
        if snapshot._validated:
            budget, stats = snapshot.budget, snapshot.statistics
        else:
            budget, stats = _valid(snapshot.budget, snapshot.statistics)
        self._budget, self._stats = budget, stats
        self._title, self._description = snapshot.title, snapshot.description
        self._extra = dict(snapshot.extra)
        self._revision += 1
        self._emit([PlanEvent("reset")])

    # trying an edit before making it
    def trial(self) -> "Plan":
        """A detached copy to try an operation on: the same state, no listeners. Its methods
        validate as usual; ``adopt`` then takes the result over without validating again.

        A trial of a (not yet adopted) trial tries a further operation on the same plan: it keeps
        the first one's changes and events, and adopting it makes both (edits chained while the
        first waits for its redistribution)."""
        origin = getattr(self, "_origin", None)
        trial = Plan.__new__(Plan)
        trial._budget, trial._stats = self._budget, self._stats
        trial._title, trial._description = self._title, self._description
        trial._extra = dict(self._extra)
        trial._revision = self._revision
        trial._listeners = []
        trial._origin = origin if origin is not None else (self, self._revision)
        trial._recorded = list(self._recorded) if origin is not None else []
        trial.subscribe(trial._recorded.append)
        return trial

    @property
    def recorded(self) -> tuple[PlanEvent, ...]:
        """The changes a trial went through, in order (for following a row through them)."""
        return tuple(getattr(self, "_recorded", ()))

    def adopt(self, trial: "Plan") -> None:
        """Take over the state a ``trial`` of this plan reached and send the events it recorded.
        Refused if this plan changed since the trial was made."""
        origin = getattr(trial, "_origin", None)
        if origin is None or origin[0] is not self or origin[1] != self._revision:
            raise PlanError("the edit was tried on an older state of the plan; try it again")
        if trial._revision == self._revision:
            return                      # the operation changed nothing
        self._budget, self._stats = trial._budget, trial._stats
        self._title, self._description = trial._title, trial._description
        self._extra = dict(trial._extra)
        self._revision = trial._revision
        trial._origin = None            # a trial is adopted once
        events = trial._recorded
        if len(events) == 2 and events[1].kind == "changed" and events[1].rebalanced:
            # An edit and the redistribution tried with it are one change: one event. (Two
            # chained edits whose redistribution moved nothing are not: the second's rows count.)
            events = [dataclasses.replace(events[0], rebalanced=True)]
        elif len(events) > 1:
            events = [PlanEvent("reset")]     # chained edits: the views redraw the whole plan
        self._emit(events)

    # accuracy
    def amplification(self) -> float:
        """N/n when amplification by sampling is on, else 1."""
        return amplification_ratio(self._budget)

    def deltas(self) -> list[float]:
        """delta_i per release of each statistic (Gaussian share of the split, custom, or 0)."""
        return statistic_deltas(self._budget, self._stats)

    def privacy(self, i: int) -> StatisticPrivacy:
        """Budget, functioning budget and accuracy of statistic i."""
        i = self._index(i)
        return statistic_privacy(self._budget, self._stats[i], self.deltas()[i])

    def privacy_all(self, limit=None) -> list[StatisticPrivacy]:
        """Every statistic's privacy; under a caller's time ``limit`` (privacy.TimeLimit) only the
        first ones, those computed before it was past."""
        return statistics_privacy(self._budget, self._stats, self.deltas(), limit)

    def epsilon_for_error(self, i: int, error: float) -> float:
        """The epsilon statistic i needs for ``error`` at the plan's confidence (not applied)."""
        i = self._index(i)
        return epsilon_for_target(self._budget, self._stats, i, error, self.deltas())

    def set_target_error(self, i: int, error: float) -> None:
        """Make ``error`` statistic i's target: it is pinned (``held``) and from now on its epsilon
        is whatever that error needs, after every edit, until it is unpinned or given an
        epsilon (``targets.py``)."""
        self.epsilon_for_error(i, error)        # refused now, with the plain reason, if impossible
        stats = list(self._stats)
        stats[i] = stats[i].replace(**typed_fields({"error": error}))
        self._commit(self._budget, stats, [PlanEvent("changed", (i,))])

    # composition and redistribution
    def composition_inputs(self) -> CompositionInputs:
        return composition_inputs(self._budget, self._stats)

    def allocation_request(self) -> AllocationRequest:
        """Frozen inputs of ``engine.allocate`` for the current state (run it on a worker)."""
        return allocation_request(self._budget, self._stats, self._revision)

    def evaluation_request(self, view: CurveView) -> EvaluateRequest:
        """What the window's totals and cost curve need, for the current state and ``view``."""
        return evaluation_request(self.composition_inputs(), view)

    def apply_allocation(self, epsilons: Sequence[float], *, held: Optional[Sequence[bool]] = None,
                         revision: Optional[int] = None) -> None:
        """Write redistributed epsilons back (free rows only, or all rows where held is None and
        nothing is held). With ``revision``, refuse a result computed for an older state."""
        if revision is not None and revision != self._revision:
            raise PlanError(f"the allocation was computed for revision {revision} but the plan is at "
                            f"revision {self._revision}; recompute it")
        only = [not h for h in held] if held is not None else [not s.held for s in self._stats]
        # Only epsilons change, each checked against its field rule by with_epsilons; no
        # whole-plan rule involves epsilon, so the state stays valid without validating it again.
        stats = with_epsilons(self._stats, epsilons, only)
        # (a row's copy differs from it in its epsilon alone: compared, not every field)
        changed = tuple(i for i, (a, b) in enumerate(zip(self._stats, stats)) if a.epsilon != b.epsilon)
        if changed:
            self._stats = stats
            self._revision += 1
            self._emit([PlanEvent("changed", changed, rebalanced=True)])

    def total(self, theorem: Optional[str] = None, *, time_limit: Optional[float] = None):
        """engine.compose of the plan under ``theorem`` (default: the plan's), synchronously
        (``time_limit`` as engine.compose takes it)."""
        from dpplanner import engine
        inp = self.composition_inputs()
        return engine.compose(list(inp.epsilons), list(inp.deltas), inp.delta_g,
                              theorem=theorem or self._budget.theorem, eta=inp.eta,
                              multiplicities=list(inp.multiplicities), mechanisms=list(inp.mechanisms),
                              time_limit=time_limit)

    def balance(self, total_epsilon: float) -> BudgetBalance:
        """Compare a total (e.g. the best valid one from the engine) with the spendable budget;
        with redistribution off this says how far over or under budget the plan is."""
        return BudgetBalance(float(total_epsilon), self._budget.spendable_epsilon)

    def warnings(self) -> list[str]:
        return budget_warnings(self._budget)


def _valid(budget: Budget, stats, known=()) -> tuple[Budget, tuple[Statistic, ...]]:
    """A state every Plan holds: valid, and every target error met (``known``: statistics already
    valid under this budget, as ``validate_state`` takes them)."""
    budget, stats = validate_state(budget, stats, known)
    return budget, meet_targets(budget, stats)


def _as_meant(before: Statistic, after: Statistic, i: int) -> Statistic:
    """``targets.ended_targets``, its refusal placed at row i."""
    try:
        return ended_targets(before, after)
    except PlanError as exc:
        raise PlanError(f"statistic {i + 1}: {exc}", index=i, field=exc.field) from None
