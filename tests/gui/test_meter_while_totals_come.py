"""The Spent bar between a budget change and its totals (read after every turn of the event loop):
greyed with no verdict - never the total of the budget before judged against the new one (a lower
ε_g with redistribution on flashed a red "over budget", a false reason and "Redistribute to fit");
red as soon as the new totals say the plan overspends."""

from __future__ import annotations

import re

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest

from dpplanner import engine
from dpplanner.gui.evaluation import COMPUTING
from dpplanner.gui.cost_curves import LATE_OPACITY
from dpplanner.gui.spent_meter import FIT, OVER_BUDGET, PENDING
from held_totals import overspend_while_totals_wait
from keys import field, open_cell, retype, type_into, wait_idle


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


def _number(text: str, before: str) -> str:
    """The number shown after ``before`` in ``text`` ("" if none)."""
    found = re.search(re.escape(before) + r"([0-9.]+)", text)
    return found.group(1) if found else ""


def _load(window, name: str, small_plan) -> None:
    from dpplanner.model import files
    from dpplanner.model.examples import example_path

    plan = (small_plan(theorem="pld", redistribute=False) if name == "small" else
            files.load_plan(example_path(name)))
    window.document.load(plan, None, name)


@pytest.mark.parametrize("name, row, typed", [("small", 0, ("0.2", "0.15")),
                                              ("psi-survey", 1, ("0.05", "0.06"))])
def test_the_bar_and_its_sentence_never_read_other_totals_than_the_table(
        qtbot, make_window, small_plan, name, row, typed):
    """ε_i typed in the table (under the noise-aware theorem; small: redistribution off): the Totals
    table takes the new totals a turn before the Spent bar does; meanwhile the bar's total and the
    sentence's "spends ε X under optimal" (the plan before's) are greyed, never shown beside the
    table's new ones as the plan's (they were, un-greyed, for up to ~0.5 s). Only what is about to
    change is greyed: psi-survey's bar reads "ε 1.0000 of 1" before and after, and stays as it is
    (it flashed grey on every edit)."""
    window = make_window()
    _load(window, name, small_plan)
    window.show()
    wait_idle(qtbot, window)
    assert window.plan.budget.theorem == "pld"
    # (totals late by a quarter of a second grey the bar with the table: a slow machine would
    # pass without the bar's own greying; here that moment never comes)
    window.evaluation._stale_delay.setInterval(10 ** 8)
    panel, table = window.budget_panel, window.results_panel
    labels = {engine.theorem(name).label: name for name in engine.THEOREMS}

    def sample() -> tuple:
        """(the Totals table greyed, its noise-aware total, the bar's, the bar enabled, its generic
        total, the sentence's, the sentence enabled, the bar's text)."""
        note = panel.assumption.text()
        under = re.search(r"under (.+) composition\.", note)
        generic = labels[under.group(1)] if under else None
        return (table._stale, table.text_at("pld", "total ε"), _number(panel.meter.format(), "ε "),
                panel.meter.isEnabled(), table.text_at(generic, "total ε") if generic else "",
                _number(note, "spends ε "), panel.assumption.isEnabled(), panel.meter.format())

    seen = []
    timer = QTimer(interval=0)
    timer.timeout.connect(lambda: seen.append(sample()))
    timer.start()
    for text in typed:
        editor = open_cell(window, row, "epsilon")
        retype(editor, text)
        QTest.keyClick(editor, Qt.Key.Key_Return)
        wait_idle(qtbot, window)
    timer.stop()
    assert window.plan[row].epsilon == float(typed[-1])
    seen.append(sample())
    for i, (stale, table_total, bar_total, bar_on, table_generic, note_total, note_on, bar) in enumerate(seen):
        if not bar_on and bar != PENDING:       # greyed with a total: the next one shown differs
            assert next(s[7] for s in seen[i:] if s[3]) != bar, seen
        if stale:
            continue
        if bar_total != table_total:
            assert not bar_on, seen
        if note_total != table_generic:
            assert not note_on, seen
    # read while the table showed totals the bar or the sentence had still to take (else the test
    # proves nothing)
    assert any(not s[0] and (s[1] != s[2] or s[4] != s[5]) for s in seen), seen
    last = seen[-1]
    assert last[1:7] == (last[2], last[2], True, last[5], last[5], True), seen


def test_the_red_reason_never_gives_the_plan_before_s_excess_beside_the_new_totals(qtbot, window):
    """Over budget, redistribution off, ε_i typed lower (still over): the red "over budget by"
    beneath the bar follows with the bar, a turn after the Totals table; meanwhile the excess of
    the plan before is greyed, never shown beside the table's new total as the plan's."""
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    window.evaluation._stale_delay.setInterval(10 ** 8)     # (as above: only the meter may grey it)
    panel, table, theorem = window.budget_panel, window.results_panel, window.plan.budget.theorem
    for text in ("5", "4"):
        editor = open_cell(window, 0, "epsilon")
        retype(editor, text)
        QTest.keyClick(editor, Qt.Key.Key_Return)
        wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 4 and panel.over_reason.isVisible()
    final = panel.over_reason.text()
    seen = []
    timer = QTimer(interval=0)
    timer.timeout.connect(lambda: seen.append((table.text_at(theorem, "total ε"), panel.over_reason.text(),
                                               panel.over_reason.isVisible() and panel.over_reason.isEnabled())))
    timer.start()
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "3")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    timer.stop()
    new_total = table.text_at(theorem, "total ε")
    assert window.plan[0].epsilon == 3 and panel.over_reason.text() != final
    assert any(total == new_total and reason == final for total, reason, _on in seen), seen    # (read between)
    assert not any(total == new_total and reason == final and on for total, reason, on in seen), seen
