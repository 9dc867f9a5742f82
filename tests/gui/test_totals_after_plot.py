"""The Totals table after an edit: drawn on a turn after the cost plot has painted the edit's
result (its cells and their repaint no longer come between the result and its curves), with the
result's totals. The plot's paints are counted from the result's arrival, not from the edit."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.gui import formatting
from event_count import EventCount
from keys import handle_posted_events, open_cell, retype, wait_idle


def test_the_totals_are_drawn_after_the_plot_paints_the_result(qtbot, window):
    plot, panel = window.cost_plot, window.results_panel
    paints = EventCount(plot.view.viewport(), when=lambda: not plot.drawing())     # (curves set)
    # counted from the result's arrival: a paint before it (of the plan before's curves: faded
    # while the result was late, or shown again) is not the paint of the result
    arrived: list[int] = []         # the plot's paints by each result shown
    window.evaluation.evaluated.connect(lambda _result: arrived.append(paints.count))
    at_change: list[int | None] = []    # by each new text of a Totals cell: the paints since the result
    panel.table.model().dataChanged.connect(
        lambda _top, _bottom, roles: at_change.append(paints.count - arrived[-1] if arrived else None)
        if Qt.ItemDataRole.DisplayRole in roles else None)
    # (a result still undrawn a quarter of a second after the change is drawn at once, before the
    # plot's paint if that is slower: test_totals_on_a_slow_turn.py; here that moment never comes)
    window.evaluation._stale_delay.setInterval(10 ** 8)
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "0.3")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    handle_posted_events()
    assert window.plan[0].epsilon == 0.3
    assert arrived and at_change and None not in at_change and min(at_change) >= 1, at_change
    result = window.evaluation.last_result
    assert window.evaluation.result_is_current(result) and panel.best() == result.best
    theorem = window.plan.budget.theorem
    assert panel.text_at(theorem, "total ε") == formatting.upper(result.totals[theorem].epsilon)


def test_an_emptied_plan_shows_no_totals_beside_its_cleared_plot(qtbot, window, monkeypatch):
    """The last statistic removed: the plot is cleared at once, and so are the Totals (they had
    waited a turn, the removed plan's totals shown un-greyed beside the empty plot meanwhile)."""
    panel, plot = window.results_panel, window.cost_plot
    rows_when_cleared: list[int] = []
    clear = plot.clear
    monkeypatch.setattr(plot, "clear", lambda: rows_when_cleared.append(panel.table.rowCount()) or clear())
    view = window.statistics_panel.view
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(view, Qt.Key.Key_Delete)
    wait_idle(qtbot, window)
    assert len(window.plan) == 0 and rows_when_cleared and rows_when_cleared[-1] == 0
