"""A plot as SVG that Chromium, librsvg and Qt draw alike, and the window's PNG.

Qt's QSvgGenerator records what the painter did: curves as ``vector-effect="non-scaling-stroke"``
paths inside groups scaled by the view (librsvg, Inkscape's import and most converters ignore the
effect and draw 2-px strokes scaled 100-fold, as polygons over the axes), markers as pixmaps, and
text split where the font falls back ("total " and "ε" placed apart). This writer instead draws
what the plot shows, in the scene's own pixels: plain polylines, circles for markers, rectangles
for bars, one ``<text>`` per label, everything clipped to the data area here (Qt's renderer, SVG
Tiny, has no clip paths). Every coordinate comes from the
live scene (the axes' own tick specifications, the view's transform, the legend's layout), so
the SVG lines up with the window and with ``export_png``.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QByteArray, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontInfo, QImage, QPainter, QPen, QTransform
from PySide6.QtSvg import QSvgRenderer

from dpplanner.model.safe_text import markup

#: Each pen style as an SVG dash array, in multiples of the pen width (as Qt draws them).
_DASHES = {Qt.PenStyle.DashLine: (4, 2), Qt.PenStyle.DotLine: (1, 2),
           Qt.PenStyle.DashDotLine: (4, 2, 1, 2)}
_FONTS = "DejaVu Sans, Verdana, Arial, sans-serif"


def export_plot(view, path: str | Path) -> None:
    """Write the plot shown by ``view`` (a pg.GraphicsLayoutWidget) to PNG or SVG, by suffix."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".svg":
        export_svg(view, path)
    elif suffix == ".png":
        export_png(view, path)
    else:
        raise ValueError(f"cannot export a plot to '{path.name}': use a .png or .svg file name")


def export_png(view, path: str | Path, scale: float = 2.0) -> None:
    """The plot at ``scale`` times the window's pixels: the SVG drawing below, rasterized by Qt,
    so text, legend and markers keep their size relative to the plot (pyqtgraph's own image
    export scaled the plot but not the legend) and the PNG and the SVG are the same picture."""
    image = render_svg(plot_svg(view), int(view.width() * scale), int(view.height() * scale))
    if not image.save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")


def render_svg(text: str, width: int, height: int) -> QImage:
    """SVG text rasterized by Qt's renderer at ``width`` x ``height`` pixels."""
    renderer = QSvgRenderer(QByteArray(text.encode("utf-8")))
    if not renderer.isValid():
        raise ValueError("the plot's SVG could not be read back")
    image = QImage(width, height, QImage.Format.Format_ARGB32)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        renderer.render(painter, QRectF(0, 0, width, height))
    finally:
        painter.end()
    return image


def export_svg(view, path: str | Path) -> None:
    from dpplanner.model.files import atomic_write_text
    atomic_write_text(path, plot_svg(view))


def plot_svg(view) -> str:
    """The SVG text of a ``pg.GraphicsLayoutWidget``'s plots and legends."""
    return _Writer(view).document()


