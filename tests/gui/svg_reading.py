"""Read an exported SVG back: where its curves, lines and axis labels land on the page.

An element inside a <g transform="matrix(a,b,c,d,e,f)"> has its point (x, y) at (a x + c y + e,
b x + d y + f) on the page; the plots' own writer (gui/svg_export.py) uses page coordinates and
puts the stroke on each element, Qt's generator on the group.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

_SVG = "{http://www.w3.org/2000/svg}"


@dataclass
class Shape:
    stroke: str
    points: list[tuple[float, float]]     # page coordinates


@dataclass
class Label:
    text: str
    x: float        # page coordinates of the text's anchor (left end of the baseline)
    y: float


def _matrix(group) -> tuple[float, ...]:
    m = re.match(r"matrix\(([^)]*)\)", group.get("transform", ""))
    return tuple(float(v) for v in m.group(1).split(",")) if m else (1, 0, 0, 1, 0, 0)


def _page(m, x: float, y: float) -> tuple[float, float]:
    a, b, c, d, e, f = m
    return a * x + c * y + e, b * x + d * y + f


def read(path) -> tuple[list[Shape], list[Label]]:
    shapes, labels = [], []

    def walk(node, m, stroke):
        for el in node:
            tag = el.tag.removeprefix(_SVG)
            colour = el.get("stroke", stroke)
            if tag == "g":
                walk(el, _compose(m, _matrix(el)), colour)
            elif tag == "text" and el.text:
                labels.append(Label(el.text.strip(), *_page(m, float(el.get("x")), float(el.get("y")))))
            elif tag == "polyline":
                pts = [tuple(map(float, p.split(","))) for p in el.get("points").split()]
                shapes.append(Shape(colour, [_page(m, *p) for p in pts]))
            elif tag == "line":
                pts = [(float(el.get("x1")), float(el.get("y1"))), (float(el.get("x2")), float(el.get("y2")))]
                shapes.append(Shape(colour, [_page(m, *p) for p in pts]))
            elif tag == "path":
                pts = re.findall(r"[ML]\s*(-?[\d.e+-]+)[ ,](-?[\d.e+-]+)", el.get("d"))
                shapes.append(Shape(colour, [_page(m, float(x), float(y)) for x, y in pts]))

    walk(ET.parse(path).getroot(), (1, 0, 0, 1, 0, 0), "")
    return shapes, labels


def _compose(outer, inner) -> tuple[float, ...]:
    a, b, c, d, e, f = outer
    a2, b2, c2, d2, e2, f2 = inner
    return (a * a2 + c * b2, b * a2 + d * b2, a * c2 + c * d2, b * c2 + d * d2,
            a * e2 + c * f2 + e, b * e2 + d * f2 + f)


def axis_map(labels: list[Label], pick) -> tuple[float, float]:
    """Least-squares (slope, offset) from label value to page coordinate, over the numeric labels
    ``pick(label)`` returns a coordinate for (None to skip)."""
    values, coords = [], []
    for label in labels:
        coord = pick(label)
        try:
            value = float(label.text)
        except ValueError:
            continue
        if coord is not None:
            values.append(value)
            coords.append(coord)
    slope, offset = np.polyfit(values, coords, 1)
    return float(slope), float(offset)
