"""A newcomer's first count: File > New, + Statistic > Count, OK with the dialog's own values.
Under the noise-aware theorem the count gets ε_i 1.0000133 under a global ε of 1 (δ_g pays for
the difference); the window says why where the user looks - the ε_i cell's tooltip and the
sentence beneath the Spent bar - and says nothing of the kind once no ε_i is above ε_g."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest

from dpplanner.model import Kind
from keys import cell, open_cell, retype, wait_idle


def add_count_as_offered(window) -> None:
    """+ Statistic > Count, then Enter in the dialog (OK with its own values)."""
    panel = window.statistics_panel
    QTimer.singleShot(0, lambda: QTest.keyClick(panel.add_dialog, Qt.Key.Key_Return))
    next(a for a in panel.add_menu.actions() if a.text() == Kind.COUNT.label).trigger()


def epsilon_tip(window, row: int) -> str:
    return window.statistics_panel.model.data(cell(window, row, "epsilon"), Qt.ItemDataRole.ToolTipRole)


def test_a_count_above_the_global_epsilon_says_why(qtbot, shown):
    window = shown
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)      # File > New
    wait_idle(qtbot, window)
    add_count_as_offered(window)
    wait_idle(qtbot, window)
    budget = window.plan.budget
    assert (budget.epsilon, len(window.plan)) == (1.0, 1)
    assert window.plan[0].epsilon > 1.0            # sound: δ_g certifies ε 1 for this Laplace
    note = window.budget_panel.assumption.text()
    assert "Why an ε_i (1.0001) can be above the global ε (1): noise-aware (PLD) composition" in note
    assert "lets the global δ" in note and "no more than its budget" in note
    assert window.budget_panel.assumption.isVisible()
    tip = epsilon_tip(window, 0)
    assert "This ε_i is above the global ε (1). That is not in itself an overspend" in tip

    add_count_as_offered(window)                   # two counts share ε 1: each ε_i below it
    wait_idle(qtbot, window)
    assert len(window.plan) == 2 and max(s.epsilon for s in window.plan) < 1.0
    assert "above the global ε" not in window.budget_panel.assumption.text()
    assert "above the global ε" not in epsilon_tip(window, 0)


def test_a_new_plan_says_nothing_is_spent_yet(qtbot, shown):
    window = shown
    QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)      # File > New
    wait_idle(qtbot, window)
    assert window.budget_panel.meter.format() == "— (nothing spent: no statistics yet)"
    add_count_as_offered(window)
    wait_idle(qtbot, window)
    assert window.budget_panel.meter.format().startswith("ε 1.0000 of 1 (100.0%)")


def test_the_sentence_is_of_the_state_the_total_is_of(qtbot, window):
    """Redistribution off, ε_i 1.5 typed (over budget), Undo, Redo: Redo repaints the bar with the
    total before it (within budget) until its own comes; the sentence read after every turn never
    says that plan's ε_i 1.5 stays within the budget."""
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "1.5")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 1.5 and window.budget_panel.over_reason.isVisible()
    seen: list[str] = []
    timer = QTimer(interval=0)
    timer.timeout.connect(lambda: seen.append(window.budget_panel.assumption.text()))
    timer.start()
    for action in (window.undo_action, window.redo_action):
        QTest.keySequence(window, action.shortcut())
        wait_idle(qtbot, window)
    timer.stop()
    assert window.plan[0].epsilon == 1.5 and seen
    assert not [text for text in seen if "Why an ε_i" in text]
