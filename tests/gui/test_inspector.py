"""Issue 12 item 5: the statistic inspector shows and edits every assumption, typed into the real
widgets; the plan's title and description are editable; the report lists each statistic's assumptions."""

from __future__ import annotations

from html import unescape

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QComboBox, QLabel, QLineEdit, QPushButton, QWidget

from dpplanner.model import Kind, Mechanism
from dpplanner.model.report import render_report
from keys import click_row, field, open_cell, retype, wait_idle


@pytest.fixture
def window(statistic_tab_window):
    return statistic_tab_window


def type_into(edit: QLineEdit, text: str) -> None:
    edit.setFocus()
    edit.selectAll()
    QTest.keyClick(edit, Qt.Key.Key_Delete)
    QTest.keyClicks(edit, text)
    QTest.keyClick(edit, Qt.Key.Key_Return)


def choose(box: QComboBox, value: str) -> None:
    box.setCurrentIndex(box.findData(value))
    box.activated.emit(box.currentIndex())


def test_the_inspector_shows_every_assumption_of_the_selected_statistic(window):
    window.statistics_panel.select_row(1)           # mean b: income in [0, 100]
    inspector = window.statistics_panel.inspector
    assert field(inspector, "Statistic name").text() == "mean b"
    assert field(inspector, "Variable").text() == "income"
    assert field(inspector, "Lower bound").text() == "0"
    assert field(inspector, "Upper bound").text() == "100"
    assert "1,000" in field(inspector, "Records").placeholderText()     # the plan's n
    assert "mean of income" in inspector.sentence.text()
    assert not [e for e in inspector.findChildren(QLineEdit)
                if e.accessibleName() == "Number of bins" and e.isVisible()]


@pytest.mark.parametrize("name, key, text, value", [
    ("Lower bound", "lower", "-50", -50.0),
    ("Upper bound", "upper", "250.5", 250.5),
    ("Records", "n", "400", 400),
    ("Weight", "weight", "3", 3.0),
    ("Releases", "repetitions", "2", 2),
])
def test_typed_assumptions_are_stored_exactly(qtbot, window, name, key, text, value):
    window.statistics_panel.select_row(1)
    type_into(field(window.statistics_panel.inspector, name), text)
    assert getattr(window.plan[1], key) == value


def test_text_fields_and_mechanism(qtbot, window):
    window.statistics_panel.select_row(0)
    inspector = window.statistics_panel.inspector
    type_into(field(inspector, "Statistic name"), "households")
    type_into(field(inspector, "Variable"), "hh_id")
    type_into(field(inspector, "Notes"), "one per household")
    choose(field(inspector, "Noise mechanism", QComboBox), Mechanism.GAUSSIAN.value)
    s = window.plan[0]
    assert (s.name, s.variable, s.description, s.mechanism) == \
        ("households", "hh_id", "one per household", Mechanism.GAUSSIAN)


def test_count_to_mean_asks_for_the_bounds_right_there(qtbot, window):
    window.statistics_panel.select_row(0)           # count a
    inspector = window.statistics_panel.inspector
    before = window.plan.snapshot()
    choose(field(inspector, "Kind", QComboBox), Kind.MEAN.value)
    assert window.plan.snapshot() == before         # not yet: a mean needs bounds
    lower = field(inspector, "Lower bound")
    assert "needs lower bound" in lower.accessibleDescription()
    assert "type it here" in lower.accessibleDescription()
    type_into(lower, "0")
    assert window.plan.snapshot() == before
    upper = field(inspector, "Upper bound")
    assert "needs upper bound" in upper.accessibleDescription()
    type_into(upper, "120")
    s = window.plan[0]
    assert (s.kind, s.lower, s.upper) == (Kind.MEAN, 0.0, 120.0)
    window.editor.undo_stack.undo()
    assert window.plan.snapshot() == before


def test_a_target_error_typed_while_a_change_waits_for_its_bounds_joins_it(qtbot, window):
    """Count to mean waits for its bounds; a target error typed meanwhile waits with it and is
    the mean's target once the bounds are typed (it was passed on as an unknown field)."""
    click_row(window, 0)                            # count a
    inspector = window.statistics_panel.inspector
    before = window.plan.snapshot()
    choose(field(inspector, "Kind", QComboBox), Kind.MEAN.value)
    with qtbot.capture_exceptions() as caught:
        type_into(field(inspector, "Target error"), "30")
        type_into(field(inspector, "Lower bound"), "0")
        assert window.plan.snapshot() == before
        type_into(field(inspector, "Upper bound"), "120")
    assert not caught, caught
    s = window.plan[0]
    assert (s.kind, s.lower, s.upper, s.target_error, s.held) == (Kind.MEAN, 0.0, 120.0, 30.0, True)
    assert window.plan.privacy(0).error <= 30


