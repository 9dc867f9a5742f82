"""The Budget panel's Spent bar: the plan's total under the budget's theorem against the spendable
global ε, what that total assumes, and - over budget - a red bar, the reason in red and the
redistribution button turned into the fix.

A total is judged against the budget it was computed for, never another: after a budget change
(typed, or by Undo/Redo) the bar is greyed, with no verdict, until the total of the new budget
comes (a lower ε_g judged against the total before the redistribution read "over budget"); the
sentence beneath it, of the budget before, is greyed meanwhile too. Drawn a turn after the
Totals table (gui/turns.py), a new total greys at once the bar or the sentence it changes.
"""

from __future__ import annotations

import math
from typing import Mapping, Optional

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QProgressBar, QPushButton

from dpplanner import engine
from dpplanner.engine.types import Composition
from dpplanner.gui import formatting, theme
from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.fitted_label import WrappingLabel
from dpplanner.gui.turns import Turns
from dpplanner.model import Budget
from dpplanner.model.explanations import above_global
from dpplanner.model.spending import total_note

#: The over-budget bar: the refusal red, with white text.
OVER_BUDGET = theme.ERROR_RED
#: The redistribution button's text, and its text while the plan is over budget (the fix).
REDISTRIBUTE, FIT = "Redistribute now", "Redistribute to fit"
#: The bar's text while the total of the budget as it is now is still to come.
PENDING = "— (the total of this plan is not computed yet)"
#: The bar's text for a plan with no statistics (a bare "—" read as a fault on a new plan).
EMPTY = "— (nothing spent: no statistics yet)"


