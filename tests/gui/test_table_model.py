"""The statistics table model over a plan: Qt's model contract, edits, refusals."""

from __future__ import annotations

import math
import re

import pytest
from PySide6.QtCore import Qt

from dpplanner.gui.compute import ComputeController
from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.table_model import COLUMN_INDEX, StatisticsTableModel
from dpplanner.model import Budget, Kind, Mechanism, Plan, Statistic


@pytest.fixture
def editor(qtbot, small_plan):
    controller = ComputeController(debounce_ms=10)
    ed = PlanEditor(small_plan(redistribute=False), controller)
    yield ed
    controller.shutdown()


def cell(model, row, key):
    return model.index(row, COLUMN_INDEX[key])


def test_qtmodeltester_through_inserts_removes_moves_and_resets(qtmodeltester, editor):
    model = StatisticsTableModel(editor.plan, editor)
    qtmodeltester.check(model, force_py=True)
    editor.insert_statistic(1, Statistic("new count", kind=Kind.COUNT, epsilon=0.1))
    editor.move_statistic(0, 2)
    editor.remove_statistics([1])
    editor.undo_stack.undo()
    editor.undo_stack.undo()
    editor.undo_stack.redo()
    qtmodeltester.check(model, force_py=True)
    assert [model.data(cell(model, r, "name")) for r in range(model.rowCount())] == \
        [s.name for s in editor.plan]


def test_rows_follow_the_plan(qtbot, editor):
    model = StatisticsTableModel(editor.plan, editor)
    assert model.rowCount() == 3
    with qtbot.waitSignal(model.rowsInserted):
        editor.insert_statistic(3, Statistic("extra", kind=Kind.COUNT, epsilon=0.1))
    assert model.rowCount() == 4
    with qtbot.waitSignal(model.rowsMoved):
        editor.move_statistic(3, 0)
    assert model.data(cell(model, 0, "name")) == "extra"
    with qtbot.waitSignal(model.rowsRemoved):
        editor.remove_statistics([0])
    assert model.rowCount() == 3


def test_editing_a_cell_changes_the_plan_and_is_undoable(editor, small_plan):
    model = StatisticsTableModel(editor.plan, editor)
    assert model.setData(cell(model, 0, "name"), "households")
    assert editor.plan[0].name == "households"
    assert model.setData(cell(model, 1, "epsilon"), "0.3")
    assert editor.plan[1].epsilon == 0.3
    assert model.setData(cell(model, 2, "repetitions"), "4")
    assert editor.plan[2].repetitions == 4
    assert model.setData(cell(model, 0, "held"), Qt.CheckState.Checked.value, Qt.ItemDataRole.CheckStateRole)
    assert editor.plan[0].held is True
    for _ in range(4):
        editor.undo_stack.undo()
    assert editor.plan.statistics == small_plan(redistribute=False).statistics


@pytest.mark.parametrize("key, value, expected", [
    ("epsilon", "-1", r"epsilon = -1 is not allowed; it must be a number in \(0, 100\]"),
    ("epsilon", "abc", r"'abc' is not a number; it must be a number in \(0, 100\]"),
    ("repetitions", "2.5", r"number of releases = 2\.5 is not a whole number; it must be a whole number"),
    ("name", "   ", r"the name must be a non-empty text"),
    ("error", "0", r"target error = 0 is not allowed"),
])
def test_invalid_input_is_refused_with_the_reason_and_nothing_changes(qtbot, editor, key, value, expected):
    model = StatisticsTableModel(editor.plan, editor)
    before = editor.plan.snapshot()
    with qtbot.waitSignal(editor.refused) as blocker:
        assert not model.setData(cell(model, 1, key), value)
    refusal = blocker.args[0]
    assert refusal.row == 1
    assert refusal.message
    assert re.search(expected, refusal.message), refusal.message
    assert editor.plan.snapshot() == before
    assert editor.undo_stack.count() == 0


