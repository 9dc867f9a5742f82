"""Table columns that fit the window: each as wide as its header and the text of the first rows,
shrunk (text elided in the middle, the full value in the tooltip) when the view is narrower.
Numbers are never shrunk ("0…3" helps nobody): when they do not fit, the least needed columns are
hidden (the inspector beside the table shows every field), never the column of the current cell.

The name column stretches into what is left. Only a sample of rows is measured, so a plan of
thousands of statistics costs the same as one of fifty.
"""

from __future__ import annotations

from typing import Sequence

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QHeaderView, QTableView

#: Rows measured for a column's natural width (~0.3 ms a row for the ten columns).
SAMPLE_ROWS = 25
#: Room for the cell's margins (and the sort/check indicator) around the measured text.
PADDING_PX = 18
#: No column is shrunk below this, however narrow the view.
MIN_PX = 36
#: Nor is a column ever wider than this (long texts elide, the tooltip has them in full).
MAX_PX = 220
#: The stretching column keeps at least this much.
STRETCH_MIN_PX = 120


class ColumnFitter(QObject):
    """Keeps ``view``'s column widths fitted; ``stretch`` is the column that takes the rest;
    ``whole`` columns (numbers) are never shrunk; ``hide_first`` are hidden in this order when
    the rest does not fit."""

    def __init__(self, view: QTableView, stretch: int, whole: Sequence[int] = (),
                 hide_first: Sequence[int] = ()) -> None:
        super().__init__(view)
        self._view = view
        self._stretch = stretch
        self._whole = set(whole)
        self._hide_first = list(hide_first)
        self._widths: dict[str, int] = {}     # text -> pixels: the same texts recur (units, ε_i)
        view.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        view.setWordWrap(False)      # one line per cell: a wrapped line is elided on its own ("a…b …")
        header = view.horizontalHeader()
        header.setMinimumSectionSize(MIN_PX)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setSectionResizeMode(stretch, QHeaderView.ResizeMode.Stretch)
        # Coalesce bursts (a rebalance changes every row) into one fit after the event loop turns.
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.fit)
        model = view.model()
        for signal in (model.modelReset, model.rowsInserted, model.dataChanged, model.layoutChanged):
            signal.connect(self._timer.start)
        view.viewport().installEventFilter(self)
        view.selectionModel().currentChanged.connect(self._on_current)
        self.fit()

    def natural_width(self, column: int) -> int:
        model, metrics = self._view.model(), self._view.fontMetrics()
        header = model.headerData(column, Qt.Orientation.Horizontal) or ""
        width = metrics.horizontalAdvance(str(header))
        for row in range(min(model.rowCount(), SAMPLE_ROWS)):
            text = model.index(row, column).data()
            if text:
                text = str(text)
                if text not in self._widths:
                    if len(self._widths) > 10_000:
                        self._widths.clear()
                    self._widths[text] = metrics.horizontalAdvance(text)
                width = max(width, self._widths[text])
        return min(width + PADDING_PX, MAX_PX)

    def fit(self) -> None:
        model = self._view.model()
        columns = [c for c in range(model.columnCount()) if c != self._stretch]
        wanted = {c: self.natural_width(c) for c in columns}
        room = self._view.viewport().width() - STRETCH_MIN_PX
        current = self._view.currentIndex().column()

        def least(c: int) -> int:
            return wanted[c] if c in self._whole else MIN_PX

        hidden: set[int] = set()
        for c in self._hide_first:
            if sum(least(k) for k in wanted.keys() - hidden) <= room:
                break
            if c != current:
                hidden.add(c)
        shown = {c: w for c, w in wanted.items() if c not in hidden}
        total = sum(shown.values())
        if total > room > 0:
            # Shrink the text columns' excess over the minimum in proportion, so each keeps some text.
            spare = sum(w - MIN_PX for c, w in shown.items() if c not in self._whole)
            cut = min(1.0, (total - room) / spare) if spare else 0.0
            shown = {c: w if c in self._whole else int(w - (w - MIN_PX) * cut) for c, w in shown.items()}
        for c in columns:
            self._view.setColumnHidden(c, c in hidden)
        for c, w in shown.items():
            self._view.setColumnWidth(c, w)

    def _on_current(self, current, _previous) -> None:
        # Show the current cell's column at once (an editor opened on it must be visible), but
        # measure later: this can fire while the model is in the middle of removing rows.
        if current.isValid() and self._view.isColumnHidden(current.column()):
            self._view.setColumnHidden(current.column(), False)
            self._timer.start()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._timer.start()
        return False
