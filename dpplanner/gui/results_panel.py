"""The totals under every theorem side by side, the best valid one marked.

A result's totals are drawn on a turn of the event loop of their own (gui/turns.py), queued after
the cost plot's paint of the same result: the table's ~40 cells and their repaint (~2 ms of the
GUI thread) no longer come between the result and its curves on screen. Until then the table
shows the totals before, as it does while they are computed; a quarter of a second after the
edit they are greyed if the result has not come, or the result is drawn at once if its turn has
not (gui/evaluation.py)."""

from __future__ import annotations

import math

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView, QGroupBox, QHeaderView, QTableWidget, QTableWidgetItem, QVBoxLayout,
    QWidget,
)

from dpplanner import engine
from dpplanner.engine.types import Composition
from dpplanner.gui import formatting, theme
from dpplanner.gui.fitted_label import WrappingLabel
from dpplanner.gui.turns import Turns
from dpplanner.model.explanations import composition_note

COLUMNS = ("theorem", "total ε", "total δ", "exact total lies in", "time")


class ResultsPanel(QGroupBox):
    def __init__(self, parent: QWidget | None = None, turns: Turns | None = None) -> None:
        super().__init__("Totals", parent)
        self._turns = turns if turns is not None else Turns(self)     # see set_results
        self.setToolTip("The total privacy cost of the whole plan under every composition theorem. "
                        "★ marks the smallest valid total.")
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        self.table.setToolTip(self.toolTip())
        self.table.setAccessibleName("Totals under every theorem")
        self.table.setAccessibleDescription(
            "One row per composition theorem: the plan's total ε and δ, the certified interval the "
            "exact total lies in, and the time it took. The row marked with a star is the smallest "
            "valid total.")
        self.status = WrappingLabel("")
        self.status.setAccessibleName("What the totals were computed for")
        self.status.setToolTip("What the totals were computed for.")
        layout = QVBoxLayout(self)
        layout.addWidget(self.table)
        layout.addWidget(self.status)
        self._best: str | None = None
        self._bold = QFont()
        self._shown: list[tuple] = []       # per row: (theorem, cell texts, tooltip, is best)
        self._stale = False
        self._due: tuple | None = None      # set_results' arguments, drawn on a turn of their own

    def preferred_height(self, rows: int = len(engine.THEOREMS)) -> int:
        """Tall enough for every theorem's row and the note, no taller."""
        table = (self.table.horizontalHeader().sizeHint().height()
                 + rows * self.table.verticalHeader().defaultSectionSize() + 2 * self.table.frameWidth() + 4)
        margins = self.layout().contentsMargins()
        note = self.fontMetrics().height() * 2          # the note under the table, up to two lines
        title = self.fontMetrics().height()             # the group box title
        return table + note + title + margins.top() + margins.bottom() + 2 * self.layout().spacing()

    def best(self) -> str | None:
        return self._best

    def drawing(self) -> bool:
        """Whether totals set are still to be drawn (a turn of the event loop after set_results)."""
        return self._due is not None

    def set_results(self, totals: dict[str, Composition], best: str | None, note: str = "",
                    plan=None, inputs=None) -> None:
        """Show ``totals`` (``best`` marked) and ``note`` beneath them, on a turn of their own;
        each row's tooltip says its method in the words of ``plan`` (its statistics, with
        ``inputs``: explanations.composition_note), worded now, while they are the totals' own."""
        tips, notes = {}, {}
        for name, comp in totals.items():
            tip, words = engine.theorem(name).summary, composition_note(plan, name, comp, inputs)
            if words:
                tip += f"\n\nMethod: {words}" if comp.applicable and comp.reason is None else f"\n\n{words}"
            tips[name], notes[name] = tip, words
        self._due = (totals, best, note, tips, notes)
        self._turns.later(self, self._draw_due)

    def draw_now(self) -> None:
        """Draw what ``set_results`` left to its turn at once: where no curves are painted first
        (an emptied plan's plot is cleared at once)."""
        self._draw_due()

    def _draw_due(self) -> None:
        if self._due is None:
            return          # (drawn already by set_stale)
        (totals, best, note, tips, notes), self._due = self._due, None
        self._best = best
        bold = QFont(self.font())
        bold.setBold(True)
        if bold != self._bold:      # (a new font: the best row's cells take it)
            self._bold, self._shown = bold, []
        # Filled with the header's resizing off: with ResizeToContents on, every one of the ~40 new
        # items re-measured its column (~15 ms per update, after every edit).
        header = self.table.horizontalHeader()
        modes = [header.sectionResizeMode(c) for c in range(len(COLUMNS))]
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.setRowCount(len(totals))
        del self._shown[len(totals):]
        for row, (name, comp) in enumerate(totals.items()):
            cells = tuple(self._cells(name, comp, name == best, notes[name]))
            self._show_row(row, (name, cells, tips[name], name == best))
        for col, mode in enumerate(modes):
            header.setSectionResizeMode(col, mode)
        self._stale = False
        self.status.setText(note)

    def _show_row(self, row: int, shown: tuple) -> None:
        """Change only what differs from what the row shows: each change repaints its cell, and
        new items for every cell cost ~1 ms of each edit where mostly the times changed."""
        name, cells, tip, is_best = shown
        before = self._shown[row] if row < len(self._shown) else None
        for col, text in enumerate(cells):
            item = self.table.item(row, col)
            if item is None:
                item = QTableWidgetItem()
                if col:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
                before = None
            if before is None or before[1][col] != text:
                item.setText(text)
            if before is None or before[2] != tip:
                item.setToolTip(tip)
            if before is None or before[3] != is_best:
                item.setData(Qt.ItemDataRole.FontRole, self._bold if is_best else None)
            if col == 0 and (before is None or before[0] != name):
                item.setData(Qt.ItemDataRole.UserRole, name)
            if self._stale:
                item.setData(Qt.ItemDataRole.ForegroundRole, None)
        if row < len(self._shown):
            self._shown[row] = shown
        else:
            self._shown.append(shown)

    def set_stale(self, message: str) -> None:
        """Grey the numbers out while they no longer describe the plan (computing, or failed): those
        set last, if still to be drawn, are drawn now, greyed."""
        self._draw_due()
        self.status.setText(message)
        self._stale = True
        for row in range(self.table.rowCount()):
            for col in range(self.table.columnCount()):
                item = self.table.item(row, col)
                if item is not None:
                    item.setForeground(theme.late_text(self.palette()))

    def text_at(self, theorem: str, column: str) -> str:
        col = COLUMNS.index(column)
        for row in range(self.table.rowCount()):
            if self.table.item(row, 0).data(Qt.ItemDataRole.UserRole) == theorem:
                return self.table.item(row, col).text()
        raise KeyError(f"no results row for theorem '{theorem}'")

    def _cells(self, name: str, comp: Composition, is_best: bool, why: str) -> list[str]:
        """The row's texts; ``why``: an infeasible total's reason, in the plan's words."""
        label = engine.theorem(name).label + (" ★" if is_best else "")
        if not comp.applicable:
            return [label, "n/a", "", "does not apply (see tooltip)", ""]
        if comp.epsilon == math.inf:
            return [label, "infeasible", formatting.upper(comp.delta, 2), why,
                    formatting.seconds(comp.seconds)]
        bracket = ""
        if comp.epsilon_lower is not None:
            bracket = f"[{formatting.lower(comp.epsilon_lower)}, {formatting.upper(comp.epsilon)}]"
        # Rounded up: the text on screen is still a valid bound.
        return [label, formatting.upper(comp.epsilon), formatting.upper(comp.delta, 2), bracket,
                formatting.seconds(comp.seconds)]
