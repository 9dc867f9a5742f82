"""Typing while the worker redistributes the previous edit: the new edit lands on the statistic
the user typed into, and text being typed is never overwritten by a result landing.

The redistribution is held back by a gate (conftest.py), so "while it runs" is certain, not a race."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from keys import field, open_cell, retype, type_into, wait_idle


def names(window) -> list[str]:
    return [s.name for s in window.plan.statistics]


def test_an_edit_typed_while_a_removal_redistributes_lands_on_the_row_typed_into(qtbot, window, gate):
    assert names(window) == ["count a", "mean b", "hist c"]
    window.statistics_panel.select_row(0)
    assert window.statistics_panel.remove_selected()
    assert window.editor.is_redistributing() and len(window.plan) == 3   # the table still shows a
    editor = open_cell(window, 2, "name")                                  # row 3: "hist c"
    retype(editor, "histogram c")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["mean b", "histogram c"]


def test_an_edit_of_a_row_the_waiting_edit_removed_is_refused_with_the_reason(qtbot, window, gate):
    window.statistics_panel.select_row(0)
    assert window.statistics_panel.remove_selected()
    editor = open_cell(window, 0, "name")                                  # "count a", going away
    retype(editor, "renamed")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["mean b", "hist c"]
    assert "statistic 1 was removed or replaced" in window.status.label.text()


def test_an_edit_typed_while_a_pin_redistributes_keeps_the_pin(qtbot, window, gate):
    """The name edit of row 1 must not write back the ε_i it had before its error was pinned."""
    editor = open_cell(window, 1, "epsilon")
    retype(editor, "0.125")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert window.editor.is_redistributing()
    editor = open_cell(window, 1, "name")
    retype(editor, "mean of b")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    gate.set()
    wait_idle(qtbot, window)
    assert window.plan[1].name == "mean of b"
    assert window.plan[1].epsilon == 0.125 and window.plan[1].held


def test_a_result_landing_does_not_overwrite_text_being_typed(qtbot, window, gate):
    type_into(qtbot, field(window, "Global epsilon"), "0.9")     # redistributes every row
    editor = open_cell(window, 1, "name")
    retype(editor, "half typ")
    gate.set()
    wait_idle(qtbot, window)                                # the new epsilons are in the table
    assert editor.isVisible() and editor.text() == "half typ"
    QTest.keyClicks(editor, "ed")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[1].name == "half typed"
    assert window.plan.budget.epsilon == 0.9


def test_a_result_landing_does_not_undo_a_choice_in_an_open_combo(qtbot, window, gate):
    type_into(qtbot, field(window, "Global epsilon"), "0.9")
    combo = open_cell(window, 0, "mechanism")
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)                  # Laplace -> Gaussian, chosen by key
    chosen = combo.currentData()
    gate.set()
    wait_idle(qtbot, window)
    assert combo.currentData() == chosen
    QTest.keyClick(combo, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[0].mechanism.value == chosen


def test_a_statistic_added_while_a_removal_redistributes_goes_where_it_was_asked(qtbot, window, gate):
    from dpplanner.model import Kind, Statistic

    window.statistics_panel.select_row(2)
    assert window.statistics_panel.remove_selected()            # "hist c", the last row, waits
    assert window.editor.insert_statistic(3, Statistic("at the end", kind=Kind.COUNT, epsilon=0.1))
    assert window.editor.insert_statistic(1, Statistic("second", kind=Kind.COUNT, epsilon=0.1))
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["count a", "second", "mean b", "at the end"]


def spent(window) -> float:
    return sum(s.epsilon * s.repetitions for s in window.plan.statistics)


def test_a_refused_edit_leaves_the_waiting_redistribution_running(qtbot, window, gate):
    """δ_g = 0.01 is refused (n = 1000); the removal before it is still rebalanced, so the two
    statistics left spend the whole budget (basic composition: the sum of ε_i)."""
    window.statistics_panel.select_row(0)
    assert window.statistics_panel.remove_selected()
    edit = field(window, "Global delta")
    type_into(qtbot, edit, "0.01")
    assert "delta must be below 1/n" in edit.accessibleDescription()
    assert window.editor.is_redistributing()
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["mean b", "hist c"] and window.plan.budget.delta == 1e-6
    assert spent(window) == pytest.approx(1.0, rel=1e-6)


def test_a_move_typed_after_a_removal_still_redistributes_the_removal(qtbot, window, gate):
    """A move redistributes nothing itself, but it makes the waiting removal, which must still be
    rebalanced."""
    window.statistics_panel.select_row(0)
    assert window.statistics_panel.remove_selected()
    window.statistics_panel.select_row(2)                  # "hist c" on screen
    assert window.statistics_panel.move_selected(-1)
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["hist c", "mean b"]
    assert spent(window) == pytest.approx(1.0, rel=1e-6)


def test_a_refusal_while_a_removal_waits_is_shown_at_the_row_typed_into(qtbot, window, gate):
    """The table still shows the plan before the waiting removal: a refused edit of "hist c" (row 3
    on screen, row 2 once the removal is made) is reported, and the cursor put, at row 3."""
    window.statistics_panel.select_row(0)
    assert window.statistics_panel.remove_selected()
    combo = open_cell(window, 2, "kind")                         # "hist c"
    combo.setFocus()
    QTest.keyClick(combo, Qt.Key.Key_Down)                       # histogram -> quantile: no bounds
    QTest.keyClick(combo, Qt.Key.Key_Return)
    refusal = window.editor.last_refusal
    assert refusal is not None and refusal.row == 2
    assert window.statistics_panel.refusal.text().startswith("Not changed (row 3)")
    assert window.statistics_panel.view.currentIndex().row() == 2
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["mean b", "hist c"] and window.plan[1].kind.value == "histogram"


def test_redo_is_off_while_an_edit_waits_so_the_edit_is_never_dropped(qtbot, window, gate):
    """A new edit ends the redo history once it is made; Redo meanwhile would redo the undone
    step and silently drop the edit the user just typed."""
    gate.set()
    window.statistics_panel.select_row(0)
    assert window.statistics_panel.remove_selected()
    wait_idle(qtbot, window)
    QTest.keySequence(window, window.undo_action.shortcut())
    wait_idle(qtbot, window)
    assert names(window) == ["count a", "mean b", "hist c"] and window.redo_action.isEnabled()
    gate.clear()
    editor = open_cell(window, 1, "epsilon")
    retype(editor, "0.125")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert window.editor.is_redistributing()
    assert not window.redo_action.isEnabled()
    QTest.keySequence(window, window.redo_action.shortcut())       # does nothing
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["count a", "mean b", "hist c"]
    assert window.plan[1].epsilon == 0.125 and window.plan[1].held
    assert not window.redo_action.isEnabled()                      # the edit ended the redo history
