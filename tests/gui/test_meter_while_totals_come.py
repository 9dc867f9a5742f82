"""The Spent bar between a budget change and its totals (read after every turn of the event loop):
greyed with no verdict - never the total of the budget before judged against the new one (a lower
ε_g with redistribution on flashed a red "over budget", a false reason and "Redistribute to fit");
red as soon as the new totals say the plan overspends."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest

from dpplanner.gui.evaluation import COMPUTING
from dpplanner.gui.plots import LATE_OPACITY
from dpplanner.gui.spent_meter import FIT, OVER_BUDGET, PENDING
from held_totals import overspend_while_totals_wait
from keys import field, type_into, wait_idle


def reading(window) -> tuple:
    """(ε_g, whether the totals shown are the plan's as it is, the bar enabled, its text, drawn
    red, the red reason shown, the button's text, the sentence beneath the bar enabled)."""
    panel, evaluation = window.budget_panel, window.evaluation
    bar = panel.meter
    current = evaluation.result_is_current(evaluation.last_result) and not panel.drawing()
    group = QPalette.ColorGroup.Active if bar.isEnabled() else QPalette.ColorGroup.Disabled
    red = bar.palette().color(group, QPalette.ColorRole.Highlight).name() == OVER_BUDGET
    return (window.plan.budget.epsilon, current, bar.isEnabled(), bar.format(), red,
            panel.over_reason.isVisible(), panel.rebalance_button.text(), panel.assumption.isEnabled())


def readings_while(qtbot, window, act) -> list[tuple]:
    seen = []
    timer = QTimer(interval=0)
    timer.timeout.connect(lambda: seen.append(reading(window)))
    timer.start()
    act()
    wait_idle(qtbot, window)
    timer.stop()
    seen.append(reading(window))
    return seen


def test_lowering_the_budget_with_redistribution_never_reads_over_budget(qtbot, window):
    assert window.plan.budget.redistribute and window.plan.budget.epsilon == 1
    seen = readings_while(qtbot, window, lambda: type_into(qtbot, field(window, "Global epsilon"), "0.5"))
    for action in (window.undo_action, window.redo_action):
        seen += readings_while(qtbot, window, lambda a=action: QTest.keySequence(window, a.shortcut()))
    assert window.plan.budget.epsilon == 0.5
    assert any(not current for _eps, current, *_rest in seen)      # (read while pending)
    for eps, current, enabled, text, red, reason, button, note in seen:
        assert not red and not reason and button != FIT and "over budget" not in text, seen
        assert enabled == current == note, seen     # greyed exactly while the totals are not the plan's
    assert "of 0.5 (100.0%)" in seen[-1][3] and seen[-1][2]


def test_a_budget_the_plan_overspends_reads_red_once_its_totals_come(qtbot, window):
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert not window.plan.budget.redistribute
    seen = readings_while(qtbot, window, lambda: type_into(qtbot, field(window, "Global epsilon"), "0.5"))
    assert window.plan.budget.epsilon == 0.5 and sum(s.epsilon for s in window.plan) == 1
    assert any(eps == 0.5 and not current for eps, current, *_rest in seen)    # (read while pending)
    for eps, current, enabled, text, red, reason, button, note in seen:
        if eps == 0.5 and not current:
            assert not enabled and not note and not red and not reason and "over budget" not in text, seen
        elif eps == 0.5:
            assert enabled and red and reason and button == FIT and "(over budget)" in text, seen
    assert seen[-1][1] and seen[-1][4]


def test_undoing_an_overspending_budget_gives_no_verdict_meanwhile(qtbot, window):
    """Back from a budget the plan overspends (redistribution off): while the restored budget's
    total is computed, neither red nor the fix ("Redistribute to fit") is offered any more."""
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    type_into(qtbot, field(window, "Global epsilon"), "0.5")
    wait_idle(qtbot, window)
    assert window.budget_panel.rebalance_button.text() == FIT
    seen = readings_while(qtbot, window, lambda: QTest.keySequence(window, window.undo_action.shortcut()))
    assert window.plan.budget.epsilon == 1
    assert any(not current for _eps, current, *_rest in seen)      # (read while pending)
    for eps, current, enabled, text, red, reason, button, note in seen:
        assert eps == 1 and not red and not reason and button != FIT, seen


def test_a_total_that_is_late_greys_the_bar_with_the_totals(qtbot, make_window, small_plan):
    """ε_i 5 typed (the plan then spends 5.75 of 1) while its totals take long: once the Totals
    table greys ("computing"), the bar greys too, with no verdict (it read "ε 1.0000 of 1
    (100.0%)", within budget, for the whole computation), and the plot's curves fade; red when
    the total comes."""
    window, release = overspend_while_totals_wait(qtbot, make_window, small_plan)
    qtbot.waitUntil(lambda: window.results_panel.status.text() == COMPUTING)
    _eps, current, enabled, text, red, reason, _button, note = reading(window)
    assert (current, enabled, text, red, reason, note) == (False, False, PENDING, False, False, False)
    curves = window.cost_plot.items.values()
    assert curves and all(item.opacity() == LATE_OPACITY for item in curves)     # faded with them
    release.set()
    wait_idle(qtbot, window)
    _eps, current, enabled, text, red, reason, button, _note = reading(window)
    assert current and enabled and red and reason and button == FIT and "(over budget)" in text
    assert all(item.opacity() == 1.0 for item in window.cost_plot.items.values())
