"""The cost plot's drawing and paint of a result's curves, on turns of the event loop of their
own, and what waits for that paint. A part of ``CostPlot`` (gui/plots.py).

A result's slot and the events it posts run back to back (gui/turns.py): the paint of eight curves
and their axes (~12 ms of the GUI thread) came right after the result's slot and the table's
repaint, one ~40 ms stall while a large plan opened. So the view's paints are held back until the
turn ``_paint_later`` queues (the first: an edit is watched there), and what should come only once
they are done (the table's numbers that wait for the result: gui/table_numbers.py) is queued on
turns after that paint (``after_paint``).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent
from PySide6.QtGui import QRegion

from dpplanner.gui.turns import Turns


class CurvePaint:
    """Mixed into ``CostPlot`` (its ``view``, ``plot_item``, marker lines and ``_draw_set``): see the
    module docstring."""

    def _init_paint(self, turns: Turns) -> None:
        self._turns = turns
        self._held = QRegion()          # the view's paints held back until the curves' turn
        self._after_paint: dict[Callable[[], None], None] = {}     # (in order, each once)
        self._paint_due = False         # the held paints are asked for: after_paint waits for them
        self._through = False           # one paint let past the hold (paint_now)

    def _paint_later(self) -> None:
        self._turns.later(self, self._set_curves, first=True)

    def drawing(self) -> bool:
        """Whether curves set are still to be painted (a turn of the event loop after set_curve)."""
        return self._turns.pending(self)

    def after_paint(self, piece: Callable[[], None]) -> None:
        """Run ``piece`` on a turn of its own once the curves set last are painted (at once when
        they are, or when nothing is to be painted: a hidden view)."""
        self._after_paint[piece] = None
        if not self._turns.pending(self) and not self._paint_due:
            self._run_after_paint()

    def eventFilter(self, watched, event) -> bool:     # noqa: N802  (Qt's name)
        # The view's paints wait for the turn set_curve queued: turning its updates off was not enough, a
        # repaint of the window around it (the results' table) painted it with the slot.
        if event.type() == QEvent.Type.Paint:
            if self._through:       # (paint_now's: a held paint asked for is still to come)
                return False
            if self._turns.pending(self):
                self._held += event.region()
                return True
            if self._paint_due:
                self._paint_due = False
                self._run_after_paint()     # (queued: they run after this paint)
        return False

    def paint_now(self) -> None:
        """Paint the view at once, past the hold: what it shows changed while its curves' turn is
        still to come (the plan before's curves faded beside the Totals drawn early:
        cost_curves.fade_until_set; held, that fade never reached the screen)."""
        self._through = True
        try:
            self.view.viewport().repaint()
        finally:
            self._through = False

    def _set_curves(self) -> None:
        """Set the curves kept by set_curve (``_draw_set``: their data, legend entries and frame;
        ~12 ms while a large plan opened), on a turn of their own before the paint's."""
        self._draw_set()
        self._turns.later(self, self._paint_curves, first=True)

    def _paint_curves(self) -> None:
        """Settle what the paint reads, then paint what was held back, once, on the next turn: the
        view's transform and the lines' extents (settled as a paint began, the items they moved
        asked for a second paint: ~5 ms), and the axes' ticks and labels (drawn by the paint,
        they were ~6 ms of its ~16 ms while a large plan opened)."""
        self.view.scene().prepareForPaint()
        for line in (self.k_line, self.budget_line, self.hover_line):
            line.boundingRect()
        self._turns.later(self, self._paint_held, first=True)
        if self.view.isVisible():       # (a hidden view paints nothing)
            from dpplanner.gui.plot_common import draw_axes_ahead

            draw_axes_ahead(self.plot_item)

    def _paint_held(self) -> None:
        held, self._held = self._held, QRegion()
        self.view.viewport().update(held)
        self._paint_due = not held.isEmpty() and self.view.isVisible()
        if not self._paint_due:
            self._run_after_paint()

    def _run_after_paint(self) -> None:
        pieces, self._after_paint = self._after_paint, {}
        for piece in pieces:
            self._turns.later(piece, piece)
