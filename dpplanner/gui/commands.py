"""Undo over whole plan states.

Every edit records the plan's snapshot before and after (snapshots are immutable and share their
Statistic objects, so this is cheap). Undo restores "before", redo restores "after". An edit is
pushed once its redistribution is in the plan, so one undo takes back both.
"""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from dpplanner.model import Plan, PlanSnapshot


class PlanStateCommand(QUndoCommand):
    def __init__(self, plan: Plan, text: str, before: PlanSnapshot, after: PlanSnapshot) -> None:
        super().__init__(text)
        self._plan = plan
        self.before = before
        self.after = after
        self._applied = True      # pushed after the model already changed

    def redo(self) -> None:
        if self._applied:         # QUndoStack.push calls redo(); the edit is already in the plan
            self._applied = False
            return
        self._plan.restore(self.after)

    def undo(self) -> None:
        self._plan.restore(self.before)
