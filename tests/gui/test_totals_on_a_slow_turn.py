"""The Totals table when the turn it is drawn on is slow to come (the cost plot's paint before it,
on a busy machine): once the plan's change is a quarter of a second old, the result in hand is
drawn rather than the plan before's totals left un-greyed beside the new ε_i."""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtTest import QTest

from dpplanner.gui import formatting
from dpplanner.gui.cost_curves import LATE_OPACITY
from dpplanner.gui.evaluation import COMPUTING
from keys import open_cell, retype, wait_idle


def _type_epsilon_and_wait_for_its_result(qtbot, window) -> None:
    """ε_i 0.3 typed into the first row, until its result is in hand (the quarter second after the
    change is told by _a_quarter_second_later, not by the clock)."""
    evaluation = window.evaluation
    evaluation._stale_delay.setInterval(10 ** 8)
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "0.3")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.plan[0].epsilon == 0.3
                    and evaluation.result_is_current(evaluation.last_result), timeout=60000)


def _a_quarter_second_later(evaluation) -> None:
    if evaluation._stale_delay.isActive():
        evaluation._stale_delay.timeout.emit()


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
    _type_epsilon_and_wait_for_its_result(qtbot, window)
    new = [formatting.upper(comp.epsilon) for comp in evaluation.last_result.totals.values()]
    assert new != before and held
    _a_quarter_second_later(evaluation)
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
    _type_epsilon_and_wait_for_its_result(qtbot, window)
    assert held and all(item.opacity() == 1.0 for item in plot.items.values())
    _a_quarter_second_later(evaluation)
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


def _plot_on_screen(plot):
    """The plot's area as the screen has it (the window's backing store), not a fresh render."""
    view = plot.view.viewport()
    at = view.mapTo(plot.window(), view.rect().topLeft())
    shot = QGuiApplication.primaryScreen().grabWindow(plot.window().winId()).toImage()
    return shot.copy(QRect(at, view.size()))


def test_the_faded_curves_reach_the_screen_while_their_turn_is_still_queued(qtbot, window, monkeypatch):
    """The curves' turn still queued behind a slow paint (the view's paints held back meanwhile):
    the fade of the plan before's curves at the quarter second is painted, not held with the rest."""
    plot, evaluation = window.cost_plot, window.evaluation
    wait_idle(qtbot, window)
    qtbot.waitUntil(lambda: not plot.drawing())
    before = _plot_on_screen(plot)
    holding = [True]
    later = plot._turns.later

    def queued(key, piece, first=False):
        if key is not plot:
            return later(key, piece, first)

        def again():            # queued again each turn while held: the turn never comes
            (later(plot, again, True) if holding[0] else piece())
        return later(key, again, first)
    monkeypatch.setattr(plot._turns, "later", queued)
    _type_epsilon_and_wait_for_its_result(qtbot, window)
    assert plot.drawing() and _plot_on_screen(plot) == before
    _a_quarter_second_later(evaluation)
    assert plot.drawing() and all(item.opacity() == LATE_OPACITY for item in plot.items.values())
    assert _plot_on_screen(plot) != before          # the fade is on screen
    holding[0] = False
    qtbot.waitUntil(lambda: not plot.drawing())
