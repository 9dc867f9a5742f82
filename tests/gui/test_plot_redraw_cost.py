"""What a result landing redraws: only what changed (each restyle or relayout is paid per edit)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner import engine
from dpplanner.gui.cost_curves import _MARKERS_UP_TO
from dpplanner.gui.plots import CostPlot
from keys import handle_posted_events
from plot_curves import draw, two_curves


@pytest.fixture
def plot(cost_plot):
    return cost_plot


def _count_pens(plot, monkeypatch) -> list:
    """A list that grows by one each time a pen is set on one of the plot's curves."""
    pens: list = []
    for item in plot.items.values():
        real = item.setPen
        monkeypatch.setattr(item, "setPen", lambda *a, real=real, **k: pens.append(1) or real(*a, **k))
    return pens


def test_a_new_curve_restyles_nothing_unless_the_markers_change(qtbot, plot, monkeypatch):
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    pens = _count_pens(plot, monkeypatch)
    draw(qtbot, plot, two_curves(50, 1.1), 50, 1.0)
    assert pens == []
    draw(qtbot, plot, two_curves(_MARKERS_UP_TO), _MARKERS_UP_TO, 1.0)   # few points: markers on
    assert len(pens) == 2
    assert all(item.opts["symbol"] == "o" for item in plot.items.values())
    x, y = plot.curve_data("optimal")
    np.testing.assert_array_equal(y, 0.05 * np.arange(1, _MARKERS_UP_TO + 1))


def test_a_results_curves_are_set_without_taking_their_bounds(qtbot, plot, monkeypatch):
    """The plot frames its curves itself: a result's curves are set without their data's bounds
    taken (pyqtgraph's dynamic range limit took them at every setData and change of the y range)."""
    from pyqtgraph.graphicsItems.PlotDataItem import PlotDataset

    draw(qtbot, plot, two_curves(50), 50, 1.0)
    taken: list = []
    real = PlotDataset.dataRect
    monkeypatch.setattr(PlotDataset, "dataRect", lambda self: taken.append(1) or real(self))
    draw(qtbot, plot, two_curves(50, 3.0), 50, 1.0)        # (framed anew: three times as high)
    assert taken == []
    np.testing.assert_array_equal(plot.curve_data("basic")[1], two_curves(50, 3.0).upper["basic"])


def test_the_theme_restyles_every_curve(qtbot, plot, monkeypatch):
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    pens = _count_pens(plot, monkeypatch)
    plot.apply_theme(plot._theme)
    assert len(pens) == 2


def test_the_legend_is_laid_out_again_only_when_its_entries_or_width_change(qtbot, plot, monkeypatch):
    import dpplanner.gui.plot_common as common      # (the plots import it with their canvas)

    fits = []
    real = common.fit_legend
    monkeypatch.setattr(common, "fit_legend", lambda *a: fits.append(1) or real(*a))
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    fits.clear()
    draw(qtbot, plot, two_curves(50, 1.2), 50, 1.0)
    assert fits == []
    three = two_curves(50)
    three.upper["advanced"] = 0.07 * three.ks
    three.lower["advanced"] = None
    draw(qtbot, plot, three, 50, 1.0)
    assert fits == [1]
    assert len(plot.legend.items) == 3
    plot.resize(500, 400)
    qtbot.waitUntil(lambda: len(fits) >= 2)
    handle_posted_events()
    resized = len(fits)
    draw(qtbot, plot, three, 50, 1.0)
    assert len(fits) == resized     # the resize refitted it, the landing after it did not


def test_a_plans_first_result_draws_on_curves_made_beforehand(qtbot, plot, monkeypatch):
    """The curves are made once the canvas is built, in a turn of the event loop of their own, and
    a curve taken off the plot (an empty plan) is kept: a result landing makes none (eight made in
    the slot that draws a plan's first result held the GUI thread ~20 ms)."""
    import pyqtgraph as pg

    plot.build_canvas()
    qtbot.waitUntil(lambda: set(engine.THEOREMS) <= set(plot._spare))
    made: list = []
    real = pg.PlotDataItem.__init__
    monkeypatch.setattr(pg.PlotDataItem, "__init__",
                        lambda self, *a, **k: made.append(1) or real(self, *a, **k))
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    plot.clear()
    assert plot.items == {} and plot.legend.items == []
    draw(qtbot, plot, two_curves(50, 1.1), 50, 1.0)
    assert made == []
    assert set(plot.items) == {"basic", "optimal"} and len(plot.legend.items) == 2
    np.testing.assert_array_equal(plot.curve_data("basic")[1], 0.1 * np.arange(1, 51) * 1.1)


