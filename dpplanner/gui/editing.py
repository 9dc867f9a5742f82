"""Every user edit of the plan goes through here: refuse early, apply, undo, redistribute.

The order matters and is the whole point of this module:

1. The edit is tried on a ``plan.trial()`` through the Plan's own method (which validates the
   whole resulting state) and, when automatic redistribution is on, checked with the model's
   ``check_holds`` - an impossible pin is refused **before anything changes**.
2. The plan adopts the trial's state (no second validation) and the edit is pushed on the undo
   stack as one command holding the state before and after.
3. The redistribution (``engine.allocate``) runs on the compute worker. When it returns and the
   plan is still at the revision it was computed for, ``plan.apply_allocation`` writes it and the
   same undo command is extended, so one Undo takes back the edit and its rebalance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QUndoStack

from dpplanner.compute import jobs
from dpplanner.gui.commands import PlanStateCommand
from dpplanner.gui.compute import ComputeController
from dpplanner.model import Budget, Plan, PlanError, Statistic
from dpplanner.model.display import upper

ALLOCATE = "allocate"

# Budget fields whose change alters what redistribution spends.
_REBALANCING_BUDGET_FIELDS = {"epsilon", "delta", "delta_split", "theorem", "eta", "reserve",
                              "redistribute"}


@dataclass(frozen=True)
class Refusal:
    message: str
    row: Optional[int] = None
    field: Optional[str] = None


class PlanEditor(QObject):
    """Owns the undo stack of one plan and the redistribution jobs its edits start."""

    refused = Signal(object)              # Refusal: shown where it happened and in the status bar
    redistributing = Signal(bool)
    redistributionFailed = Signal(str)

    def __init__(self, plan: Plan, controller: ComputeController,
                 allocate_fn: Callable = jobs.allocate, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.plan = plan
        self.controller = controller
        self.allocate_fn = allocate_fn
        self.undo_stack = QUndoStack(self)
        self._pending: Optional[tuple[PlanStateCommand, int]] = None   # (command, plan revision)
        self._expect_rebalance = False
        #: Why the latest edit was refused (None after an accepted one), for dialogs that stay open.
        self.last_refusal: Optional[Refusal] = None
        controller.resultReady.connect(self._on_result)
        controller.failed.connect(self._on_failed)
        controller.cancelled.connect(self._on_cancelled)
        self.undo_stack.indexChanged.connect(self._on_undo_index)

    # -- statistic edits ------------------------------------------------------------------------
    def update_statistic(self, row: int, stat: Statistic, text: str, *,
                         field: Optional[str] = None) -> bool:
        """Replace row ``row``; a refusal is reported at ``field`` of that row (the edited cell)."""
        return self._edit(text, lambda p: p.update_statistic(row, stat), row=row, field=field)

    def set_epsilon(self, row: int, epsilon: float) -> bool:
        """A typed ε_i is the user's decision: it pins the statistic (redistribution leaves it)."""
        stat = self.plan[row]
        new = stat.replace(epsilon=epsilon, held=True)
        return self._edit(f"Set ε_i of {stat.name!r}", lambda p: p.update_statistic(row, new),
                          row=row, field="epsilon",
                          cause=lambda _t: (f"ε_i = {epsilon!r} for {stat.name!r} does not fit", "type "
                                            "a smaller ε_i or raise the budget"))

    def set_target_error(self, row: int, error: float) -> bool:
        """PSI's interaction: the row gets the ε its error needs, pinned; the others rebalance."""
        stat = self.plan[row]
        return self._edit(f"Set error of {stat.name!r}",
                          lambda p: p.set_target_error(row, error), row=row, field="error",
                          cause=lambda t: (f"an error of {error:g} for {stat.name!r} needs ε_i = "
                                           f"{upper(t[row].epsilon, 6)}, which does not fit",
                                           "ask for a larger error or raise the budget"))

    def insert_statistic(self, row: int, stat: Statistic) -> bool:
        return self._edit(f"Add {stat.name!r}", lambda p: p.insert(row, stat))

    def remove_statistics(self, rows: Sequence[int]) -> bool:
        rows = sorted(set(rows), reverse=True)
        if not rows:
            return False
        if len(rows) == 1:
            return self._edit(f"Remove {self.plan[rows[0]].name!r}", lambda p: p.remove(rows[0]))
        stats = [s for i, s in enumerate(self.plan.statistics) if i not in set(rows)]
        return self._edit(f"Remove {len(rows)} statistics", lambda p: p.replace_all(stats))

    def move_statistic(self, row: int, to: int) -> bool:
        if not (0 <= to < len(self.plan)) or row == to:
            return False
        # Order changes no epsilon (only the prefix curve), so nothing is redistributed.
        return self._edit(f"Move {self.plan[row].name!r}", lambda p: p.move(row, to), rebalance=False)

    # -- budget and whole-plan edits ------------------------------------------------------------
    def set_budget(self, text: str = "Change budget", **changes) -> bool:
        field = next(iter(changes), None)
        rebalance = bool(_REBALANCING_BUDGET_FIELDS & set(changes)) and \
            changes.get("redistribute", self.plan.budget.redistribute)
        return self._edit(text, lambda p: p.set_budget(**changes), rebalance=rebalance, field=field)

    def set_metadata(self, *, title: Optional[str] = None, description: Optional[str] = None) -> bool:
        return self._edit("Edit plan description" if title is None else "Edit plan title",
                          lambda p: p.set_metadata(title=title, description=description),
                          rebalance=False)

    def replace_all(self, stats: Sequence[Statistic], text: str, budget: Optional[Budget] = None) -> bool:
        return self._edit(text, lambda p: p.replace_all(stats, budget))

    def rebalance_now(self) -> bool:
        return self._edit("Redistribute", lambda p: None, rebalance=True, force=True)

    def is_redistributing(self) -> bool:
        """True from the moment an edit that will be rebalanced starts until the rebalance ends."""
        return self._pending is not None or self._expect_rebalance

    # -- internals ------------------------------------------------------------------------------
    def _edit(self, text: str, apply: Callable[[Plan], None], *, rebalance: Optional[bool] = None,
              row: Optional[int] = None, field: Optional[str] = None, force: bool = False,
              cause: Optional[Callable[[Plan], tuple[str, str]]] = None) -> bool:
        """Try ``apply`` on a trial of the plan; refuse (plan unchanged) or adopt it as one undo
        step. A refusal names the place of the edit (``row``/``field``) when there is one;
        ``cause(trial)`` gives (what the user asked, what to do) when the pins do not fit."""
        self.last_refusal = None
        trial = self.plan.trial()
        try:
            apply(trial)
            if not force and trial.snapshot() == self.plan.snapshot():
                return True         # nothing to change (e.g. the same value typed again)
            if rebalance is None:
                rebalance = trial.budget.redistribute
            if rebalance and len(trial):
                trial.check_holds()
        except PlanError as exc:    # the model refused: the plan is unchanged
            message = str(exc)
            if exc.held_indices and cause is not None:
                asked, remedy = cause(trial)
                message = f"{asked}: {message}; {remedy}"
            where_row = row if row is not None or field is not None else exc.index
            self.last_refusal = Refusal(message, where_row, field or exc.field)
            self.refused.emit(self.last_refusal)
            return False
        before = self.plan.snapshot()
        # Listeners that see the plan change during adopt() must already know a rebalance
        # follows (the window does not evaluate an unbalanced intermediate state).
        self._expect_rebalance = bool(rebalance and len(trial))
        try:
            self.plan.adopt(trial)
        finally:
            self._expect_rebalance = False
        after = self.plan.snapshot()
        if after == before and not force:
            return True
        command = PlanStateCommand(self.plan, text, before, after)
        self.undo_stack.push(command)
        if rebalance and len(self.plan):
            request = jobs.AllocateRequest(self.plan.allocation_request(), self.plan.revision)
            self._pending = (command, self.plan.revision)
            self.redistributing.emit(True)
            self.controller.submit(ALLOCATE, self.allocate_fn, request)
        return True

    def _on_result(self, channel: str, result) -> None:
        if channel != ALLOCATE or self._pending is None:
            return
        command, revision = self._pending
        self._pending = None
        request = result.request.payload
        try:
            if revision != self.plan.revision or not self._is_top(command):
                return              # the plan moved on (another edit, an undo): drop it
            try:
                self.plan.apply_allocation(list(result.allocation.epsilons), held=list(request.held),
                                           revision=revision)
            except PlanError as exc:
                self._undo_failed(command, f"redistribution could not be applied: {exc}")
                return
            command.set_after(self.plan.snapshot())
        finally:
            # Emitted after the plan holds its final state, so followers see that state.
            self.redistributing.emit(False)

    def _on_failed(self, channel: str, message: str) -> None:
        if channel != ALLOCATE or self._pending is None:
            return
        command, revision = self._pending
        self._pending = None
        try:
            if revision == self.plan.revision and self._is_top(command):
                self._undo_failed(command, f"redistribution failed, the edit was taken back: {message}")
            else:
                self.redistributionFailed.emit(f"redistribution failed: {message}")
        finally:
            self.redistributing.emit(False)

    def _on_cancelled(self, channel: str) -> None:
        if channel == ALLOCATE and self._pending is not None:
            # The edit stays (it was valid); the plan is simply not rebalanced for it.
            self._pending = None
            self.redistributing.emit(False)
            self.redistributionFailed.emit("redistribution cancelled; the statistics keep their ε_i "
                                           "(use Edit > Redistribute now to rebalance)")

    def _undo_failed(self, command: PlanStateCommand, message: str) -> None:
        command.drop_on_undo = True     # undone and dropped from the stack
        self.undo_stack.undo()
        self.redistributionFailed.emit(message)

    def _is_top(self, command: PlanStateCommand) -> bool:
        index = self.undo_stack.index()
        return index > 0 and self.undo_stack.command(index - 1) is command

    def _on_undo_index(self, _index: int) -> None:
        if self._pending is not None and not self._is_top(self._pending[0]):
            self._pending = None            # undone: its rebalance is no longer wanted
            self.redistributing.emit(False)
            self.controller.cancel(ALLOCATE)
