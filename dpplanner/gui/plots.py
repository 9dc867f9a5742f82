"""The three plots: total epsilon against k, the privacy profile delta(eps), per-statistic bars.

Views only: each takes finished numbers (an engine Curve / Profile, or per-row values) and draws
them. Nothing here computes a composition.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers ImageExporter / SVGExporter)
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QPainter, QPicture
from PySide6.QtSvg import QSvgGenerator
from PySide6.QtWidgets import (
    QButtonGroup, QHBoxLayout, QLabel, QRadioButton, QSpinBox, QVBoxLayout, QWidget,
)

from dpplanner import engine
from dpplanner.gui import formatting
from dpplanner.gui import theme as themes

pg.setConfigOptions(antialias=True)

K_MAX_LIMIT = 100_000


def _finite_or_nan(values) -> np.ndarray:
    """pyqtgraph cannot draw inf; an infeasible k simply leaves a gap in the curve."""
    arr = np.asarray(values, dtype=float).copy()
    arr[~np.isfinite(arr)] = np.nan
    return arr


_PEN_STYLES = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine}


def theorem_label(name: str) -> str:
    return engine.theorem(name).label


def curve_pen(theme: themes.PlotTheme, name: str):
    return pg.mkPen(themes.curve_colour(theme, name), width=2, style=_PEN_STYLES[engine.theorem(name).dash])


def _style_plot(plot: pg.PlotItem, theme: themes.PlotTheme) -> None:
    plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        axis.enableAutoSIPrefix(False)      # "total ε (x0.001)" reads worse than 0.25
        axis.setPen(pg.mkPen(theme.foreground))
        axis.setTextPen(pg.mkPen(theme.foreground))


def export_item(item, path: str | Path) -> None:
    """Write a plot to PNG or SVG, chosen by the file's suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".svg":
        _export_svg(item, path)
    elif suffix == ".png":
        exporter = pg.exporters.ImageExporter(item)
        exporter.parameters()["width"] = max(int(item.boundingRect().width()) * 2, 800)
        exporter.export(str(path))
    else:
        raise ValueError(f"cannot export a plot to '{path.name}': use a .png or .svg file name")


def _export_svg(item, path: Path) -> None:
    """Render the item's scene region through QSvgGenerator.

    pyqtgraph 0.14's SVGExporter post-processes the SVG text Qt writes and fails on the path syntax
    of Qt >= 6.8 ("M0,0 L..."), so the SVG is written by Qt's own generator instead.
    """
    rect = item.sceneBoundingRect()
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(rect.size().toSize())
    generator.setViewBox(QRectF(0, 0, rect.width(), rect.height()))
    generator.setTitle("dpplanner plot")
    # The axes are cached as QPictures recorded at the screen's DPI; QPainter rescales a picture
    # to the target's DPI, and the generator's default (72) would shrink the axes against the curves.
    generator.setResolution(QPicture().logicalDpiX())
    painter = QPainter(generator)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        item.scene().render(painter, QRectF(0, 0, rect.width(), rect.height()), rect)
    finally:
        painter.end()


