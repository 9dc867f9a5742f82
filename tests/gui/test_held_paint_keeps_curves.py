"""While the cost plot holds a result's paint back for a turn of its own (gui/curve_paint.py), what
the screen shows of the plot is the curves drawn last, never an empty frame: a paint held back
must not leave the background Qt fills before it in the window's backing store."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRect
from PySide6.QtGui import QGuiApplication

from dpplanner.gui.plots import CostPlot
from plot_curves import two_curves


def _on_screen(plot: CostPlot):
    """The plot's area as the screen has it (the window's backing store), not a fresh render."""
    view = plot.view.viewport()
    at = view.mapTo(plot.window(), view.rect().topLeft())
    shot = QGuiApplication.primaryScreen().grabWindow(plot.window().winId()).toImage()
    return shot.copy(QRect(at, view.size()))


def _colours(image) -> int:
    return len({image.pixel(x, y) for y in range(0, image.height(), 3) for x in range(0, image.width(), 3)})


@pytest.fixture
def plot(qtbot, cost_plot):
    widget = cost_plot
    widget.set_curve(two_curves(50, 1.0), 50, 3.0)
    qtbot.waitUntil(lambda: not widget.drawing())
    # (the curves, the grid, the axes on screen: not one flat colour)
    qtbot.waitUntil(lambda: _colours(_on_screen(widget)) > 3)
    return widget


def test_a_held_paint_leaves_the_curves_drawn_last_on_screen(plot):
    drawn = _on_screen(plot)
    plot.set_curve(two_curves(50, 1.5), 50, 3.0)
    assert plot.drawing()
    plot.view.viewport().repaint()      # a paint while the new curves wait for their turn: held back
    assert plot.drawing()
    held = _on_screen(plot)
    assert held == drawn
