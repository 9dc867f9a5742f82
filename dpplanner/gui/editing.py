"""Every user edit of the plan goes through here: refuse early, apply, undo, redistribute.

The order matters and is the whole point of this module:

1. The candidate state (budget + statistics after the edit) is validated and, when automatic
   redistribution is on, checked with the model's cheap ``check_holds`` - an impossible hold is
   refused **before anything changes**.
2. The edit is applied through the Plan's own method (which validates once more) and pushed on
   the undo stack as one command holding the state before and after.
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
from dpplanner.model.plan import check_holds, validate_state

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
        controller.resultReady.connect(self._on_result)
        controller.failed.connect(self._on_failed)
        controller.cancelled.connect(self._on_cancelled)
        self.undo_stack.indexChanged.connect(self._on_undo_index)

    # -- statistic edits ------------------------------------------------------------------------
    def update_statistic(self, row: int, stat: Statistic, text: str, *,
                         hold_for_rebalance: bool = False) -> bool:
        stats = list(self.plan.statistics)
        stats[row] = stat
        extra = (row,) if hold_for_rebalance else ()
        return self._edit(text, self.plan.budget, stats,
                          lambda p: p.update_statistic(row, stat), extra_held=extra, row=row)

    def set_target_error(self, row: int, error: float) -> bool:
        """PSI's interaction: the row gets the epsilon its error needs and the others rebalance."""
        try:
            eps = self.plan.epsilon_for_error(row, error)
        except PlanError as exc:
            self.refused.emit(Refusal(str(exc), row, "error"))
            return False
        stat = self.plan[row].replace(epsilon=eps)
        return self.update_statistic(row, stat, f"Set error of {stat.name!r}", hold_for_rebalance=True)

    def insert_statistic(self, row: int, stat: Statistic) -> bool:
        stats = list(self.plan.statistics)
        stats.insert(row, stat)
        return self._edit(f"Add {stat.name!r}", self.plan.budget, stats,
                          lambda p: p.insert(row, stat), row=row)

    def remove_statistics(self, rows: Sequence[int]) -> bool:
        rows = sorted(set(rows), reverse=True)
        if not rows:
            return False
        stats = list(self.plan.statistics)
        for r in rows:
            stats.pop(r)

        def apply(p: Plan) -> None:
            p.replace_all(stats)

        if len(rows) == 1:
            r = rows[0]

            def apply(p: Plan) -> None:  # noqa: F811 - one row: a precise "removed" event
                p.remove(r)
        text = f"Remove {self.plan[rows[0]].name!r}" if len(rows) == 1 else f"Remove {len(rows)} statistics"
        return self._edit(text, self.plan.budget, stats, apply)

    def move_statistic(self, row: int, to: int) -> bool:
        if not (0 <= to < len(self.plan)) or row == to:
            return False
        stats = list(self.plan.statistics)
        stats.insert(to, stats.pop(row))
        # Order changes no epsilon (only the prefix curve), so nothing is redistributed.
        return self._edit(f"Move {self.plan[row].name!r}", self.plan.budget, stats,
                          lambda p: p.move(row, to), rebalance=False)

    # -- budget and whole-plan edits ------------------------------------------------------------
    def set_budget(self, text: str = "Change budget", **changes) -> bool:
        try:
            budget = self.plan.budget.replace(**changes)
        except (TypeError, ValueError) as exc:
            self.refused.emit(Refusal(str(exc), None, next(iter(changes), None)))
            return False
        if budget == self.plan.budget:
            return True
        rebalance = bool(_REBALANCING_BUDGET_FIELDS & set(changes)) and budget.redistribute
        return self._edit(text, budget, list(self.plan.statistics),
                          lambda p: p.set_budget(budget), rebalance=rebalance,
                          field=next(iter(changes), None))

    def replace_all(self, stats: Sequence[Statistic], text: str, budget: Optional[Budget] = None) -> bool:
        budget = budget or self.plan.budget
        return self._edit(text, budget, list(stats), lambda p: p.replace_all(stats, budget))

    def rebalance_now(self) -> bool:
        return self._edit("Redistribute", self.plan.budget, list(self.plan.statistics),
                          lambda p: None, rebalance=True, force=True)

    def is_redistributing(self) -> bool:
        """True from the moment an edit that will be rebalanced starts until the rebalance ends."""
        return self._pending is not None or self._expect_rebalance

    # -- internals ------------------------------------------------------------------------------
    def _edit(self, text: str, budget: Budget, stats: list[Statistic], apply: Callable[[Plan], None],
              *, extra_held: Sequence[int] = (), rebalance: Optional[bool] = None,
              row: Optional[int] = None, field: Optional[str] = None, force: bool = False) -> bool:
        if rebalance is None:
            rebalance = budget.redistribute
        try:
            budget, checked = validate_state(budget, stats)
            if rebalance and checked:
                check_holds(budget, checked, extra_held)
        except PlanError as exc:
            self.refused.emit(Refusal(str(exc), exc.index if exc.index is not None else row,
                                      exc.field or field))
            return False
        before = self.plan.snapshot()
        # Listeners that see the plan change during apply() must already know a rebalance
        # follows (the window does not evaluate an unbalanced intermediate state).
        self._expect_rebalance = bool(rebalance and checked)
        try:
            apply(self.plan)
        except PlanError as exc:    # the model refused: it is unchanged
            self._expect_rebalance = False
            self.refused.emit(Refusal(str(exc), exc.index if exc.index is not None else row,
                                      exc.field or field))
            return False
        self._expect_rebalance = False
        after = self.plan.snapshot()
        if after == before and not force:
            return True
        command = PlanStateCommand(self.plan, text, before, after)
        self.undo_stack.push(command)
        if rebalance and len(self.plan):
            request = jobs.AllocateRequest(self.plan.allocation_request(extra_held), self.plan.revision)
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