def test_custom_rows_edit_delta_but_have_no_error(editor):
    model = StatisticsTableModel(editor.plan, editor)
    editor.insert_statistic(0, Statistic("custom", kind=Kind.CUSTOM, epsilon=0.1, delta=1e-8))
    assert model.flags(cell(model, 0, "delta")) & Qt.ItemFlag.ItemIsEditable
    assert not model.flags(cell(model, 0, "error")) & Qt.ItemFlag.ItemIsEditable
    assert not model.flags(cell(model, 1, "delta")) & Qt.ItemFlag.ItemIsEditable
    assert model.data(cell(model, 0, "error")) == "—"
    assert model.setData(cell(model, 0, "delta"), "2e-8")
    assert editor.plan[0].delta == 2e-8


def test_displayed_numbers_are_rounded_up(editor):
    model = StatisticsTableModel(editor.plan, editor)
    editor.update_statistic(0, {"epsilon": 0.1234501}, "eps")
    assert model.data(cell(model, 0, "epsilon")) == "0.1235"
    error = editor.plan.privacy(1).error
    text = model.data(cell(model, 1, "error"))
    assert text.startswith("± ")
    assert float(text.split()[1].replace(",", "")) >= error


def test_errors_read_with_plus_minus_units_and_grouped_digits(editor):
    """Issue 12.9: "± 9,582,876 records", the full value in the tooltip, units said once."""
    model = StatisticsTableModel(editor.plan, editor)
    editor.update_statistic(0, {"epsilon": 1e-6}, "tiny eps")
    error = editor.plan.privacy(0).error
    assert error > 1e6
    assert model.data(cell(model, 0, "error")) == f"± {math.ceil(error):,} records"
    tip = model.data(cell(model, 1, "error"), Qt.ItemDataRole.ToolTipRole)
    assert tip.count("units of income") == 1        # once, in the sentence
    assert repr(editor.plan.privacy(1).error) in tip  # the full value the cell rounds up


def _large_plan(n: int = 240):
    from dpplanner.model import Budget, Mechanism, Plan

    kinds = [dict(kind=Kind.COUNT), dict(kind=Kind.MEAN, lower=0, upper=100, mechanism=Mechanism.GAUSSIAN),
             dict(kind=Kind.HISTOGRAM, bins=4), dict(kind=Kind.CUSTOM, delta=1e-9)]
    stats = [Statistic(f"s{i}", epsilon=0.001 * (1 + i % 7), **kinds[i % 4]) for i in range(n)]
    return Plan(Budget(epsilon=1.0, delta=1e-6, redistribute=False, dataset_size=5000), stats)


def test_a_large_plan_computes_the_accuracy_of_the_rows_drawn_not_of_all(qtbot, monkeypatch):
    """Opening or editing a plan of thousands of statistics must not compute every row's error on
    the GUI thread: rows are computed (in blocks) as the view asks for them, with the numbers of
    the whole plan's computation, and again after a change."""
    from dpplanner.model import privacy as privacy_module

    computed = []
    real = privacy_module.statistic_privacy
    monkeypatch.setattr(privacy_module, "statistic_privacy",
                        lambda budget, stat, delta: computed.append(stat.name) or real(budget, stat, delta))
    controller = ComputeController(debounce_ms=10)
    try:
        editor = PlanEditor(_large_plan(), controller)
        model = StatisticsTableModel(editor.plan, editor)
        texts = [model.data(cell(model, row, "error")) for row in (0, 1, 2, 3, 120)]
        assert texts[3] == "—" and all(t and t != "⚠" for t in texts[:3] + texts[4:])
        assert 0 < len(computed) < len(editor.plan) / 2
        everything = editor.plan.privacy_all()
        assert [model.privacy(row) for row in range(len(editor.plan))] == everything
        assert editor.set_budget(dataset_size=10000)      # every error changes
        assert [model.privacy(row) for row in (0, 1, 2, 3, 200)] == \
            [editor.plan.privacy_all()[row] for row in (0, 1, 2, 3, 200)]
        assert model.privacy(1) != everything[1]
    finally:
        controller.shutdown()