def test_a_plans_first_result_makes_no_legend_entry_and_sets_no_pen(qtbot, plot, monkeypatch):
    """The legend entries are made with the spare curves, one theorem a turn of the event loop,
    styled as a long curve: the first result (eight entries of ~1 ms each, eight pens) makes
    and restyles nothing, and the legend is laid out once for all its entries."""
    import pyqtgraph as pg
    import dpplanner.gui.plot_common as common

    plot.build_canvas()
    plot._make_spares()             # what a turn does (the canvas's own turn has not come yet)
    assert len(plot._spare) == 1 and not plot.spares_made()
    qtbot.waitUntil(plot.spares_made)
    labels, fits = [], []
    real_label = pg.LabelItem.__init__
    monkeypatch.setattr(pg.LabelItem, "__init__", lambda self, *a, **k: labels.append(1) or real_label(self, *a, **k))
    real_fit = common.fit_legend
    monkeypatch.setattr(common, "fit_legend", lambda *a: fits.append(1) or real_fit(*a))
    pens = []
    for item in plot._spare.values():
        real = item.setPen
        monkeypatch.setattr(item, "setPen", lambda *a, real=real, **k: pens.append(1) or real(*a, **k))
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    assert labels == [] and pens == [] and fits == [1]
    assert [label.text for _sample, label in plot.legend.items] == ["basic", "optimal"]


def test_entries_made_ahead_take_the_colour_scheme_of_when_they_are_shown(qtbot, plot):
    from dpplanner.gui import theme as themes

    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    other = themes.LIGHT if plot._theme.name == "dark" else themes.DARK
    plot.apply_theme(other)
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    for _sample, label in plot.legend.items:
        assert other.foreground in label.item.toHtml().lower()
    for name, item in plot.items.items():
        assert item.opts["pen"].color().name() == themes.curve_colour(other, name).lower()


def test_a_curve_replaced_by_another_lays_the_legend_out_again(qtbot, plot, monkeypatch):
    import dpplanner.gui.plot_common as common

    draw(qtbot, plot, two_curves(50), 50, 1.0)
    fits = []
    real = common.fit_legend
    monkeypatch.setattr(common, "fit_legend", lambda *a: fits.append(1) or real(*a))
    other = two_curves(50)
    other.upper["advanced"] = other.upper.pop("optimal")
    other.lower["advanced"] = other.lower.pop("optimal")
    draw(qtbot, plot, other, 50, 1.0)
    assert fits == [1]
    assert [label.text for _sample, label in plot.legend.items] == ["basic", "advanced"]


def test_a_result_leaves_no_layout_of_the_plot_for_later(qtbot, plot, monkeypatch):
    """The legend's new height is laid out with the curves, on their turn: one paint shows it."""
    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    laid_out = []
    real = plot._draw_set
    monkeypatch.setattr(plot, "_draw_set", lambda: real() or laid_out.append(plot.view.ci.layout.isActivated()))
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    assert laid_out == [True]


def test_a_moved_budget_is_drawn_without_a_result(qtbot, plot):
    """eps_g moved and no curve to follow (an empty plan, a failed or cancelled evaluation): the
    line and its label are redrawn on their own a turn later, never left showing the old budget."""
    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    plot.set_budget(0.5)
    qtbot.waitUntil(lambda: plot.budget_line.value() == 0.5)
    plot.set_budget(0.7)
    qtbot.waitUntil(lambda: plot.budget_line.value() == 0.7)
    assert "0.7" in plot.budget_label.textItem.toPlainText()


def test_naming_the_repeated_statistic_in_prefix_mode_leaves_the_axis_alone(plot, monkeypatch):
    plot.build_canvas()
    labels = []
    real = plot.plot_item.setLabel
    monkeypatch.setattr(plot.plot_item, "setLabel", lambda *a, **k: labels.append(a) or real(*a, **k))
    plot.set_repeat_statistic("income")
    assert labels == []                 # (each label lays the axis out again)
    plot.set_mode("repeat")
    assert len(labels) == 1 and "income" in plot.plot_item.getAxis("bottom").labelText
    tips = []
    real_tip = plot.repeat_button.setToolTip
    monkeypatch.setattr(plot.repeat_button, "setToolTip", lambda tip: tips.append(tip) or real_tip(tip))
    plot.set_repeat_statistic("income")     # named again after every edit: nothing to change
    assert tips == [] and len(labels) == 1
    plot.set_repeat_statistic("")
    assert len(tips) == 1 and len(labels) == 2 and "income" not in plot.repeat_button.text()


