"""What a result changes on screen is drawn a piece a turn of the event loop (gui/turns.py): each
piece after the events the one before it posted (its repaints), so their costs never add up to
one stall."""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QTimer

from dpplanner.gui.turns import Turns


def _posted_events_only() -> None:
    """What follows a slot before any timer's turn: the events it posted, and theirs."""
    for _ in range(3):
        QCoreApplication.sendPostedEvents()


def test_each_piece_runs_on_a_turn_of_its_own_after_what_the_one_before_posted(qtbot):
    turns = Turns()
    ran: list[str] = []

    def piece(name: str):
        def run() -> None:
            ran.append(name)
            QTimer.singleShot(0, lambda: ran.append(f"{name}'s repaint"))     # a posted event
        return run

    turns.later("plot", piece("plot"))
    turns.later("meter", piece("meter"))
    turns.later("plot", piece("plot, again"))       # replaces the plot's piece, in its place
    _posted_events_only()
    assert ran == [] and turns.pending("plot") and turns.pending("meter")
    qtbot.waitUntil(lambda: not turns.pending())
    _posted_events_only()
    assert ran == ["plot, again", "plot, again's repaint", "meter", "meter's repaint"]


def test_a_piece_queued_first_runs_before_those_queued_before_it(qtbot):
    turns = Turns()
    ran: list[str] = []
    turns.later("meter", lambda: ran.append("meter"))
    turns.later("table", lambda: ran.append("table"))
    turns.later("plot", lambda: ran.append("plot"), first=True)
    turns.later("meter", lambda: ran.append("meter, again"))      # keeps its place after the plot
    qtbot.waitUntil(lambda: not turns.pending())
    assert ran == ["plot", "meter, again", "table"]


def test_a_piece_that_raises_leaves_the_pieces_after_it_to_run(qtbot):
    """Else the plot's piece would stay pending and its paints held: the old picture stays."""
    turns = Turns()
    ran: list[str] = []

    def broken() -> None:
        raise RuntimeError("a broken piece")

    turns.later("broken", broken)
    turns.later("plot", lambda: ran.append("plot"))
    with qtbot.capture_exceptions() as raised:
        qtbot.waitUntil(lambda: not turns.pending())
    assert ran == ["plot"] and [str(e[1]) for e in raised] == ["a broken piece"]


def test_a_results_total_is_drawn_on_the_meter_on_a_turn_after_the_result(qtbot, window):
    from keys import wait_idle

    panel = window.budget_panel
    shown = panel.meter.format()
    result = window.evaluation.last_result
    spent = result.totals[window.plan.budget.theorem]
    panel.set_spent(None)
    _posted_events_only()
    assert panel.meter.format() == shown and panel.drawing()
    wait_idle(qtbot, window)
    assert panel.meter.format() == "—"
    panel.set_spent(spent, result.totals)
    wait_idle(qtbot, window)
    assert panel.meter.format() == shown and not panel.drawing()