def test_after_an_edit_the_rows_on_screen_are_computed_in_one_batch(qtbot, monkeypatch):
    """A paint after an edit asks for the errors of every row on screen: the rows from the first
    asked for to the last on screen are computed together (one batch of their Gaussians), with
    the whole plan's numbers; a row off screen (a tooltip, a fit) with its block alone."""
    import dpplanner.gui.row_privacy as row_privacy

    batches = []
    real = row_privacy.statistics_privacy
    monkeypatch.setattr(row_privacy, "statistics_privacy",
                        lambda budget, stats, deltas: batches.append(len(stats)) or real(budget, stats, deltas))
    controller = ComputeController(debounce_ms=10)
    try:
        editor = PlanEditor(_large_plan(), controller)
        model = StatisticsTableModel(editor.plan, editor)
        model.fill_first_paint()
        model.set_screen(lambda: (5, 22))
        assert editor.set_budget(dataset_size=10000)      # every error changes
        texts = [model.data(cell(model, row, "error")) for row in range(5, 23)]
        assert batches == [18]
        assert all(texts)
        assert model.data(cell(model, 40, "error")) and batches == [18, row_privacy.PRIVACY_BLOCK]
        assert [model.privacy(row) for row in range(len(editor.plan))] == editor.plan.privacy_all()
    finally:
        controller.shutdown()


def test_an_edit_computes_again_only_the_rows_it_changed(qtbot, monkeypatch):
    """A row whose statistic and delta an edit left alone keeps its accuracy: an edit of one row's
    epsilon computes that row's again, a change of the budget every row's."""
    import dpplanner.gui.row_privacy as row_privacy

    computed = []
    real = row_privacy.statistics_privacy
    monkeypatch.setattr(row_privacy, "statistics_privacy",
                        lambda budget, stats, deltas: computed.extend(s.name for s in stats) or
                        real(budget, stats, deltas))
    controller = ComputeController(debounce_ms=10)
    try:
        editor = PlanEditor(_large_plan(), controller)
        model = StatisticsTableModel(editor.plan, editor)
        model.fill_first_paint()
        model.set_screen(lambda: (0, 19))
        before = [model.data(cell(model, row, "error")) for row in range(20)]
        assert len(computed) == 20
        computed.clear()
        assert editor.update_statistic(6, {"epsilon": 0.5}, "eps")
        after = [model.data(cell(model, row, "error")) for row in range(20)]
        assert computed == ["s6"]
        assert after[:6] == before[:6] and after[7:] == before[7:] and after[6] != before[6]
        assert [model.privacy(row) for row in range(20)] == editor.plan.privacy_all()[:20]
        computed.clear()
        assert editor.set_budget(dataset_size=10000)
        [model.data(cell(model, row, "error")) for row in range(20)]
        assert len(computed) == 20
    finally:
        controller.shutdown()


def test_a_kept_accuracy_follows_a_new_delta_split(qtbot):
    """Rows whose statistic and budget are unchanged keep their accuracy only while their delta_i
    is too: a Gaussian statistic inserted splits the delta to statistics four ways instead of
    three, and the other Gaussian rows' errors must show their smaller delta_i."""
    gaussian = dict(kind=Kind.MEAN, lower=0, upper=100, epsilon=0.5, mechanism=Mechanism.GAUSSIAN)
    plan = Plan(Budget(epsilon=10.0, delta=1e-6, redistribute=False, dataset_size=5000),
                [Statistic(f"g{i}", **gaussian) for i in range(3)])
    controller = ComputeController(debounce_ms=10)
    try:
        editor = PlanEditor(plan, controller)
        model = StatisticsTableModel(editor.plan, editor)
        model.fill_first_paint()
        model.set_screen(lambda: (0, 3))
        before = [model.data(cell(model, r, "error")) for r in range(3)]
        editor.insert_statistic(3, Statistic("g3", **gaussian))
        assert [model.privacy(r) for r in range(3)] == editor.plan.privacy_all()[:3]
        assert [model.data(cell(model, r, "error")) for r in range(3)] != before
    finally:
        controller.shutdown()
