"""Remove and Move act on the statistic the user selected, also while an earlier edit waits for its
redistribution (the table then still shows the plan before that edit): the selection stays on the
statistic acted on, so the next key press acts on it too, and follows it once the result lands.

The redistribution is held back by a gate (conftest.py), so "while it waits" is certain."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from keys import field, handle_posted_events, type_into, wait_idle

CTRL = Qt.KeyboardModifier.ControlModifier


def names(window) -> list[str]:
    return [s.name for s in window.plan.statistics]


def selected(window) -> str:
    """The name of the statistic the table's cursor is on (as the screen shows it)."""
    return window.plan[window.statistics_panel.current_row()].name


def press(window, key, modifier=Qt.KeyboardModifier.NoModifier) -> None:
    view = window.statistics_panel.view
    view.setFocus()
    QTest.keyClick(view, key, modifier)
    handle_posted_events()


def start_waiting_edit(qtbot, window) -> None:
    """A global ε typed: every statistic is redistributed, held back by the gate."""
    type_into(qtbot, field(window, "Global epsilon"), "0.9")
    assert window.editor.is_redistributing()


def test_ctrl_up_twice_while_a_redistribution_waits_moves_the_same_statistic_twice(qtbot, window, gate):
    start_waiting_edit(qtbot, window)
    window.statistics_panel.select_row(2)                        # "hist c"
    press(window, Qt.Key.Key_Up, CTRL)
    assert selected(window) == "hist c"                          # still the one it moves
    press(window, Qt.Key.Key_Up, CTRL)
    press(window, Qt.Key.Key_Up, CTRL)                           # at the top already: nothing
    gate.set()
    wait_idle(qtbot, window)
    assert window.editor.last_refusal is None
    assert names(window) == ["hist c", "count a", "mean b"]
    assert selected(window) == "hist c"
    assert window.statistics_panel.inspector.title().endswith("hist c")


def test_delete_after_a_move_while_a_redistribution_waits_removes_the_moved_statistic(qtbot, window,
                                                                                      gate):
    start_waiting_edit(qtbot, window)
    window.statistics_panel.select_row(2)                        # "hist c"
    press(window, Qt.Key.Key_Up, CTRL)
    press(window, Qt.Key.Key_Delete)
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["count a", "mean b"]


def test_delete_twice_while_a_redistribution_waits_removes_two_statistics(qtbot, window, gate):
    """As without a waiting edit: after a removal the cursor is on the next statistic."""
    start_waiting_edit(qtbot, window)
    window.statistics_panel.select_row(0)                        # "count a"
    press(window, Qt.Key.Key_Delete)
    assert selected(window) == "mean b"
    press(window, Qt.Key.Key_Delete)
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["hist c"] and selected(window) == "hist c"
    assert window.editor.last_refusal is None


def test_after_a_removal_that_redistributes_the_cursor_goes_to_the_next_statistic(qtbot, window):
    """A move is made at once (nothing to redistribute); the removal after it redistributes, and
    the cursor goes to the next statistic, as it does while an edit waits."""
    window.statistics_panel.select_row(0)
    press(window, Qt.Key.Key_Down, CTRL)
    wait_idle(qtbot, window)
    assert names(window) == ["mean b", "count a", "hist c"] and selected(window) == "count a"
    press(window, Qt.Key.Key_Delete)
    wait_idle(qtbot, window)
    assert names(window) == ["mean b", "hist c"] and selected(window) == "hist c"
