"""The Statistic tab's "Error ±" field shows an error bound the user can edit: a large error is
shown without thousands commas (census-tables' median rent, 3903), so changing its digits gives
a number the field takes ("3,500" was refused as not a number, with advice about decimals)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.model import files
from dpplanner.model.examples import example_path
from keys import click_row, field, retype, show_tab, wait_idle


def target_error_field(qtbot, window, example: str, row: int, redistribute=None):
    """``example`` opened (redistribution switched by its checkbox to ``redistribute`` unless None),
    the Statistic tab shown on ``row`` clicked in the table: its "Target error" field."""
    window.document.load(files.load_plan(example_path(example)), None, example)
    wait_idle(qtbot, window)
    if redistribute is not None and window.plan.budget.redistribute != redistribute:
        QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
        wait_idle(qtbot, window)
    show_tab(window, "Statistic")
    click_row(window, row)
    wait_idle(qtbot, window)
    return field(window.statistics_panel.inspector, "Target error")


@pytest.mark.parametrize("redistribute", [True, False])
def test_the_digits_of_a_large_error_shown_can_be_edited(qtbot, shown, redistribute):
    window = shown
    error = target_error_field(qtbot, window, "census-tables", 2, redistribute)
    shown_before = error.text()
    assert shown_before.isdigit() and int(shown_before) >= 1000, shown_before     # (no comma)
    error.setFocus()
    QTest.keyClick(error, Qt.Key.Key_End)
    for _ in range(3):
        QTest.keyClick(error, Qt.Key.Key_Backspace)
    QTest.keyClicks(error, "500")
    QTest.keyClick(error, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[2].target_error == float(shown_before[:-3] + "500")
    assert error.text() == f"{window.plan[2].target_error:g}"


def test_the_error_bound_shown_typed_again_becomes_the_target(qtbot, shown):
    """Typing over the error bound shown with the same number is the user's choice of that error:
    it is stored as the statistic's target (it was dropped as "nothing new typed")."""
    window = shown
    error = target_error_field(qtbot, window, "census-tables", 2)
    shown_before = error.text()
    assert window.plan[2].target_error is None
    error.setFocus()
    retype(error, shown_before)
    QTest.keyClick(error, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[2].target_error == float(shown_before)


@pytest.mark.parametrize("redistribute", [True, False])
def test_a_target_error_typed_after_a_refused_one_is_taken_on_its_own(qtbot, shown, redistribute):
    """A target error the plan cannot reach is refused; the next one typed in the same field is
    stored (or refused with its own reason): the refused value does not wait beside it."""
    window = shown
    error = target_error_field(qtbot, window, "psi-survey", 1, redistribute)
    inspector = window.statistics_panel.inspector
    with qtbot.capture_exceptions() as caught:
        for typed in ("1e-9", "2"):
            error.setFocus()
            retype(error, typed)
            QTest.keyClick(error, Qt.Key.Key_Return)
            wait_idle(qtbot, window)
            if typed == "1e-9":
                assert window.plan[1].target_error is None
                assert "1e-09" in inspector.numbers["error"].message.text()
    assert not caught, caught
    assert window.plan[1].target_error == 2.0 and window.plan[1].held
    assert window.editor.undo_stack.undoText() == f"Set error of {window.plan[1].name!r}"
    assert not inspector.numbers["error"].message.isVisible()


def test_a_key_typed_and_erased_in_the_error_shown_changes_nothing(qtbot, shown):
    """A digit typed and erased again, then Tab: the error bound shown is left as it was; it is
    not made the statistic's target (the plan is changed only by what is typed and confirmed)."""
    window = shown
    error = target_error_field(qtbot, window, "census-tables", 2)
    shown_before, undo_steps = error.text(), window.editor.undo_stack.count()
    error.setFocus()
    QTest.keyClick(error, Qt.Key.Key_End)
    QTest.keyClicks(error, "5")
    QTest.keyClick(error, Qt.Key.Key_Backspace)
    QTest.keyClick(error, Qt.Key.Key_Tab)
    wait_idle(qtbot, window)
    assert window.plan[2].target_error is None and not window.plan[2].held
    assert window.editor.undo_stack.count() == undo_steps and error.text() == shown_before
