"""When a result's curves are painted: on a turn of the event loop of their own (gui/curve_paint.py),
once, with the axes' ticks worked out before that paint and replayed from a cache after it."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from event_count import EventCount
from plot_curves import two_curves


@pytest.fixture
def plot(cost_plot):
    return cost_plot


def test_a_results_curves_are_painted_on_a_turn_of_their_own(qtbot, plot):
    """The slot that sets a result's curves and what it posts (the table's and panels' repaint)
    paint no curve: the curves are painted on a timer's turn after them (all of it in one go held
    the GUI thread ~40 ms while a 10,000-query plan opened), and then show the result."""
    from PySide6.QtCore import QCoreApplication

    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    paints = []     # pyqtgraph's view prepares its scene at each paint it is given
    plot.view.scene().sigPrepareForPaint.connect(lambda: paints.append(plot.curve_data("basic")[1].copy()))
    plot.set_curve(two_curves(50), 50, 1.0)
    plot.view.repaint()                         # as a repaint of the window around it does
    for _ in range(3):
        QCoreApplication.sendPostedEvents()     # posted events only: no timer's turn
    assert paints == [] and plot.drawing()
    qtbot.waitUntil(lambda: not plot.drawing())    # (its paint is settled a turn before it is asked for)
    assert paints
    np.testing.assert_array_equal(paints[0], 0.1 * np.arange(1, 51))


def _painted(qtbot, plot) -> int:
    """Waits for the curves' turn and its paint, then handles what they posted; returns how
    many paints the view was given."""
    from keys import handle_posted_events

    paints = EventCount(plot.view.viewport(), when=lambda: not plot.drawing())
    qtbot.waitUntil(lambda: paints.count > 0)
    for _ in range(3):
        handle_posted_events()
    plot.view.viewport().removeEventFilter(paints)
    return paints.count


def test_a_result_is_painted_once(qtbot, plot):
    """The view's new transform and its lines' extents are settled before the curves' turn
    paints: settled by pyqtgraph as the paint begins, they marked the view for a second paint
    (~5 ms of the GUI thread after every result)."""
    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    plot.set_curve(two_curves(50), 50, 1.0)
    _painted(qtbot, plot)
    # A new frame (every item moves; the axes keep their width: ticks that need another width
    # lay the plot out again, and paint it again)
    plot.set_curve(two_curves(50, 1.3), 50, 1.0)
    assert _painted(qtbot, plot) == 1


def _count_paints(monkeypatch, items) -> list:
    """A list that grows by one each time one of ``items`` paints itself."""
    paints: list = []
    for item in items:
        real = item.paint
        monkeypatch.setattr(item, "paint", lambda *a, real=real: paints.append(1) or real(*a))
    return paints


def test_a_small_change_of_the_curves_repaints_neither_axes_nor_legend(qtbot, plot, monkeypatch):
    """The top of the total-ε axis is rounded up to two significant digits, so an edit that moves
    the highest curve by a hair keeps the frame, and only what the new curves cover is repainted:
    not the axes' tick labels (~5 ms of the GUI thread a paint) nor the legend."""
    import pyqtgraph as pg

    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    plot.set_curve(two_curves(50, 1.01), 50, 1.0)
    _painted(qtbot, plot)
    top = plot.y_range()[1]
    assert top == pytest.approx(5.7)        # (the highest curve ends at 5.05; 12% above it: 5.656)
    ticks = []
    real = pg.AxisItem.generateDrawSpecs
    monkeypatch.setattr(pg.AxisItem, "generateDrawSpecs", lambda *a: ticks.append(1) or real(*a))
    legend = _count_paints(monkeypatch, [sample for sample, _label in plot.legend.items])
    plot.set_curve(two_curves(50, 1.011), 50, 1.0)
    assert _painted(qtbot, plot) == 1
    assert plot.y_range()[1] == top and ticks == [] and legend == []
    np.testing.assert_array_equal(plot.curve_data("basic")[1], 0.1 * np.arange(1, 51) * 1.011)


def test_the_axes_are_drawn_from_a_cache(qtbot, plot, monkeypatch):
    """A repaint of the whole plot in the same frame (the window uncovered) draws the axes from a
    cache, not their tick labels again."""
    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    plot.set_curve(two_curves(50), 50, 1.0)
    _painted(qtbot, plot)
    axes = _count_paints(monkeypatch, [plot.plot_item.getAxis(name) for name in ("left", "bottom")])
    legend = _count_paints(monkeypatch, [sample for sample, _label in plot.legend.items])
    plot.view.viewport().repaint()
    assert axes == [] and len(legend) == 2      # (the legend is painted: the repaint took place)


def _inside_a_paint() -> bool:
    frame = sys._getframe()
    while frame is not None and frame.f_code.co_name != "paintEvent":
        frame = frame.f_back
    return frame is not None


def test_a_new_frames_axes_are_drawn_before_the_paint_that_shows_them(qtbot, plot, monkeypatch):
    """The axes' ticks and labels of a new frame are worked out on the turn before the curves'
    paint (they were ~6 ms of its ~16 ms while a large plan opened); the paint shows them as a
    fresh drawing of every axis does."""
    import pyqtgraph as pg

    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    plot.set_curve(two_curves(50), 50, 1.0)
    _painted(qtbot, plot)
    in_paint = []
    real = pg.AxisItem.generateDrawSpecs
    monkeypatch.setattr(pg.AxisItem, "generateDrawSpecs", lambda *a: in_paint.append(_inside_a_paint()) or real(*a))
    plot.set_curve(two_curves(50, 1.3), 50, 1.0)      # (a new frame; the axes keep their width)
    assert _painted(qtbot, plot) == 1
    assert in_paint and not any(in_paint)
    shown = plot.view.grab().toImage()
    for entry in plot.plot_item.axes.values():
        entry["item"].picture = None        # (drawn again, and its cached pixmap too)
        entry["item"].update()
    assert plot.view.grab().toImage() == shown


def test_a_results_curves_are_set_on_their_turn_not_in_its_slot(qtbot, plot, monkeypatch):
    """The slot that brings a result only keeps its curve: the curves' data, legend and frame are
    set on the curves' turn (they were ~12 ms of that slot while a 10,000-query plan opened)."""
    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    sets: list = []
    for item in plot._spare.values():
        real = item.setData
        monkeypatch.setattr(item, "setData", lambda *a, real=real, **k: sets.append(1) or real(*a, **k))
    plot.set_curve(two_curves(50), 50, 1.0)
    assert sets == [] and plot.items == {} and plot.drawing()
    qtbot.waitUntil(lambda: not plot.drawing())
    assert len(sets) == 2 and set(plot.items) == {"basic", "optimal"}
    np.testing.assert_array_equal(plot.curve_data("basic")[1], 0.1 * np.arange(1, 51))


def test_curves_late_before_their_turn_are_drawn_faded(qtbot, plot):
    """A result whose plan changed again before its curves' turn, and whose next result is late:
    its curves are the plan before's, drawn faded like the rest."""
    from dpplanner.gui.cost_curves import LATE_OPACITY

    plot.set_curve(two_curves(50), 50, 1.0)
    plot.set_late()
    qtbot.waitUntil(lambda: not plot.drawing())
    assert [item.opacity() for item in plot.items.values()] == [LATE_OPACITY] * 2
    plot.set_curve(two_curves(50, 1.1), 50, 1.0)
    qtbot.waitUntil(lambda: not plot.drawing())
    assert [item.opacity() for item in plot.items.values()] == [1.0, 1.0]
