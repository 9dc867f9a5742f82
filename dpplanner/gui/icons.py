"""Icons drawn with QPainter: no emoji or icon font is needed (a stock Debian has no glyph for 📌,
and the cell showed a box)."""

from __future__ import annotations

import functools

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QIcon, QPainter, QPainterPath, QPen, QPixmap

from dpplanner.gui import theme


@functools.lru_cache(maxsize=None)
def pin_icon() -> QIcon:
    """A push-pin: a round head over a short body and a needle, leaning to the right."""
    icon = QIcon()
    for size in (16, 24, 32, 48):
        icon.addPixmap(_pin_pixmap(size))
    return icon


def _pin_pixmap(size: int) -> QPixmap:
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    p = QPainter(pixmap)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 16.0
    p.translate(size / 2, size / 2)
    p.rotate(35)
    p.translate(-size / 2, -size / 2)
    colour = QColor(theme.ERROR_RED)    # (in either scheme: a fill, outlined darker; 3:1 on #1e1e1e)
    needle = QPen(QColor("#555555"), max(1.0, 1.2 * s))
    needle.setCapStyle(Qt.PenCapStyle.RoundCap)
    p.setPen(needle)
    p.drawLine(QPointF(8 * s, 10 * s), QPointF(8 * s, 15.2 * s))
    p.setPen(QPen(colour.darker(140), max(1.0, 0.8 * s)))
    p.setBrush(colour)
    body = QPainterPath()
    body.moveTo(5.5 * s, 5 * s)
    body.lineTo(10.5 * s, 5 * s)
    body.lineTo(11.5 * s, 10.5 * s)
    body.lineTo(4.5 * s, 10.5 * s)
    body.closeSubpath()
    p.drawPath(body)
    p.drawEllipse(QRectF(4 * s, 0.8 * s, 8 * s, 5 * s))
    p.end()
    return pixmap
