"""Plot widgets draw exactly the numbers they are given (nan/inf leave gaps)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpplanner.gui.plots import CostPlot, ProfilePlot, SharesPlot
from dpplanner.gui.svg_export import export_plot
from keys import handle_posted_events
from plot_curves import draw


def fake_curve():
    ks = np.array([1, 2, 3, 4])
    return SimpleNamespace(ks=ks, upper={
        "basic": np.array([0.1, 0.2, 0.3, 0.4]),
        "optimal": np.array([0.1, 0.19, math.inf, 0.33]),
        "kov": np.full(4, np.nan),
    }, lower={"basic": None, "optimal": None, "kov": None})


def test_cost_plot_draws_every_applicable_theorem(qtbot):
    plot = CostPlot()
    qtbot.addWidget(plot)
    draw(qtbot, plot, fake_curve(), plan_k=4, epsilon_g=0.35)
    assert set(plot.items) == {"basic", "optimal"}          # kov never applies: no curve
    x, y = plot.curve_data("optimal")
    assert list(x) == [1, 2, 3, 4]
    assert y[0] == 0.1 and y[1] == 0.19 and math.isnan(y[2]) and y[3] == 0.33
    assert plot.k_line.value() == 4
    assert plot.budget_line.value() == 0.35
    assert "optimal 0.19" in plot.readout_at(2)
    assert "basic 0.2" in plot.readout_at(2)


def test_hidden_curves_stay_hidden_across_redraws(qtbot):
    plot = CostPlot()
    qtbot.addWidget(plot)
    draw(qtbot, plot, fake_curve(), plan_k=4, epsilon_g=0.35)
    with qtbot.waitSignal(plot.hiddenChanged) as blocker:
        plot.items["basic"].setVisible(False)     # what a legend click does
    assert blocker.args == [["basic"]]
    draw(qtbot, plot, fake_curve(), plan_k=3, epsilon_g=0.35)
    assert not plot.items["basic"].isVisible()
    assert "basic" not in plot.readout_at(2)


def test_mode_and_k_range_emit_options_changed(qtbot):
    plot = CostPlot()
    qtbot.addWidget(plot)
    with qtbot.waitSignal(plot.optionsChanged):
        plot.repeat_button.setChecked(True)
    assert plot.mode() == "repeat"
    with qtbot.waitSignal(plot.optionsChanged):
        plot.k_max.setValue(500)
    assert plot.k_limit() == 500


def test_profile_plot_uses_log_delta(qtbot):
    plot = ProfilePlot()
    qtbot.addWidget(plot)
    profile = SimpleNamespace(eps=np.array([0.1, 0.2, 0.3]), delta_upper=np.array([1e-2, 1e-4, 0.0]),
                              delta_lower=np.array([9e-3, 9e-5, 0.0]))
    plot.set_profile(profile, delta_g=1e-6)
    x, y = plot.upper_item.getData()
    assert np.allclose(y[:2], [-2, -4])       # pyqtgraph stores log10 in log mode
    assert plot.target_line.value() == pytest.approx(-6)


def test_shares_are_percentages_of_the_summed_epsilon(qtbot):
    plot = SharesPlot()
    qtbot.addWidget(plot)
    plot.set_rows(["a", "b"], [0.1, 0.3], [4.0, math.inf], [False, True], ["± 40 records", ""])
    assert np.allclose(plot.shares, [25.0, 75.0])
    assert plot.errors[0] == 4.0 and math.isnan(plot.errors[1])
    assert plot.readout_at(2) == "2. b: 75% of Σε_i, no error formula"       # numbered from 1
    assert plot.readout_at(1) == "1. a: 25% of Σε_i, error 4% of its range (± 40 records)"
    x, y = plot.error_points.getData()           # the free statistic "a"
    assert list(x) == [1] and y[0] == pytest.approx(math.log10(4.0))   # log scale


def test_shares_show_relative_errors_and_stay_readable_at_1000_statistics(qtbot, small_plan):
    """Issue 12.8: errors in records, dollars and proportions on one axis; 1000 names overlapping."""
    plan = small_plan()
    plot = SharesPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 350)
    plot.show()
    privacy = plan.privacy_all()
    plot.set_plan(plan, privacy)
    count = privacy[0].error                     # a count over n = 1000 records
    assert plot.errors[0] == pytest.approx(100 * count / 1000)
    mean = plan.statistics[1]                    # a mean over [0, 100]
    assert plot.errors[1] == pytest.approx(100 * privacy[1].error / (mean.upper - mean.lower))
    names = [f"statistic {i}" for i in range(1000)]
    plot.set_rows(names, [1.0] * 1000, [1.0] * 1000, [False] * 1000)
    handle_posted_events()
    axis = plot.error_plot.getAxis("bottom")
    assert axis._tickLevels is None              # numbers, not 1000 overlapping names
    assert all(float(s).is_integer() for s, _ in axis.tickSpacing(0.4, 1000.6, 480))
    assert plot.readout_at(1000) == "1000. statistic 999: 0.1% of Σε_i, error 1% of its range"


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_export(qtbot, tmp_path, suffix):
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    draw(qtbot, plot, fake_curve(), plan_k=4, epsilon_g=0.35)
    target = tmp_path / f"cost{suffix}"
    export_plot(plot.view, target)
    assert target.stat().st_size > 500


def test_export_refuses_unknown_formats(qtbot, tmp_path):
    plot = CostPlot()
    qtbot.addWidget(plot)
    with pytest.raises(ValueError, match=r"use a \.png or \.svg"):
        export_plot(plot.view, tmp_path / "x.gif")


def test_exported_svg_puts_the_curves_where_the_axes_say(qtbot, tmp_path):
    """Issue 12.3: the SVG's axes were drawn at 72/96 of their size, so curves sat off their ticks."""
    import svg_reading

    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    ks = np.arange(1, 11)
    curve = SimpleNamespace(ks=ks, upper={"basic": 0.1 * ks}, lower={"basic": None})
    draw(qtbot, plot, curve, plan_k=5, epsilon_g=0.25)
    plot.show()                                  # laid out, as the tab File > Export Plot saves
    qtbot.waitExposed(plot)
    target = tmp_path / "cost.svg"
    export_plot(plot.view, target)               # what File > Export Plot writes
    shapes, labels = svg_reading.read(target)
    colour = plot._theme.curves["basic"]
    drawn = [s for s in shapes if s.stroke.lower() == colour and len(s.points) == len(ks)]
    assert len(drawn) == 1
    # The k labels share one baseline; the ε labels are the other numbers. Anchors are at the
    # baseline's left end: allow a few pixels for the glyphs, nothing like the old 60 px shift.
    numeric = [lab for lab in labels if lab.text.replace(".", "", 1).isdigit()]
    baselines = [round(lab.y) for lab in numeric]
    k_baseline = max(set(baselines), key=baselines.count)
    y_slope, y_off = svg_reading.axis_map(numeric, lambda lab: lab.y if round(lab.y) != k_baseline else None)
    x_slope, x_off = svg_reading.axis_map(numeric, lambda lab: lab.x if round(lab.y) == k_baseline else None)
    (x1, y1), (x5, y5), (x10, y10) = (drawn[0].points[i] for i in (0, 4, 9))
    # Scale: the curve spans k = 1..10 and ε = 0.1..1.0 on the axes' own scale (baseline-free).
    assert (x10 - x1) / x_slope == pytest.approx(9, abs=0.05)
    assert (y10 - y1) / y_slope == pytest.approx(0.9, abs=0.005)
    # Position: the plan's k = 5 at ε = 0.5, and the ε_g line at 0.25, within the glyph offset.
    assert (x5 - x_off) / x_slope == pytest.approx(5, abs=0.15)
    assert (y5 - y_off) / y_slope == pytest.approx(0.5, abs=0.04)
    budget = [s for s in shapes if s.stroke.lower() == plot._theme.budget_line and len(s.points) == 2]
    assert (budget[0].points[0][1] - y_off) / y_slope == pytest.approx(0.25, abs=0.04)