class _Writer:
    def __init__(self, view) -> None:
        self.view = view
        self.origin = view.mapToScene(0, 0)
        self.width, self.height = view.width(), view.height()
        self.out: list[str] = []
        self.area = (0.0, 0.0, float(self.width), float(self.height))     # the data area drawn

    # -- the document -------------------------------------------------------------------------
    def document(self) -> str:
        background = view_background(self.view)
        self.out.append(f'<rect x="0" y="0" width="{self.width}" height="{self.height}" '
                        f'fill="{background.name()}"/>')
        for item in self.view.ci.items:
            if not item.isVisible():
                continue
            if isinstance(item, pg.PlotItem):
                self.plot(item)
            elif isinstance(item, pg.LegendItem):
                self.legend(item)
        return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{self.width}" '
                f'height="{self.height}" viewBox="0 0 {self.width} {self.height}">\n'
                f"<title>dpplanner plot</title>\n" + "\n".join(self.out) + "\n</svg>\n")

    def xy(self, point: QPointF) -> tuple[float, float]:
        return point.x() - self.origin.x(), point.y() - self.origin.y()

    # -- a plot ---------------------------------------------------------------------------------
    def plot(self, plot: pg.PlotItem) -> None:
        vb = plot.vb
        area = vb.sceneBoundingRect()
        x0, y0 = self.xy(area.topLeft())
        self.area = (x0, y0, x0 + area.width(), y0 + area.height())
        for name in ("left", "bottom", "right", "top"):
            axis = plot.getAxis(name)
            if axis.isVisible():
                self.axis(axis)
        transform = view_to_scene(vb)
        for item in plot.items:
            if not item.isVisible():
                continue
            if isinstance(item, pg.PlotDataItem):
                self.data(item, transform)
            elif isinstance(item, pg.BarGraphItem):
                self.bars(item, transform)
            elif isinstance(item, pg.InfiniteLine):
                self.infinite_line(item, area, transform)
        for item in plot.items:
            if isinstance(item, pg.TextItem) and item.isVisible():
                self.text_item(item, transform)

    def axis(self, axis: pg.AxisItem) -> None:
        image = QImage(1, 1, QImage.Format.Format_ARGB32)
        painter = QPainter(image)
        try:
            axis_spec, ticks, texts = axis.generateDrawSpecs(painter)
            font = painter.font()
        finally:
            painter.end()
        to_scene = axis.sceneTransform()
        for pen, p1, p2 in ([axis_spec] if axis_spec is not None else []) + list(ticks):
            self.line(to_scene.map(QPointF(p1)), to_scene.map(QPointF(p2)), pen)
        colour = axis.textPen().color() if hasattr(axis, "textPen") else QColor("#000000")
        for rect, flags, text in texts:
            self.text_in(to_scene.mapRect(QRectF(rect)), flags, text, font, colour)
        label = axis.label
        if label.isVisible() and label.toPlainText().strip():
            box = label.mapRectToScene(label.boundingRect())
            cx, cy = self.xy(box.center())
            size = font_px(label.font())
            rotate = f' transform="rotate(-90 {cx:.2f} {cy:.2f})"' if axis.orientation in ("left", "right") else ""
            self.out.append(f'<text x="{cx:.2f}" y="{cy + 0.35 * size:.2f}" text-anchor="middle" '
                            f'font-family="{_FONTS}" font-size="{size:.1f}" '
                            f'{fill(colour)}{rotate}>{markup(label.toPlainText().strip())}</text>')

    def data(self, item: pg.PlotDataItem, transform) -> None:
        x, y = item.getData()
        if x is None or not len(x):
            return
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        sx = transform.m11() * x + transform.m21() * y + transform.dx() - self.origin.x()
        sy = transform.m12() * x + transform.m22() * y + transform.dy() - self.origin.y()
        pen = pg.mkPen(item.opts["pen"]) if item.opts.get("pen") is not None else None
        if pen is not None and pen.style() != Qt.PenStyle.NoPen:
            finite = np.isfinite(sx) & np.isfinite(sy)
            for run in _runs(finite):
                for piece in clip_polyline([(sx[i], sy[i]) for i in run], self.area):
                    if len(piece) > 1:
                        points = " ".join(f"{x:.2f},{y:.2f}" for x, y in piece)
                        self.out.append(f'<polyline points="{points}" fill="none"{stroke(pen)}/>')
        symbol = item.opts.get("symbol")
        if symbol is not None:
            scatter = item.scatter.opts
            size = float(scatter.get("size", 7))
            brush = pg.mkBrush(scatter.get("brush")).color()
            outline = scatter.get("pen")
            edge = stroke(pg.mkPen(outline)) if outline is not None and pg.mkPen(outline).style() != Qt.PenStyle.NoPen else ""
            left, top, right, bottom = self.area
            for px, py in zip(sx, sy):
                if math.isfinite(px) and math.isfinite(py) and left <= px <= right and top <= py <= bottom:
                    self.out.append(f'<circle cx="{px:.2f}" cy="{py:.2f}" r="{size / 2:.2f}" '
                                    f'{fill(brush)}{edge}/>')

    def bars(self, item: pg.BarGraphItem, transform) -> None:
        opts = item.opts
        xs = np.atleast_1d(np.asarray(opts.get("x") if opts.get("x") is not None else [], dtype=float))
        heights = np.atleast_1d(np.asarray(opts.get("height") if opts.get("height") is not None else [], dtype=float))
        width = float(np.atleast_1d(opts.get("width") if opts.get("width") is not None else 0.8)[0])
        brush = pg.mkBrush(opts.get("brush")).color() if opts.get("brush") is not None else QColor("#888888")
        left, top, right, bottom = self.area
        for x, h in zip(xs, heights):
            rect = transform.mapRect(QRectF(x - width / 2, 0.0, width, h).normalized())
            x0, y0 = self.xy(rect.topLeft())
            x1, y1 = max(x0, left), max(y0, top)
            x2, y2 = min(x0 + rect.width(), right), min(y0 + rect.height(), bottom)
            if x2 > x1 and y2 > y1:
                self.out.append(f'<rect x="{x1:.2f}" y="{y1:.2f}" width="{x2 - x1:.2f}" '
                                f'height="{y2 - y1:.2f}" {fill(brush)}/>')

    def infinite_line(self, line: pg.InfiniteLine, area: QRectF, transform: QTransform) -> None:
        pos = transform.map(QPointF(line.value(), line.value()))
        if line.angle % 180 == 90:
            a, b = QPointF(pos.x(), area.top()), QPointF(pos.x(), area.bottom())
        else:
            a, b = QPointF(area.left(), pos.y()), QPointF(area.right(), pos.y())
        self.line(a, b, line.pen)

    def text_item(self, item: pg.TextItem, transform: QTransform) -> None:
        inner = item.textItem
        size = inner.boundingRect().size()
        at = transform.map(item.pos())
        box = QRectF(at.x() - item.anchor.x() * size.width(), at.y() - item.anchor.y() * size.height(),
                     size.width(), size.height())
        self.text_in(box, int(Qt.AlignmentFlag.AlignCenter), item.toPlainText(), inner.font(),
                     inner.defaultTextColor())

    # -- a legend -------------------------------------------------------------------------------
    def legend(self, legend: pg.LegendItem) -> None:
        for sample, label in legend.items:
            item = sample.item
            box = sample.sceneBoundingRect()
            left, top = self.xy(box.topLeft())
            visible = item.isVisible()
            opts = item.opts
            pen = pg.mkPen(opts.get("pen")) if opts.get("pen") is not None else None
            if isinstance(item, pg.BarGraphItem):
                brush = pg.mkBrush(opts.get("brush")).color()
                self.out.append(f'<rect x="{left + 2:.2f}" y="{top + 2:.2f}" width="18" height="18" '
                                f'{fill(brush)}/>')
            else:
                if pen is not None and pen.style() != Qt.PenStyle.NoPen:
                    if not visible:
                        pen = QPen(QColor("#999999"), pen.widthF(), pen.style())
                    self.out.append(f'<line x1="{left:.2f}" y1="{top + 11:.2f}" x2="{left + 20:.2f}" '
                                    f'y2="{top + 11:.2f}"{stroke(pen)}/>')
                if opts.get("symbol") is not None and isinstance(item, pg.PlotDataItem):
                    scatter = item.scatter.opts
                    brush = pg.mkBrush(scatter.get("brush")).color() if visible else QColor("#999999")
                    self.out.append(f'<circle cx="{left + 10:.2f}" cy="{top + 10:.2f}" '
                                    f'r="{float(scatter.get("size", 7)) / 2:.2f}" {fill(brush)}/>')
            box = label.sceneBoundingRect()
            colour = label_colour_of(label)
            if not visible:
                colour = QColor("#999999")
            self.text_in(box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
                         label.text, label_font(label), colour, pad=3)

    # -- primitives -----------------------------------------------------------------------------
    def line(self, a: QPointF, b: QPointF, pen) -> None:
        pen = pg.mkPen(pen)
        if pen.style() == Qt.PenStyle.NoPen or pen.color().alpha() == 0:
            return
        (x1, y1), (x2, y2) = self.xy(a), self.xy(b)
        self.out.append(f'<line x1="{x1:.2f}" y1="{y1:.2f}" x2="{x2:.2f}" y2="{y2:.2f}"{stroke(pen)}/>')

    def text_in(self, box: QRectF, flags: int, text: str, font: QFont, colour: QColor,
                pad: float = 0.0) -> None:
        if not text:
            return
        size = font_px(font)
        x0, y0 = self.xy(box.topLeft())
        if flags & int(Qt.AlignmentFlag.AlignRight):
            x, anchor = x0 + box.width(), "end"
        elif flags & int(Qt.AlignmentFlag.AlignHCenter):
            x, anchor = x0 + box.width() / 2, "middle"
        else:
            x, anchor = x0 + pad, "start"
        if flags & int(Qt.AlignmentFlag.AlignTop):
            y = y0 + 0.8 * size
        elif flags & int(Qt.AlignmentFlag.AlignBottom):
            y = y0 + box.height() - 0.2 * size
        else:
            y = y0 + box.height() / 2 + 0.35 * size
        self.out.append(f'<text x="{x:.2f}" y="{y:.2f}" text-anchor="{anchor}" font-family="{_FONTS}" '
                        f'font-size="{size:.1f}" {fill(colour)}>{markup(text)}</text>')


