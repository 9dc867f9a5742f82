"""The plan's privacy profile: total delta against total eps (log delta). A view of finished numbers."""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from dpplanner import engine
from dpplanner.engine.theorems import PROFILE_THEOREM
from dpplanner.gui import formatting
from dpplanner.gui import theme as themes
from dpplanner.gui.fitted_label import FittedLabel
from dpplanner.gui.lazy_canvas import LazyCanvas

# pyqtgraph and plot_common (built on it) are imported with the canvas (gui/lazy_canvas.py).


class ProfilePlot(LazyCanvas):
    """The plan's privacy profile: total delta against total eps, log-scaled delta."""

    CANVAS = frozenset({"view", "legend", "plot_item", "upper_item", "lower_item", "target_line",
                        "target_label"})

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = themes.current()
        about = self._about()
        # The theorem is named: the profile is the noise-aware (PLD) one, not the generic optimum.
        self._lower_label = f"{engine.theorem(PROFILE_THEOREM).label}: certified lower bound"
        self._lower_listed = False
        self.readout = FittedLabel(" ", tip=f"{about} Here: the total δ at the ε under the mouse pointer.")
        self.readout.setAccessibleName("Privacy profile read-out")
        self._eps = np.zeros(0)
        self._upper = np.zeros(0)
        self._lay_out(self.readout)

    @staticmethod
    def _about() -> str:
        return (f"Privacy profile of the plan's noise ({engine.theorem(PROFILE_THEOREM).label} "
                 "composition): every (ε, δ) pair the whole plan satisfies. The plan is (ε, δ)-DP "
                 "for every point on or above the upper curve; the dashed line is the global δ.")

    def _build_canvas(self) -> None:
        import pyqtgraph as pg

        from dpplanner.gui.plot_common import PowersOfTenAxis, legend_row

        about = self._about()
        self.view = pg.GraphicsLayoutWidget()
        self.view.setWhatsThis(about)
        self.view.setAccessibleName("Privacy profile plot")
        self.view.setAccessibleDescription(about)
        self.legend = legend_row(self.view, self._theme)
        self.plot_item = self.view.addPlot(row=1, col=0, axisItems={"left": PowersOfTenAxis("left")})
        self.plot_item.setLabel("left", "total δ")
        self.plot_item.setLabel("bottom", "total ε")
        self.plot_item.setLogMode(x=False, y=True)
        self.upper_item = self.plot_item.plot([], [])
        self.lower_item = self.plot_item.plot([], [])
        self.legend.addItem(self.upper_item, f"{engine.theorem(PROFILE_THEOREM).label}: δ(ε) upper bound")
        self.target_line = pg.InfiniteLine(angle=0, movable=False)
        self.plot_item.addItem(self.target_line, ignoreBounds=True)
        # The dashed line says what it is, like ε_g on the cost plot (it was an unlabelled line).
        self.target_label = pg.TextItem(anchor=(0, 1))
        self.plot_item.addItem(self.target_label, ignoreBounds=True)
        self._place_canvas(self.view)
        self.view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.apply_theme(self._theme)
        self.clear()

    def set_profile(self, profile, delta_g: float | None) -> None:
        from dpplanner.gui.plot_common import positive_or_nan

        self.build_canvas()
        self._eps = np.asarray(profile.eps, dtype=float)
        self._upper = np.asarray(profile.delta_upper, dtype=float)
        upper = positive_or_nan(self._upper)
        lower = positive_or_nan(profile.delta_lower)
        self.plot_item.enableAutoRange()
        self.upper_item.setData(self._eps, upper, connect="finite")
        self.lower_item.setData(self._eps, lower, connect="finite")
        self._list_lower(bool(np.isfinite(lower).any()))
        if delta_g is not None and delta_g > 0:
            self.target_line.setPos(math.log10(delta_g))   # log mode: lines live in log10 units
            self.target_line.show()
            self.target_label.setText(f"δ_g = {formatting.exact(delta_g)}")
            # at the left end, where the profile is far above δ_g (it falls as ε grows)
            self.target_label.setPos(float(self._eps[0]) if len(self._eps) else 0.0,
                                     math.log10(delta_g))
            self.target_label.show()
        else:
            self.target_line.hide()
            self.target_label.hide()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if self.canvas_built():
            from dpplanner.gui.plot_common import fit_legend

            fit_legend(self.legend, self.view)

    def _list_lower(self, drawn: bool) -> None:
        """The lower bound is in the legend only when there is one to see (a legend entry for
        an empty curve read as a missing line)."""
        from dpplanner.gui.plot_common import fit_legend

        if drawn and not self._lower_listed:
            self.legend.addItem(self.lower_item, self._lower_label)
        elif not drawn and self._lower_listed:
            self.legend.removeItem(self.lower_item)
        if drawn != self._lower_listed:
            self._lower_listed = drawn
            fit_legend(self.legend, self.view)

    def clear(self) -> None:
        if not self.canvas_built():
            self._eps = np.zeros(0)
            return
        self.upper_item.setData([], [])
        self.lower_item.setData([], [])
        self._list_lower(False)
        self._eps = np.zeros(0)
        # An empty plan: a plain frame (δ from 1e-10 to 1), not the last plan's or "1 … 9".
        self.plot_item.vb.setRange(xRange=(0.0, 1.0), yRange=(-10.0, 0.0), padding=0)

    def apply_theme(self, theme: themes.PlotTheme) -> None:
        self._theme = theme
        if not self.canvas_built():
            return
        import pyqtgraph as pg

        from dpplanner.gui.plot_common import style_plot

        self.view.setBackground(theme.background)
        style_plot(self.plot_item, theme)
        self.legend.set_text_colour(theme.foreground)
        self.upper_item.setPen(pg.mkPen(themes.curve_colour(theme, PROFILE_THEOREM), width=2))
        self.lower_item.setPen(pg.mkPen(themes.curve_colour(theme, PROFILE_THEOREM), width=1,
                                        style=Qt.PenStyle.DashLine))
        self.target_line.setPen(pg.mkPen(theme.budget_line, width=1.5, style=Qt.PenStyle.DashLine))
        self.target_label.setColor(theme.budget_line)

    def _on_mouse_moved(self, pos) -> None:
        if not len(self._eps) or not self.plot_item.sceneBoundingRect().contains(pos):
            return
        self.readout.setText(self.readout_at(self.plot_item.vb.mapSceneToView(pos).x()))

    def readout_at(self, eps: float) -> str:
        j = int(np.argmin(np.abs(self._eps - eps)))
        # δ(ε) falls as ε grows, so rounding both up keeps the pair a valid (ε, δ) guarantee.
        return f"ε = {formatting.upper(self._eps[j])}   δ ≤ {formatting.upper(self._upper[j], 3)}"
