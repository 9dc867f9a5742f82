"""A redistributing edit shows its shares before their totals: the plan takes the redistributed
epsilons as soon as the allocation has them, and the totals of that state follow from the same job.

The totals are held back by a gate on the evaluation inside the allocate job, so "before the totals"
is certain, not a race."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.compute import jobs
from dpplanner.gui.evaluation import COMPUTING
from keys import open_cell, retype, wait_idle


@pytest.fixture
def totals_gate(window, monkeypatch):
    """Every evaluation (the allocate job's, and the window's own evaluate jobs) waits until
    ``totals_gate.set()``; counts them."""
    event, real = threading.Event(), jobs.evaluate
    event.calls = []

    def held(request, cancel, progress, **kwargs):
        event.calls.append(request.epsilons)
        while not event.wait(0.01):
            cancel.check()
        return real(request, cancel, progress, **kwargs)

    monkeypatch.setattr(jobs, "evaluate", held)
    monkeypatch.setattr(window.evaluation, "evaluate_fn", held)
    yield event
    event.set()


def type_epsilon(window, row: int, text: str) -> None:
    editor = open_cell(window, row, "epsilon")
    retype(editor, text)
    QTest.keyClick(editor, Qt.Key.Key_Return)


def test_the_table_shows_the_shares_while_their_totals_are_computed(qtbot, window, totals_gate):
    shown = window.evaluation.last_result
    before = [s.epsilon for s in window.plan.statistics]
    type_epsilon(window, 1, "0.125")
    qtbot.waitUntil(lambda: window.plan[1].epsilon == 0.125)
    assert not totals_gate.is_set()
    # the others were redistributed, the edit is one undo step, and the totals are still coming
    assert [s.epsilon for s in window.plan.statistics] != [before[0], 0.125, before[2]]
    assert window.plan[1].held and window.editor.undo_stack.count() == 1
    assert not window.editor.is_redistributing()
    assert window.evaluation.last_result is shown and not window.evaluation.result_is_current(shown)
    totals_gate.set()
    wait_idle(qtbot, window)
    result = window.evaluation.last_result
    assert result is not shown and window.evaluation.result_is_current(result)
    assert result.request.epsilons == window.plan.composition_inputs().epsilons
    assert len(totals_gate.calls) == 1      # computed once, by the allocate job


def test_undo_while_the_totals_are_computed_shows_the_totals_of_the_plan_undone(qtbot, window, totals_gate):
    before = window.plan.composition_inputs().epsilons
    type_epsilon(window, 1, "0.125")
    qtbot.waitUntil(lambda: window.plan[1].epsilon == 0.125)
    window.editor.undo()
    assert window.plan.composition_inputs().epsilons == before
    totals_gate.set()
    wait_idle(qtbot, window)
    result = window.evaluation.last_result
    assert window.evaluation.result_is_current(result) and result.request.epsilons == before


def test_an_edit_while_the_totals_are_computed_waits_for_them(qtbot, window, totals_gate):
    """The first edit's totals are still wanted (the second may be refused): they are shown, then
    the second's."""
    shown: list = []
    window.evaluation.evaluated.connect(lambda result: shown.append(result.request.epsilons))
    type_epsilon(window, 1, "0.125")
    qtbot.waitUntil(lambda: window.plan[1].epsilon == 0.125)
    first = window.plan.composition_inputs().epsilons
    type_epsilon(window, 0, "0.0625")
    totals_gate.set()
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 0.0625 and window.plan[1].epsilon == 0.125
    assert shown == [first, window.plan.composition_inputs().epsilons]


def test_totals_that_fail_after_the_shares_were_adopted_leave_the_edit_made(qtbot, window, monkeypatch):
    """The redistribution succeeded: the edit stays, and the failed totals are said as such."""
    def failing(request, cancel, progress, **kwargs):
        raise RuntimeError("the totals broke")

    monkeypatch.setattr(jobs, "evaluate", failing)
    type_epsilon(window, 1, "0.125")
    wait_idle(qtbot, window)
    assert window.plan[1].epsilon == 0.125 and window.editor.undo_stack.count() == 1
    assert "The computation failed" in window.status.label.text()
    # the totals before the edit are drawn nowhere as the plan's
    assert window.budget_panel.spent.bar.format() == "—"
    assert not window.cost_plot.items or all(
        np.isnan(window.cost_plot.curve_data(name)[1]).all() for name in window.cost_plot.items)
    assert "the totals broke" in window.status.label.text()
    assert not window.evaluation.result_is_current(window.evaluation.last_result)


def test_totals_whose_curve_failed_leave_no_curve_of_the_plan_before(qtbot, window, monkeypatch):
    """The totals came, the curve did not: the totals are shown, the failure said, and the plot
    holds no curve (it kept the plan before's, drawn as this plan's)."""
    import dataclasses

    evaluate = jobs.evaluate

    def without_curve(request, cancel, progress, **kwargs):
        result = evaluate(request, cancel, progress, **kwargs)
        return dataclasses.replace(result, curve=None, problems={"curve": "the curve broke"})

    assert window.cost_plot.items
    monkeypatch.setattr(jobs, "evaluate", without_curve)
    type_epsilon(window, 1, "0.125")
    wait_idle(qtbot, window)
    assert window.plan[1].epsilon == 0.125
    assert window.evaluation.result_is_current(window.evaluation.last_result)
    assert "the curve broke" in window.status.label.text()
    assert not window.cost_plot.items or all(
        np.isnan(window.cost_plot.curve_data(name)[1]).all() for name in window.cost_plot.items)


def greyed(panel) -> bool:
    table, grey = panel.table, panel.palette().placeholderText().color()
    return all(table.item(r, c).foreground().color() == grey
               for r in range(table.rowCount()) for c in range(table.columnCount()))


def test_totals_still_coming_are_shown_greyed_out_as_those_of_the_plan_before(qtbot, window, totals_gate):
    panel = window.results_panel
    assert not greyed(panel)
    type_epsilon(window, 1, "0.125")
    qtbot.waitUntil(lambda: window.plan[1].epsilon == 0.125)
    qtbot.waitUntil(lambda: panel.status.text() == COMPUTING)
    assert greyed(panel) and not totals_gate.is_set()
    totals_gate.set()
    wait_idle(qtbot, window)
    assert not greyed(panel) and panel.status.text() != COMPUTING
