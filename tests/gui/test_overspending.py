"""A plan never overspends (issue 23.1): with redistribution on, quick edits made while a
redistribution is pending, in any order, then undone and redone, never leave the plan - or any
state on the undo stack - spending more than the spendable budget under its theorem.

Redistributions are held back by the ``gate`` fixture until the test lets them answer, so every
edit below is certainly made while one is pending. After every step ``assert_never_overspends``
composes the plan and every undo state anew (not with the window's numbers) and, once the window
is idle, checks that the Spent bar says in red exactly when, and why, the plan is over."""

from __future__ import annotations

import itertools

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QPalette
from PySide6.QtTest import QTest

from dpplanner.model import Budget, Kind, Plan, Statistic
from dpplanner.gui import theme
from keys import field, open_cell, reachable_states, retype, type_into, wait_idle


def spent(budget: Budget, statistics) -> float:
    return Plan(budget, statistics).total().epsilon


def assert_never_overspends(qtbot, window, when: str, *, idle: bool = False) -> None:
    for what, state in reachable_states(window):
        if state.budget.redistribute and state.statistics:
            total = spent(state.budget, state.statistics)
            assert total <= state.budget.spendable_epsilon, (
                f"{when}: {what} spends {total} with redistribution on, more than "
                f"{state.budget.spendable_epsilon}")
    if idle:
        wait_idle(qtbot, window)
        qtbot.waitUntil(lambda: window.evaluation.result_is_current(window.evaluation.last_result))
        panel = window.budget_panel
        over = spent(window.plan.budget, window.plan.statistics) > window.plan.budget.spendable_epsilon
        assert ("over budget" in panel.meter.format()) == over, (when, panel.meter.format())
        assert panel.over_reason.isVisibleTo(panel) == over, (when, panel.over_reason.text())


# -- what a user does, quickly ------------------------------------------------------------------
def global_epsilon(qtbot, window):
    type_into(qtbot, field(window, "Global epsilon"), "0.1")


def reserve(qtbot, window):
    type_into(qtbot, field(window, "Reserve"), "20")


def cell(row: int, key: str, text: str):
    def edit(qtbot, window):
        editor = open_cell(window, row, key)
        retype(editor, text)
        QTest.keyClick(editor, Qt.Key.Key_Return)
    edit.__name__ = f"{key}_{row}"
    return edit


def remove_first(qtbot, window):
    window.statistics_panel.select_row(0)
    window.statistics_panel.remove_selected()       # refused if a waiting edit removed it


def move_last_up(qtbot, window):
    window.statistics_panel.select_row(len(window.plan) - 1)
    window.statistics_panel.move_selected(-1)


def redistribution_off(qtbot, window):
    window.budget_panel.redistribute.click()


def undo(qtbot, window):
    window.undo_action.trigger()


def redo(qtbot, window):
    window.redo_action.trigger()


weight = cell(1, "weight", "3")
epsilon_i = cell(0, "epsilon", "0.05")
rename = cell(2, "name", "renamed")

REDISTRIBUTING = (global_epsilon, weight, epsilon_i, remove_first, reserve)
ANY = REDISTRIBUTING + (rename, move_last_up, redistribution_off, undo)


def walk_the_undo_stack(qtbot, window) -> None:
    """Edit > Undo to the start, then Edit > Redo to the end, checking after every step."""
    steps = 0
    while window.undo_action.isEnabled():
        window.undo_action.trigger()
        steps += 1
        assert_never_overspends(qtbot, window, f"after undo {steps}", idle=True)
    for i in range(steps):
        assert window.redo_action.isEnabled()
        window.redo_action.trigger()
        assert_never_overspends(qtbot, window, f"after redo {i + 1}", idle=True)


@pytest.mark.parametrize("first, second", list(itertools.product(REDISTRIBUTING, ANY)),
                         ids=lambda f: f.__name__)
def test_a_quick_edit_while_a_redistribution_is_pending_never_overspends(qtbot, window, gate,
                                                                        first, second):
    first(qtbot, window)
    assert window.editor.is_redistributing()
    assert_never_overspends(qtbot, window, f"after {first.__name__}")
    second(qtbot, window)
    assert_never_overspends(qtbot, window, f"after {second.__name__}")
    gate.set()
    assert_never_overspends(qtbot, window, "after the redistribution", idle=True)
    walk_the_undo_stack(qtbot, window)


def test_the_issue_case_lower_the_budget_change_a_weight_undo(qtbot, window, gate):
    """ε_g 1 -> 0.1, a weight typed before the redistribution answers, then Edit > Undo: the
    weight is taken back, the budget edit is still redistributed, and nothing ever showed or
    stacked the never-redistributed total 1.0 against 0.1."""
    global_epsilon(qtbot, window)
    weight(qtbot, window)
    assert window.plan.budget.epsilon == 1.0 and window.editor.undo_stack.count() == 0
    undo(qtbot, window)
    assert window.editor.is_redistributing()             # the budget edit, without the weight
    gate.set()
    assert_never_overspends(qtbot, window, "after the redistribution", idle=True)
    assert window.plan.budget.epsilon == 0.1 and window.plan[1].weight == 2
    assert spent(window.plan.budget, window.plan.statistics) == pytest.approx(0.1, rel=1e-6)
    assert window.editor.undo_stack.count() == 1
    walk_the_undo_stack(qtbot, window)


