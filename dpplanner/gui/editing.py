"""Every user edit of the plan goes through here: try, redistribute, adopt, undo.

One edit is one validation, one plan event and one worker trip:

1. The edit is tried on a ``plan.trial()`` through the Plan's own method, which validates the
   whole resulting state once. A refusal leaves the plan as it was.
2. Without redistribution the plan adopts the trial (no second validation, one event) and the
   evaluation of the new state is the one worker trip.
3. With redistribution the trial goes to the compute worker in one ``allocate`` job: the pin
   check, ``engine.allocate`` and the evaluation of the rebalanced state. Nothing composes on the
   GUI thread, and the plan does not change until the new epsilons are back (an early answer,
   compute/early.py): then the trial takes them and the plan adopts it (one event), drawn while
   the same job composes their totals for the evaluation (no second trip). Pins that leave
   nothing are refused then, with the plan unchanged.

The plan never overspends (GUIDE.md): with redistribution on, every state the plan takes from an
edit is one the allocation balanced (``_conclude`` is the one place that decides between adopting
and redistributing first). An edit made while another waits for its redistribution is chained onto
it: both are tried from the last settled state and redistributed together, as one undo step, so
the undo stack only ever holds states the user saw settled. A cancelled or failed redistribution
makes none of the edits waiting for it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable, Mapping, Optional, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from dpplanner.compute import answered, jobs
from dpplanner.gui.commands import PlanStateCommand
from dpplanner.gui.compute import ComputeController, Handlers
from dpplanner.model import Budget, Plan, PlanError, Statistic
from dpplanner.gui.edit_steps import (Pending, Precomputed, Refusal, Step, changes_allocation,
                                      gone_refusal, pending_refusals, refusal, replaced)
from dpplanner.model.events import follow_row
from dpplanner.model.redistribution import UnspentReasons
from dpplanner.model.requests import CurveView
from dpplanner.model.display import exact, upper
from dpplanner.model.targets import typed_fields

ALLOCATE = "allocate"


class PlanEditor(QObject):
    """Owns the undo stack of one plan and the redistribution jobs its edits start."""

    refused = Signal(object)              # Refusal: shown where it happened and in the status bar
    redistributing = Signal(bool)
    precomputed = Signal(object)          # Precomputed: the state about to be adopted, evaluated
    placed = Signal(int)                  # the statistic added (or gone on to) is in the plan, at this row
    #: About to take an edit's state (or a chain's): where each row on screen goes, a function
    #: row -> row (None: removed). Views that keep a row (the inspector) follow their statistic.
    settling = Signal(object)

    def __init__(self, plan: Plan, controller: ComputeController,
                 allocate_fn: Callable = jobs.allocate, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.controller = controller
        self.allocate_fn = allocate_fn
        self.undo_stack = QUndoStack(self)
        #: The cost-curve view an evaluation is asked for (the window connects its own).
        self.view: Callable[[], CurveView] = CurveView
        self._pending: Optional[Pending] = None
        #: Why the latest edit was refused (None after an accepted one, Undo or Redo), for dialogs
        #: that stay open and the status bar.
        self.last_refusal: Optional[Refusal] = None
        self._unspent = UnspentReasons()        # of the states redistributions left
        #: (the waiting trial, the row in it) of the statistic added or gone on to last, while it waits
        self._added: Optional[tuple[Plan, int]] = None
        self._owner = answered.new_owner()      # the last answer's statistics, for the next request:
        self._answered: Optional[answered.Answered] = None
        self.undo_stack.indexChanged.connect(self._on_undo_index)

    # -- statistic edits ------------------------------------------------------------------------
    # Rows are those on screen. While an edit waits for its redistribution the screen still shows
    # the plan before it, and a new edit applies to the state the waiting one reaches, which may
    # have moved or removed rows: each edit follows its row there (``row_now``) and changes only
    # the fields it names, on the statistic as it is then (a stale copy would undo the waiting
    # edit's ε_i or pin).
    def update_statistic(self, row: int, changes: Mapping[str, Any], text: str, *,
                         field: Optional[str] = None) -> bool:
        """Set ``changes`` (field -> value) on row ``row``; a refusal is reported at ``field``."""
        return self._edit_row(row, text, lambda p, r: p.update_statistic(r, replaced(p[r], changes)),
                              field=field)

    def set_epsilon(self, row: int, epsilon: float) -> bool:
        """A typed ε_i is the user's decision: it pins the statistic (redistribution leaves it)."""
        name = self.plan[row].name
        return self._edit_row(
            row, f"Set ε_i of {name!r}",
            lambda p, r: p.update_statistic(r, p[r].replace(**typed_fields({"epsilon": epsilon}))),
            field="epsilon", cause=lambda _t, _r: (f"ε_i = {exact(epsilon)} for {name!r} does not fit",
                                                   "type a smaller ε_i or raise the budget"))

    def set_target_error(self, row: int, error: float) -> bool:
        """PSI's interaction: the row gets the ε its error needs, pinned; the others rebalance."""
        name = self.plan[row].name
        return self._edit_row(row, f"Set error of {name!r}", lambda p, r: p.set_target_error(r, error),
                              field="error",
                              cause=lambda t, r: (f"an error of {error:g} for {name!r} needs ε_i = "
                                                  f"{upper(t[r].epsilon, 6)}, which does not fit",
                                                  "ask for a larger error or raise the budget"))

    def insert_statistic(self, row: int, stat: Statistic) -> bool:
        """Insert before row ``row`` on screen (``len`` appends). ``placed`` gives its row once it
        is in the plan (after its redistribution)."""
        if row >= len(self.plan):           # at the end: the end of the plan as it will be
            return self._insert(stat, None)
        anchor = self.row_now(row - 1) if row > 0 else -1
        if anchor is None:
            return self._refuse_gone(row - 1, f"Add {stat.name!r}")
        return self._insert(stat, anchor + 1)

    def add_after(self, row: int, stat: Statistic) -> bool:
        """Add ``stat`` after the statistic the user is on: the one added last if it still waits
        for its redistribution (the table does not show it yet, so its row there is still the one
        it was added after), else row ``row`` on screen (-1: at the end)."""
        added = self._added
        if added is not None and self._pending is not None and self._pending.trial is added[0]:
            return self._insert(stat, added[1] + 1)
        return self.insert_statistic(row + 1 if row >= 0 else len(self.plan), stat)

    def _insert(self, stat: Statistic, at: Optional[int]) -> bool:
        """Insert at row ``at`` of the state the edits reach (None: at its end)."""
        where = []

        def insert(p: Plan) -> None:
            where.append(len(p) if at is None else at)
            p.insert(where[0], stat)

        return self._edit(f"Add {stat.name!r}", insert) and self._place(where[0])

    def _place(self, row: int) -> bool:
        """``placed`` gives ``row`` (of the state the edits reach) once it is in the plan."""
        if self._pending is None:
            self.placed.emit(row)
        else:
            self._added = (self._pending.trial, row)
        return True

    def remove_statistics(self, rows: Sequence[int], go_to: Optional[int] = None) -> bool:
        """``go_to``: the row on screen the user goes on to; ``placed`` gives where it is once the
        removal is in the plan (several rows removed are one "reset", which no view follows)."""
        rows = sorted(set(rows), reverse=True)
        if not rows:
            return False
        text = f"Remove {self.plan[rows[0]].name!r}" if len(rows) == 1 else f"Remove {len(rows)} statistics"
        now = [self.row_now(r) for r in rows]
        if None in now:
            return self._refuse_gone(rows[now.index(None)], text)
        gone = set(now)
        target = None if go_to is None else self.row_now(go_to)
        if len(now) == 1:
            done = self._edit(text, lambda p: p.remove(now[0]))
        else:
            done = self._edit(text, lambda p: p.replace_all([s for i, s in enumerate(p.statistics)
                                                             if i not in gone]))
        return done and (target is None or self._place(target - sum(g < target for g in gone)))

    def move_statistic(self, row: int, to: int) -> bool:
        """Move the statistic on row ``row`` by ``to - row`` places in the plan the edits reach
        (False when that is past either end)."""
        if not (0 <= row < len(self.plan)) or row == to:
            return False
        name = self.plan[row].name
        now = self.row_now(row)
        if now is None:
            return self._refuse_gone(row, f"Move {name!r}")
        # (moved before by a waiting edit, it may already be at the end it is moved towards)
        if not 0 <= now + to - row < len(self._pending.trial if self._pending is not None else self.plan):
            return False
        # Order changes no epsilon (only the prefix curve), so nothing is redistributed.
        return self._edit(f"Move {name!r}", lambda p: p.move(now, now + to - row), rebalance=False)

    # -- budget and whole-plan edits ------------------------------------------------------------
    def set_budget(self, text: str = "Change budget", **changes) -> bool:
        return self._edit(text, lambda p: p.set_budget(**changes), rebalance=changes_allocation,
                          field=next(iter(changes), None))

    def set_metadata(self, *, title: Optional[str] = None, description: Optional[str] = None) -> bool:
        return self._edit("Edit plan description" if title is None else "Edit plan title",
                          lambda p: p.set_metadata(title=title, description=description),
                          rebalance=False)

    def replace_all(self, stats: Sequence[Statistic], text: str, budget: Optional[Budget] = None) -> bool:
        return self._edit(text, lambda p: p.replace_all(stats, budget))

    def rebalance_now(self) -> bool:
        return self._edit("Redistribute", lambda p: None, rebalance=True, force=True)

    def unspent_reason(self) -> Optional[str]:
        """Why the redistribution that left the plan as it is (then or after Undo/Redo) may leave
        part of the budget unspent, as the command line's note says it; else None."""
        return self._unspent.of(self.plan.budget, self.plan.statistics)

    def is_redistributing(self) -> bool:
        """True while an edit waits for its redistribution (the plan does not show it yet)."""
        return self._pending is not None

    def names(self) -> set[str]:
        """The statistics' names once the waiting edits are made (a new name is fresh among them)."""
        return {s.name for s in (self._pending.trial if self._pending is not None else self.plan)}

    def can_undo(self) -> bool:
        return self._pending is not None or self.undo_stack.canUndo()

    def undo(self) -> None:
        """Undo: the last edit still waiting for its redistribution is dropped (the ones before it
        are redistributed without it), else the last step."""
        self.last_refusal = None        # (of the plan before: its message goes as the plan moves)
        pending = self._pending
        if pending is None:
            self.undo_stack.undo()
        elif len(pending.steps) == 1:
            self._drop_pending()
        else:
            self.controller.discard(ALLOCATE)
            self._pending = None
            self._conclude(Pending(pending.trials[:-1], pending.steps[:-1], pending.rebalance))

    def redo(self) -> None:
        self.last_refusal = None
        self.undo_stack.redo()

    def abandon(self) -> None:
        """Another plan replaces this one: edits waiting for their redistribution are dropped."""
        if self._pending is not None:
            self._drop_pending()

    # -- internals ------------------------------------------------------------------------------
    def _edit(self, text: str, apply: Callable[[Plan], None], *,
              rebalance: Optional[bool | Callable[[Plan, Plan], bool]] = None,
              row: Optional[int] = None, field: Optional[str] = None, force: bool = False,
              cause: Optional[Callable[[Plan], tuple[str, str]]] = None,
              shown_row: Optional[int] = None) -> bool:
        """Try ``apply`` on a trial of the plan; refuse (plan unchanged) or make it one undo step,
        after its redistribution when there is one. A refusal names the place of the edit
        (``row``/``field``) when there is one; ``cause(trial)`` gives (what the user asked, what
        to do) when the pins do not fit.

        With edits waiting for their redistribution, the new one is tried on the state they reach
        and chained onto them: all are redistributed together, from the last settled state. A
        refused or empty edit leaves the waiting redistribution running. ``row`` is in the state
        the edit applies to; ``shown_row`` (default ``row``) is the same statistic in the table,
        where a refusal is shown (the table shows the settled plan)."""
        self.last_refusal = None
        shown_row = row if shown_row is None else shown_row
        waiting = self._pending
        base = waiting.trial if waiting is not None else self.plan
        trial = base.trial()
        try:
            apply(trial)
        except PlanError as exc:    # the model refused: the plan is unchanged
            self._report(refusal(exc, trial, shown_row, field, cause))
            return False
        if not force and trial.snapshot() == base.snapshot():
            return True             # nothing to change (e.g. the same value typed again)
        if callable(rebalance):
            rebalance = rebalance(base, trial)
        step = Step(text, shown_row, field, cause)
        if waiting is None:
            pending = Pending((trial,), (step,), rebalance is None or bool(rebalance))
        else:
            self.controller.discard(ALLOCATE)
            self._pending = None
            pending = Pending(waiting.trials + (trial,), waiting.steps + (step,),
                               waiting.rebalance or rebalance is None or bool(rebalance))
        self._conclude(pending, announce=waiting is None)
        return True

    def _conclude(self, pending: Pending, *, announce: bool = False) -> None:
        """The one place that decides how edits reach the plan: adopted as they are when nothing
        they change needs a redistribution (or it is off), else sent to the worker first, the plan
        unchanged until the answer. ``announce``: no edit waited before these."""
        trial = pending.trial
        if not (pending.rebalance and trial.budget.redistribute and len(trial)):
            if not announce:
                self.redistributing.emit(False)
            self._adopt(trial, pending.text)
            return
        self._pending = pending
        request = jobs.AllocateRequest(trial.budget, trial.statistics, self.view(), owner=self._owner,
                                       base=self._answered)
        self.controller.submit(ALLOCATE, self.allocate_fn, request,
                               Handlers(self._on_allocated, self._on_failed, self._on_cancelled,
                                        self._on_allocated))
        if announce:        # (after the job left: the status bar and actions need not go first)
            self.redistributing.emit(True)

    def _adopt(self, trial: Plan, text: str) -> None:
        # (the screen shows the plan before every edit the trial went through)
        self.settling.emit(lambda row: follow_row(trial.recorded, row))
        before = self.plan.snapshot()
        self.plan.adopt(trial)
        after = self.plan.snapshot()
        if after != before:
            self.undo_stack.push(PlanStateCommand(self.plan, text, before, after))

    def _refuse_pending(self, pending: Pending, exc: PlanError, causes: bool = True) -> None:
        """None of the waiting edits is made: each is refused where it was made, the last last
        (the one the status bar keeps)."""
        for each in pending_refusals(pending, exc, causes):
            self._report(each)

    def _take_pending(self) -> Optional[Pending]:
        pending, self._pending, self._added = self._pending, None, None
        if pending is not None:
            self.redistributing.emit(False)
        return pending

    def row_now(self, row: int) -> Optional[int]:
        """Where row ``row`` on screen is in the state the edits reach (after the waiting ones, if
        any); None when a waiting edit removes it. Rows on screen are those of the settled plan:
        while an edit waits, an action on the selection acts on these (the statistic's identity)."""
        return follow_row(self._pending.trial.recorded if self._pending is not None else (), row)

    def _edit_row(self, row: int, text: str, apply: Callable[[Plan, int], None], *,
                  field: Optional[str] = None,
                  cause: Optional[Callable[[Plan, int], tuple[str, str]]] = None) -> bool:
        now = self.row_now(row)
        if now is None:
            return self._refuse_gone(row, text)
        return self._edit(text, lambda p: apply(p, now), row=now, field=field, shown_row=row,
                          cause=None if cause is None else lambda t: cause(t, now))

    def _report(self, refusal: Refusal) -> None:
        self.last_refusal = refusal
        self.refused.emit(refusal)

    def _refuse_gone(self, row: int, text: str) -> bool:
        self._report(gone_refusal(row, text))
        return False

    def _drop_pending(self) -> None:
        self.controller.discard(ALLOCATE)
        self._take_pending()

    def _follow(self, channel: str, handlers: Handlers) -> bool:
        return self.controller.hand_on(ALLOCATE, channel, replace(
            handlers, result=lambda result: handlers.result(result.evaluation)))

    def _on_allocated(self, result: jobs.AllocateResult) -> None:     # (early or whole)
        if self._pending is None:       # its early answer was adopted, its evaluation not followed
            return
        if result.resend:       # the answer it built on is gone there (answered.py): sent whole
            self._answered = None
            return self._conclude(self._pending)
        pending, added = self._pending, self._added
        self._pending = self._added = None
        try:
            if result.refusal is not None:
                self._refuse_pending(pending, PlanError(result.refusal, held_indices=result.held_indices))
                return
            trial = pending.trial
            try:
                trial.apply_allocation(result.epsilons, held=[s.held for s in result.request.statistics])
            except PlanError as exc:
                self._refuse_pending(pending, exc, causes=False)
                return
            self._unspent.remember(trial.budget, trial.statistics, result.unspent_reason)
            self._answered = answered.Answered(self._owner, result.request_id, trial.statistics)
            # (the trial's own statistics, which the plan is about to hold: a view that compares
            # the plan's state with this one finds the same objects, not 1000 equal ones)
            self.precomputed.emit(Precomputed((trial.budget, trial.statistics, result.request.view),
                                              result.evaluation, self._follow))
            if self.controller.is_busy(ALLOCATE):
                # not followed (the view moved on meanwhile): its evaluation would only delay the
                # one the view asked for
                self.controller.discard(ALLOCATE)
            self._adopt(trial, pending.text)
            if added is not None and added[0] is trial:
                self.placed.emit(added[1])
        finally:
            # Emitted after the plan holds its final state, so followers see that state.
            self.redistributing.emit(False)

    def _on_failed(self, message: str) -> None:
        pending = self._take_pending()
        self._refuse_pending(pending, PlanError(f"redistribution failed, the edit was not made: {message}"))

    def _on_cancelled(self) -> None:
        # Made without its redistribution the edit could overspend: cancelling it takes it back.
        pending = self._take_pending()
        self._refuse_pending(pending, PlanError("the redistribution was cancelled, so the edit was "
                                                "not made (the plan is as it was before it)"))

    def _on_undo_index(self, _index: int) -> None:
        if self._pending is not None:
            self._drop_pending()        # the plan it was tried on is gone
