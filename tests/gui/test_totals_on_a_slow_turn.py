"""The Totals table when the turn it is drawn on is slow to come (the cost plot's paint before it,
on a busy machine): once the plan's change is a quarter of a second old, the result in hand is
drawn rather than the plan before's totals left un-greyed beside the new ε_i."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.gui import formatting
from dpplanner.gui.cost_curves import LATE_OPACITY
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


def test_the_plot_is_faded_while_the_totals_drawn_early_are_not_its_curves(qtbot, window, monkeypatch):
    """The Totals drawn at the quarter second while the plot's curves still wait for their turn:
    the plot shows the plan before's curves, faded until the new ones are set."""
    plot, panel, evaluation = window.cost_plot, window.results_panel, window.evaluation
    wait_idle(qtbot, window)

    def drawn() -> dict[str, list[float]]:
        return {name: np.nan_to_num(plot.curve_data(name)[1], nan=-1.0).tolist() for name in plot.items}
    before = drawn()
    held = []       # the curves' own turn never comes (a slow paint before it)
    later = plot._turns.later
    monkeypatch.setattr(plot._turns, "later", lambda key, piece, first=False:
                        held.append(piece) if key is plot else later(key, piece, first))
    evaluation._stale_delay.setInterval(10 ** 8)     # the quarter second passes when told, below
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "0.3")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.plan[0].epsilon == 0.3
                    and evaluation.result_is_current(evaluation.last_result), timeout=60000)
    assert held and all(item.opacity() == 1.0 for item in plot.items.values())
    if evaluation._stale_delay.isActive():          # a quarter of a second after the change
        evaluation._stale_delay.timeout.emit()
    new = [formatting.upper(comp.epsilon) for comp in evaluation.last_result.totals.values()]
    assert [panel.text_at(name, "total ε") for name in evaluation.last_result.totals] == new
    assert drawn() == before        # the plan before's curves, still
    assert plot.items and all(item.opacity() == LATE_OPACITY for item in plot.items.values())
    monkeypatch.undo()
    for piece in held:          # the curves' turn comes
        piece()
    wait_idle(qtbot, window)
    assert all(item.opacity() == 1.0 for item in plot.items.values())
    assert drawn() != before
