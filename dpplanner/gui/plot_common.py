"""What the plots share: pens and axis styling from the theme, nan-for-gaps arrays. (Export:
``svg_export``.)"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.LabelItem import LabelItem
from PySide6.QtCore import Qt
from PySide6.QtGui import QPainter, QPicture

from dpplanner import engine
from dpplanner.gui import theme as themes

pg.setConfigOptions(antialias=True)

def no_si_prefix(axis: pg.AxisItem) -> None:
    """Axis values as they are ("total ε (x0.001)" reads worse than 0.25). pyqtgraph 0.14's
    enableAutoSIPrefix(False) still computes a prefix from the current range and keeps it: called
    again on a change of colour scheme, it left a total ε axis reading 100 … 600 for 0.1 … 0.6."""
    axis.enableAutoSIPrefix(False)
    if axis.autoSIPrefixScale != 1.0 or axis.labelUnitPrefix:
        axis.autoSIPrefixScale = 1.0
        axis.labelUnitPrefix = ""
        axis.setLabel(axis.labelText, units=axis.labelUnits or None)
        axis.picture = None
        axis.update()


def rounded_up(value: float) -> float:
    """A positive ``value`` rounded up to two significant digits: a plot's frame stays put while
    an edit moves its highest curve by a hair (a new frame redraws the axes and every item)."""
    if not math.isfinite(value) or value < 1e-300:      # (no step that small, or beyond)
        return value
    exponent = math.floor(math.log10(value)) - 1
    step = 10.0 ** exponent
    return math.ceil(value / step * (1 - 1e-12)) * step


def finite_or_nan(values) -> np.ndarray:
    """pyqtgraph cannot draw inf; an infeasible k simply leaves a gap in the curve."""
    arr = np.asarray(values, dtype=float).copy()
    arr[~np.isfinite(arr)] = np.nan
    return arr


_PEN_STYLES = {"solid": Qt.PenStyle.SolidLine, "dash": Qt.PenStyle.DashLine, "dot": Qt.PenStyle.DotLine}


def theorem_label(name: str) -> str:
    return engine.theorem(name).label


def curve_pen(theme: themes.PlotTheme, name: str):
    return pg.mkPen(themes.curve_colour(theme, name), width=2, style=_PEN_STYLES[engine.theorem(name).dash])


def style_plot(plot: pg.PlotItem, theme: themes.PlotTheme) -> None:
    plot.showGrid(x=True, y=True, alpha=theme.grid_alpha)
    for name in ("left", "bottom"):
        axis = plot.getAxis(name)
        no_si_prefix(axis)
        axis.setPen(pg.mkPen(theme.foreground))
        axis.setTextPen(pg.mkPen(theme.foreground))


def positive_or_nan(values) -> np.ndarray:
    arr = np.asarray(values, dtype=float).copy()
    arr[~(np.isfinite(arr) & (arr > 0))] = np.nan
    return arr


class IntegerAxis(pg.AxisItem):
    """An axis of counts (k queries, statistic numbers): ticks only at whole numbers, so one or two
    statistics never read "1.2 queries"; on a log scale pyqtgraph's decades are kept."""

    def tickSpacing(self, minVal, maxVal, size):
        spacings = super().tickSpacing(minVal, maxVal, size)
        if self.logMode:
            return spacings
        whole = [(float(s), offset) for s, offset in spacings if s >= 1 and float(s).is_integer()]
        return whole or [(1.0, 0.0)]


class Legend(pg.LegendItem):
    """pyqtgraph's legend where a click on an entry's text toggles its curve, like a click on its
    swatch (only the 20-px swatch did), and whose text follows a change of colour scheme (new
    entries only took the new colour)."""

    def addItem(self, item, name) -> None:          # noqa: N802  (pyqtgraph's name)
        self.add_entry(self.make_entry(item, name))
        self.updateSize()

    def make_entry(self, item, name) -> tuple:
        """An entry (swatch, text) for ``item``, not shown yet: a plot can make its entries ahead
        of the result that shows them (each costs ~1 ms of the GUI thread)."""
        label = LabelItem(name, color=self.opts["labelTextColor"], justify="left",
                          size=self.opts["labelTextSize"])
        sample = self.sampleType(item)
        sample.sigClicked.connect(self.sigSampleClicked)
        label.mouseClickEvent = sample.mouseClickEvent
        label.setCursor(Qt.CursorShape.PointingHandCursor)
        sample.setCursor(Qt.CursorShape.PointingHandCursor)
        return sample, label

    def add_entry(self, entry: tuple) -> None:
        """Show an entry from ``make_entry`` (in the colour of now); the caller sizes the legend
        (``updateSize``, or ``fit_legend``) once it has added them all."""
        sample, label = entry
        if label.opts["color"] is not self.opts["labelTextColor"]:     # the scheme changed since
            label.setText(label.text, color=self.opts["labelTextColor"])
        self.items.append(entry)
        self._addItemToLayout(sample, label)

    def set_text_colour(self, colour: str) -> None:
        self.setLabelTextColor(colour)
        for _sample, label in self.items:
            label.setText(label.text, color=colour)


