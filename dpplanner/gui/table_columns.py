"""The statistics table's columns (COLUMNS: what each shows), and columns that stay put: the
columns shown are the user's choice, each as wide as its text.

What a column shows never depends on the rows being edited: a column appears or disappears only
when the user ticks it in the header's menu (right-click a column title, or View > Table
Columns), and the choice is remembered. Widths:

- a column of fixed words (kind) is as wide as the longest word it can hold, so "Quantile / CDF"
  is never elided, whatever the rows hold;
- a column of numbers (and the noise column) is as wide as its header and the texts of the first
  rows and of those on screen (an error or delta the table has not computed yet is measured once
  it is drawn), and it never narrows while the plan is open (a new value with one more digit
  widens it; one with fewer does not make the columns beside it jump);
- the name column takes what is left, at least ``NAME_MIN_PX``; long names are elided (the
  tooltip has them in full). When the shown columns need more than the view's width, the table
  scrolls sideways instead of squeezing them.

Only a sample of rows is measured, so a plan of thousands of statistics costs the same as one of
fifty.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class Column:
    key: str
    title: str
    tooltip: str


COLUMNS: tuple[Column, ...] = (
    Column("name", "name", "The statistic's name (shown in plots and reports)."),
    Column("variable", "variable", "The variable (column of the dataset) the statistic is computed on."),
    Column("kind", "kind", "What is released: count, sum, mean, proportion, histogram, quantile/CDF, "
                           "or custom (you type ε_i and δ_i)."),
    Column("mechanism", "noise", "The noise added: Laplace (pure ε) or Gaussian (needs δ), as OpenDP adds "
           "it (what a release script adds) or \"(ideal)\": the idealised continuous noise of the "
           "textbook formulas, which no library adds exactly (Statistic tab: Noise implemented by)."),
    Column("epsilon", "ε_i", "Privacy budget of one release of this statistic. Typing a value holds "
                             "it while the free statistics are redistributed."),
    Column("delta", "δ_i", "δ of one release: 0 for Laplace, a share of the δ split for Gaussian, "
                           "typed for custom statistics."),
    Column("error", "error", "Error bound at the plan's confidence level, in the statistic's own "
                             "units (a grouped statistic: one group's). Type a target error to get "
                             "the ε_i it needs."),
    Column("held", "pin", "Pinned statistics (ticked, with a pin) keep their ε_i, or their target "
                          "error, when the budget is redistributed. Typing an ε_i or a target error "
                          "pins a statistic; untick to unpin it."),
    Column("weight", "weight", "Relative share of the budget a free statistic gets when the budget "
                               "is redistributed."),
    Column("repetitions", "releases", "How many times this statistic is released (each with ε_i, δ_i)."),
)
COLUMN_INDEX = {c.key: i for i, c in enumerate(COLUMNS)}


def rows_on_screen(view: QTableView) -> tuple[int, int]:
    """The first and last rows ``view`` shows (a row shown in part counts); (0, -1) for none."""
    top = view.rowAt(0)
    if top < 0:
        return 0, -1
    bottom = view.rowAt(view.viewport().height() - 1)
    return top, view.model().rowCount() - 1 if bottom < 0 else bottom


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
        self._stretch_natural: Optional[int] = None     # the stretch column's, as last measured
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
        # Coalesce bursts (a rebalance changes every row) into one fit after the event loop turns;
        # a change of some columns' cells measures those columns again, any other change all.
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._fit_changed)
        self._changed: set[int] = set()         # columns to measure at the next fit (-1: all)
        model = view.model()
        model.modelReset.connect(self._forget)
        for signal in (model.modelReset, model.rowsInserted, model.layoutChanged,
                       view.verticalScrollBar().valueChanged):
            signal.connect(lambda *_args: self._refit())
        model.dataChanged.connect(lambda first, last, *_roles: self._refit(first.column(), last.column()))
        view.viewport().installEventFilter(self)
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
        rows = set(range(min(self._view.model().rowCount(), SAMPLE_ROWS)))
        top, bottom = rows_on_screen(self._view)
        rows.update(range(top, min(bottom, top + 200) + 1))
        return sorted(rows)

    def _measure(self, text: str) -> int:
        if text not in self._widths:
            if len(self._widths) > 10_000:
                self._widths.clear()
            self._widths[text] = self._view.fontMetrics().horizontalAdvance(text)
        return self._widths[text]

    def _refit(self, first: int = -1, last: int = -1) -> None:
        """Fit after the event loop turns: columns ``first`` to ``last`` changed (-1: all may have)."""
        self._changed.update(range(first, last + 1) if first >= 0 else (-1,))
        self._timer.start()

    def _fit_changed(self) -> None:
        changed, self._changed = self._changed, set()
        self.fit(None if -1 in changed else changed)

    def fit(self, columns: Optional[set[int]] = None) -> None:
        """Fit the columns (``columns``: measure only those again; the others keep their width)."""
        view = self._view
        shown = [c for c in self.shown() if c != self._stretch]
        for c in shown:
            if columns is not None and c not in columns and c in self._floor:
                continue
            width = max(self.natural_width(c), self._floor.get(c, 0), MIN_PX)
            self._floor[c] = width
            if view.columnWidth(c) != width:
                view.setColumnWidth(c, width)
        if view.isColumnHidden(self._stretch):
            return
        if columns is None or self._stretch in columns or self._stretch_natural is None:
            self._stretch_natural = self.natural_width(self._stretch)
        self._fit_stretch()

    def _fit_stretch(self) -> None:
        """The stretch column takes the room the others leave (at least its minimum)."""
        view = self._view
        if view.isColumnHidden(self._stretch) or self._stretch_natural is None:
            return
        room = view.viewport().width() - sum(view.columnWidth(c) for c in self.shown() if c != self._stretch)
        width = max(room, min(NAME_MIN_PX, self._stretch_natural))
        if view.columnWidth(self._stretch) != width:
            view.setColumnWidth(self._stretch, width)

    def fit_pending(self) -> None:
        """The fit due after the event loop turns, now (before the table is drawn: drawn first,
        it was drawn whole again when the fit moved the columns)."""
        if self._timer.isActive():
            self._timer.stop()
            self._fit_changed()

    def _forget(self) -> None:
        """Another plan: numbers columns may narrow again."""
        self._floor.clear()

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.Resize:
            # The stretch column at once (the view sizes its scroll bars to the widths as they
            # are now: the row header widened by a plan of thousands of rows showed a sideways
            # one, drawn until the fit a turn later), the others, measuring the rows now on
            # screen, a turn later.
            self._fit_stretch()
            self._refit()
        return False
