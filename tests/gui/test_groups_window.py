"""Issue 26 in the window: the unit of privacy typed in the Budget panel, a statistic's grouping
typed in the inspector and in the + Statistic dialog, each value kept exactly or refused with the
reason at its field (the plan unchanged); the table shows one group's error."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QLineEdit, QWidget

from dpplanner.gui import formatting
from dpplanner.gui.add_dialog import AddStatisticDialog
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import Budget, Kind
from dpplanner.release import script_plan
from keys import field, handle_posted_events, wait_idle


@pytest.fixture
def window(statistic_tab_window):
    return statistic_tab_window


def type_into(edit: QLineEdit, text: str, key=Qt.Key.Key_Return) -> None:
    edit.setFocus()
    edit.selectAll()
    QTest.keyClick(edit, Qt.Key.Key_Delete)
    QTest.keyClicks(edit, text)
    QTest.keyClick(edit, key)
    handle_posted_events()


def problem(root: QWidget, name: str) -> str:
    labels = [w for w in root.findChildren(QWidget) if w.accessibleName() == f"{name}: problem"]
    assert len(labels) == 1
    return labels[0].text() if labels[0].isVisible() else ""


def test_the_unit_of_privacy_is_typed_in_the_budget_panel_and_moves_every_error(qtbot, window):
    plan, panel = window.editor.plan, window.budget_panel
    before = plan.privacy(0).error                          # count a, one row per person
    type_into(field(panel, "Unit of privacy"), "household")
    type_into(field(panel, "Rows per individual"), "4")
    wait_idle(qtbot, window)
    assert (plan.budget.unit, plan.budget.contributions) == ("household", 4)
    # a count moves by c = 4 when a household of four rows is added: 4 times the Laplace noise
    assert plan.privacy(0).error == pytest.approx(4 * before, rel=1e-12)
    window.statistics_panel.select_row(0)
    moves = window.statistics_panel.inspector.moves.text()
    assert "Protects one household, who contributes at most c = 4 rows" in moves
    assert "4 rows by 4" in moves                           # the reason the error moved
    # not a whole number: refused at the field, typed text kept, the plan unchanged
    type_into(field(panel, "Rows per individual"), "2.5")
    assert "2.5" == field(panel, "Rows per individual").text()
    assert "whole number" in problem(panel, "Rows per individual")
    assert plan.budget.contributions == 4


def test_a_grouping_typed_in_the_inspector_asks_for_g_then_costs_one_cell(qtbot, window):
    plan = window.editor.plan
    window.statistics_panel.select_row(0)                   # count a
    inspector = window.statistics_panel.inspector
    eps, error = plan[0].epsilon, plan.privacy(0).error
    type_into(field(inspector, "Grouped by"), "region")
    # g is needed first: asked for at its field, nothing changed yet
    assert plan[0].group_by == ""
    assert "number of groups g" in problem(inspector, "Number of groups")
    type_into(field(inspector, "Number of groups"), "50")
    wait_idle(qtbot, window)
    s = plan[0]
    assert (s.group_by, s.groups, s.epsilon) == ("region", 50, eps)
    field(inspector, "One group per individual", QCheckBox).click()
    wait_idle(qtbot, window)
    assert plan[0].one_group_each
    p = plan.privacy(0)
    # one cell moves by 1 (L0 = 1): each group's error is the ungrouped count's error
    assert p.cell_error == pytest.approx(error, rel=1e-12)
    assert p.error > p.cell_error                           # all 50 groups at once: wider
    model = window.statistics_panel.model
    shown = model.index(0, COLUMN_INDEX["error"]).data()
    assert shown.endswith("per group")
    assert model.index(0, COLUMN_INDEX["error"]).data(Qt.ItemDataRole.EditRole) == p.cell_error
    assert "Error in one group" in inspector.moves.text()
    # the shares plot's read-out gives the same error as the table: one group's, said so
    window.plots.setCurrentWidget(window.shares_plot)          # the "Shares & errors" tab
    readout = window.shares_plot.readout_at(1)
    assert f"{formatting.error_with_units(p.cell_error, p.units)} per group" in readout, readout


def test_hostile_grouping_values_are_refused_at_their_field_and_the_plan_is_unchanged(qtbot, window):
    plan = window.editor.plan
    window.statistics_panel.select_row(0)
    inspector = window.statistics_panel.inspector
    type_into(field(inspector, "Grouped by"), "region")
    type_into(field(inspector, "Number of groups"), "5")
    wait_idle(qtbot, window)
    before = plan.statistics
    # L0 = 3 with c = 1: each group needs a row of the individual
    type_into(field(inspector, "Groups per individual"), "3")
    assert "more than the c = 1 rows" in problem(inspector, "Groups per individual")
    assert field(inspector, "Groups per individual").text() == "3"
    type_into(field(inspector, "Number of groups"), "0")
    assert "number of groups g" in problem(inspector, "Number of groups")
    type_into(field(inspector, "Rows per individual in one group"), "-1")
    assert problem(inspector, "Rows per individual in one group")
    assert plan.statistics == before


def test_a_target_error_of_a_grouped_statistic_is_one_groups(qtbot, window):
    plan = window.editor.plan
    window.statistics_panel.select_row(0)
    inspector = window.statistics_panel.inspector
    type_into(field(inspector, "Grouped by"), "region")
    type_into(field(inspector, "Number of groups"), "50")
    wait_idle(qtbot, window)
    type_into(field(inspector, "Target error"), "40")
    wait_idle(qtbot, window)
    s, p = plan[0], plan.privacy(0)
    assert s.target_error == 40 and s.held
    assert p.cell_error <= 40 and p.cell_error == pytest.approx(40, rel=1e-6)


def test_the_add_dialog_takes_a_grouping_by_keyboard(qtbot):
    dialog = AddStatisticDialog(Kind.COUNT, Budget(contributions=4), name="people")
    qtbot.addWidget(dialog)
    dialog.show()
    assert not field(dialog, "Grouped by").text()
    assert not [e for e in dialog.findChildren(QLineEdit)
                if e.accessibleName() == "Number of groups" and e.isVisible()]
    type_into(field(dialog, "Grouped by"), "age group × sex", Qt.Key.Key_Tab)
    type_into(field(dialog, "Group keys"), "0-17 f, 0-17 m, 18-64 f, 18-64 m, 65+ f, 65+ m", Qt.Key.Key_Tab)
    type_into(field(dialog, "Rows per individual in one group"), "2", Qt.Key.Key_Tab)
    stat = dialog.statistic()
    assert (stat.group_by, stat.max_rows, stat.max_groups) == ("age group × sex", 2, None)
    assert stat.group_keys.count(",") == 5
    # a refusal shows at its field and the dialog keeps what was typed
    type_into(field(dialog, "Groups per individual"), "9", Qt.Key.Key_Tab)
    QTest.keyClick(field(dialog, "Groups per individual"), Qt.Key.Key_Return)     # OK
    assert dialog.isVisible()
    assert "more than the c = 4 rows" in problem(dialog, "Groups per individual")
    assert field(dialog, "Grouped by").text() == "age group × sex"


def test_the_add_dialog_widens_to_its_grouping_rows_and_asks_for_the_smallest_groups_n(qtbot):
    dialog = AddStatisticDialog(Kind.MEAN, Budget(contributions=4, dataset_size=100_000), name="income")
    qtbot.addWidget(dialog)
    dialog.show()
    n_label = dialog._form.labelForField(dialog.fields["n"])
    assert n_label.text() == "Records n"
    type_into(field(dialog, "Grouped by"), "region", Qt.Key.Key_Tab)
    handle_posted_events()
    # every box's text shows whole once the grouping's rows appear
    for box in dialog.findChildren(QCheckBox):
        assert box.isVisible() and box.width() >= box.sizeHint().width(), box.text()
    # a mean by group divides each group's sum by its size: n is the smallest group's
    assert n_label.text() == "Smallest group's n"
    assert "smallest" in field(dialog, "Records").placeholderText()
    type_into(field(dialog, "Grouped by"), "", Qt.Key.Key_Tab)
    assert n_label.text() == "Records n"


def test_l0_says_where_its_default_comes_from(qtbot, window):
    plan = window.editor.plan
    window.statistics_panel.select_row(0)
    inspector = window.statistics_panel.inspector
    type_into(field(inspector, "Grouped by"), "region")
    type_into(field(inspector, "Number of groups"), "50")
    wait_idle(qtbot, window)
    field(inspector, "One group per individual", QCheckBox).click()
    wait_idle(qtbot, window)
    assert plan[0].one_group_each
    assert field(inspector, "Groups per individual").placeholderText() == "1 (one group per person)"


def test_the_inspector_asks_a_mean_by_group_for_its_smallest_group(qtbot, window):
    plan = window.editor.plan
    row = next(i for i, s in enumerate(plan) if s.kind is Kind.MEAN)
    window.statistics_panel.select_row(row)
    inspector = window.statistics_panel.inspector
    label = inspector.form.labelForField(inspector.numbers["n"])
    assert label.text() == "Over (records)"
    type_into(field(inspector, "Grouped by"), "region")
    type_into(field(inspector, "Number of groups"), "5")
    # the mean has no n of its own: asked for, by the name it now has
    assert plan[row].group_by == ""
    assert label.text() == "Smallest group (records)"
    assert "smallest group's size n" in problem(inspector, "Records")
    type_into(field(inspector, "Records"), "200")
    wait_idle(qtbot, window)
    assert (plan[row].group_by, plan[row].groups, plan[row].n) == ("region", 5, 200)
    assert label.text() == "Smallest group (records)"


def test_a_private_selection_shows_the_threshold_the_release_script_uses(qtbot, window):
    plan = window.editor.plan
    window.statistics_panel.select_row(0)                   # count a, with OpenDP's noise
    inspector = window.statistics_panel.inspector
    type_into(field(inspector, "Grouped by"), "occupation")
    field(inspector, "Select the groups privately", QCheckBox).click()
    wait_idle(qtbot, window)
    assert plan[0].select_groups and plan.privacy(0).problem is None
    chosen = script_plan(plan)["statistics"][0]["selection"]
    assert chosen["threshold"] == plan.privacy(0).selection.threshold
    text = inspector.moves.text()
    assert f"Groups with fewer than about {chosen['threshold']:,} persons will be suppressed" in text
    assert f"threshold τ = {chosen['threshold']} " in text and "discrete Laplace" in text