def legend_row(view: pg.GraphicsLayoutWidget, theme: themes.PlotTheme) -> Legend:
    """A legend in its own row above the plot (row 0): it can never cover a curve."""
    legend = Legend(colCount=3, labelTextColor=theme.foreground)
    view.addItem(legend, row=0, col=0)
    # Refitted whenever the view itself is resized: the view can change size while its tab does
    # not (laid out after the canvas was built at 640 px, four columns chosen then ran past the
    # edge of the 545-px view it became at 1280 x 800).
    view.sigDeviceRangeChanged.connect(lambda *_: fit_legend(legend, view))
    return legend


def legend_columns(legend: pg.LegendItem, width: float) -> int:
    """The most columns whose entries, each as wide as its swatch and text, fit ``width`` (the
    legend fills rows first: entry i goes to column i mod c). A fixed column width cut long names
    such as "KOV (homogeneous)" at the plot's right edge."""
    widths = [_ENTRY_PX + label.item.boundingRect().width() for _sample, label in legend.items]
    for columns in range(len(widths), 1, -1):
        if sum(max(widths[j::columns]) for j in range(columns)) + _LEGEND_MARGIN_PX <= width:
            return columns
    return 1


#: A legend entry's swatch and the gaps around its text; the legend's own margins.
_ENTRY_PX = 38
_LEGEND_MARGIN_PX = 24


def fit_legend(legend: pg.LegendItem, view: pg.GraphicsLayoutWidget) -> None:
    """As many columns as the view's width allows; the row is exactly as tall as its entries."""
    columns = legend_columns(legend, view.width())
    if columns != legend.columnCount:
        legend.setColumnCount(columns)
    legend.setMinimumHeight(0)
    legend.setMaximumHeight(10_000)
    legend.updateSize()
    height = legend.height() if legend.items else 0.0
    legend.setMinimumHeight(height)
    legend.setMaximumHeight(height)
    # The view sized its layout before this refit, when a wider legend's minimum width still held:
    # the layout stayed that wide (past the view's edge, plot and legend cut off after a window
    # went from 1920 px to 1280) until the next resize. Fit it to the view again.
    layout = view.ci
    if layout.geometry() != view.range:
        layout.setGeometry(view.range)
    # Laid out now, not by the LayoutRequest the new height posts: that lays the plot out and
    # paints it a second time after the paint that shows a result.
    layout.layout.activate()


class SparseLogAxis(pg.AxisItem):
    """A log axis whose labels inside a decade are 1, 2 and 5 times a power of ten only: pyqtgraph
    labels every minor tick of a short range (0.3 0.4 … 9), which overlap. Use maxTextLevel=1."""

    def logTickValues(self, minVal, maxVal, size, stdTicks):
        levels = [(s, v) for s, v in super().logTickValues(minVal, maxVal, size, stdTicks) if s is not None]
        minor = [v for s, v in super().logTickValues(minVal, maxVal, size, stdTicks) if s is None]
        if not levels:
            levels = [(1.0, [])]            # keep the labelled levels at 0 and 1
        if minor:
            values = minor[0]
            named = [v for v in values if round(10 ** (v - math.floor(v + 1e-9)), 6) in (1.0, 2.0, 5.0)]
            levels = levels[:1] + [(None, named), (None, [v for v in values if v not in named])]
        return levels

    def logTickStrings(self, values, scale, spacing):     # noqa: N802  (pyqtgraph's name)
        """One notation per axis: plain numbers (0.5 1 2 5 10 20) while every label reads well
        so, else powers of ten throughout (pyqtgraph wrote "10¹" beside "5" and "2·10¹")."""
        numbers = [10 ** v * scale for v in values]
        if all(1e-3 <= x < 1e5 for x in numbers):
            return [f"{x:.6g}" for x in numbers]
        return [power_of_ten(v + math.log10(scale)) for v in values]


_SUPERSCRIPTS = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def power_of_ten(exponent: float) -> str:
    """10^e in one notation for every tick: "1", "10", "10⁻³" ("2·10⁻⁵" between powers)."""
    whole = round(exponent)
    if abs(exponent - whole) < 1e-9:
        return "1" if whole == 0 else "10" if whole == 1 else f"10{str(whole).translate(_SUPERSCRIPTS)}"
    base = math.floor(exponent + 1e-9)
    mantissa = round(10 ** (exponent - base), 3)
    return f"{mantissa:g}·10{str(base).translate(_SUPERSCRIPTS)}"


class PowersOfTenAxis(pg.AxisItem):
    """A log axis labelled 10⁻¹, 10⁻², … throughout (pyqtgraph wrote "0.001" down to 10⁻⁴ and
    "10⁻⁵" below: one axis in two notations)."""

    def logTickStrings(self, values, scale, spacing):     # noqa: N802  (pyqtgraph's name)
        return [power_of_ten(v + math.log10(scale)) for v in values]


def draw_axes_ahead(plot_item) -> None:
    """Draw each axis not drawn since it changed into its cached picture (pyqtgraph's AxisItem
    draws one on its first paint after a change and replays it after): the paint then replays it."""
    scratch = QPicture()
    painter = QPainter(scratch)
    try:
        for entry in plot_item.axes.values():
            axis = entry["item"]
            if axis.isVisible() and axis.picture is None:
                axis.paint(painter, None, None)
    finally:
        painter.end()
