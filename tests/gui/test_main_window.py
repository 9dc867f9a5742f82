"""The whole window: edits through the table, redistribution, undo, plots and the engine's worker
(files, recovery and exports: test_main_window_files.py)."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner import engine
from dpplanner.compute import jobs
from dpplanner.model import Kind, Statistic

from held_totals import overspend_while_totals_wait
from keys import cell, wait_idle


def total_basic(plan) -> float:
    return sum(s.epsilon * s.repetitions for s in plan)


def test_add_remove_reorder_through_the_table_with_undo(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    panel = window.statistics_panel
    panel.select_row(0)
    assert panel.add_statistic(Kind.COUNT, Statistic("new", kind=Kind.COUNT, epsilon=0.1))
    assert [s.name for s in window.plan] == ["count a", "new", "mean b", "hist c"]
    assert window.isWindowModified()
    panel.select_row(1)
    assert panel.move_selected(+1)
    assert [s.name for s in window.plan] == ["count a", "mean b", "new", "hist c"]
    assert panel.duplicate_selected()
    assert [s.name for s in window.plan][3] == "new (2)"
    panel.select_row(0)
    assert panel.remove_selected()
    assert [s.name for s in window.plan] == ["mean b", "new", "new (2)", "hist c"]
    stack = window.editor.undo_stack
    for _ in range(4):
        stack.undo()
    assert window.plan.statistics == small_plan(redistribute=False).statistics
    assert not window.isWindowModified()
    for _ in range(4):
        stack.redo()
    assert [s.name for s in window.plan] == ["mean b", "new", "new (2)", "hist c"]


def test_editing_an_error_sets_that_epsilon_and_redistributes_the_others(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(), None, "t")
    original = window.plan.snapshot()
    model = window.statistics_panel.model
    target = 1.0        # mean of income in [0, 100] over 1000 records, to within 1.0
    assert model.setData(cell(window, 1, "error"), str(target))
    wait_idle(qtbot, window)
    plan = window.plan
    needed = plan.epsilon_for_error(1, target)
    assert plan[1].epsilon == needed
    assert plan.privacy(1).error <= target
    # the free rows were rescaled (weights 1 and 1) to spend exactly the budget under basic
    assert plan[0].epsilon == pytest.approx(plan[2].epsilon)
    assert total_basic(plan) == pytest.approx(1.0, rel=1e-6)
    assert total_basic(plan) <= 1.0 + 1e-12
    assert plan[1].held              # pinned until the user unpins it
    # One undo takes back the edit together with its redistribution.
    window.editor.undo_stack.undo()
    assert window.plan.snapshot() == original
    window.editor.undo_stack.redo()
    assert window.plan[1].epsilon == needed
    assert total_basic(window.plan) == pytest.approx(1.0, rel=1e-6)


def test_an_impossible_hold_is_refused_and_nothing_changes(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(), None, "t")
    before = window.plan.snapshot()
    # An error so small that this one statistic alone needs more than the whole budget.
    # The pin check runs with the redistribution on the worker: the refusal arrives from there.
    with qtbot.waitSignal(window.editor.refused) as blocker:
        window.statistics_panel.model.setData(cell(window, 1, "error"), "0.01")
    message = blocker.args[0].message
    assert message.startswith("an error of 0.01 for 'mean b' needs ε_i = ")
    # (issue 24: the statistic being edited is not listed among the pins to release)
    assert "for the free ones; ask for a larger error" in message and "unpin" not in message
    assert window.plan.snapshot() == before
    assert window.editor.undo_stack.count() == 0
    assert "Not changed" in window.status.label.text()
    # Holding every statistic leaves nothing free: refused as well.
    model = window.statistics_panel.model
    from PySide6.QtCore import Qt
    assert model.setData(cell(window, 0, "held"), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    wait_idle(qtbot, window)
    assert model.setData(cell(window, 1, "held"), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    wait_idle(qtbot, window)
    held_state = window.plan.snapshot()
    with qtbot.waitSignal(window.editor.refused) as blocker:
        model.setData(cell(window, 2, "held"), Qt.CheckState.Checked.value,
                      Qt.ItemDataRole.CheckStateRole)
    assert "at least one must stay free" in blocker.args[0].message
    assert window.plan.snapshot() == held_state


def test_budget_edit_redistributes_and_a_bad_budget_is_refused(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(), None, "t")
    panel = window.budget_panel
    panel.epsilon.edit.setText("0.5")
    panel.epsilon.edit.editingFinished.emit()
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 0.5
    assert total_basic(window.plan) == pytest.approx(0.5, rel=1e-6)
    before = window.plan.snapshot()
    panel.delta.edit.setText("0.01")           # >= 1/n for n = 1000
    panel.delta.edit.editingFinished.emit()
    assert window.plan.snapshot() == before
    assert "below 1/n" in panel.delta.message.text()
    assert panel.delta.edit.text() == "0.01"   # what was typed stays, marked, with the reason
    panel.delta.restore()
    assert panel.delta.edit.text() == "1e-6"   # dismissed: the field shows the plan's value again
    window.editor.undo_stack.undo()
    assert window.plan.budget.epsilon == 1.0
    assert panel.epsilon.value() == 1.0 and panel.epsilon.edit.text() == "1"


def test_plotted_curves_equal_the_engine_numbers(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    qtbot.waitUntil(lambda: window.evaluation.last_result is not None and window.evaluation.result_is_current(window.evaluation.last_result)
                    and not window.results_panel.drawing())
    inputs = window.plan.composition_inputs()
    expected = engine.curve(list(inputs.epsilons), list(inputs.deltas), inputs.delta_g, mode="prefix",
                            points=window.settings.get("curve_points"),
                            multiplicities=list(inputs.multiplicities), mechanisms=list(inputs.mechanisms),
                            lower=False,    # as the window asks: the plot draws upper bounds only,
                            total_eta=inputs.eta)   # and pld's reads the bracket its total composed
    totals = engine.compose_all(list(inputs.epsilons), list(inputs.deltas), inputs.delta_g,
                                eta=inputs.eta, multiplicities=list(inputs.multiplicities),
                                mechanisms=list(inputs.mechanisms))
    assert window.cost_plot.items, "nothing was plotted"
    for name, item in window.cost_plot.items.items():
        x, y = window.cost_plot.curve_data(name)
        assert np.array_equal(x, expected.ks)
        want = np.asarray(expected.upper[name], dtype=float)
        if totals[name].applicable:     # at the plan's own k, met with its total (compute.jobs)
            want[-1] = min(want[-1], totals[name].epsilon)
        finite = np.isfinite(want)
        assert np.array_equal(np.isfinite(y), finite)
        assert np.array_equal(y[finite], want[finite])
    assert window.cost_plot.k_line.value() == window.plan.k
    # and the totals shown are the engine's, rounded up
    best = engine.best(totals)
    assert window.results_panel.best() == best
    shown = float(window.results_panel.text_at("basic", "total ε"))
    assert shown >= totals["basic"].epsilon


def test_repeat_mode_plots_the_selected_query(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.statistics_panel.select_row(1)
    window.cost_plot.k_max.setValue(20)
    window.cost_plot.set_mode("repeat")
    qtbot.waitUntil(lambda: window.evaluation.last_result is not None
                    and window.evaluation.last_result.request.curve_mode == "repeat"
                    and not window.cost_plot.drawing())     # (its curves are set on a turn of their own)
    x, y = window.cost_plot.curve_data("basic")
    assert x[-1] == 20
    assert y[-1] == pytest.approx(20 * window.plan[1].epsilon)


class SlowFakeEngine:
    """Blocks until released; records the plans it was asked about."""

    def __init__(self):
        self.release = threading.Event()
        self.seen = []
        self.cancelled = 0

    def __call__(self, request, cancel, progress):
        self.seen.append(request.epsilons)
        while not self.release.wait(0.005):
            if cancel.cancelled:
                self.cancelled += 1
                cancel.check()
        return jobs.EvaluateResult(request.request_id, request, {
            "basic": engine.Composition("basic", sum(e * m for e, m in zip(request.epsilons, request.multiplicities)),
                                        request.delta_g)}, "basic")


def test_stale_results_are_dropped_and_the_newest_plan_is_shown(qtbot, make_window, small_plan):
    fake = SlowFakeEngine()
    window = make_window(evaluate_fn=fake)
    window.document.load(small_plan(redistribute=False), None, "t")
    qtbot.waitUntil(lambda: len(fake.seen) == 1)
    # Three quick edits while the first computation still runs.
    for value in ("0.3", "0.35", "0.4"):
        window.statistics_panel.model.setData(cell(window, 0, "epsilon"), value)
    qtbot.waitUntil(lambda: fake.cancelled >= 1)
    fake.release.set()
    qtbot.waitUntil(lambda: window.evaluation.last_result is not None and not window.controller.is_busy()
                    and not window.results_panel.drawing())
    assert window.evaluation.last_result.request.epsilons[0] == 0.4
    assert window.evaluation.result_is_current(window.evaluation.last_result)
    assert window.results_panel.text_at("basic", "total ε") == "1.1500"


def test_cancel_button_stops_the_computation(qtbot, make_window, small_plan):
    fake = SlowFakeEngine()
    window = make_window(evaluate_fn=fake)
    window.document.load(small_plan(redistribute=False), None, "t")
    window.show()
    qtbot.waitUntil(lambda: len(fake.seen) == 1)
    qtbot.waitUntil(window.status.cancel_button.isVisible)
    window.status.cancel_button.click()
    qtbot.waitUntil(lambda: fake.cancelled >= 1)
    qtbot.waitUntil(lambda: not window.controller.is_busy())
    assert window.evaluation.last_result is None
    assert "cancelled" in window.status.label.text().lower()
    assert not window.status.cancel_button.isVisible()
    fake.release.set()


def test_a_cancelled_total_leaves_no_total_drawn_as_the_edited_plans(qtbot, make_window, small_plan):
    """ε_i 5 typed (the plan now spends 5.75 of 1), its totals cancelled: the Spent bar and the
    cost plot no longer show the total before the edit as this plan's (it read "within budget")."""
    window, release = overspend_while_totals_wait(qtbot, make_window, small_plan)
    qtbot.waitUntil(window.status.cancel_button.isVisible)
    QTest.mouseClick(window.status.cancel_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: not window.controller.is_busy())
    release.set()
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 5.0
    assert window.budget_panel.meter.format() == "—"
    assert not window.cost_plot.items or all(
        np.isnan(window.cost_plot.curve_data(name)[1]).all() for name in window.cost_plot.items)


