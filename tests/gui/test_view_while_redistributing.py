"""The cost plot draws the view the user asked for last, also when the view changed while a
redistribution was out (the job evaluates its answer for the view it was sent with): after
Edit > Redistribute now, a row clicked in "repeat one query" mode, or the mode switched, is the one
drawn once the answer lands, even when the redistribution moved nothing.

The redistribution is held back by a gate (conftest.py), so "while it is out" is certain."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from dpplanner.compute import jobs
from dpplanner.engine.types import CancelToken
from dpplanner.gui.editing import ALLOCATE
from dpplanner.model.requests import CurveView
from keys import field, handle_posted_events, type_into, wait_idle

CTRL = Qt.KeyboardModifier.ControlModifier


def click(widget, pos: QPoint) -> None:
    QTest.mouseClick(widget, Qt.MouseButton.LeftButton, pos=pos)
    handle_posted_events()


def click_repeat(window) -> None:
    """The "repeat one query" radio button, on its indicator (its label may end left of centre)."""
    button = window.cost_plot.repeat_button
    click(button, QPoint(6, button.height() // 2))
    assert window.cost_plot.mode() == "repeat"


def click_row(window, row: int) -> None:
    view = window.statistics_panel.view
    click(view.viewport(), view.visualRect(window.statistics_panel.model.index(row, 0)).center())


def redistribute_now(window) -> None:
    """Edit > Redistribute now, by its shortcut."""
    window.activateWindow()
    QTest.keyClick(window, Qt.Key.Key_R, CTRL)
    handle_posted_events()


def drawn(window) -> dict:
    return {name: np.asarray(values) for name, values in window.cost_plot._upper.items()}


def expected(window, mode: str, row: int) -> dict:
    """The curves of the plan as it is, for the view asked for, computed afresh."""
    plot, plan = window.cost_plot, window.plan
    view = CurveView(mode, plot.k_limit(), window.settings.get("curve_points"), row)
    result = jobs.evaluate_plan_here(jobs.PlanEvaluation(plan.budget, plan.statistics, view),
                                     CancelToken(), lambda _f: None)
    return {name: np.asarray(values, dtype=float) for name, values in result.curve.upper.items()}


def same(a: dict, b: dict) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[n], b[n], equal_nan=True) for n in a)


def balanced(qtbot, window, gate) -> None:
    """The plan redistributed once, so the next Redistribute now moves no ε_i."""
    gate.set()
    redistribute_now(window)
    wait_idle(qtbot, window)
    gate.clear()


def test_a_row_clicked_while_redistribute_now_is_out_is_the_one_repeated(qtbot, window, gate,
                                                                        monkeypatch):
    balanced(qtbot, window, gate)
    click_row(window, 1)                                    # "mean b"
    click_repeat(window)
    gate.set()
    wait_idle(qtbot, window)
    gate.clear()
    epsilons = [s.epsilon for s in window.plan.statistics]
    applied = []                    # every state a result was offered to the screen for
    apply = window.evaluation._apply
    monkeypatch.setattr(window.evaluation, "_apply",
                        lambda result, state: (applied.append(state[2]), apply(result, state)))
    redistribute_now(window)
    assert window.editor.is_redistributing()
    click_row(window, 0)                                    # "count a", at once
    # its answer lands: the evaluation it goes on to compute (for "mean b") is stopped, not awaited
    allocating = []
    window.editor.redistributing.connect(
        lambda _on: allocating.append(window.controller.is_busy(ALLOCATE)))
    gate.set()
    wait_idle(qtbot, window)
    assert allocating == [False]
    assert [s.epsilon for s in window.plan.statistics] == epsilons      # (nothing moved)
    assert "count a" in window.cost_plot.repeat_button.text()
    assert window.evaluation.result_is_current(window.evaluation.last_result)
    assert same(drawn(window), expected(window, "repeat", 0))
    assert not same(drawn(window), expected(window, "repeat", 1))      # (the rows differ)
    # the redistribution's evaluation for "mean b" was never followed: only "count a"'s came
    assert [view.repeat_row for view in applied] == [0]


def test_the_mode_switched_while_redistribute_now_is_out_is_the_one_drawn(qtbot, window, gate):
    balanced(qtbot, window, gate)
    click_row(window, 1)
    redistribute_now(window)
    assert window.editor.is_redistributing()
    click_repeat(window)
    gate.set()
    wait_idle(qtbot, window)
    assert window.evaluation.result_is_current(window.evaluation.last_result)
    assert same(drawn(window), expected(window, "repeat", 1))


def test_a_row_clicked_in_prefix_mode_while_an_edit_is_out_costs_no_second_evaluation(
        qtbot, window, gate, monkeypatch):
    """The prefix curve repeats no row: the redistribution's own evaluation is still the one
    wanted, and the only one computed."""
    calls = []

    def counted(request, cancel, progress, **kwargs):
        calls.append(request)
        return evaluate(request, cancel, progress, **kwargs)

    evaluate = jobs.evaluate
    monkeypatch.setattr(jobs, "evaluate", counted)          # (the allocation's evaluation)
    window.evaluation.evaluate_fn = counted                  # (the window's own)
    click_row(window, 1)
    type_into(qtbot, field(window, "Global epsilon"), "0.8")    # every free ε_i moves
    assert window.editor.is_redistributing()
    click_row(window, 2)
    gate.set()
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 0.8
    assert len(calls) == 1
    assert same(drawn(window), expected(window, "prefix", 0))


def test_a_result_for_a_state_the_window_no_longer_shows_is_not_drawn(qtbot, window):
    """The last guard: a result reaching the screen for another plan or view than the window's
    (say, a plan that took a state without an event) is not drawn; the wanted one is computed."""
    evaluation = window.evaluation
    shown, before = evaluation.last_result, drawn(window)
    assert evaluation.view().mode == "prefix"
    another_view = CurveView("repeat", window.cost_plot.k_limit(), window.settings.get("curve_points"), 1)
    state = (window.plan.budget, window.plan.statistics, another_view)
    other = jobs.evaluate_plan_here(jobs.PlanEvaluation(*state), CancelToken(), lambda _f: None)
    evaluation._apply(other, state)
    handle_posted_events()
    assert evaluation.last_result is shown
    assert same(drawn(window), before)
    assert evaluation.result_is_current(shown)
