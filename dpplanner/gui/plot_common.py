"""What the plots share: pens and axis styling from the theme, nan-for-gaps arrays, export."""

from __future__ import annotations

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
