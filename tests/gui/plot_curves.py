"""A cost curve for the plot's tests: two theorems over k = 1..k, basic at 0.1 k, optimal at half that."""

from __future__ import annotations

import numpy as np

from dpplanner import engine


def two_curves(k: int = 50, scale: float = 1.0) -> engine.Curve:
    ks = np.arange(1, k + 1)
    return engine.Curve(ks=ks, upper={"basic": 0.1 * ks * scale, "optimal": 0.05 * ks * scale},
                        lower={"basic": None, "optimal": None})


def draw(qtbot, plot, curve, plan_k: int | None, epsilon_g: float | None) -> None:
    """``plot.set_curve``, then the turn of the event loop that draws the curves (gui/curve_paint.py)."""
    plot.set_curve(curve, plan_k, epsilon_g)
    qtbot.waitUntil(lambda: not plot.drawing())
