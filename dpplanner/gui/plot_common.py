"""What the plots share: pens and axis styling from the theme, nan-for-gaps arrays, export."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
import pyqtgraph.exporters  # noqa: F401  (registers ImageExporter / SVGExporter)
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QPainter, QPicture
from PySide6.QtSvg import QSvgGenerator

from dpplanner import engine
from dpplanner.gui import theme as themes

pg.setConfigOptions(antialias=True)

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


#: Width of one legend column; the legend takes as many columns as fit.
LEGEND_COLUMN_PX = 150


def legend_row(view: pg.GraphicsLayoutWidget, theme: themes.PlotTheme) -> pg.LegendItem:
    """A legend in its own row above the plot (row 0): it can never cover a curve."""
    legend = pg.LegendItem(colCount=3, labelTextColor=theme.foreground)
    view.addItem(legend, row=0, col=0)
    return legend


def fit_legend(legend: pg.LegendItem, width: float) -> None:
    """As many columns as the width allows; the row is exactly as tall as its entries."""
    columns = max(1, min(len(legend.items) or 1, int(width // LEGEND_COLUMN_PX)))
    if columns != legend.columnCount:
        legend.setColumnCount(columns)
    legend.setMinimumHeight(0)
    legend.setMaximumHeight(10_000)
    legend.updateSize()
    height = legend.height() if legend.items else 0.0
    legend.setMinimumHeight(height)
    legend.setMaximumHeight(height)


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