def test_a_refused_assumption_stays_typed_with_its_reason(qtbot, window):
    window.statistics_panel.select_row(1)
    inspector = window.statistics_panel.inspector
    before = window.plan.snapshot()
    upper = field(inspector, "Upper bound")
    type_into(upper, "-5")                           # below the lower bound 0
    assert window.plan.snapshot() == before
    assert upper.text() == "-5"
    assert "must be below the upper bound -5" in upper.accessibleDescription()
    QTest.keyClick(upper, Qt.Key.Key_Escape)         # given up: the plan's bound is back
    assert upper.text() == "100" and upper.accessibleDescription() == ""
    records = field(inspector, "Records")
    type_into(records, "5000")                       # more than the plan's n = 1000
    assert "larger than the dataset size 1000" in records.accessibleDescription()


def test_typed_epsilon_and_error_in_the_inspector_pin_the_statistic(qtbot, window):
    window.statistics_panel.select_row(1)
    inspector = window.statistics_panel.inspector
    type_into(field(inspector, "Target error"), "2")
    assert window.plan[1].held and window.plan.privacy(1).error <= 2
    assert field(inspector, "Pinned", cls=QWidget).isChecked()
    type_into(field(inspector, "Statistic epsilon"), "0.3")
    assert window.plan[1].epsilon == 0.3 and window.plan[1].held


def test_a_pin_refused_with_the_redistribution_shows_at_the_inspector_field(qtbot, window):
    window.editor.set_budget(redistribute=True)
    qtbot.waitUntil(lambda: not window.editor.is_redistributing())
    window.statistics_panel.select_row(1)
    before = window.plan.snapshot()
    epsilon = field(window.statistics_panel.inspector, "Statistic epsilon")
    type_into(epsilon, "99")
    qtbot.waitUntil(lambda: not window.editor.is_redistributing())
    assert window.plan.snapshot() == before
    assert epsilon.text() == "99"
    assert epsilon.accessibleDescription().startswith("Not applied: ε_i = 99 for 'mean b' does not fit")


def test_the_plan_title_and_description_are_edited_in_their_own_dialog(qtbot, window):
    """Issue 24: the inspector held the plan's title and a one-line description as if they were
    the statistic's; they are the plan's, in File > Title and Description, on several lines."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QPlainTextEdit

    inspector = window.statistics_panel.inspector
    assert not [e for e in inspector.findChildren(QLineEdit) if "Plan" in e.accessibleName()]

    def fill() -> None:
        dialog = QApplication.activeModalWidget()
        title = field(dialog, "Plan title")
        title.setFocus()
        QTest.keyClicks(title, "Household survey 2026")
        text = field(dialog, "Plan description", QPlainTextEdit)
        text.setFocus()
        QTest.keyClicks(text, "Public-use tables.")
        QTest.keyClick(text, Qt.Key.Key_Return)
        QTest.keyClicks(text, "Second line.")
        ok = dialog.findChildren(QPushButton)
        QTest.mouseClick(next(b for b in ok if b.text().replace("&", "") == "OK"), Qt.MouseButton.LeftButton)

    QTimer.singleShot(0, fill)
    window.details_action.trigger()
    assert (window.plan.title, window.plan.description) == ("Household survey 2026",
                                                            "Public-use tables.\nSecond line.")
    window.editor.undo_stack.undo()
    assert window.plan.description == ""


def test_the_report_lists_every_statistics_assumptions(small_plan):
    html = unescape(render_report(small_plan(), totals={}, best=None, curve=None))
    assert "values in [0, 100]" in html and "over the plan's 1,000 records" in html
    assert "10 bins" in html


def test_a_pin_refused_in_the_table_is_worded_for_the_inspector_field_that_shows_the_kept_value(
        qtbot, window):
    """ε_i 99 typed in the table's cell, the Statistic tab open on that row: its ε_i field holds
    the plan's value, so the reason there is not worded as if the 99 were in it ("The plan keeps
    0.5 (Esc puts it back)" beside a field holding 0.5, marked red, Esc putting back nothing)."""
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    click_row(window, 1)
    before = window.plan.snapshot()
    kept = f"{window.plan[1].epsilon!r}"
    editor = open_cell(window, 1, "epsilon")
    retype(editor, "99")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before and window.plan.budget.redistribute
    inspector = window.statistics_panel.inspector
    epsilon = field(inspector, "Statistic epsilon")
    reason = field(inspector, "Statistic epsilon: problem", cls=QLabel).text()
    assert epsilon.text() == kept and epsilon.styleSheet() == ""      # the plan's value, unmarked
    assert reason.startswith("Not applied: ε_i = 99 for 'mean b' does not fit"), reason
    assert reason.endswith(f"The plan keeps {kept}.") and "Esc" not in reason, reason
