"""Per statistic: its share of the summed epsilon and its error. A view of finished numbers."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from dpplanner.gui import formatting
from dpplanner.gui import theme as themes
from dpplanner.gui.plot_common import finite_or_nan, positive_or_nan, style_plot


class SharesPlot(QWidget):
    """Per statistic: its share of the summed ε (bars) and its error (points, log scale)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = themes.current()
        self.view = pg.GraphicsLayoutWidget()
        self.view.setToolTip("Top: each statistic's share of the summed ε_i (held statistics in the "
                             "second colour). Bottom: each statistic's error at the chosen confidence, "
                             "in the statistic's own units (log scale, since units differ).")
        self.share_plot: pg.PlotItem = self.view.addPlot(row=0, col=0)
        self.error_plot: pg.PlotItem = self.view.addPlot(row=1, col=0)
        self.error_plot.setXLink(self.share_plot)
        self.share_plot.setLabel("left", "share of Σε_i (%)")
        self.error_plot.setLabel("left", "error (own units)")
        self.error_plot.setLogMode(x=False, y=True)
        # Free and held statistics as two bar sets with one brush each: per-bar brushes make
        # pyqtgraph rebuild a pen and brush per bar (~0.1 ms each).
        self.share_bars = pg.BarGraphItem(x=[], height=[], width=0.7, pen=None)
        self.held_share_bars = pg.BarGraphItem(x=[], height=[], width=0.7, pen=None)
        self.share_plot.addItem(self.share_bars)
        self.share_plot.addItem(self.held_share_bars)
        # Two point sets with one brush each: per-point brushes cost ~0.1 ms a point in pyqtgraph.
        self.error_points = self.error_plot.plot([], [], pen=None, symbol="o", symbolSize=7)
        self.held_error_points = self.error_plot.plot([], [], pen=None, symbol="o", symbolSize=7)
        self.shares = np.zeros(0)
        self.errors = np.zeros(0)
        self._names: list[str] = []
        self.readout = QLabel(" ")
        self.readout.setToolTip("The statistic under the mouse pointer.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.readout)
        self.view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.apply_theme(self._theme)

    def set_rows(self, names: Sequence[str], epsilons: Sequence[float], errors: Sequence[float],
                 held: Sequence[bool]) -> None:
        eps = np.asarray(epsilons, dtype=float)
        total = float(eps.sum()) if len(eps) else 0.0
        self._names = list(names)
        self.shares = 100.0 * eps / total if total > 0 else np.zeros_like(eps)
        self.errors = finite_or_nan(errors)
        x = np.arange(len(eps))
        held_mask = np.asarray(held, dtype=bool) if len(held) else np.zeros(0, dtype=bool)
        self.share_bars.setOpts(x=x[~held_mask], height=self.shares[~held_mask], width=0.7,
                                pen=None, brush=self._theme.bar)
        self.held_share_bars.setOpts(x=x[held_mask], height=self.shares[held_mask], width=0.7,
                                     pen=None, brush=self._theme.bar_second)
        errors = positive_or_nan(self.errors)
        shown = np.isfinite(errors)          # custom statistics have no error to plot
        free, kept = shown & ~held_mask, shown & held_mask
        self.error_points.setData(x[free], errors[free])
        self.held_error_points.setData(x[kept], errors[kept])
        # Name every statistic when they fit, otherwise a readable subset (the hover names all).
        step = max(1, math.ceil(len(names) / 8))
        ticks = [[(i, _short(n)) for i, n in enumerate(names) if i % step == 0]]
        self.error_plot.getAxis("bottom").setTicks(ticks)
        self.share_plot.getAxis("bottom").setTicks(ticks)
        self.share_plot.getAxis("bottom").setStyle(showValues=False)
        if len(x):
            self.share_plot.setXRange(-0.6, len(x) - 0.4, padding=0)
        self.share_plot.enableAutoRange(axis="y")
        self.error_plot.enableAutoRange(axis="y")

    def readout_at(self, j: int) -> str:
        if not 0 <= j < len(self._names):
            return ""
        err = self.errors[j]
        err_text = "no error formula" if math.isnan(err) else f"error {formatting.error(err)}"
        return f"{self._names[j]}: {self.shares[j]:.3g}% of Σε_i, {err_text}"

    def apply_theme(self, theme: themes.PlotTheme) -> None:
        self._theme = theme
        self.view.setBackground(theme.background)
        style_plot(self.share_plot, theme)
        style_plot(self.error_plot, theme)
        self.error_points.setSymbolBrush(theme.bar)
        self.error_points.setSymbolPen(None)
        self.held_error_points.setSymbolBrush(theme.bar_second)
        self.held_error_points.setSymbolPen(None)

    def _on_mouse_moved(self, pos) -> None:
        for plot in (self.share_plot, self.error_plot):
            if plot.sceneBoundingRect().contains(pos) and len(self._names):
                j = int(round(plot.vb.mapSceneToView(pos).x()))
                if 0 <= j < len(self._names):
                    self.readout.setText(self.readout_at(j))
                return


def _short(name: str, limit: int = 12) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"
