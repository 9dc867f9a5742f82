"""The plan document: a Budget and a list of Statistics, with change notifications.

Every mutating method validates the whole resulting state first (``validation.py``) and only
then swaps it in, so after a PlanError the plan is exactly as it was and no event was sent.
Redistribution is split in two for the GUI's worker thread: ``allocation_request()`` snapshots
what ``engine.allocate`` needs into a frozen request, and ``apply_allocation(epsilons)`` writes the
result back. ``rebalance=True`` on the mutating methods does the whole thing synchronously.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence

from . import accuracy as acc
from .statistic import SENSITIVITY_TIERS, TIERS_BY_KEY, Budget, Kind, Mechanism, Statistic
from .validation import (FIELD_RULES, MAX_QUERIES, MAX_STATISTICS, PlanError, amplification_ratio,
                         budget_warnings, validate_budget, validate_statistic)


@dataclass(frozen=True)
class PlanEvent:
    """What changed. ``kind`` is one of "reset", "inserted", "removed", "changed", "moved",
    "budget", "metadata". ``rows`` are the affected rows (after the change for inserted/changed,
    before it for removed); a move has ``source`` and ``destination``."""

    kind: str
    rows: tuple[int, ...] = ()
    source: Optional[int] = None
    destination: Optional[int] = None


Listener = Callable[[PlanEvent], None]


@dataclass(frozen=True)
class PlanSnapshot:
    """The complete state of a plan, for undo and for handing to another thread."""

    budget: Budget
    statistics: tuple[Statistic, ...]
    title: str = ""
    description: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)


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

    def run(self, cancel=None, progress=None):
        """Call ``engine.allocate``; returns its Allocation (raises BudgetError / ValueError)."""
        from dpplanner import engine
        return engine.allocate(list(self.epsilons), list(self.deltas), list(self.held),
                               list(self.weights), self.epsilon_g, self.delta_g,
                               theorem=self.theorem, eta=self.eta,
                               multiplicities=list(self.multiplicities),
                               mechanisms=list(self.mechanisms) or None, cancel=cancel,
                               progress=progress)


@dataclass(frozen=True)
class StatisticPrivacy:
    """Budget and accuracy of one statistic as the plan sees it.

    ``epsilon``/``delta`` are what the engine composes (per release); ``functioning_*`` are what
    the noise is calibrated to (larger when amplification by sampling is on). ``error`` is None for
    custom statistics, or when the statistic cannot be released as set up (``problem`` says why).
    """

    epsilon: float
    delta: float
    functioning_epsilon: float
    functioning_delta: float
    error: Optional[float]
    scale: Optional[float]
    units: str
    explanation: str
    problem: Optional[str] = None


@dataclass(frozen=True)
class BudgetBalance:
    """How a total epsilon compares with what the plan may spend ((1 - reserve) * epsilon_g)."""

    spent: float
    allowed: float

    @property
    def difference(self) -> float:
        """allowed - spent: positive = left over, negative = over budget."""
        return self.allowed - self.spent

    @property
    def fraction(self) -> float:
        return self.spent / self.allowed

    @property
    def over(self) -> bool:
        return self.spent > self.allowed

    def describe(self) -> str:
        if not math.isfinite(self.spent):
            return "infeasible: the target delta cannot be met (see the theorem's reason)"
        if self.over:
            return (f"over budget by {self.spent - self.allowed:.6g} "
                    f"({self.fraction:.1%} of the spendable epsilon {self.allowed:.6g})")
        return (f"within budget: {self.fraction:.1%} of the spendable epsilon {self.allowed:.6g} "
                f"({self.difference:.6g} left)")


# --- pure functions over (budget, statistics) -------------------------------------------------

def statistic_deltas(budget: Budget, stats: Sequence[Statistic]) -> list[float]:
    """delta_i per release: the split spread evenly over Gaussian releases, custom as typed."""
    gaussian_releases = sum(s.repetitions for s in stats
                            if s.kind is not Kind.CUSTOM and s.mechanism is Mechanism.GAUSSIAN)
    share = budget.delta_to_statistics / gaussian_releases if gaussian_releases else 0.0
    out = []
    for s in stats:
        if s.kind is Kind.CUSTOM:
            out.append(float(s.delta))
        elif s.mechanism is Mechanism.GAUSSIAN:
            out.append(share)
        else:
            out.append(0.0)
    return out


def statistic_mechanisms(budget: Budget, stats: Sequence[Statistic]) -> tuple[str, ...]:
    """What each release is for the noise-aware theorems (engine.MECHANISMS).

    A Laplace or Gaussian statistic adds exactly that continuous noise calibrated to its (eps_i,
    delta_i), so its own privacy curve can be composed. Custom statistics are known only by their
    (eps_i, delta_i); so are releases under amplification by sampling, whose guarantee is the
    amplified (eps_i, delta_i) rather than the noise's own curve.
    """
    if amplification_ratio(budget) != 1.0:
        return ("eps-delta",) * len(stats)
    out = []
    for s in stats:
        if s.kind is Kind.CUSTOM:
            out.append("eps-delta")
        elif s.mechanism is Mechanism.GAUSSIAN:
            out.append("gaussian")  # validate_state ensures its delta share is > 0
        else:
            out.append("laplace")
    return tuple(out)


def validate_state(budget: Budget, stats: Sequence[Statistic]) -> tuple[Budget, tuple[Statistic, ...]]:
    """Validate a whole plan state; return it normalised. Raises PlanError."""
    budget = validate_budget(budget)
    if len(stats) > MAX_STATISTICS:
        raise PlanError(f"the plan has {len(stats)} statistics; at most {MAX_STATISTICS} are allowed")
    checked = tuple(validate_statistic(s, i, budget) for i, s in enumerate(stats))
    total = sum(s.repetitions for s in checked)
    if total > MAX_QUERIES:
        raise PlanError(f"the plan releases {total} queries (repetitions counted); at most "
                        f"{MAX_QUERIES} are allowed")
    gaussian = [i for i, s in enumerate(checked)
                if s.kind is not Kind.CUSTOM and s.mechanism is Mechanism.GAUSSIAN]
    if gaussian and not budget.delta_to_statistics > 0:
        i = gaussian[0]
        raise PlanError(f"statistic {i + 1} ({checked[i].name!r}) uses the Gaussian mechanism, which "
                        "needs delta > 0: set a global delta > 0 and a delta split > 0, or use the "
                        "Laplace mechanism", index=i, field="mechanism")
    custom_delta = sum(s.delta * s.repetitions for s in checked if s.kind is Kind.CUSTOM)
    if custom_delta > budget.delta_slack:
        raise PlanError(f"the custom statistics' deltas add up to {custom_delta:.3g}, more than the "
                        f"delta slack {budget.delta_slack:.3g} (global delta x (1 - split)); lower "
                        "them or the delta split", field="delta")
    ratio = amplification_ratio(budget)
    if ratio != 1.0:
        for i, (s, d) in enumerate(zip(checked, statistic_deltas(budget, checked))):
            if d * ratio >= 1.0:
                raise PlanError(f"statistic {i + 1} ({s.name!r}): with amplification N/n = "
                                f"{ratio:.4g} its functioning delta {d * ratio:.3g} is >= 1; lower "
                                "the population size or the delta", index=i, field="delta")
    return budget, checked


def composition_inputs(budget: Budget, stats: Sequence[Statistic]) -> CompositionInputs:
    deltas = tuple(statistic_deltas(budget, stats))
    return CompositionInputs(tuple(float(s.epsilon) for s in stats), deltas,
                             tuple(int(s.repetitions) for s in stats), budget.delta, budget.eta,
                             statistic_mechanisms(budget, stats))


def allocation_request(budget: Budget, stats: Sequence[Statistic], extra_held: Sequence[int] = (),
                       revision: int = 0) -> AllocationRequest:
    extra = set(extra_held)
    inputs = composition_inputs(budget, stats)
    return AllocationRequest(inputs.epsilons, inputs.deltas,
                             tuple(bool(s.held or i in extra) for i, s in enumerate(stats)),
                             tuple(float(s.weight) for s in stats), inputs.multiplicities,
                             budget.spendable_epsilon, budget.delta, budget.theorem, budget.eta,
                             revision, inputs.mechanisms)


def check_holds(budget: Budget, stats: Sequence[Statistic], extra_held: Sequence[int] = ()) -> None:
    """Raise PlanError if no statistic is free or the held ones alone use up the budget."""
    if not stats:
        return
    req = allocation_request(budget, stats, extra_held)
    held = [i for i, h in enumerate(req.held) if h]
    if len(held) == len(stats):
        raise PlanError("every statistic is held: at least one must stay free for redistribution; "
                        "release one (untick its hold box) or switch redistribution off",
                        held_indices=held)
    if not held:
        return
    from dpplanner import engine
    try:
        total = engine.compose([req.epsilons[i] for i in held], [req.deltas[i] for i in held],
                               req.delta_g, theorem=req.theorem, eta=req.eta,
                               multiplicities=[req.multiplicities[i] for i in held],
                               mechanisms=[req.mechanisms[i] for i in held])
        used = total.epsilon
    except ValueError:
        # theorem not applicable to the held subset (kov): basic composition is always sound
        used = sum(req.epsilons[i] * req.multiplicities[i] for i in held)
    if not used < req.epsilon_g:
        raise PlanError(_held_message(stats, held, used, req.epsilon_g, extra_held),
                        held_indices=held)


def _held_message(stats, held, used, target, extra_held=()) -> str:
    names = ", ".join(f"{i + 1} ({stats[i].name!r})" for i in held)
    text = (f"the held statistics alone need epsilon {used:.6g}, which leaves nothing of the "
            f"budget {target:.6g} for the free ones; release (or lower) some of: {names}")
    edited = [i for i in extra_held if not stats[i].held]
    if edited:
        text += (f" (statistic {edited[0] + 1} is held for this update because you set its target "
                 "error: ask for a larger error, or raise the budget)")
    return text


def with_epsilons(stats: Sequence[Statistic], epsilons: Sequence[float],
                  only: Optional[Sequence[bool]] = None) -> tuple[Statistic, ...]:
    """Statistics with new epsilons (where ``only`` is True, if given)."""
    if len(epsilons) != len(stats):
        raise PlanError(f"got {len(epsilons)} epsilons for {len(stats)} statistics")
    out = []
    for i, (s, e) in enumerate(zip(stats, epsilons)):
        if only is None or only[i]:
            e = float(e)
            FIELD_RULES["epsilon"].check(e, f"statistic {i + 1} ({s.name!r}) after redistribution", i)
            s = s.replace(epsilon=e)
        out.append(s)
    return tuple(out)


def rebalanced(budget: Budget, stats: Sequence[Statistic], extra_held: Sequence[int] = ()
               ) -> tuple[Statistic, ...]:
    """The statistics after synchronous redistribution (no Plan involved). Raises PlanError."""
    if not stats:
        return tuple(stats)
    check_holds(budget, stats, extra_held)
    req = allocation_request(budget, stats, extra_held)
    from dpplanner import engine
    try:
        result = req.run()
    except engine.BudgetError as exc:
        held = list(getattr(exc, "held_indices", ()) or [i for i, h in enumerate(req.held) if h])
        raise PlanError(f"redistribution refused: {exc}", held_indices=held) from None
    except ValueError as exc:
        raise PlanError(f"redistribution failed under the {req.theorem} theorem: {exc}") from None
    return with_epsilons(stats, list(result.epsilons), [not h for h in req.held])


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
        b, stats = validate_state(budget or Budget(), tuple(statistics))
        self._budget = b
        self._stats: tuple[Statistic, ...] = stats
        self._title = str(title)
        self._description = str(description)
        self._extra = dict(extra or {})
        self._listeners: list[Listener] = []
        self._revision = 0

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

    def _commit(self, budget: Budget, stats: Sequence[Statistic], events: list[PlanEvent],
                rebalance: bool, extra_held: Sequence[int] = ()) -> None:
        """Validate the candidate state, redistribute if asked, then swap it in and notify."""
        budget, stats = validate_state(budget, tuple(stats))
        if rebalance and stats:
            new_stats = rebalanced(budget, stats, extra_held)
            changed = tuple(i for i, (a, b) in enumerate(zip(stats, new_stats)) if a != b)
            stats = new_stats
            if changed and not any(e.kind == "reset" for e in events):
                events = events + [PlanEvent("changed", changed)]
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
    def set_budget(self, budget: Optional[Budget] = None, *, rebalance: bool = False,
                   **changes) -> None:
        """Replace the budget (or change some of its fields by keyword)."""
        unknown = sorted(set(changes) - set(Budget.__dataclass_fields__))
        if unknown:
            raise PlanError(f"unknown budget setting {unknown[0]!r}; the settings are: "
                            f"{', '.join(f for f in Budget.__dataclass_fields__ if f != 'extra')}")
        try:
            new = (budget or self._budget).replace(**changes)
        except ValueError as exc:       # e.g. an unknown neighbouring relation
            raise PlanError(f"budget: {exc}", field="neighbouring") from None
        self._commit(new, self._stats, [PlanEvent("budget")], rebalance)

    def apply_tier(self, key: str, *, rebalance: bool = False) -> None:
        """Set epsilon_g and delta_g from a sensitivity preset (see SENSITIVITY_TIERS)."""
        if key not in TIERS_BY_KEY:
            raise PlanError(f"unknown sensitivity tier {key!r}; use one of: "
                            f"{', '.join(t.key for t in SENSITIVITY_TIERS)}", field="tier")
        t = TIERS_BY_KEY[key]
        self.set_budget(epsilon=t.epsilon, delta=t.delta, rebalance=rebalance)

    def set_metadata(self, *, title: Optional[str] = None, description: Optional[str] = None) -> None:
        if title is not None:
            self._title = str(title)
        if description is not None:
            self._description = str(description)
        self._revision += 1
        self._emit([PlanEvent("metadata")])

    def update_statistic(self, i: int, stat: Statistic, *, rebalance: bool = False) -> None:
        i = self._index(i)
        stats = list(self._stats)
        stats[i] = stat
        self._commit(self._budget, stats, [PlanEvent("changed", (i,))], rebalance)

    def update_statistics(self, changes: Mapping[int, Statistic], *, rebalance: bool = False) -> None:
        """Several rows at once (one validation, one event)."""
        stats = list(self._stats)
        for i, s in changes.items():
            stats[self._index(i)] = s
        self._commit(self._budget, stats, [PlanEvent("changed", tuple(sorted(changes)))], rebalance)

    def insert(self, i: int, stat: Statistic, *, rebalance: bool = False) -> None:
        i = self._index(i, allow_end=True)
        stats = list(self._stats)
        stats.insert(i, stat)
        self._commit(self._budget, stats, [PlanEvent("inserted", (i,))], rebalance)

    def append(self, stat: Statistic, *, rebalance: bool = False) -> None:
        self.insert(len(self._stats), stat, rebalance=rebalance)

    def remove(self, i: int, *, rebalance: bool = False) -> Statistic:
        i = self._index(i)
        stats = list(self._stats)
        removed = stats.pop(i)
        self._commit(self._budget, stats, [PlanEvent("removed", (i,))], rebalance)
        return removed

    def move(self, i: int, j: int) -> None:
        """Move row i so that it ends up at row j (order matters for the prefix curve only)."""
        i, j = self._index(i), self._index(j)
        if i == j:
            return
        stats = list(self._stats)
        stats.insert(j, stats.pop(i))
        self._commit(self._budget, stats, [PlanEvent("moved", (i, j), source=i, destination=j)],
                     False)

    def replace_all(self, statistics: Sequence[Statistic], budget: Optional[Budget] = None, *,
                    rebalance: bool = False) -> None:
        """New contents (e.g. a CSV import); listeners get one "reset"."""
        self._commit(budget or self._budget, statistics, [PlanEvent("reset")], rebalance)

    def snapshot(self) -> PlanSnapshot:
        return PlanSnapshot(self._budget, self._stats, self._title, self._description,
                            dict(self._extra))

    def restore(self, snapshot: PlanSnapshot) -> None:
        """Go back to a snapshot exactly (no redistribution); listeners get one "reset"."""
        budget, stats = validate_state(snapshot.budget, snapshot.statistics)
        self._budget, self._stats = budget, stats
        self._title, self._description = snapshot.title, snapshot.description
        self._extra = dict(snapshot.extra)
        self._revision += 1
        self._emit([PlanEvent("reset")])

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
        return _privacy(self._budget, self._stats[i], self.deltas()[i])

    def privacy_all(self) -> list[StatisticPrivacy]:
        return [_privacy(self._budget, s, d) for s, d in zip(self._stats, self.deltas())]

    def epsilon_for_error(self, i: int, error: float) -> float:
        """The epsilon statistic i needs for ``error`` at the plan's confidence (not applied)."""
        i = self._index(i)
        s = self._stats[i]
        if s.kind is Kind.CUSTOM:
            raise PlanError(f"statistic {i + 1} ({s.name!r}) is custom: type its epsilon directly; "
                            "custom statistics have no accuracy formula", index=i, field="error")
        error = FIELD_RULES["error"].check(error, f"statistic {i + 1} ({s.name!r})", i)
        b = self._budget
        try:
            eps = acc.epsilon_for_error(s, error, self.deltas()[i], confidence=b.confidence,
                                        neighbouring=b.neighbouring, dataset_size=b.dataset_size,
                                        amplification=self.amplification(),
                                        minimum=_EPSILON_FLOOR)
        except ValueError as exc:
            raise PlanError(f"statistic {i + 1} ({s.name!r}): {exc}", index=i, field="error") from None
        top = FIELD_RULES["epsilon"].maximum
        if eps > top:
            raise PlanError(f"statistic {i + 1} ({s.name!r}): an error of {error:.6g} would need "
                            f"epsilon {eps:.4g}, above the largest allowed {top:g}; ask for a larger "
                            "error", index=i, field="error")
        return eps

    def set_target_error(self, i: int, error: float, *, rebalance: bool = False) -> None:
        """Give statistic i the epsilon its target error needs; it is held for the rebalance."""
        eps = self.epsilon_for_error(i, error)
        stats = list(self._stats)
        stats[i] = stats[i].replace(epsilon=eps)
        self._commit(self._budget, stats, [PlanEvent("changed", (i,))], rebalance, extra_held=(i,))

    # composition and redistribution
    def composition_inputs(self) -> CompositionInputs:
        return composition_inputs(self._budget, self._stats)

    def allocation_request(self, extra_held: Sequence[int] = ()) -> AllocationRequest:
        """Frozen inputs of ``engine.allocate`` for the current state (run it on a worker)."""
        return allocation_request(self._budget, self._stats, extra_held, self._revision)

    def check_holds(self, extra_held: Sequence[int] = ()) -> None:
        """Raise PlanError naming the held statistics to release if they alone use the budget."""
        check_holds(self._budget, self._stats, extra_held)

    def apply_allocation(self, epsilons: Sequence[float], *, held: Optional[Sequence[bool]] = None,
                         revision: Optional[int] = None) -> None:
        """Write redistributed epsilons back (free rows only, or all rows where held is None and
        nothing is held). With ``revision``, refuse a result computed for an older state."""
        if revision is not None and revision != self._revision:
            raise PlanError(f"the allocation was computed for revision {revision} but the plan is at "
                            f"revision {self._revision}; recompute it")
        only = [not h for h in held] if held is not None else [not s.held for s in self._stats]
        stats = with_epsilons(self._stats, epsilons, only)
        changed = tuple(i for i, (a, b) in enumerate(zip(self._stats, stats)) if a != b)
        self._commit(self._budget, stats, [PlanEvent("changed", changed)] if changed else [], False)

    def rebalance(self) -> None:
        """Redistribute now, synchronously (check, allocate, apply) or raise and change nothing."""
        self._commit(self._budget, self._stats, [], True)

    def total(self, theorem: Optional[str] = None):
        """engine.compose of the plan under ``theorem`` (default: the plan's), synchronously."""
        from dpplanner import engine
        inp = self.composition_inputs()
        return engine.compose(list(inp.epsilons), list(inp.deltas), inp.delta_g,
                              theorem=theorem or self._budget.theorem, eta=inp.eta,
                              multiplicities=list(inp.multiplicities), mechanisms=list(inp.mechanisms))

    def balance(self, total_epsilon: float) -> BudgetBalance:
        """Compare a total (e.g. the best valid one from the engine) with the spendable budget;
        with redistribution off this says how far over or under budget the plan is."""
        return BudgetBalance(float(total_epsilon), self._budget.spendable_epsilon)

    def warnings(self) -> list[str]:
        return budget_warnings(self._budget)


#: Smallest epsilon the inverse accuracy returns (the epsilon field rule excludes 0).
_EPSILON_FLOOR = 1e-9


def _privacy(budget: Budget, stat: Statistic, delta: float) -> StatisticPrivacy:
    ratio = amplification_ratio(budget)
    eps_f = acc.functioning_epsilon(stat.epsilon, ratio)
    if stat.kind is Kind.CUSTOM:
        return StatisticPrivacy(stat.epsilon, delta, eps_f, delta * ratio, None, None, "",
                                "Custom statistic: its accuracy depends on a mechanism dpplanner "
                                "does not model.")
    try:
        a = acc.accuracy(stat, stat.epsilon, delta, confidence=budget.confidence,
                         neighbouring=budget.neighbouring, dataset_size=budget.dataset_size,
                         amplification=ratio)
    except ValueError as exc:
        return StatisticPrivacy(stat.epsilon, delta, eps_f, delta * ratio, None, None, "", "",
                                problem=str(exc))
    return StatisticPrivacy(stat.epsilon, delta, a.epsilon, a.delta, a.error, a.scale, a.units,
                            a.explanation)
