"""The statistics table's numbers a change of the plan may move in every row (ε_i, δ_i, error),
drawn again where they moved. A part of ``StatisticsTableModel`` (gui/table_model.py).

A redistribution moves every free row's ε_i, and with it its error; a change of the budget moves
every error and δ_i. A row's error needs its Gaussian and OpenDP calibrations (~0.3 ms a row on
the GUI thread): made with the change for every row on screen, they came before the cost plot
painted the change's curves (~4 ms of each edit of a 100-row plan). Given ``after_result``
(``set_after_result``), the error of the rows on screen whose accuracy the change made unknown is
kept as drawn until the window has drawn the change's result, as the totals beside it are; then
it is computed and drawn again, a block of rows a turn of the event loop (a screenful's
calibrations in one turn were ~5-9 ms of the GUI thread on the 10,000-query plan). The ε_i and δ_i
(the plan's split of δ: no calibration), and every number of the rows the change names (a typed ε_i
or target error), are drawn with the change. A kept cell is greyed, as the Totals table greys totals
that are late, and answers every role but the plan's own values (its editor's, RawRole) as drawn:
its tooltip says it waits, and nothing of it is computed meanwhile.
"""

from __future__ import annotations

from operator import attrgetter
from typing import Callable, Optional, Sequence

from PySide6.QtCore import Qt, QTimer

from dpplanner.gui import theme
from dpplanner.gui.row_privacy import PRIVACY_BLOCK
from dpplanner.gui.table_columns import COLUMN_INDEX

_EPSILON, _DELTA, _ERROR = (COLUMN_INDEX[key] for key in ("epsilon", "delta", "error"))
#: The columns every change of the plan may change in every row (side by side).
_PLAN_WIDE = (_EPSILON, _DELTA, _ERROR)
#: Of those, the ones drawn with the change (not needing the row's accuracy), and their keys.
_WITH_CHANGE = _PLAN_WIDE[:2]
_KEYS = ((_EPSILON, "epsilon"), (_DELTA, "delta"))
#: Qt's table view redraws a changed range's own cells only when it has at most 200 of them (the
#: whole view otherwise): a change of every row is signalled in ranges of at most that many cells.
_RANGE_CELLS = 200
#: What an error cell shows besides its number (bold when a target): a cell kept as drawn keeps these.
_STYLE = attrgetter("kind", "target_error")
_DISPLAY = int(Qt.ItemDataRole.DisplayRole)
_FOREGROUND = int(Qt.ItemDataRole.ForegroundRole)


