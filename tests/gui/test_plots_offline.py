"""Plot widgets draw exactly the numbers they are given (nan/inf leave gaps)."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from dpplanner.gui.plots import CostPlot, ProfilePlot, SharesPlot, export_item


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
    plot.set_curve(fake_curve(), plan_k=4, epsilon_g=0.35)
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
    plot.set_curve(fake_curve(), plan_k=4, epsilon_g=0.35)
    with qtbot.waitSignal(plot.hiddenChanged) as blocker:
        plot.items["basic"].setVisible(False)     # what a legend click does
    assert blocker.args == [["basic"]]
    plot.set_curve(fake_curve(), plan_k=3, epsilon_g=0.35)
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
    plot.set_rows(["a", "b"], [0.1, 0.3], [4.0, math.inf], [False, True])
    assert np.allclose(plot.shares, [25.0, 75.0])
    assert plot.errors[0] == 4.0 and math.isnan(plot.errors[1])
    assert plot.readout_at(1) == "b: 75% of Σε_i, no error formula"
    x, y = plot.error_points.getData()           # the free statistic "a"
    assert list(x) == [0] and y[0] == pytest.approx(math.log10(4.0))   # log scale


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_plot_export(qtbot, tmp_path, suffix):
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    plot.set_curve(fake_curve(), plan_k=4, epsilon_g=0.35)
    target = tmp_path / f"cost{suffix}"
    export_item(plot.plot_item, target)
    assert target.stat().st_size > 500


def test_export_refuses_unknown_formats(qtbot, tmp_path):
    plot = CostPlot()
    qtbot.addWidget(plot)
    with pytest.raises(ValueError, match=r"use a \.png or \.svg"):
        export_item(plot.plot_item, tmp_path / "x.gif")


def test_exported_svg_puts_the_curves_where_the_axes_say(qtbot, tmp_path):
    """Issue 12.3: the SVG's axes were drawn at 72/96 of their size, so curves sat off their ticks."""
    import svg_reading

    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    ks = np.arange(1, 11)
    curve = SimpleNamespace(ks=ks, upper={"basic": 0.1 * ks}, lower={"basic": None})
    plot.set_curve(curve, plan_k=5, epsilon_g=0.25)
    target = tmp_path / "cost.svg"
    export_item(plot.plot_item, target)
    shapes, labels = svg_reading.read(target)
    colour = plot._theme.curves["basic"]
    drawn = [s for s in shapes if s.stroke.lower() == colour and len(s.points) == len(ks)]
    assert len(drawn) == 1
    # y labels sit left of the plot area (x < 40), x labels below it; anchors are baseline-left,
    # so allow a few pixels for the glyph size but nothing like the old 60 px shift.
    y_slope, y_off = svg_reading.axis_map(labels, lambda lab: lab.y if lab.x < 45 else None)
    x_slope, x_off = svg_reading.axis_map(labels, lambda lab: lab.x if lab.y > 315 else None)
    x5, y5 = drawn[0].points[4]                       # the curve at the plan's k = 5: ε = 0.5
    assert (x5 - x_off) / x_slope == pytest.approx(5, abs=0.15)
    assert (y5 - 4 - y_off) / y_slope == pytest.approx(0.5, abs=0.02)
    budget = [s for s in shapes if s.stroke.lower() == plot._theme.budget_line and len(s.points) == 2]
    assert (budget[0].points[0][1] - 4 - y_off) / y_slope == pytest.approx(0.25, abs=0.02)


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
    cost.set_curve(SimpleNamespace(ks=np.array([1, 2]), upper={"basic": np.array([0.12341, 0.25])},
                                   lower={"basic": None}), plan_k=2, epsilon_g=0.25)
    assert "basic 0.1235" in cost.readout_at(1)
