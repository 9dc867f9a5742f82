"""The statistics table's errors after a redistributing edit: the edited row's are drawn with the
edit; the other rows' on screen, which the redistribution moved, stay as drawn until the cost plot
has painted the edit's result, as the totals beside them do, and are then computed and drawn. What
the table ends up showing is the plan's, as before."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtTest import QTest

from dpplanner.gui import row_privacy
from dpplanner.gui.row_privacy import PRIVACY_BLOCK
from dpplanner.gui.table_model import COLUMN_INDEX, RawRole, ShownRole
from dpplanner.model import files
from dpplanner.model.examples import example_path
from keys import field, handle_posted_events, open_cell, retype, type_into, wait_idle

ERROR = COLUMN_INDEX["error"]


class PlotPaints(QObject):
    """Counts the cost plot's paints of curves set (not those held back until their turn)."""

    def __init__(self, plot) -> None:
        super().__init__()
        self.plot, self.count = plot, 0
        plot.view.viewport().installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:     # noqa: N802  (Qt's name)
        if event.type() == QEvent.Type.Paint and not self.plot.drawing():
            self.count += 1
        return False


def _rows_on_screen(window) -> range:
    view = window.statistics_panel.view
    return range(view.rowAt(0), view.rowAt(view.viewport().height() - 1) + 1)


def _shown(window, column: int, rows) -> list:
    model = window.statistics_panel.model
    return [model.index(r, column).data(ShownRole) for r in rows]


def _type_epsilon(window, row: int, factor: float) -> None:
    editor = open_cell(window, row, "epsilon")
    retype(editor, repr(window.plan[row].epsilon * factor))
    QTest.keyClick(editor, Qt.Key.Key_Return)


def test_the_other_rows_errors_are_computed_after_the_plot_paints_the_result(qtbot, synthetic_100,
                                                                             monkeypatch):
    window = synthetic_100
    # (the numbers wait for the plot's paint however long it takes: not the window's progress
    # delay, which a busy machine reached first)
    window.evaluation._after_limit.setInterval(10 ** 6)
    rows = _rows_on_screen(window)
    row = next(r for r in rows if r > 2 and not window.plan[r].held)
    errors_before = _shown(window, ERROR, rows)
    paints = PlotPaints(window.cost_plot)
    computed: list[tuple[int, int]] = []      # (rows computed, plot paints by then), in order
    real = row_privacy.statistics_privacy
    monkeypatch.setattr(row_privacy, "statistics_privacy", lambda budget, stats, deltas:
                        computed.append((len(stats), paints.count)) or real(budget, stats, deltas))
    changes = []
    window.plan.subscribe(lambda _event: changes.append(_shown(window, ERROR, rows)))
    _type_epsilon(window, row, 1.05)
    wait_idle(qtbot, window)
    handle_posted_events()
    # With the change: the edited row's error, the others as they were drawn.
    assert len(changes) == 1
    assert [t for r, t in zip(rows, changes[0]) if r != row] == \
        [t for r, t in zip(rows, errors_before) if r != row]
    assert changes[0][rows.index(row)] != errors_before[rows.index(row)]
    # Computed before the plot's paint: the edited row alone; the others after it, a block a turn.
    assert computed[0] == (1, 0)
    assert [n for n, by in computed if by == 0] == [1]
    assert paints.count >= 1 and sum(n for n, _by in computed[1:]) >= len(rows) - 1
    assert len(rows) > PRIVACY_BLOCK + 1 and max(n for n, _by in computed[1:]) <= PRIVACY_BLOCK
    # What the table shows in the end is the plan's, the errors of other rows moved among it.
    model = window.statistics_panel.model
    after = _shown(window, ERROR, rows)
    assert after == [model.index(r, ERROR).data() for r in rows]
    for r in rows:
        assert model.index(r, ERROR).data(RawRole) == window.plan.privacy(r).shown_error
    assert len({r for r, a, b in zip(rows, errors_before, after) if a != b and r != row}) > 3