def test_engine_errors_are_shown_and_the_worker_survives(qtbot, make_window, small_plan):
    calls = []

    def flaky(request, cancel, progress):
        calls.append(1)
        if len(calls) == 1:
            raise ValueError("deltas[2] = 1.5 is outside [0, 1)")
        return jobs.evaluate(request, cancel, progress)

    window = make_window(evaluate_fn=flaky)
    window.document.load(small_plan(redistribute=False), None, "t")
    qtbot.waitUntil(lambda: "deltas[2]" in window.status.label.text())
    assert "failed" in window.results_panel.status.text()
    window.statistics_panel.model.setData(cell(window, 0, "epsilon"), "0.3")
    qtbot.waitUntil(lambda: window.evaluation.last_result is not None)


def test_every_visible_control_has_a_tooltip(qtbot, make_window, small_plan):
    from PySide6.QtWidgets import QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit

    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.show()
    missing = []
    for kind in (QAbstractButton, QAbstractSpinBox, QComboBox, QLineEdit):
        for widget in window.findChildren(kind):
            if widget.objectName().startswith("qt_"):
                continue        # Qt's own parts of a composite widget (spin box line edit, corner)
            if widget.isVisible() and not widget.toolTip() and not _has_action_tip(widget):
                label = widget.text() if hasattr(widget, "text") else ""
                missing.append(f"{type(widget).__name__} {label!r}")
    assert missing == []