def test_hovers_round_bounds_up(qtbot):
    """Issue 11.5: a hover never prints "δ ≤ 1.23e-06" for 1.2349e-6."""
    plot = ProfilePlot()
    qtbot.addWidget(plot)
    profile = SimpleNamespace(eps=np.array([0.12341, 0.2]), delta_upper=np.array([1.2349e-6, 1e-7]),
                              delta_lower=np.array([1e-6, 1e-8]))
    plot.set_profile(profile, delta_g=1e-6)
    assert plot.readout_at(0.12) == "ε = 0.1235   δ ≤ 1.24e-06"
    cost = CostPlot()
    qtbot.addWidget(cost)
    draw(qtbot, cost, SimpleNamespace(ks=np.array([1, 2]), upper={"basic": np.array([0.12341, 0.25])},
                                      lower={"basic": None}), plan_k=2, epsilon_g=0.25)
    assert "basic 0.1235" in cost.readout_at(1)


def _flat_curve(ks, value=0.25):
    ks = np.asarray(ks)
    return SimpleNamespace(ks=ks, upper={"basic": np.full(len(ks), value), "optimal": np.full(len(ks), value)},
                           lower={"basic": None, "optimal": None})


def test_one_statistic_gets_whole_k_ticks_and_a_y_axis_from_zero(qtbot):
    """Issue 12.8: one statistic showed k from -2 to 4 and ε from 0.2500000 to 0.2500015."""
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 350)
    draw(qtbot, plot, _flat_curve([1]), plan_k=1, epsilon_g=0.25)
    x0, x1 = plot.x_range()
    assert 0 <= x0 < 1 < x1 <= 2
    y0, y1 = plot.y_range()
    assert y0 == 0 and 0.25 * 1.05 < y1 < 0.5
    axis = plot.plot_item.getAxis("bottom")
    assert all(float(s).is_integer() for s, _ in axis.tickSpacing(0.5, 2.5, 400))
    assert plot.items["basic"].opts["symbol"] == "o"      # a single k is still visible
    assert "same totals" in plot.readout.text()            # coinciding curves are named as such