# -- helpers ------------------------------------------------------------------------------------

def view_to_scene(vb) -> QTransform:
    """Data (view) coordinates to scene pixels, from the view's range and its place in the scene
    (pyqtgraph updates its own child transform lazily, at the next paint: a plot exported before
    it painted again would be drawn at the old scale)."""
    (x0, x1), (y0, y1) = vb.viewRange()
    area = vb.sceneBoundingRect()
    sx = area.width() / (x1 - x0) if x1 != x0 else 1.0
    sy = area.height() / (y1 - y0) if y1 != y0 else 1.0
    return QTransform(sx, 0.0, 0.0, -sy, area.left() - x0 * sx, area.bottom() + y0 * sy)


def _runs(mask: np.ndarray) -> list[list[int]]:
    """Index runs where ``mask`` is True (a nan breaks a curve, as in the window)."""
    runs, current = [], []
    for i, ok in enumerate(mask):
        if ok:
            current.append(i)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return runs


def clip_polyline(points, area) -> list[list[tuple[float, float]]]:
    """The parts of a polyline inside ``area`` = (left, top, right, bottom), segment by segment
    (Liang-Barsky): a curve leaving the view ends at its edge and starts again where it returns."""
    left, top, right, bottom = area
    pieces: list[list[tuple[float, float]]] = []
    current: list[tuple[float, float]] = []
    for (x1, y1), (x2, y2) in zip(points, points[1:]):
        dx, dy = x2 - x1, y2 - y1
        t0, t1 = 0.0, 1.0
        inside = True
        for p, q in ((-dx, x1 - left), (dx, right - x1), (-dy, y1 - top), (dy, bottom - y1)):
            if p == 0:
                if q < 0:
                    inside = False
                    break
                continue
            t = q / p
            if p < 0:
                t0 = max(t0, t)
            else:
                t1 = min(t1, t)
            if t0 > t1:
                inside = False
                break
        if not inside:
            if current:
                pieces.append(current)
                current = []
            continue
        a = (x1 + t0 * dx, y1 + t0 * dy)
        b = (x1 + t1 * dx, y1 + t1 * dy)
        if not current or current[-1] != a:
            if current:
                pieces.append(current)
            current = [a]
        current.append(b)
        if t1 < 1.0:
            pieces.append(current)
            current = []
    if current:
        pieces.append(current)
    if len(points) == 1:
        (x, y), = points
        if left <= x <= right and top <= y <= bottom:
            pieces.append([(x, y)])
    return pieces


