"""The cost plot's curves, one per theorem: made ahead and reused, styled, listed in the legend,
hidden and shown by a click on their legend entry, faded while they are the plan before's.

A part of ``CostPlot`` (gui/plots.py), kept apart from its framing, read-out and options. It
draws on the plot's ``plot_item``, ``legend``, ``_theme``, ``_ks`` (the k of the points drawn)
and ``_upper`` (each theorem's totals at them), and after a legend click emits its
``hiddenChanged`` and frames it again (``_frame``).
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from PySide6.QtCore import QTimer

from dpplanner import engine
from dpplanner.gui import theme as themes

# pyqtgraph and plot_common (built on it) are imported with the first canvas (gui/lazy_canvas.py).

#: Curves with at most this many points are drawn with markers.
_MARKERS_UP_TO = 20
#: How the curves of the plan before are drawn while the plan's own are late (set_late).
LATE_OPACITY = 0.3


class TheoremCurves:
    """Mixed into ``CostPlot``: its curves, one per theorem (see the module docstring)."""

    def _init_curves(self) -> None:
        self.items: dict[str, object] = {}     # theorem -> its pyqtgraph curve, once drawn
        # Curves not drawn now, made ahead or taken off: ~1.5 ms of the GUI thread each to make.
        self._spare: dict[str, object] = {}
        # Legend entries made ahead with the spare curves (~1 ms each; a legend entry taken off
        # is closed, so a curve drawn again gets a new one).
        self._entries: dict[str, tuple] = {}
        self._legend_edits = 0                 # entries added or taken off: the legend needs a fit
        # name -> (theme, with markers) its curve is styled with: setPen redraws the curve.
        self._styled: dict[str, tuple] = {}
        self._hidden: set[str] = set()
        self._late = False                     # the curves drawn are the plan before's (set_late)
        self._unset = False                    # set_curve's curves are still to be set (_draw_set)

    def _make_spares(self) -> None:
        """Make the next theorem's curve and legend entry ahead of the first result, one a turn
        of the event loop (all eight in one turn held the GUI thread ~15 ms)."""
        missing = [n for n in engine.THEOREMS if n not in self.items and n not in self._spare]
        if not missing:
            return
        name = missing[0]
        item = self._spare[name] = self._new_item(name)
        self._entries[name] = self._new_entry(name, item)
        # On the plot already, hidden: adding a curve to the plot is most of what showing it costs
        self.plot_item.addItem(item)
        item.hide()
        if len(missing) > 1:
            QTimer.singleShot(0, self, self._make_spares)

    def spares_made(self) -> bool:
        """Whether every theorem's curve is made (drawn or spare)."""
        return all(n in self.items or n in self._spare for n in engine.THEOREMS)

    def hidden(self) -> list[str]:
        return sorted(self._hidden)

    def set_hidden(self, names: Sequence[str]) -> None:
        self._hidden = set(names)
        for name, item in self.items.items():
            item.setVisible(name not in self._hidden)

    def curve_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """What is drawn for one theorem (x = k, y = total ε; nan where nothing is drawn), in
        data units also on a log k axis (where the drawn coordinates are log10 k)."""
        x, y = self.items[name].getOriginalDataset()
        return np.asarray(x), np.asarray(y)

    def _draw_curves(self) -> None:
        """Draw ``_upper`` (theorem -> total ε at each of ``_ks``): a curve per theorem that applies
        at some k. A curve drawn as it is already is not set again: a result that moved none (a
        statistic renamed) sets no data (~0.3 ms a curve, and a repaint of it)."""
        from dpplanner.gui.plot_common import finite_or_nan

        for name in list(self.items):
            if name not in self._upper:
                self._remove_item(name)
        for name, values in self._upper.items():
            if np.all(np.isnan(values)):        # never applicable (kov on unequal queries)
                if name in self.items:
                    self._remove_item(name)
                continue
            item = self.items.get(name)
            if item is None:
                item = self._add_item(name)
            drawn = finite_or_nan(values)
            x, y = item.getOriginalDataset()
            if x is None or not (np.array_equal(x, self._ks) and np.array_equal(y, drawn, equal_nan=True)):
                item.setData(self._ks, drawn, connect="finite")
            self._style_item(name, item)

    def set_late(self) -> None:
        """The plan's result is late: the curves drawn are the plan before's, faded (with the
        greyed totals beside them) until the result's curve is set, or the plot cleared."""
        self._late = True
        self._fade(LATE_OPACITY)

    def fade_until_set(self) -> None:
        """The plan's result is shown beside the plot (the Totals) while its curves still wait for
        their turn (a slow paint before it): the curves drawn, the plan before's, are faded until
        they are set."""
        if self._unset:
            self._fade(LATE_OPACITY)
            self.paint_now()

    def _fade(self, opacity: float) -> None:
        for item in self.items.values():
            if item.opacity() != opacity:
                item.setOpacity(opacity)

    def _style_item(self, name: str, item, force: bool = False) -> None:
        from dpplanner.gui.plot_common import curve_pen

        # A few points (one or two statistics) get markers: a single k is otherwise invisible.
        markers = len(self._ks) <= _MARKERS_UP_TO
        if not force and self._styled.get(name) == (self._theme, markers):
            return      # already so (each restyle redraws the curve: ~0.25 ms a theorem, per edit)
        self._styled[name] = (self._theme, markers)
        item.setPen(curve_pen(self._theme, name))
        if markers:
            item.setSymbol("o")
            item.setSymbolSize(7)
            item.setSymbolPen(None)
            item.setSymbolBrush(themes.curve_colour(self._theme, name))
        else:
            item.setSymbol(None)
        # The legend's sample draws the curve's style but is not told of a new one (pyqtgraph):
        # without this it kept its markers on screen after the curve lost them.
        for sample, _label in self.legend.items:
            if sample.item is item:
                sample.update()

    def _new_item(self, name: str):
        from dpplanner.gui.plot_common import curve_pen, pg

        # No dynamic range limit: the frame holds every curve shown (_frame), so its clipping of
        # points far off the view never applies; it took every curve's bounds again at each
        # setData and each change of the y range (about half of setData's ~0.2 ms a curve).
        item = pg.PlotDataItem([], [], pen=curve_pen(self._theme, name), dynamicRangeLimit=None)
        self._styled[name] = (self._theme, False)
        # The legend's click toggles visibility; remember it so the choice survives redraws.
        item.visibleChanged.connect(lambda n=name, it=item: self._on_visibility(n, it))
        return item

    def _new_entry(self, name: str, item) -> tuple:
        from dpplanner.gui.plot_common import theorem_label

        return self.legend.make_entry(item, theorem_label(name))

    def _add_item(self, name: str):
        """Draw ``name``'s curve (a spare one if made) and list it in the legend; the legend is
        sized by the frame that follows (``fit_legend``), once for all the curves added."""
        if name in self._spare:
            item = self._spare.pop(name)
        else:
            item = self._new_item(name)
            self.plot_item.addItem(item)
        entry = self._entries.pop(name, None) or self._new_entry(name, item)
        self.legend.add_entry(entry)
        self._legend_edits += 1
        self.items[name] = item
        item.setVisible(name not in self._hidden)
        return item

    def _remove_item(self, name: str) -> None:
        item = self.items.pop(name)
        self.legend.removeItem(item)
        self._legend_edits += 1
        item.hide()                     # (kept on the plot: a spare)
        self._spare[name] = item

    def _on_visibility(self, name: str, item) -> None:
        if name not in self.items:
            return                      # a spare hidden or shown, not a legend click
        before = set(self._hidden)
        if item.isVisible():
            self._hidden.discard(name)
        else:
            self._hidden.add(name)
        if before != self._hidden:
            self.hiddenChanged.emit(sorted(self._hidden))
            self._frame()