def _has_action_tip(widget) -> bool:
    action = getattr(widget, "defaultAction", lambda: None)()
    return action is not None and bool(action.toolTip())


def test_the_empty_plan_shows_a_hint_not_an_error(qtbot, make_window):
    window = make_window()
    assert len(window.plan) == 0
    qtbot.waitUntil(lambda: not window.results_panel.drawing())
    assert "Add a statistic" in window.results_panel.status.text()
    assert math.isnan(float("nan"))


def test_privacy_profile_is_computed_when_its_tab_is_shown(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    qtbot.waitUntil(lambda: window.evaluation.last_result is not None)
    assert len(window.profile_plot._eps) == 0          # not shown yet: not computed
    window.plots.setCurrentWidget(window.profile_plot)
    qtbot.waitUntil(lambda: len(window.profile_plot._eps) > 0)
    inputs = window.plan.composition_inputs()
    expected = engine.privacy_profile(list(inputs.epsilons), list(inputs.deltas), eta=max(inputs.eta, 1e-3),
                                      multiplicities=list(inputs.multiplicities), num=120,
                                      mechanisms=list(inputs.mechanisms))
    assert np.array_equal(window.profile_plot._eps, expected.eps)
    assert np.array_equal(window.profile_plot._upper, expected.delta_upper)
    assert window.profile_plot.target_line.value() == pytest.approx(math.log10(window.plan.budget.delta))


def test_a_failed_redistribution_leaves_the_plan_unchanged(qtbot, make_window, small_plan):
    def failing(request, cancel, progress):
        raise ValueError("kov does not apply: the queries are not all equal")

    window = make_window(allocate_fn=failing)
    window.document.load(small_plan(), None, "t")
    before = window.plan.snapshot()
    assert window.statistics_panel.model.setData(cell(window, 0, "weight"), "3")
    qtbot.waitUntil(lambda: not window.editor.is_redistributing())
    assert window.plan.snapshot() == before
    assert window.editor.undo_stack.count() == 0         # nothing left to undo or redo
    assert "the edit was not made" in window.status.label.text()


def test_undo_while_redistributing_drops_the_late_result(qtbot, make_window, small_plan):
    gate = threading.Event()

    def slow_allocate(request, cancel, progress):
        while not gate.wait(0.005):
            progress(0.5)                # raises Cancelled once the undo cancelled it
        return jobs.allocate(request, cancel, progress)

    window = make_window(allocate_fn=slow_allocate)
    window.document.load(small_plan(), None, "t")
    before = window.plan.snapshot()
    assert window.statistics_panel.model.setData(cell(window, 0, "weight"), "3")
    assert window.editor.is_redistributing()
    window.undo_action.trigger()         # Ctrl+Z: the waiting edit is the one undone
    gate.set()
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before
    assert not window.isWindowModified()


def test_delete_key_inside_a_cell_editor_edits_text_not_the_plan(qtbot, make_window, small_plan):
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QLineEdit

    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.show()
    view = window.statistics_panel.view
    view.setCurrentIndex(cell(window, 0, "name"))
    view.edit(cell(window, 0, "name"))
    editor = view.findChild(QLineEdit)
    qtbot.waitUntil(lambda: editor is not None and editor.isVisible())
    editor.setFocus()
    editor.setCursorPosition(0)
    qtbot.keyClick(editor, Qt.Key.Key_Delete)
    assert len(window.plan) == 3
    assert editor.text() == "ount a"