class CostPlot(QWidget):
    """Total epsilon against k, one curve per theorem, with the plan's k and eps_g marked."""

    optionsChanged = Signal()
    hiddenChanged = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = themes.current()
        self.view = pg.PlotWidget(background=self._theme.background)
        self.view.setToolTip("Total ε of the plan against the number of queries k, one curve per "
                             "theorem. Click a legend entry to hide or show its curve.")
        self.plot_item: pg.PlotItem = self.view.getPlotItem()
        self.plot_item.setLabel("left", "total ε")
        self.plot_item.setLabel("bottom", "k (number of queries)")
        # Bottom right: every curve rises with k, so that corner stays empty.
        self.legend = self.plot_item.addLegend(offset=(-10, -10), labelTextColor=self._theme.foreground)
        self.items: dict[str, pg.PlotDataItem] = {}
        self._hidden: set[str] = set()
        self._ks = np.zeros(0)
        self._upper: dict[str, np.ndarray] = {}

        self.k_line = pg.InfiniteLine(angle=90, movable=False)
        self.budget_line = pg.InfiniteLine(angle=0, movable=False)
        self.hover_line = pg.InfiniteLine(angle=90, movable=False)
        for line in (self.k_line, self.budget_line, self.hover_line):
            self.plot_item.addItem(line, ignoreBounds=True)
        self.hover_line.hide()
        self.budget_label = pg.TextItem(anchor=(1, 1))
        self.plot_item.addItem(self.budget_label, ignoreBounds=True)

        self.readout = QLabel(" ")
        self.readout.setToolTip("Values of every curve at the k under the mouse pointer.")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.prefix_button = QRadioButton("plan prefixes")
        self.prefix_button.setToolTip("Plot the total ε of the first k statistics of the plan, in order.")
        self.repeat_button = QRadioButton("repeat one query")
        self.repeat_button.setToolTip("Plot the total ε of the selected statistic repeated k times.")
        self.prefix_button.setChecked(True)
        self._mode_group = QButtonGroup(self)
        self._mode_group.addButton(self.prefix_button)
        self._mode_group.addButton(self.repeat_button)
        self.k_max = QSpinBox()
        self.k_max.setRange(0, K_MAX_LIMIT)
        self.k_max.setSpecialValueText("plan's k")
        self.k_max.setPrefix("")
        self.k_max.setToolTip("Largest k on the plot (\"plan's k\": as many queries as the plan has).")
        self.k_max.setKeyboardTracking(False)
        self.prefix_button.toggled.connect(lambda _checked: self.optionsChanged.emit())
        self.k_max.valueChanged.connect(lambda _value: self.optionsChanged.emit())

        controls = QHBoxLayout()
        controls.addWidget(self.prefix_button)
        controls.addWidget(self.repeat_button)
        controls.addStretch(1)
        controls.addWidget(QLabel("k up to"))
        controls.addWidget(self.k_max)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.readout)
        layout.addLayout(controls)

        self.view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.apply_theme(self._theme)

    # -- options ------------------------------------------------------------------------------
    def mode(self) -> str:
        return "repeat" if self.repeat_button.isChecked() else "prefix"

    def set_mode(self, mode: str) -> None:
        (self.repeat_button if mode == "repeat" else self.prefix_button).setChecked(True)

    def k_limit(self) -> int | None:
        return self.k_max.value() or None

    def hidden(self) -> list[str]:
        return sorted(self._hidden)

    def set_hidden(self, names: Sequence[str]) -> None:
        self._hidden = set(names)
        for name, item in self.items.items():
            item.setVisible(name not in self._hidden)

    # -- data ---------------------------------------------------------------------------------
    def set_curve(self, curve, plan_k: int | None, epsilon_g: float | None) -> None:
        """Draw an engine Curve; ``plan_k`` and ``epsilon_g`` place the two marker lines."""
        self._ks = np.asarray(curve.ks, dtype=float)
        self._upper = {name: np.asarray(values, dtype=float) for name, values in curve.upper.items()}
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
            item.setData(self._ks, _finite_or_nan(values), connect="finite")
        if plan_k is not None and plan_k > 0:
            self.k_line.setPos(plan_k)
            self.k_line.show()
        else:
            self.k_line.hide()
        self.set_budget(epsilon_g)
        self.hover_line.hide()
        self.readout.setText(" ")

    def set_budget(self, epsilon_g: float | None) -> None:
        if epsilon_g is None or not math.isfinite(epsilon_g):
            self.budget_line.hide()
            self.budget_label.hide()
            return
        self.budget_line.setPos(epsilon_g)
        self.budget_line.show()
        self.budget_label.setText(f"ε_g = {formatting.exact(epsilon_g)}")
        x_end = float(self._ks[-1]) if len(self._ks) else 1.0
        self.budget_label.setPos(x_end, epsilon_g)
        self.budget_label.show()

    def clear(self) -> None:
        for name in list(self.items):
            self._remove_item(name)
        self._ks = np.zeros(0)
        self._upper = {}

    def curve_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """What is drawn for one theorem (x = k, y = total ε; nan where nothing is drawn)."""
        x, y = self.items[name].getData()
        return np.asarray(x), np.asarray(y)

    def readout_at(self, k: float) -> str:
        if not len(self._ks):
            return ""
        j = int(np.argmin(np.abs(self._ks - k)))
        parts = [f"k = {int(self._ks[j])}"]
        for name, values in self._upper.items():
            if name not in self.items or name in self._hidden:
                continue
            v = values[j]
            text = formatting.upper(v)     # a total ε is an upper bound: rounded up
            parts.append(f"{theorem_label(name)} {text}")
        return "   ".join(parts)

    # -- theme --------------------------------------------------------------------------------
    def apply_theme(self, theme: themes.PlotTheme) -> None:
        self._theme = theme
        self.view.setBackground(theme.background)
        _style_plot(self.plot_item, theme)
        self.k_line.setPen(pg.mkPen(theme.marker_line, width=1, style=Qt.PenStyle.DotLine))
        self.hover_line.setPen(pg.mkPen(theme.marker_line, width=1))
        self.budget_line.setPen(pg.mkPen(theme.budget_line, width=1.5, style=Qt.PenStyle.DashLine))
        self.budget_label.setColor(theme.budget_line)
        self.legend.setLabelTextColor(theme.foreground)
        for name, item in self.items.items():
            item.setPen(curve_pen(theme, name))

    # -- internals ----------------------------------------------------------------------------
    def _add_item(self, name: str) -> pg.PlotDataItem:
        item = self.plot_item.plot([], [], pen=curve_pen(self._theme, name), name=theorem_label(name))
        item.setVisible(name not in self._hidden)
        # The legend's click toggles visibility; remember it so the choice survives redraws.
        item.visibleChanged.connect(lambda n=name, it=item: self._on_visibility(n, it))
        self.items[name] = item
        return item

    def _remove_item(self, name: str) -> None:
        item = self.items.pop(name)
        self.legend.removeItem(item)
        self.plot_item.removeItem(item)

    def _on_visibility(self, name: str, item: pg.PlotDataItem) -> None:
        before = set(self._hidden)
        if item.isVisible():
            self._hidden.discard(name)
        else:
            self._hidden.add(name)
        if before != self._hidden:
            self.hiddenChanged.emit(sorted(self._hidden))

    def _on_mouse_moved(self, pos) -> None:
        if not len(self._ks) or not self.plot_item.sceneBoundingRect().contains(pos):
            return
        k = self.plot_item.vb.mapSceneToView(pos).x()
        if k < self._ks[0] - 0.5 or k > self._ks[-1] + 0.5:
            self.hover_line.hide()
            return
        j = int(np.argmin(np.abs(self._ks - k)))
        self.hover_line.setPos(self._ks[j])
        self.hover_line.show()
        self.readout.setText(self.readout_at(self._ks[j]))


