"""Table columns that stay put: the columns shown are the user's choice, each as wide as its text.

What a column shows never depends on the rows being edited: a column appears or disappears only
when the user ticks it in the header's menu (right-click a column title, or View > Table
Columns), and the choice is remembered. Widths:

- a column of fixed words (kind) is as wide as the longest word it can hold, so "Quantile / CDF"
  is never elided, whatever the rows hold;
- a column of numbers (and the noise column) is as wide as its header and the texts of the first
  rows and of those on screen, and it never narrows while the plan is open (a new value with one more digit widens it; one with fewer does
  not make the columns beside it jump);
- the name column takes what is left, at least ``NAME_MIN_PX``; long names are elided (the
  tooltip has them in full). When the shown columns need more than the view's width, the table
  scrolls sideways instead of squeezing them.

Only a sample of rows is measured, so a plan of thousands of statistics costs the same as one of
fifty.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Optional, Sequence

from PySide6.QtCore import QEvent, QObject, Qt, QTimer, Signal
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QMenu, QTableView

#: Rows measured for a column's natural width (~0.3 ms a row for the ten columns).
SAMPLE_ROWS = 25
#: Room for the cell's margins (and a check box or icon) around the measured text.
PADDING_PX = 18
#: No column is narrower than this.
MIN_PX = 36
#: Nor is a column of free text ever wider than this (long texts elide, the tooltip has them).
MAX_PX = 220
#: The name column keeps at least this much (or its natural width, if smaller).
NAME_MIN_PX = 110


class ColumnFitter(QObject):
    """Keeps ``view``'s column widths fitted. ``stretch`` is the column that takes the rest;
    ``words[c]`` lists every text column c can show (its width is the widest of them);
    ``extra[c]`` is room a column needs besides its text (a check box and an icon); ``role``
    gives a cell's text as drawn (a model may say None for a cell it fills later: a fit
    computes nothing, the fill's dataChanged fits again); ``texts(c, rows)``, if given, gives
    those texts of a column's rows in one call (not two calls into the model per cell)."""

    shownChanged = Signal(list)          # the column numbers shown, after the user's choice

    def __init__(self, view: QTableView, stretch: int, words: Mapping[int, Sequence[str]] = {},
                 extra: Mapping[int, int] = {}, always: Sequence[int] = (),
                 role: int = Qt.ItemDataRole.DisplayRole,
                 texts: Optional[Callable[[int, Sequence[int]], Iterable]] = None) -> None:
        super().__init__(view)
        self._view = view
        self._texts = texts or (lambda column, rows: [view.model().index(row, column).data(role)
                                                      for row in rows])
        self._stretch = stretch
        self._words = {c: tuple(w) for c, w in words.items()}
        self._extra = dict(extra)
        self._always = set(always) | {stretch}
        self._floor: dict[int, int] = {}      # widest natural width seen since the plan was opened
        self._widths: dict[str, int] = {}     # text -> pixels: the same texts recur (units, ε_i)
        view.setTextElideMode(Qt.TextElideMode.ElideRight)
        view.setWordWrap(False)      # one line per cell: a wrapped line is elided on its own ("a…b …")
        view.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)
        header = view.horizontalHeader()
        header.setMinimumSectionSize(MIN_PX)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setStretchLastSection(False)
        header.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        header.customContextMenuRequested.connect(
            lambda pos: self.fill_menu(QMenu("Table Columns", header)).exec(header.mapToGlobal(pos)))
        # Coalesce bursts (a rebalance changes every row) into one fit after the event loop turns.
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self.fit)
        model = view.model()
        model.modelReset.connect(self._forget)
        for signal in (model.modelReset, model.rowsInserted, model.dataChanged, model.layoutChanged):
            signal.connect(self._timer.start)
        view.viewport().installEventFilter(self)
        view.verticalScrollBar().valueChanged.connect(self._timer.start)
        self.fit()

    # -- which columns ------------------------------------------------------------------------
    def shown(self) -> list[int]:
        return [c for c in range(self._view.model().columnCount()) if not self._view.isColumnHidden(c)]

    def set_shown(self, columns: Iterable[int]) -> None:
        """Show exactly these columns (plus those always shown)."""
        wanted = set(columns) | self._always
        for c in range(self._view.model().columnCount()):
            self._view.setColumnHidden(c, c not in wanted)
        self.fit()

    def fill_menu(self, menu: QMenu) -> QMenu:
        """One tick per column: what the header's right-click and View > Table Columns show."""
        model = self._view.model()
        menu.clear()
        menu.setToolTipsVisible(True)
        for c in range(model.columnCount()):
            title = model.headerData(c, Qt.Orientation.Horizontal) or ""
            action = menu.addAction(str(title))
            action.setCheckable(True)
            action.setChecked(not self._view.isColumnHidden(c))
            action.setEnabled(c not in self._always)
            action.setToolTip(model.headerData(c, Qt.Orientation.Horizontal,
                                               Qt.ItemDataRole.ToolTipRole) or "")
            action.toggled.connect(lambda on, c=c: self._choose(c, on))
        return menu

    def _choose(self, column: int, on: bool) -> None:
        shown = set(self.shown())
        shown = shown | {column} if on else shown - {column}
        self.set_shown(shown)
        self.shownChanged.emit(sorted(shown))

    # -- widths -------------------------------------------------------------------------------
    def natural_width(self, column: int) -> int:
        """The width a column's texts need: its header and its possible words, or the sampled
        rows (free text capped at MAX_PX)."""
        model, metrics = self._view.model(), self._view.fontMetrics()
        header = model.headerData(column, Qt.Orientation.Horizontal) or ""
        width = metrics.horizontalAdvance(str(header))
        if column in self._words:
            width = max([width] + [self._measure(w) for w in self._words[column]])
            return width + PADDING_PX + self._extra.get(column, 0)
        for text in self._texts(column, self._measured_rows()):
            if text:
                width = max(width, self._measure(str(text)))
        return min(width + PADDING_PX + self._extra.get(column, 0), MAX_PX)

    def _measured_rows(self) -> list[int]:
        """The first SAMPLE_ROWS rows and those on screen (scrolling refits: a wider number
        further down widens its column when it comes into view)."""
        view = self._view
        count = view.model().rowCount()
        rows = set(range(min(count, SAMPLE_ROWS)))
        top = view.rowAt(0)
        if top >= 0:
            bottom = view.rowAt(view.viewport().height() - 1)
            bottom = count - 1 if bottom < 0 else bottom
            rows.update(range(top, min(bottom, top + 200) + 1))
        return sorted(rows)

    def _measure(self, text: str) -> int:
        if text not in self._widths:
            if len(self._widths) > 10_000:
                self._widths.clear()
            self._widths[text] = self._view.fontMetrics().horizontalAdvance(text)
        return self._widths[text]

    def fit(self) -> None:
        view = self._view
        shown = [c for c in self.shown() if c != self._stretch]
        for c in shown:
            width = max(self.natural_width(c), self._floor.get(c, 0), MIN_PX)
            self._floor[c] = width
            if view.columnWidth(c) != width:
                view.setColumnWidth(c, width)
        if view.isColumnHidden(self._stretch):
            return
        room = view.viewport().width() - sum(view.columnWidth(c) for c in shown)
        name_min = min(NAME_MIN_PX, self.natural_width(self._stretch))
        width = max(room, name_min)
        if view.columnWidth(self._stretch) != width:
            view.setColumnWidth(self._stretch, width)

    def _forget(self) -> None:
        """Another plan: numbers columns may narrow again."""
        self._floor.clear()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            self._timer.start()
        return False
