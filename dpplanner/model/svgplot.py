"""A small, dependency-free SVG line plot for the HTML report (no Qt, no matplotlib)."""

from __future__ import annotations

import math
from typing import Mapping, Optional, Sequence

from .safe_text import markup

#: Colour-blind-safe palette (Okabe & Ito) for series given no style of their own.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
#: The theorem registry's dash names as SVG dash arrays (the window draws the same patterns).
DASH_ARRAYS = {"solid": "", "dash": "7 4", "dot": "2 3"}


def nice_ticks(lo: float, hi: float, count: int = 5, integer: bool = False) -> list[float]:
    """About ``count`` round tick values covering [lo, hi] (whole numbers only if ``integer``)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo]
    raw = (hi - lo) / max(count, 1)
    mag = 10 ** math.floor(math.log10(raw))
    steps = [m * mag for m in (1, 2, 2.5, 5, 10)]
    if integer:
        steps = [max(1.0, round(st)) for st in steps if st >= 1 and st == round(st)] or [1.0]
    step = next((st for st in steps if st >= raw), steps[-1])
    first = math.ceil(lo / step - 1e-9) * step
    ticks = []
    t = first
    while t <= hi + step * 1e-9 and len(ticks) < 50:
        ticks.append(round(t, 12))
        t += step
    return ticks


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def line_plot(xs: Sequence[float], series: Mapping[str, Sequence[float]], *, width: int = 900,
              height: int = 380, title: str = "", x_label: str = "", y_label: str = "",
              hline: Optional[float] = None, hline_label: str = "",
              vline: Optional[float] = None,
              styles: Optional[Mapping[str, tuple[str, str]]] = None) -> str:
    """An inline <svg> with one polyline per series. Non-finite values break the line.

    ``styles`` maps a series name to (colour, dash name of ``DASH_ARRAYS``); others take the palette.
    """
    # the legend beside the plot gets the width of its longest name (~6.6 px a character at 11 px)
    longest = max((len(name) for name in series), default=0)
    left, right, top, bottom = 64, max(150, int(48 + 6.6 * longest)), 28 if title else 12, 44
    pw, ph = width - left - right, height - top - bottom
    finite = [v for ys in series.values() for v in ys if v is not None and math.isfinite(v)]
    if hline is not None and math.isfinite(hline):
        finite.append(hline)
    x_lo, x_hi = (min(xs), max(xs)) if len(xs) else (0.0, 1.0)
    if x_hi <= x_lo:
        x_hi = x_lo + 1
    y_lo = 0.0
    y_hi = max(finite) * 1.05 if finite and max(finite) > 0 else 1.0

    def px(x: float) -> float:
        return left + (x - x_lo) / (x_hi - x_lo) * pw

    def py(y: float) -> float:
        return top + ph - (y - y_lo) / (y_hi - y_lo) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" '
           f'width="{width}" height="{height}" role="img" font-family="sans-serif" font-size="11">']
    if title:
        out.append(f'<text x="{left}" y="16" font-size="13" font-weight="bold">{markup(title)}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#888"/>')
    for t in nice_ticks(y_lo, y_hi):
        y = py(t)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    for t in nice_ticks(x_lo, x_hi, integer=all(float(x).is_integer() for x in xs)):
        x = px(t)
        out.append(f'<line x1="{x:.1f}" y1="{top + ph}" x2="{x:.1f}" y2="{top + ph + 4}" stroke="#888"/>')
        out.append(f'<text x="{x:.1f}" y="{top + ph + 16}" text-anchor="middle">{_fmt(t)}</text>')
    if x_label:
        out.append(f'<text x="{left + pw / 2:.1f}" y="{height - 8}" text-anchor="middle">'
                   f'{markup(x_label)}</text>')
    if y_label:
        out.append(f'<text transform="translate(14 {top + ph / 2:.1f}) rotate(-90)" '
                   f'text-anchor="middle">{markup(y_label)}</text>')
    if hline is not None and math.isfinite(hline) and y_lo <= hline <= y_hi:
        y = py(hline)
        out.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + pw}" y2="{y:.1f}" stroke="#444" '
                   f'stroke-dasharray="6 4"/>')
        if hline_label:
            out.append(f'<text x="{left + 4}" y="{y - 4:.1f}" fill="#444">{markup(hline_label)}</text>')
    if vline is not None and x_lo <= vline <= x_hi:
        x = px(vline)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + ph}" stroke="#999" '
                   f'stroke-dasharray="2 3"/>')
    for n, (name, ys) in enumerate(series.items()):
        colour, dash_name = (styles or {}).get(name, (PALETTE[n % len(PALETTE)], "solid"))
        dash = DASH_ARRAYS[dash_name]
        dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
        segments, current = [], []
        for x, y in zip(xs, ys):
            if y is None or not math.isfinite(y) or y > y_hi:
                if current:
                    segments.append(current)
                current = []
                continue
            current.append(f"{px(x):.1f},{py(y):.1f}")
        if current:
            segments.append(current)
        for seg in segments:
            if len(seg) == 1:
                cx, cy = seg[0].split(",")
                out.append(f'<circle cx="{cx}" cy="{cy}" r="2.5" fill="{colour}"/>')
            else:
                out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2"{dash_attr} '
                           f'points="{" ".join(seg)}"/>')
        ly = top + 14 + 18 * n
        out.append(f'<line x1="{left + pw + 12}" y1="{ly - 4}" x2="{left + pw + 32}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"{dash_attr}/>')
        out.append(f'<text x="{left + pw + 38}" y="{ly}">{markup(name)}</text>')
    out.append("</svg>")
    return "\n".join(out)