class ProfilePlot(QWidget):
    """The plan's privacy profile: total delta against total eps, log-scaled delta."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = themes.current()
        self.view = pg.PlotWidget(background=self._theme.background)
        self.view.setToolTip("Privacy profile under optimal composition: every (ε, δ) pair the whole "
                             "plan satisfies. The plan is (ε, δ)-DP for every point on or above the "
                             "upper curve.")
        self.plot_item: pg.PlotItem = self.view.getPlotItem()
        self.plot_item.setLabel("left", "total δ")
        self.plot_item.setLabel("bottom", "total ε")
        self.plot_item.setLogMode(x=False, y=True)
        self.legend = self.plot_item.addLegend(offset=(-10, 10))
        self.upper_item = self.plot_item.plot([], [], name="δ(ε) upper bound")
        self.lower_item = self.plot_item.plot([], [], name="certified lower bound")
        self.target_line = pg.InfiniteLine(angle=0, movable=False)
        self.plot_item.addItem(self.target_line, ignoreBounds=True)
        self.readout = QLabel(" ")
        self.readout.setToolTip("The total δ at the ε under the mouse pointer.")
        self._eps = np.zeros(0)
        self._upper = np.zeros(0)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.readout)
        self.view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.apply_theme(self._theme)

    def set_profile(self, profile, delta_g: float | None) -> None:
        self._eps = np.asarray(profile.eps, dtype=float)
        self._upper = np.asarray(profile.delta_upper, dtype=float)
        upper = _positive_or_nan(self._upper)
        lower = _positive_or_nan(profile.delta_lower)
        self.upper_item.setData(self._eps, upper, connect="finite")
        self.lower_item.setData(self._eps, lower, connect="finite")
        if delta_g is not None and delta_g > 0:
            self.target_line.setPos(math.log10(delta_g))   # log mode: lines live in log10 units
            self.target_line.show()
        else:
            self.target_line.hide()

    def clear(self) -> None:
        self.upper_item.setData([], [])
        self.lower_item.setData([], [])
        self._eps = np.zeros(0)

    def apply_theme(self, theme: themes.PlotTheme) -> None:
        self._theme = theme
        self.view.setBackground(theme.background)
        _style_plot(self.plot_item, theme)
        self.legend.setLabelTextColor(theme.foreground)
        self.upper_item.setPen(pg.mkPen(themes.curve_colour(theme, "optimal"), width=2))
        self.lower_item.setPen(pg.mkPen(themes.curve_colour(theme, "optimal"), width=1,
                                        style=Qt.PenStyle.DashLine))
        self.target_line.setPen(pg.mkPen(theme.budget_line, width=1.5, style=Qt.PenStyle.DashLine))

    def _on_mouse_moved(self, pos) -> None:
        if not len(self._eps) or not self.plot_item.sceneBoundingRect().contains(pos):
            return
        self.readout.setText(self.readout_at(self.plot_item.vb.mapSceneToView(pos).x()))

    def readout_at(self, eps: float) -> str:
        j = int(np.argmin(np.abs(self._eps - eps)))
        # δ(ε) falls as ε grows, so rounding both up keeps the pair a valid (ε, δ) guarantee.
        return f"ε = {formatting.upper(self._eps[j])}   δ ≤ {formatting.upper(self._upper[j], 3)}"


def _positive_or_nan(values) -> np.ndarray:
    arr = np.asarray(values, dtype=float).copy()
    arr[~(np.isfinite(arr) & (arr > 0))] = np.nan
    return arr


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
        self.errors = _finite_or_nan(errors)
        x = np.arange(len(eps))
        held_mask = np.asarray(held, dtype=bool) if len(held) else np.zeros(0, dtype=bool)
        self.share_bars.setOpts(x=x[~held_mask], height=self.shares[~held_mask], width=0.7,
                                pen=None, brush=self._theme.bar)
        self.held_share_bars.setOpts(x=x[held_mask], height=self.shares[held_mask], width=0.7,
                                     pen=None, brush=self._theme.bar_second)
        errors = _positive_or_nan(self.errors)
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
        _style_plot(self.share_plot, theme)
        _style_plot(self.error_plot, theme)
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
