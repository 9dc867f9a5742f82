"""The add-statistic dialog, the light/dark plot colours, help pages and the command line."""

from __future__ import annotations

import pytest

from dpplanner.__main__ import parse_args
from dpplanner.gui import theme
from dpplanner.gui.add_dialog import AddStatisticDialog
from dpplanner.gui.help_pages import HelpWindow
from dpplanner.gui.plots import CostPlot
from dpplanner.model import KIND_FIELDS, Budget, Kind, Mechanism
from dpplanner.model.validation import PlanError


@pytest.mark.parametrize("kind", list(Kind))
def test_the_dialog_asks_only_for_the_fields_a_kind_needs(qtbot, kind):
    dialog = AddStatisticDialog(kind, Budget(dataset_size=None), name="x")
    qtbot.addWidget(dialog)
    assert set(dialog.fields) == set(KIND_FIELDS[kind])


def test_a_mean_from_the_dialog(qtbot):
    dialog = AddStatisticDialog(Kind.MEAN, Budget(dataset_size=500), name="mean income")
    qtbot.addWidget(dialog)
    dialog.fields["lower"].edit.setText("0")
    dialog.fields["upper"].edit.setText("1000")
    dialog.mechanism.setCurrentIndex(dialog.mechanism.findData(Mechanism.GAUSSIAN.value))
    stat = dialog.statistic()
    assert (stat.kind, stat.mechanism, stat.lower, stat.upper, stat.n) == \
        (Kind.MEAN, Mechanism.GAUSSIAN, 0.0, 1000.0, None)   # n: the plan's dataset size


def test_the_dialog_refuses_bad_bounds_and_stays_open(qtbot):
    dialog = AddStatisticDialog(Kind.SUM, Budget(), name="total")
    qtbot.addWidget(dialog)
    dialog.fields["lower"].edit.setText("10")
    dialog.fields["upper"].edit.setText("5")
    with pytest.raises(PlanError, match="lower bound 10 must be below the upper bound 5"):
        dialog.statistic()
    dialog.accept()
    assert dialog.result_statistic() is None
    assert "must be below" in dialog.fields["upper"].message.text()     # beneath the field


def test_plots_take_the_dark_colours(qtbot):
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.apply_theme(theme.DARK)
    assert plot.view.backgroundBrush().color().name() == theme.DARK.background
    plot.apply_theme(theme.LIGHT)
    assert plot.view.backgroundBrush().color().name() == theme.LIGHT.background


def test_every_theorem_has_a_help_section(qtbot):
    from dpplanner import engine
    from dpplanner.help_docs import THEOREMS, anchor

    dialog = HelpWindow()
    qtbot.addWidget(dialog)
    assert dialog.open(THEOREMS, anchor(engine.theorem("optimal").title))
    text = dialog.browser.toPlainText()
    assert "certified bracket" in text and all(t.title in text for t in engine.REGISTRY)


def test_command_line_arguments():
    assert parse_args([]).plan is None
    assert parse_args(["plan.dpplan"]).plan == "plan.dpplan"
    assert parse_args(["--smoke-test"]).smoke_test is True
    with pytest.raises(SystemExit, match="2"):
        parse_args(["--no-such-option"])