def stroke(pen) -> str:
    colour = pen.color()
    width = max(pen.widthF(), 1.0) if pen.isCosmetic() or pen.widthF() == 0 else pen.widthF()
    dash = ""
    if pen.style() in _DASHES:
        dash = f' stroke-dasharray="{" ".join(f"{d * width:g}" for d in _DASHES[pen.style()])}"'
    opacity = f' stroke-opacity="{colour.alphaF():.3f}"' if colour.alpha() < 255 else ""
    return (f' stroke="{colour.name()}" stroke-width="{width:g}"{opacity}{dash} '
            'stroke-linecap="butt" stroke-linejoin="round"')


def fill(colour: QColor) -> str:
    opacity = f' fill-opacity="{colour.alphaF():.3f}"' if colour.alpha() < 255 else ""
    return f'fill="{colour.name()}"{opacity}'


def font_px(font: QFont) -> float:
    """A font's size in scene pixels (96 per inch, as the window lays it out)."""
    if font.pixelSize() > 0:
        return float(font.pixelSize())
    info = QFontInfo(font)
    return info.pixelSize() or font.pointSizeF() * 96.0 / 72.0


def view_background(view) -> QColor:
    return view.backgroundBrush().color()


def label_colour_of(label) -> QColor:
    colour = label.opts.get("color") if hasattr(label, "opts") else None
    return pg.mkColor(colour) if colour is not None else label.item.defaultTextColor()


def label_font(label) -> QFont:
    return label.item.font()
