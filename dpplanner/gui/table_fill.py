"""The statistics table's cells after a reset (a plan opened, Undo/Redo), a part of
``StatisticsTableModel`` (gui/table_model.py): the window computes the rows on screen a block a turn
before it draws the table (``fill_screen_block``); a paint that comes first leaves the cells that
need a block's privacy empty, and they are filled a block a turn of the event loop later: a block's
Gaussian and OpenDP calibrations cost a few ms, the paint after opening a plan ~10 ms.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer

from dpplanner.gui.row_privacy import PRIVACY_BLOCK
from dpplanner.gui.table_columns import COLUMN_INDEX


class ResetFill:
    """Mixed into ``StatisticsTableModel`` (its ``_privacy``, ``_rows``, ``_screen`` and the
    model's ``index`` and ``dataChanged``)."""

    def _init_fill(self) -> None:
        self._fill_later = True
        self._unfilled: set[int] = set()        # blocks left empty by a paint
        self._fill_timer = QTimer(self, singleShot=True, interval=0)
        self._fill_timer.timeout.connect(self._fill)
        self._fill_armed = False

    def fill_first_paint(self) -> None:
        """Let the next paint draw every number: the window's first (nothing could react yet)."""
        self._fill_later = False

    def filling(self) -> bool:
        """Whether cells a paint left empty after a reset are still to be filled."""
        return bool(self._unfilled) or self._fill_armed or self._fill_timer.isActive()

    def _shown_later(self, row: int, key: str) -> bool:
        """Whether the cell is left empty until its block is filled (after a reset)."""
        return self._fill_later and key == "error" and not self._privacy.known(row)

    def _measured_later(self, row: int, key: str) -> bool:
        """Whether a column fit skips the cell (ShownRole None): left empty for now, or off screen
        with its accuracy not known (a fit computes nothing; the cell is measured once drawn)."""
        if key != "error" or self._privacy.known(row):
            return False
        first, last = self._screen()
        return self._fill_later or not first <= row <= last

    def _arm_fill(self) -> None:
        """The fill's timer, started by a posted event (after the paint the fill posts): started
        by a paint, it fired right after it, one ~24 ms stall with the first paint (gui/turns.py)."""
        if not self._fill_armed and not self._fill_timer.isActive():
            self._fill_armed = True
            QTimer.singleShot(0, self, self._start_fill)

    def _start_fill(self) -> None:
        self._fill_armed = False
        self._fill_timer.start()

    def _fill(self) -> None:
        """Compute and draw a block of the cells a paint after a reset left empty; the next block
        a turn of the event loop later (each turn's paint draws only that block's cells)."""
        if not self._unfilled:
            return      # (due from before a reset: the new state's paint asks for its own)
        block = min(self._unfilled)
        self._unfilled.discard(block)
        if self._unfilled:
            self._arm_fill()
        else:
            self._fill_later = False
        self._compute_block(block)

    def fill_screen_block(self) -> bool:
        """Compute the block of the first row on screen whose accuracy is not known, and signal
        its cells; False when every row on screen is known. After a reset the window computes
        the rows on screen so, a block a turn, before it draws the table (gui/statistics_panel.py):
        drawn first with their errors left empty, the table was drawn whole again when the first
        block filled widened the error column."""
        first, last = self._screen()
        row = next((r for r in range(first, min(last, len(self._rows) - 1) + 1)
                    if not self._privacy.known(r)), None)
        if row is None:
            if self._fill_later and not self.filling():
                self._fill_later = False    # (what a reset's paint left empty is filled too)
            return False
        self._unfilled.discard(row // PRIVACY_BLOCK)
        self._compute_block(row // PRIVACY_BLOCK)
        return True

    def _compute_block(self, block: int) -> None:
        first = block * PRIVACY_BLOCK
        if first >= len(self._rows):
            return
        last = min(first + PRIVACY_BLOCK, len(self._rows)) - 1
        self._privacy.compute(first, last)      # every row of the block: none is left empty again
        self.dataChanged.emit(self.index(first, COLUMN_INDEX["error"]),
                              self.index(last, COLUMN_INDEX["error"]), [Qt.ItemDataRole.DisplayRole])