def test_numbers_waiting_for_a_result_are_drawn_again_when_rows_move(qtbot, synthetic_100):
    """A row removed before the result of the edit before it is drawn: the numbers that waited
    are signalled as changed at once, in the rows where they are now (views draw them again, the
    column fit measures them), without redistribution too (which signals every number anyway)."""
    window = synthetic_100
    model, view = window.statistics_panel.model, window.statistics_panel.view
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert not window.plan.budget.redistribute
    rows = _rows_on_screen(window)
    held: list = []
    model.set_after_result(held.append)          # (the result of what follows is never drawn)
    type_into(qtbot, field(window, "Confidence"), "90")     # every error moves
    handle_posted_events()
    assert window.plan.budget.confidence == 0.9
    assert held and model.waiting()
    signalled: set[tuple[int, int]] = set()
    model.dataChanged.connect(lambda top, bottom, *_: signalled.update(
        (r, c) for r in range(top.row(), bottom.row() + 1) for c in range(top.column(), bottom.column() + 1)))
    last, count = rows[-3], len(window.plan)     # (a row shown whole: a click scrolls to none)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.visualRect(model.index(last, COLUMN_INDEX["name"])).center())
    QTest.keyClick(view, Qt.Key.Key_Delete)
    wait_idle(qtbot, window)
    handle_posted_events()
    assert len(window.plan) == count - 1 and not model.waiting()
    above = range(rows[0], last)
    assert {(r, ERROR) for r in above} <= signalled
    assert _shown(window, ERROR, above) == [model.index(r, ERROR).data() for r in above]
    for r in above:
        assert model.index(r, ERROR).data(RawRole) == window.plan.privacy(r).shown_error


@pytest.fixture
def held_evaluation(qtbot, make_window):
    """The window on synthetic-100 without redistribution, settled; then its evaluations wait
    until ``gate.set()`` (``gate.fail``: and then fail)."""
    import threading

    from dpplanner.compute import jobs

    gate = threading.Event()
    gate.set()
    gate.fail = False

    def evaluate(request, cancel, progress):
        while not gate.wait(0.01):
            cancel.check()
        if gate.fail:
            raise ValueError("no totals today")
        return jobs.evaluate(request, cancel, progress)

    window = make_window(evaluate_fn=evaluate)
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    plan = files.load_plan(example_path("synthetic-100"))
    plan.set_budget(redistribute=False)
    window.document.load(plan, None, "synthetic-100")
    wait_idle(qtbot, window)
    handle_posted_events()
    gate.clear()
    yield window, gate
    gate.set()


def test_numbers_waiting_for_a_failed_result_are_drawn_with_the_failure(qtbot, held_evaluation):
    window, gate = held_evaluation
    model = window.statistics_panel.model
    type_into(qtbot, field(window, "Confidence"), "90")     # every error moves
    assert model.waiting()
    at_failure = []
    window.evaluation.evaluationFailed.connect(lambda _message: at_failure.append(model.waiting()))
    gate.fail = True
    gate.set()
    wait_idle(qtbot, window)
    assert at_failure == [False]
    rows = _rows_on_screen(window)
    for r in rows:
        assert model.index(r, ERROR).data(RawRole) == window.plan.privacy(r).shown_error
    assert _shown(window, ERROR, rows) == [model.index(r, ERROR).data() for r in rows]


def test_numbers_wait_for_a_slow_result_no_longer_than_the_totals_stay_ungreyed(qtbot, held_evaluation):
    window, gate = held_evaluation
    model = window.statistics_panel.model
    type_into(qtbot, field(window, "Confidence"), "90")
    assert model.waiting()
    qtbot.waitUntil(lambda: not model.waiting())
    assert window.controller.is_busy("evaluate")        # (its result still to come)
    rows = _rows_on_screen(window)
    assert _shown(window, ERROR, rows) == [model.index(r, ERROR).data() for r in rows]
    for r in rows:
        assert model.index(r, ERROR).data(RawRole) == window.plan.privacy(r).shown_error


def test_numbers_waiting_for_a_cancelled_result_are_drawn_at_the_cancel(qtbot, held_evaluation):
    """Cancel pressed while the totals are computed: the numbers that waited are drawn then, not
    at the window's progress delay (made endless here)."""
    window, _gate = held_evaluation
    window.evaluation._after_limit.setInterval(10 ** 6)
    model = window.statistics_panel.model
    type_into(qtbot, field(window, "Confidence"), "90")
    assert model.waiting()
    qtbot.waitUntil(window.status.cancel_button.isVisible)
    QTest.mouseClick(window.status.cancel_button, Qt.MouseButton.LeftButton)
    handle_posted_events()
    assert not model.waiting()
    rows = _rows_on_screen(window)
    for r in rows:
        assert model.index(r, ERROR).data(RawRole) == window.plan.privacy(r).shown_error
