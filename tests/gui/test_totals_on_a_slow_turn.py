"""The Totals table when the turn it is drawn on is slow to come (the cost plot's paint before it,
on a busy machine): once the plan's change is a quarter of a second old, the result in hand is
drawn rather than the plan before's totals left un-greyed beside the new ε_i."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.gui import formatting
from dpplanner.gui.evaluation import COMPUTING
from keys import open_cell, retype, wait_idle


def test_a_result_whose_turn_is_held_is_drawn_when_the_totals_would_grey(qtbot, window, monkeypatch):
    panel, evaluation = window.results_panel, window.evaluation
    wait_idle(qtbot, window)

    def shown() -> list[str]:
        return [panel.text_at(name, "total ε") for name in evaluation.last_result.totals]
    before = shown()
    held = []       # the Totals' own turn never comes (the paint before it is slow)
    later = panel._turns.later
    monkeypatch.setattr(panel._turns, "later", lambda key, piece, first=False:
                        held.append(piece) if key is panel else later(key, piece, first))
    evaluation._stale_delay.setInterval(10 ** 8)     # the quarter second passes when told, below
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "0.3")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.plan[0].epsilon == 0.3
                    and evaluation.result_is_current(evaluation.last_result), timeout=60000)
    new = [formatting.upper(comp.epsilon) for comp in evaluation.last_result.totals.values()]
    assert new != before and held
    if evaluation._stale_delay.isActive():          # a quarter of a second after the change
        evaluation._stale_delay.timeout.emit()
    assert shown() == new and not panel.drawing() and panel.status.text() != COMPUTING