def test_log_k_axis(qtbot):
    plot = CostPlot()
    qtbot.addWidget(plot)
    ks = np.array([1, 10, 100, 1000, 100_000])
    draw(qtbot, plot, SimpleNamespace(ks=ks, upper={"basic": 1e-4 * ks}, lower={"basic": None}),
         plan_k=1000, epsilon_g=1.0)
    with qtbot.waitSignal(plot.logKChanged):
        plot.log_k.setChecked(True)
    assert plot.plot_item.getAxis("bottom").logMode
    assert plot.k_line.value() == pytest.approx(3)          # k = 1000 at log10 = 3
    x0, x1 = plot.x_range()
    assert x0 <= 1 and x1 >= 100_000


def test_legend_sits_outside_the_plot_area(qtbot):
    """Issue 12.8: at 1024x700 the legend covered the curves."""
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(480, 330)
    plot.show()
    draw(qtbot, plot, fake_curve(), plan_k=4, epsilon_g=0.35)
    handle_posted_events()
    legend = plot.legend.sceneBoundingRect()
    assert legend.height() > 0
    assert not legend.intersects(plot.plot_item.vb.sceneBoundingRect())


def test_repeat_mode_names_its_statistic(qtbot):
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.set_repeat_statistic("mean income north")
    plot.repeat_button.setChecked(True)
    assert "mean income north" in plot.repeat_button.text()
    assert "mean income north" in plot.plot_item.getAxis("bottom").labelText


def test_an_empty_plan_resets_the_frame_and_keeps_the_budget_label_whole(qtbot):
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(500, 350)
    plot.show()
    ks = np.arange(1, 1001)
    draw(qtbot, plot, SimpleNamespace(ks=ks, upper={"basic": 0.001 * ks}, lower={"basic": None}),
         plan_k=1000, epsilon_g=0.25)
    plot.clear()
    plot.set_budget(0.25)
    handle_posted_events()
    assert plot.x_range()[1] <= 11
    view = plot.plot_item.vb.sceneBoundingRect()
    # (the label starts at the view's left edge: the same x up to a rounding of the transform)
    assert view.adjusted(-0.01, -0.01, 0.01, 0.01).contains(plot.budget_label.sceneBoundingRect())


def test_plot_tooltips_do_not_cover_the_curves(qtbot):
    for cls in (CostPlot, ProfilePlot, SharesPlot):
        plot = cls()
        qtbot.addWidget(plot)
        assert plot.view.toolTip() == ""
        assert plot.readout.toolTip()


def test_shares_plots_stay_aligned_and_log_labels_do_not_crowd(qtbot):
    plot = SharesPlot()
    qtbot.addWidget(plot)
    plot.resize(480, 380)
    plot.show()
    plot.set_rows([f"s{i}" for i in range(58)], [1.0] * 58, [0.3 + 0.15 * i for i in range(58)], [False] * 58)
    handle_posted_events()
    assert plot.error_plot.vb.viewRange()[0] == pytest.approx(plot.share_plot.vb.viewRange()[0])
    axis = plot.error_plot.getAxis("left")
    levels = axis.tickValues(math.log10(0.3), math.log10(9.0), 150)
    labelled = [v for _s, values in levels[: axis.style["maxTextLevel"] + 1] for v in values]
    assert sorted(round(10 ** v, 6) for v in labelled) == [0.5, 1.0, 2.0, 5.0]


def test_an_empty_profile_resets_its_frame(qtbot):
    plot = ProfilePlot()
    qtbot.addWidget(plot)
    profile = SimpleNamespace(eps=np.array([0.1, 5.0]), delta_upper=np.array([1e-2, 1e-30]),
                              delta_lower=np.array([1e-3, 1e-31]))
    plot.set_profile(profile, delta_g=1e-6)
    plot.clear()
    (x0, x1), (y0, y1) = plot.plot_item.vb.viewRange()
    assert (x0, x1) == (0.0, 1.0) and (y0, y1) == (-10.0, 0.0)
    plot.show()
    plot.set_profile(profile, delta_g=1e-6)
    qtbot.waitUntil(lambda: plot.plot_item.vb.viewRange()[0][1] > 1.0)   # data frames it again
