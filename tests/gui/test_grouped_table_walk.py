"""Issue 26's "Done means", walked as a new user does, by keyboard: from a new plan, "mean income
by region (50 regions), households of up to 4 persons" typed in the Budget panel and the
+ Statistic dialog is one table row that costs one release at 4 times one row's sensitivity (the
Statistic tab says so), c changed moves its error with the reason, and the saved and reopened plan,
the HTML report, the command line's JSON and the OpenDP release script show the same numbers."""

from __future__ import annotations

import json

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox

from dpplanner.cli import main as cli
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import Budget, Plan
from dpplanner.model.implementation import implementation
from keys import field, handle_posted_events, type_into, wait_idle, when_dialog


def add_mean_by_region(qtbot, window) -> None:
    """+ Statistic > Mean, every field typed, the box ticked with Space, OK with Enter."""
    def fill(dialog) -> None:
        for name, text in (("Statistic name", "mean income"), ("Variable", "income"),
                           ("Lower bound", "0"), ("Upper bound", "200000"), ("Grouped by", "region"),
                           ("Number of groups", "50"), ("Records", "2000")):
            type_into(qtbot, field(dialog, name), text, Qt.Key.Key_Tab)
        box = field(dialog, "One group per individual", QCheckBox)
        box.setFocus()
        QTest.keyClick(box, Qt.Key.Key_Space)
        QTest.keyClick(field(dialog, "Records"), Qt.Key.Key_Return)

    when_dialog("Add statistic: Mean", fill)
    mean = next(a for a in window.statistics_panel.add_menu.actions() if a.text() == "Mean")
    mean.trigger()
    wait_idle(qtbot, window)


def test_mean_income_by_region_of_households_is_one_release_everywhere(qtbot, window, tmp_path, capsys):
    window.editor.undo_stack.setClean()
    assert window.document.new_plan()
    panel = window.budget_panel
    type_into(qtbot, field(panel, "Unit of privacy"), "household")
    type_into(qtbot, field(panel, "Rows per individual"), "4")
    add_mean_by_region(qtbot, window)
    plan = window.plan
    assert len(plan) == 1 and window.statistics_panel.model.rowCount() == 1
    s, p = plan[0], plan.privacy(0)
    assert (s.group_by, s.groups, s.one_group_each, plan.budget.contributions) == ("region", 50, True, 4)
    # one release, k = 1, spending the whole budget: not 50 releases
    assert len(plan.composition_inputs().epsilons) == 1
    # at 4 times one row's sensitivity: the same statistic with one row per person
    person = Plan(Budget(epsilon=plan.budget.epsilon, delta=plan.budget.delta), [s])
    impl, one_row = implementation(plan.budget, s, p), implementation(person.budget, s, person.privacy(0))
    assert impl.d_in == 4 and one_row.d_in == 1
    assert impl.l1 == pytest.approx(4 * one_row.l1, rel=1e-8)   # (each with its float-rounding term)
    assert p.cell_error == pytest.approx(4 * person.privacy(0).cell_error, rel=1e-4)
    window.statistics_panel.select_row(0)
    moves = window.statistics_panel.inspector.moves.text()
    assert (f"Cost: all 50 groups together are one release of ε_i = {window.statistics_panel.model.index(0, COLUMN_INDEX['epsilon']).data()} "
            "(one query of k), not 50 releases: one household moves at most 1 of them.") in moves
    # c = 2: the error halves, and the Statistic tab says why
    type_into(qtbot, field(panel, "Rows per individual"), "2")
    wait_idle(qtbot, window)
    handle_posted_events()
    assert plan.privacy(0).cell_error == pytest.approx(p.cell_error / 2, rel=1e-4)
    moves = window.statistics_panel.inspector.moves.text()
    assert "at most c = 2 rows" in moves and "L∞ × 100 = 200" in moves
    # save, reopen: the same numbers
    epsilon, error = plan[0].epsilon, plan.privacy(0).cell_error
    shown = window.statistics_panel.model.index(0, COLUMN_INDEX["error"]).data()
    assert window.document.save_to(tmp_path / "walk.dpplan")
    assert window.document.open_path(tmp_path / "walk.dpplan", confirm=False)
    wait_idle(qtbot, window)
    assert (window.plan[0].epsilon, window.plan.privacy(0).cell_error) == (epsilon, error)
    assert window.statistics_panel.model.index(0, COLUMN_INDEX["error"]).data() == shown
    # the report says the table's error ("± 599.14 income per group")
    assert window.exports.export_report(tmp_path / "walk.html")
    assert shown.replace(" per group", "") in (tmp_path / "walk.html").read_text()
    # the command line's JSON and the release script: the same ε_i, error and noise scale
    scale = implementation(window.plan.budget, window.plan[0], window.plan.privacy(0)).scale
    assert cli(["allocate", str(tmp_path / "walk.dpplan"), "--json"]) == 0
    stat = json.loads(capsys.readouterr().out)["statistics"][0]
    assert (stat["epsilon"], stat["error_one_group"], stat["implementation"]["scale"]) == (epsilon, error, scale)
    assert window.exports.export_release(tmp_path / "release.py")
    script = (tmp_path / "release.py").read_text()
    assert f"'scale': {scale!r}" in script and f"'error_one_group': {error!r}" in script
