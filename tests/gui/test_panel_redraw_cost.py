"""What a result landing redraws in the results panel and the budget meter: only what changed
(each repaint is paid per edit)."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QCoreApplication, Qt

from dpplanner import engine
from dpplanner.gui.results_panel import COLUMNS, ResultsPanel
from event_count import EventCount
from keys import wait_idle


def test_the_totals_table_changes_only_the_cells_whose_text_changed(qtbot):
    """A result after an edit mostly brings new times: those cells change (and are repainted),
    not every cell of the table; greyed-out and bold cells follow the new result."""
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show()
    totals = engine.compose_all([0.1, 0.2], [0.0, 0.0], 1e-6, mechanisms=["laplace", "laplace"])
    panel.set_results(totals, "basic")
    qtbot.waitUntil(lambda: not panel.drawing())       # (on a turn of its own)
    changed: list[tuple[int, int]] = []
    panel.table.model().dataChanged.connect(
        lambda top, bottom, _roles: changed.extend((r, c) for r in range(top.row(), bottom.row() + 1)
                                                   for c in range(top.column(), bottom.column() + 1)))
    later = {k: dataclasses.replace(v, seconds=v.seconds + 1.0) for k, v in totals.items()}
    panel.set_results(later, "basic")
    qtbot.waitUntil(lambda: not panel.drawing())
    time_column = COLUMNS.index("time")
    assert changed and {c for _r, c in changed} == {time_column}
    assert panel.text_at("basic", "time").endswith("s")

    panel.set_stale("Computing")
    other = next(name for name in totals if name != "basic" and totals[name].applicable)
    panel.set_results(later, other)
    qtbot.waitUntil(lambda: not panel.drawing())
    table = panel.table
    for row in range(table.rowCount()):
        for col in range(table.columnCount()):
            item = table.item(row, col)
            assert item.data(Qt.ItemDataRole.ForegroundRole) is None
            assert item.font().bold() == (item.row() == _row_of(table, other))
    assert panel.text_at(other, "theorem").endswith("★") and not panel.text_at("basic", "theorem").endswith("★")


def test_totals_greyed_before_their_turn_are_drawn_greyed(qtbot):
    """Totals set, then greyed before their turn came (the plan changed again and its own are
    late): drawn at once, greyed, never later as current."""
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.show()
    totals = engine.compose_all([0.1, 0.2], [0.0, 0.0], 1e-6, mechanisms=["laplace", "laplace"])
    panel.set_results(totals, "basic")
    panel.set_stale("Computing")
    assert not panel.drawing() and panel.best() == "basic"
    qtbot.wait(1)
    QCoreApplication.processEvents()
    grey = panel.palette().placeholderText()
    assert panel.status.text() == "Computing"
    assert all(panel.table.item(r, c).foreground() == grey
               for r in range(panel.table.rowCount()) for c in range(panel.table.columnCount()))


def _row_of(table, theorem: str) -> int:
    return next(r for r in range(table.rowCount()) if table.item(r, 0).data(Qt.ItemDataRole.UserRole) == theorem)


def test_the_budget_meter_is_painted_again_only_when_its_reading_changes(qtbot, window):
    """A redistributed plan spends all of ε_g edit after edit: the same reading again is not
    painted (turning the bar's updates back on repainted all of it)."""
    window.show()
    wait_idle(qtbot, window)
    panel = window.budget_panel
    result = window.evaluation.last_result
    shown = panel.meter.format()
    paints = EventCount(panel.meter)
    panel.set_spent(result.totals[window.plan.budget.theorem], result.totals)
    wait_idle(qtbot, window)
    QCoreApplication.processEvents()
    assert paints.count == 0 and panel.meter.format() == shown
    panel.set_spent(None)
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: paints.count > 0)
    assert panel.meter.format() == "—"