def test_an_edit_frames_the_cost_plot_once(qtbot, window, monkeypatch):
    """Typing a statistic's ε_i changes the curve, not ε_g: the window's refresh on the plan's
    change leaves the view as it is and the result's curve frames it once (each frame lays the
    plot out again)."""
    from keys import open_cell, wait_idle

    plot = window.cost_plot
    qtbot.waitUntil(plot.canvas_built)
    wait_idle(qtbot, window)
    frames = []
    real = plot.plot_item.vb.setRange
    monkeypatch.setattr(plot.plot_item.vb, "setRange", lambda *a, **k: frames.append(1) or real(*a, **k))
    editor = open_cell(window, 0, "epsilon")
    QTest.keyClicks(editor, "0.125")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 0.125
    assert frames == [1]
    assert plot.budget_line.value() == window.plan.budget.spendable_epsilon


def test_totals_of_subnormal_size_are_framed(qtbot):
    """(Curves this near 0, though no plan holds a global ε of 1e-323 since fields and plan files
    refuse it alike: no two-digit rounding step is that small. Not shown: pyqtgraph's axis finds no
    tick spacing for such a range.)"""
    plot = CostPlot()
    qtbot.addWidget(plot)
    draw(qtbot, plot, two_curves(50, 1e-323), 50, 1e-323)       # (the highest curve ends at 5e-323)
    assert 0 < 5e-323 <= plot.y_range()[1] < math.inf


def test_a_result_leaves_an_unchanged_read_out_alone(qtbot, plot, monkeypatch):
    """(Setting its text, the same again, repainted the plot's controls beneath it.)"""
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    texts = []
    real = plot.readout.setText
    monkeypatch.setattr(plot.readout, "setText", lambda text: texts.append(text) or real(text))
    draw(qtbot, plot, two_curves(50, 1.1), 50, 1.0)
    assert texts == []
    same = two_curves(50)
    same.upper["optimal"] = same.upper["basic"]
    draw(qtbot, plot, same, 50, 1.0)
    assert len(texts) == 1 and "same totals" in plot.readout.text()


def test_a_plans_first_result_adds_no_curve_to_the_plot(qtbot, plot, monkeypatch):
    """The curves made ahead wait on the plot, hidden (adding a curve to the plot was most of
    what drawing a plan's first result cost: ~4 ms of the ~10 ms its curves took); one taken off
    is hidden again. None of this is a curve the user hid."""
    plot.build_canvas()
    qtbot.waitUntil(plot.spares_made)
    added = []
    real = plot.plot_item.addItem
    monkeypatch.setattr(plot.plot_item, "addItem", lambda *a, **k: added.append(1) or real(*a, **k))
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    assert added == [] and plot.hidden() == []
    assert all(item.isVisible() for item in plot.items.values())
    assert not any(item.isVisible() for item in plot._spare.values())
    other = two_curves(50)
    other.upper["advanced"] = other.upper.pop("optimal")
    other.lower["advanced"] = other.lower.pop("optimal")
    draw(qtbot, plot, other, 50, 1.0)
    assert set(plot.items) == {"basic", "advanced"} and not plot._spare["optimal"].isVisible()
    assert added == [] and plot.hidden() == []


def test_a_result_that_moves_no_curve_sets_no_data(qtbot, plot, monkeypatch):
    """A statistic renamed is computed again and brings the same curves: they are not set again
    (each set costs ~0.3 ms and repaints the curve); a curve that moved, or new k, is."""
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    sets: list[int] = []
    for item in list(plot.items.values()) + list(plot._spare.values()):
        real = item.setData
        monkeypatch.setattr(item, "setData", lambda *a, real=real, **k: sets.append(1) or real(*a, **k))
    draw(qtbot, plot, two_curves(50), 50, 1.0)
    assert sets == []
    draw(qtbot, plot, two_curves(50, 1.1), 50, 1.0)
    assert len(sets) == 2
    np.testing.assert_array_equal(plot.curve_data("basic")[1], 0.1 * np.arange(1, 51) * 1.1)
    draw(qtbot, plot, two_curves(40, 1.1), 40, 1.0)
    assert len(sets) == 4
    np.testing.assert_array_equal(plot.curve_data("optimal")[0], np.arange(1, 41))
    plot.clear()                    # the curves go back to the spares with their data
    draw(qtbot, plot, two_curves(40, 1.1), 40, 1.0)
    assert len(sets) == 4 and all(item.isVisible() for item in plot.items.values())
