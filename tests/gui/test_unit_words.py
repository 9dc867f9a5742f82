"""The window speaks of what the plan protects in the plan's own word: census-tables protects one
household, so the Budget panel's check box and the Statistic tab's grouping fields say
"household", and follow the word as it is retyped; a statistic's Records field refuses a
fraction by its own name, not as the plan's dataset size."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QComboBox, QToolButton, QWidget

from dpplanner.model.examples import example_path
from keys import click_row, field, handle_posted_events, show_tab, type_into, wait_idle


def problem(root: QWidget, name: str) -> str:
    labels = [w for w in root.findChildren(QWidget) if w.accessibleName() == f"{name}: problem"]
    assert len(labels) == 1
    return labels[0].text() if labels[0].isVisible() else ""


def test_census_tables_speaks_of_households_and_names_the_records_field(qtbot, shown):
    window = shown
    assert window.document.open_example(example_path("census-tables"), confirm=False)
    wait_idle(qtbot, window)
    panel, inspector = window.budget_panel, window.statistics_panel.inspector
    assert window.plan.budget.unit == "household"
    truncate = field(panel, "Truncate to c rows", QCheckBox)
    assert truncate.text() == "the release keeps at most c rows per household"
    assert "one protected household" in field(panel, "Rows per individual").toolTip()
    QTest.mouseClick(field(panel, "Advanced settings", QToolButton), Qt.MouseButton.LeftButton)
    neighbours = field(panel, "Neighbouring datasets", QComboBox)
    assert [neighbours.itemText(i) for i in range(neighbours.count())] == [
        "add / remove one household (all of their rows, at most c = 4)",
        "replace one household (all of their rows, at most c = 4)"]
    assert window.minimumSizeHint().width() <= 1280
    handle_posted_events()      # (laid out) the choice reads whole at 1280 px: 40 px for the arrow
    assert neighbours.fontMetrics().horizontalAdvance(neighbours.currentText()) + 40 <= neighbours.width()

    grouped = next(i for i, s in enumerate(window.plan) if s.group_by)
    click_row(window, grouped)
    show_tab(window, "Statistic")
    wait_idle(qtbot, window)
    one_each = field(inspector, "One group per individual", QCheckBox)
    assert one_each.text() == "one group per household (L0 = 1)"
    assert "per household" in inspector.moves.text() and "individual" not in inspector.moves.text()

    type_into(qtbot, field(panel, "Unit of privacy"), "firm", Qt.Key.Key_Tab)
    wait_idle(qtbot, window)
    assert window.plan.budget.unit == "firm"
    assert truncate.text() == "the release keeps at most c rows per firm"
    assert one_each.text() == "one group per firm (L0 = 1)"
    # a long word is cut in a one-line label: the window stays as narrow as it was
    type_into(qtbot, field(panel, "Unit of privacy"), "firm of the business register, as sampled in 2021",
              Qt.Key.Key_Tab)
    wait_idle(qtbot, window)
    assert truncate.text() == "the release keeps at most c rows per firm of the business re…"
    assert window.minimumSizeHint().width() <= 1280

    # an ungrouped mean: its Records field ("Over (records)") refuses 100.5 by that name
    mean = next(i for i, s in enumerate(window.plan) if s.kind.value == "mean" and not s.group_by)
    click_row(window, mean)
    wait_idle(qtbot, window)
    n_before = window.plan[mean].n
    type_into(qtbot, field(inspector, "Records"), "100.5")
    said = problem(inspector, "Records")
    assert "records n = 100.5 is not a whole number" in said and "dataset size" not in said
    assert window.plan[mean].n == n_before


def test_a_grouping_bound_is_named_with_its_capital_l(qtbot, statistic_tab_window):
    """"1,5" typed as L0: the reason names "Groups per individual L0" ("l0" before)."""
    window = statistic_tab_window
    inspector = window.statistics_panel.inspector
    click_row(window, 0)
    wait_idle(qtbot, window)
    type_into(qtbot, field(inspector, "Grouped by"), "region")
    wait_idle(qtbot, window)
    type_into(qtbot, field(inspector, "Groups per individual"), "1,5")
    said = problem(inspector, "Groups per individual")
    assert "Groups per individual L0: '1,5' is not a number" in said and "l0" not in said


def test_a_unit_typed_as_markup_reads_as_typed(qtbot, shown):
    """The unit of privacy is the plan's own text: typed as "<b>hh</b>", the tooltips and the
    Statistic tab's lines that quote it show those characters, not bold text."""
    from test_plan_text_shown_plain import as_qt_shows

    window = shown
    assert window.document.open_example(example_path("census-tables"), confirm=False)
    wait_idle(qtbot, window)
    panel, inspector = window.budget_panel, window.statistics_panel.inspector
    type_into(qtbot, field(panel, "Unit of privacy"), "<b>hh</b>", Qt.Key.Key_Tab)
    wait_idle(qtbot, window)
    assert window.plan.budget.unit == "<b>hh</b>"
    click_row(window, next(i for i, s in enumerate(window.plan) if s.group_by))
    show_tab(window, "Statistic")
    wait_idle(qtbot, window)
    tips = [field(panel, "Truncate to c rows", QCheckBox).toolTip(), field(panel, "Rows per individual").toolTip(),
            field(inspector, "One group per individual", QCheckBox).toolTip()]
    for tip in tips:
        assert "<b>hh</b>" in as_qt_shows(tip), tip
    assert inspector.moves.textFormat() == Qt.TextFormat.PlainText and "<b>hh</b>" in inspector.moves.text()