def test_quick_edits_are_one_undo_step_from_the_last_settled_state(qtbot, window, gate):
    global_epsilon(qtbot, window)
    weight(qtbot, window)
    rename(qtbot, window)
    gate.set()
    assert_never_overspends(qtbot, window, "after the redistribution", idle=True)
    plan = window.plan
    assert plan.budget.epsilon == 0.1 and plan[1].weight == 3 and plan[2].name == "renamed"
    stack = window.editor.undo_stack
    assert stack.count() == 1 and stack.command(0).before.budget.epsilon == 1.0
    undo(qtbot, window)
    assert window.plan.budget.epsilon == 1.0 and window.plan[2].name == "hist c"


@pytest.mark.parametrize("seed", range(6))
def test_random_quick_edits_answers_and_undos_never_overspend(qtbot, window, gate, seed):
    """Edits, Undo/Redo and redistributions answering, in a seeded random order."""
    import random

    rng = random.Random(seed)
    done = []
    for step in range(12):
        if rng.random() < 0.3:
            gate.set()
            wait_idle(qtbot, window)
            gate.clear()
            done.append("answer")
        else:
            action = rng.choice(ANY + (redo,))
            if action in (weight, epsilon_i, rename, move_last_up, remove_first) and len(window.plan) < 3:
                continue            # the cells these type into are gone
            action(qtbot, window)
            done.append(action.__name__)
        assert_never_overspends(qtbot, window, f"after {done}")
    gate.set()
    assert_never_overspends(qtbot, window, f"after {done} and the last answer", idle=True)
    walk_the_undo_stack(qtbot, window)


def pins_over_a_small_budget(window) -> None:
    """Redistribution off, pins spending 0.9 against ε_g = 0.01 (the issue's case)."""
    plan = Plan(Budget(epsilon=0.01, delta=1e-6, theorem="basic", redistribute=False, dataset_size=1000),
                [Statistic("free", kind=Kind.COUNT, epsilon=0.1),
                 *(Statistic(f"pinned {i}", kind=Kind.COUNT, epsilon=0.45, held=True) for i in range(2))])
    window.document.load(plan, None, "pins")


@pytest.mark.parametrize("then", [rename, weight, move_last_up], ids=lambda f: f.__name__)
def test_switching_redistribution_on_over_pins_is_refused_even_with_an_edit_after_it(qtbot, window, gate,
                                                                                    then):
    pins_over_a_small_budget(window)
    wait_idle(qtbot, window)
    window.budget_panel.redistribute.click()
    assert window.editor.is_redistributing()
    then(qtbot, window)                                  # within the redistribution's time
    gate.set()
    assert_never_overspends(qtbot, window, "after the answer", idle=True)
    assert not window.plan.budget.redistribute
    assert not window.budget_panel.redistribute.isChecked()
    assert "pinned statistics alone need" in window.editor.last_refusal.message
    assert "were tried together and none was made" in window.editor.last_refusal.message
    assert window.editor.undo_stack.count() == 0


def test_a_cancelled_redistribution_makes_no_edit(qtbot, window, gate):
    global_epsilon(qtbot, window)
    weight(qtbot, window)
    window.cancel_computation()
    assert not window.editor.is_redistributing()
    assert_never_overspends(qtbot, window, "after cancelling", idle=True)
    assert window.plan.budget.epsilon == 1.0 and window.plan[1].weight == 2
    assert "cancelled" in window.editor.last_refusal.message
    assert field(window, "Global epsilon").text() == "0.1"      # what was typed stays, refused
    assert "cancelled" in field(window, "Global epsilon").accessibleDescription()


def test_a_plan_opened_over_budget_says_why_at_the_spent_bar(qtbot, window, small_plan):
    plan = small_plan()
    plan.set_budget(epsilon=0.5)                         # redistribution on, 1.0 spent
    window.document.load(plan, None, "over")
    wait_idle(qtbot, window)
    panel = window.budget_panel
    qtbot.waitUntil(lambda: "over budget" in panel.meter.format())
    assert panel.meter.palette().color(QPalette.ColorRole.Highlight).name() == theme.ERROR_RED
    assert panel.over_reason.isVisibleTo(panel)
    assert "as the plan was opened" in panel.over_reason.text()
    assert panel.rebalance_button.isEnabled()
    QTest.mouseClick(panel.rebalance_button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert spent(window.plan.budget, window.plan.statistics) <= 0.5
    qtbot.waitUntil(lambda: "over budget" not in panel.meter.format())
    assert not panel.over_reason.isVisibleTo(panel) and not panel.rebalance_button.isEnabled()
    undo(qtbot, window)                                  # back to the plan as opened: said again
    qtbot.waitUntil(lambda: panel.over_reason.isVisibleTo(panel))
