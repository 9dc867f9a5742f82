"""Per statistic: its share of the summed epsilon and its relative error. A view of finished numbers.

Errors are shown as a percentage of each statistic's range (``model.relative_error``): records,
dollars and proportions cannot share one axis, percentages can. A grouped statistic's error is
one group's, as the table shows it.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from PySide6.QtWidgets import QWidget

from dpplanner.gui import formatting
from dpplanner.gui import theme as themes
from dpplanner.gui.fitted_label import FittedLabel
from dpplanner.gui.lazy_canvas import LazyCanvas
from dpplanner.model.relative_error import relative_error_percent

#: Space kept between two statistics' names under the bars.
_NAME_GAP_PX = 8
#: Width of both plots' left axes (labels and title).
_LEFT_AXIS_PX = 56
#: Up to this many statistics the bars have gaps and the points are large.
_FEW = 60


class SharesPlot(LazyCanvas):
    """Top: each statistic's share of the summed ε (held ones in the second colour). Bottom: its
    error as a percentage of the statistic's range (log scale). pyqtgraph and plot_common (built on
    it) are imported with the canvas (gui/lazy_canvas.py)."""

    CANVAS = frozenset({"view", "legend", "share_plot", "error_plot", "share_bars", "held_share_bars",
                        "error_points", "held_error_points"})

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = themes.current()
        self.shares = np.zeros(0)
        self.errors = np.zeros(0)            # % of each statistic's range; nan: none
        self._error_texts: list[str] = []
        self._names: list[str] = []
        self.readout = FittedLabel(" ", tip=f"{self._about()} Here: the statistic under the mouse pointer.")
        self.readout.setAccessibleName("Shares and errors read-out")
        self._lay_out(self.readout)

    @staticmethod
    def _about() -> str:
        return ("Top: each statistic's share of the summed ε_i (pinned statistics in the second "
                 "colour, as the legend says). Bottom: each statistic's error at the chosen confidence as a percentage "
                 "of the statistic's range (n records for counts, histograms and CDFs, b − a for "
                 "means, n·max(|a|, |b|) for sums, 1 for proportions; log scale).")

    def _build_canvas(self) -> None:
        import pyqtgraph as pg

        from dpplanner.gui.plot_common import IntegerAxis, SparseLogAxis, legend_row

        about = self._about()
        self.view = pg.GraphicsLayoutWidget()
        self.view.setWhatsThis(about)
        self.view.setAccessibleName("Shares and errors plot")
        self.view.setAccessibleDescription(about)
        # What the two colours mean, in a row above the plots (row 0).
        self.legend = legend_row(self.view, self._theme)
        self.share_plot = self.view.addPlot(row=1, col=0, axisItems={"bottom": IntegerAxis("bottom")})
        self.error_plot = self.view.addPlot(
            row=2, col=0, axisItems={"bottom": IntegerAxis("bottom"), "left": SparseLogAxis("left")})
        self.error_plot.setXLink(self.share_plot)
        # One left-axis width for both: linked views align on screen, so unequal axes would shift
        # the lower plot's statistic numbers against the bars above.
        for plot in (self.share_plot, self.error_plot):
            plot.getAxis("left").setWidth(_LEFT_AXIS_PX)
        self.share_plot.setLabel("left", "share of Σε_i (%)")
        self.error_plot.setLabel("left", "error (% of range)")
        self.error_plot.setLogMode(x=False, y=True)
        self.error_plot.getAxis("left").setStyle(maxTextLevel=1)
        # Free and held statistics as two bar sets with one brush each: per-bar brushes make
        # pyqtgraph rebuild a pen and brush per bar (~0.1 ms each).
        self.share_bars = pg.BarGraphItem(x=[], height=[], width=0.7, pen=None)
        self.held_share_bars = pg.BarGraphItem(x=[], height=[], width=0.7, pen=None)
        self.share_plot.addItem(self.share_bars)
        self.share_plot.addItem(self.held_share_bars)
        self.legend.addItem(self.share_bars, "free: redistributed")
        self.legend.addItem(self.held_share_bars, "pinned: keeps its ε_i or target error")
        for sample, label in self.legend.items:      # a key, not a switch: the bars stay shown
            sample.mouseClickEvent = label.mouseClickEvent = lambda event: event.ignore()
        # Two point sets with one brush each: per-point brushes cost ~0.1 ms a point in pyqtgraph.
        self.error_points = self.error_plot.plot([], [], pen=None, symbol="o", symbolSize=7)
        self.held_error_points = self.error_plot.plot([], [], pen=None, symbol="o", symbolSize=7)
        self._place_canvas(self.view)
        # names or numbers: decided by the plot area's width, whenever it changes
        self.error_plot.vb.sigResized.connect(lambda _vb: self._name_ticks())
        self.view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.apply_theme(self._theme)

    def set_plan(self, plan, privacy) -> None:
        """Every statistic of ``plan`` with its ``privacy`` (``plan.privacy_all()``)."""
        n = plan.budget.dataset_size
        self.set_rows([s.name for s in plan], [s.epsilon * s.repetitions for s in plan],
                      [relative_error_percent(s, p.shown_error, n) for s, p in zip(plan, privacy)],
                      [s.held for s in plan],
                      [formatting.error_with_units(p.shown_error, p.units) + (" per group" if s.group_by else "")
                       if p.shown_error is not None else "" for s, p in zip(plan, privacy)])

    def set_rows(self, names: Sequence[str], epsilons: Sequence[float], relative_errors: Sequence[float],
                 held: Sequence[bool], error_texts: Sequence[str] = ()) -> None:
        from dpplanner.gui.plot_common import finite_or_nan, positive_or_nan

        self.build_canvas()
        eps = np.asarray(epsilons, dtype=float)
        total = float(eps.sum()) if len(eps) else 0.0
        self._names = list(names)
        self._error_texts = list(error_texts)
        self.shares = 100.0 * eps / total if total > 0 else np.zeros_like(eps)
        self.errors = finite_or_nan(relative_errors)
        x = np.arange(1, len(eps) + 1)        # statistics are numbered from 1, as in the table
        held_mask = np.asarray(held, dtype=bool) if len(held) else np.zeros(0, dtype=bool)
        few = len(eps) <= _FEW
        width = 0.7 if few else 1.0           # many bars: no gaps, or they alias away
        self.share_bars.setOpts(x=x[~held_mask], height=self.shares[~held_mask], width=width,
                                pen=None, brush=self._theme.bar)
        self.held_share_bars.setOpts(x=x[held_mask], height=self.shares[held_mask], width=width,
                                     pen=None, brush=self._theme.bar_second)
        errors = positive_or_nan(self.errors)
        shown = np.isfinite(errors)          # custom statistics and unknown n: no relative error
        free, kept = shown & ~held_mask, shown & held_mask
        for item in (self.error_points, self.held_error_points):
            item.setSymbolSize(7 if few else 4)
        self.error_points.setData(x[free], errors[free])
        self.held_error_points.setData(x[kept], errors[kept])
        if len(x):
            self.share_plot.setXRange(*_x_range(len(x)), padding=0)
        self._name_ticks()
        self.share_plot.enableAutoRange(axis="y")
        self.error_plot.enableAutoRange(axis="y")

    def readout_at(self, number: int) -> str:
        """The statistic numbered ``number`` (from 1)."""
        j = number - 1
        if not 0 <= j < len(self._names):
            return ""
        err = self.errors[j]
        absolute = self._error_texts[j] if j < len(self._error_texts) and self._error_texts[j] else ""
        if math.isnan(err):
            err_text = f"error {absolute}" if absolute else "no error formula"
        else:
            err_text = f"error {formatting.error(err)}% of its range" + (f" ({absolute})" if absolute else "")
        return f"{number}. {self._names[j]}: {formatting.value(self.shares[j], 3)}% of Σε_i, {err_text}"

    def apply_theme(self, theme: themes.PlotTheme) -> None:
        self._theme = theme
        if not self.canvas_built():
            return
        from dpplanner.gui.plot_common import style_plot

        self.view.setBackground(theme.background)
        style_plot(self.share_plot, theme)
        style_plot(self.error_plot, theme)
        self.share_bars.setOpts(brush=theme.bar)
        self.held_share_bars.setOpts(brush=theme.bar_second)
        self.legend.set_text_colour(theme.foreground)
        self.legend.update()
        self.error_points.setSymbolBrush(theme.bar)
        self.error_points.setSymbolPen(None)
        self.held_error_points.setSymbolBrush(theme.bar_second)
        self.held_error_points.setSymbolPen(None)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.canvas_built():
            from dpplanner.gui.plot_common import fit_legend

            fit_legend(self.legend, self.view)

    def _name_ticks(self) -> None:
        """Names under the bars when each fits its statistic's room in the plot area as wide as it
        is now; otherwise statistic numbers, whole ones only (the hover names every statistic)."""
        from PySide6.QtGui import QFontMetricsF

        count = len(self._names)
        bottom, top = self.error_plot.getAxis("bottom"), self.share_plot.getAxis("bottom")
        # (the range it shows once laid out: the view's own lags behind a resize of linked plots)
        x0, x1 = _x_range(count)
        room = self.error_plot.vb.width() / (x1 - x0)      # per statistic, in pixels
        names = [_short(n) for n in self._names] if count and room > _NAME_GAP_PX else []
        metrics = QFontMetricsF(bottom.style["tickFont"] or bottom.font())
        named = bool(names) and max(metrics.horizontalAdvance(n) for n in names) + _NAME_GAP_PX <= room
        ticks = [[(i + 1, n) for i, n in enumerate(names)]] if named else None
        bottom.setTicks(ticks)
        top.setTicks(ticks)
        top.setStyle(showValues=False)
        self.error_plot.setLabel("bottom", "statistic number (as in the table)" if count and not named else "")

    def _on_mouse_moved(self, pos) -> None:
        for plot in (self.share_plot, self.error_plot):
            if plot.sceneBoundingRect().contains(pos) and len(self._names):
                number = int(round(plot.vb.mapSceneToView(pos).x()))
                if 1 <= number <= len(self._names):
                    self.readout.setText(self.readout_at(number))
                return


def _x_range(count: int) -> tuple[float, float]:
    """The statistics' numbers the plots show, 1 to ``count``, with a margin for their bars."""
    return 0.4, count + 0.6


def _short(name: str, limit: int = 12) -> str:
    return name if len(name) <= limit else name[: limit - 1] + "…"