class PlanWideNumbers:
    """Mixed into ``StatisticsTableModel``: see the module docstring."""

    def _init_numbers(self) -> None:
        #: (row, column) -> the roles of an error cell as drawn before the change whose result it
        #: waits for, greyed (served to paints, column fits and tooltips until then).
        self._waiting: dict[tuple[int, int], dict] = {}
        self._after_result: Optional[Callable[[Callable[[], None]], None]] = None
        #: The result the kept cells waited for is drawn: they are drawn again a block a turn,
        #: served as drawn until their block's turn.
        self._released = False
        self._release_timer = QTimer(self, singleShot=True, interval=0)
        self._release_timer.timeout.connect(self._draw_released)

    def set_after_result(self, later: Callable[[Callable[[], None]], None]) -> None:
        """``later(piece)`` runs ``piece`` once the window has drawn the result of the plan as it is
        when asked (see the module docstring); without it every number is drawn with its change."""
        self._after_result = later

    def waiting(self) -> bool:
        """Whether numbers on screen are kept as drawn, waiting for the result of a change."""
        return bool(self._waiting) and not self._released

    def releasing(self) -> bool:
        """Whether numbers whose result is drawn are still to be drawn again (a block a turn)."""
        return self._released and bool(self._waiting)

    def _take_waiting(self, kind: str) -> dict:
        """The cells kept as drawn, before the plan's change of ``kind`` reaches the table. A change
        of the rows' order or number leaves none kept: where they are on screen is drawn again
        (a redistribution with the change is signalled whole anyway)."""
        waiting, self._waiting, self._released = self._waiting, {}, False
        if waiting and kind in ("inserted", "removed", "moved"):
            self._signal_screen((_ERROR,))
        return waiting

    def _plan_wide_changed(self, painted: Optional[dict] = None, waiting: Optional[dict] = None,
                           before: Sequence = (), edited: Sequence[int] = ()) -> None:
        """Every row's epsilon, delta and error: a redistribution moves the epsilons, and deltas
        and errors depend on the budget and on the number of Gaussian statistics. On screen, a
        row's are drawn again only where they differ from ``painted`` (the cells as drawn before
        the change, and those still ``waiting`` for an earlier change's result): their new roles
        are computed here, as their paint would have (an edit of one row, and the deltas an edit
        of epsilons leaves alone, are not repainted: ~40 us a cell) - or, for the error of a row
        not ``edited`` whose accuracy is unknown now, kept as drawn (greyed) until the change's
        result is drawn (``before``: the rows before the change). Cells left empty after a reset
        are all signalled (they are filled a block a turn)."""
        top, bottom = self._screen() if painted is not None and not self._fill_later else (0, -1)
        bottom = min(bottom, len(self._rows) - 1)
        drawn = {**(waiting or {}), **(painted or {})}
        keep = self._after_result is not None and len(before) == len(self._rows)
        late = theme.late_text()
        moved: dict[int, list[int]] = {column: [] for column in _PLAN_WIDE}     # column -> rows
        for row in range(top, bottom + 1):
            stat = self._rows[row]
            for column, key in _KEYS:
                was = drawn.get((row, column))
                # (an ε_i or δ_i cell shows nothing else that a change of the plan moves, but for
                # the kind of an edited row: a δ_i typed or not)
                if was is not None and was[_DISPLAY] == self._display(row, stat, key) and \
                        before[row].kind is stat.kind:
                    self._cells[row, column] = was
                else:
                    moved[column].append(row)
            wait = keep and row not in edited and not self._privacy.known(row) and \
                _STYLE(before[row]) == _STYLE(stat)
            if keep and not wait:
                self._privacy.compute(row, row)     # (its own: not with the rows kept below)
            was = drawn.get((row, _ERROR))
            if wait and was is not None:
                if was[_FOREGROUND] != late:
                    was = {**was, _FOREGROUND: late}
                    moved[_ERROR].append(row)       # (drawn greyed)
                self._waiting[row, _ERROR] = was
            elif was is None or self._painted(row, _ERROR) != was:
                moved[_ERROR].append(row)
        for column, rows in moved.items():
            self._signal_rows(column, rows)
        self._signal_off_screen(_WITH_CHANGE if self._waiting else _PLAN_WIDE, top, bottom)
        if self._waiting:
            self._after_result(self._draw_waiting)

    def _draw_waiting(self) -> None:
        """The result of the change the kept cells wait for is drawn: compute them and draw them
        again, un-greyed, the rows on screen now a block a turn (off screen: when shown)."""
        if not self._waiting or self._released:
            return          # (drawn already, or the rows moved since; or being drawn)
        top, bottom = self._screen()
        bottom = min(bottom, len(self._rows) - 1)
        self._waiting = {cell: kept for cell, kept in self._waiting.items() if top <= cell[0] <= bottom}
        self._signal_off_screen((_ERROR,), top, bottom)
        self._released = True
        self._draw_released()

    def _draw_released(self) -> None:
        """The next block of the cells released (a change since took them back: nothing)."""
        if not self._released:
            return
        rows = sorted(row for row, _column in self._waiting)[:PRIVACY_BLOCK]
        for row in rows:
            del self._waiting[row, _ERROR]
        if rows:
            self._privacy.compute(rows[0], rows[-1])
            self._signal_rows(_ERROR, rows)
        if self._waiting:       # (started after the paint the signals posted: a turn of its own)
            QTimer.singleShot(0, self, self._release_timer.start)
        else:
            self._released = False

    def _signal_rows(self, column: int, rows: Sequence[int]) -> None:
        """``column`` of ``rows`` changed: a signal a cell (a view draws a range's bounding
        rectangle again, a pixel into the cells beside it, which are drawn too)."""
        for row in rows:
            self.dataChanged.emit(self.index(row, column), self.index(row, column))

    def _signal_screen(self, columns: Sequence[int]) -> None:
        """``columns`` of every row on screen changed (a view draws them again)."""
        top, bottom = self._screen()
        bottom = min(bottom, len(self._rows) - 1)
        if top <= bottom:
            self.dataChanged.emit(self.index(top, columns[0]), self.index(bottom, columns[-1]))

    def _signal_off_screen(self, columns: Sequence[int], top: int, bottom: int) -> None:
        """``columns`` (side by side) of the rows off screen changed: in ranges a view redraws
        cell by cell (it draws nothing there; a column fit measures them again)."""
        step = _RANGE_CELLS // len(columns)
        for first, end in ((0, top), (bottom + 1, len(self._rows))):
            for start in range(first, end, step):
                last = min(start + step, end) - 1
                self.dataChanged.emit(self.index(start, columns[0]), self.index(last, columns[-1]))