class SpentMeter(QObject):
    def __init__(self, editor: PlanEditor, turns: Turns, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        self._turns = turns
        self.button = QPushButton(REDISTRIBUTE)
        self.button.setToolTip("Rescale the free statistics once to spend the global ε.")
        self.bar = QProgressBar()
        self.bar.setRange(0, 1000)
        self.bar.setTextVisible(True)
        self.bar.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.bar.setAccessibleName("Budget spent")
        self.bar.setToolTip("Total ε of the plan under the chosen theorem, against the spendable "
                            "global ε (global ε minus the reserve).")
        # What the total on the bar relies on, and what a generic theorem says (model.spending).
        self.assumption = WrappingLabel("")
        self.assumption.setAccessibleName("What the spent total assumes")
        self.assumption.setToolTip("What the total on the bar relies on. Advanced > Theorem chooses "
                                   "the theorem the plan is spent under.")
        #: Why the plan is over budget, in red under the Spent bar (hidden while it is not).
        self.over_reason = WrappingLabel("")
        self.over_reason.setTextFormat(Qt.TextFormat.PlainText)
        theme.red_text(self.over_reason)
        self.over_reason.setAccessibleName("Why over budget")
        self.over_reason.setVisible(False)
        self._spent: Optional[Composition] = None
        self._of: Optional[Budget] = None       # the budget self._spent is the total of
        self._totals: dict[str, Composition] = {}
        self._over = False
        self._largest = 0.0         # the largest ε_i of the plan self._spent is the total of
        self._late = False          # the plan changed and its total is late (set_late)

    def set_spent(self, composition: Optional[Composition],
                  totals: Optional[Mapping[str, Composition]] = None) -> None:
        """The plan's total under the budget's theorem (from the evaluation of the plan as it is),
        and every theorem's total, for the sentence beneath the bar."""
        self._spent = composition
        self._of = self.editor.plan.budget
        self._late = False
        # of the same state as the total (a result is shown only for the plan as it is): an Undo
        # repaints the bar before its own total comes, with the total before
        self._largest = max((st.epsilon for st in self.editor.plan), default=0.0) if composition else 0.0
        self._totals = dict(totals or {})
        # The Totals table takes the same totals on its turn, before this one: meanwhile the bar
        # or the sentence that will read otherwise is the plan before's, greyed (they sat un-greyed
        # beside the table's new totals for up to ~0.5 s); what will read the same is left as it is.
        over, text, note = self._reading(self.editor.plan.budget)
        if text != self.bar.format():
            self.bar.setEnabled(False)
        if note != self.assumption.text():
            self.assumption.setEnabled(False)
        if (self._why() if over else "") != self.over_reason.text():
            self.over_reason.setEnabled(False)      # (the red "over budget by" of the plan before)
        # On a turn of its own (gui/turns.py): the new sentence and bar repaint the table too
        # (~10 ms of the GUI thread), in one stall with the result's slot when drawn from it.
        self._turns.later(self, self.update)

    def set_late(self) -> None:
        """The plan changed and its total is still being computed after the window's progress
        delay: the total shown is the plan before's, greyed with the Totals table, until set_spent."""
        self._late = True
        self.update()

    def drawing(self) -> bool:
        """Whether a result's total is still to be shown (a turn of the event loop after set_spent)."""
        return self._turns.pending(self)

    def update(self) -> None:
        b = self.editor.plan.budget
        comp = self._spent
        if comp is not None and (self._of != b or self._late):
            # The total is another budget's or another plan's: greyed, no verdict; the note (of
            # the plan before) greyed with it, and the button as for a plan within its budget.
            self._show(self.bar.value(), PENDING, pending=True)
            self.assumption.setEnabled(False)
            self._show_reason("")
            self.button.setEnabled(not b.redistribute)
            self.button.setText(REDISTRIBUTE)
            return
        self.assumption.setEnabled(True)
        self.over_reason.setEnabled(True)
        over, text, note = self._reading(b)
        value = 0
        if comp is not None and comp.applicable and not math.isnan(comp.epsilon):
            # may overflow to inf: only the bar's length
            value = int(min(comp.epsilon / b.spendable_epsilon, 1.0) * 1000)
        self._show(value, text, pending=False)
        # Over budget: a red bar with white, centred text (a style sheet on the chunk alone
        # gave black text on dark red, top-aligned).
        if over != self._over:
            self._over = over
            self.bar.setPalette(_over_palette(self.bar) if over else QPalette())
        if self.assumption.text() != note:
            self.assumption.setText(note)
            self.assumption.setVisible(bool(note))
        self._show_reason(self._why() if over else "")
        # with redistribution on the button is only needed to rebalance ε_i opened over budget;
        # over budget it is the fix the red reason above it names
        self.button.setEnabled(not b.redistribute or over)
        self.button.setText(FIT if over else REDISTRIBUTE)

    def _why(self) -> str:
        """The red reason beneath the bar for the total set last (over its budget)."""
        return self.editor.plan.balance(self._spent.epsilon).why_over(self.editor.plan.budget.redistribute)

    def _reading(self, b: Budget) -> tuple[bool, str, str]:
        """(over budget, the bar's text, the sentence beneath it) for the total set last under ``b``."""
        comp, available = self._spent, b.spendable_epsilon
        if comp is None or not comp.applicable or math.isnan(comp.epsilon):
            return False, ("—" if len(self.editor.plan) else EMPTY), ""
        # exactly: a total a hair over the budget is over it (the allocation never is)
        over = self.editor.plan.balance(comp.epsilon).over
        if comp.epsilon == math.inf:
            text = f"infeasible under {engine.theorem(comp.theorem).label}"
        else:
            text = (f"ε {formatting.upper(comp.epsilon)} of {formatting.value(available, 4)} "
                    f"({formatting.percent_of(comp.epsilon, available)}) under "
                    f"{engine.theorem(comp.theorem).label}{'  (over budget)' if over else ''}")
        note = total_note(comp.theorem, self._totals or {comp.theorem: comp}, available)
        if not over and self._largest > available:
            # sound (δ_g pays for it), but it reads as one statistic spending the whole budget;
            # never under basic composition (its total is at least every ε_i)
            note += "\n" + above_global(b, self._largest)
        return over, text, note

    def _show(self, value: int, text: str, *, pending: bool) -> None:
        if (value, text, not pending) != (self.bar.value(), self.bar.format(), self.bar.isEnabled()):
            # QProgressBar.setValue repaints at once; with updates off, the changes are painted
            # with the rest of the window (an edit paid for two paints here). The same reading
            # (a redistributed plan spends all of ε_g, edit after edit) is not painted again.
            self.bar.setUpdatesEnabled(False)
            try:
                self.bar.setValue(value)
                self.bar.setFormat(text)
                # greyed: a disabled bar is drawn in the palette's disabled colours, which the
                # over-budget red is not (kept: the same verdict again is not restyled)
                self.bar.setEnabled(not pending)
            finally:
                self.bar.setUpdatesEnabled(True)

    def _show_reason(self, why: str) -> None:
        if self.over_reason.text() != why:
            self.over_reason.setText(why)
            self.over_reason.setVisible(bool(why))


def _over_palette(bar: QProgressBar) -> QPalette:
    palette = QPalette(bar.palette())
    for group in (QPalette.ColorGroup.Active, QPalette.ColorGroup.Inactive):
        palette.setColor(group, QPalette.ColorRole.Highlight, QColor(OVER_BUDGET))
        palette.setColor(group, QPalette.ColorRole.HighlightedText, QColor("#ffffff"))
    return palette
