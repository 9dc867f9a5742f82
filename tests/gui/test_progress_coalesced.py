"""The status bar's progress (gui/status.py) shows the latest fraction a few times a second, not
once per progress message: QProgressBar.setValue repaints at once, and a long job reports every
50 ms (a 10,000-query plan's open sent 43 of them, each a repaint on the GUI thread)."""

from __future__ import annotations

from PySide6.QtWidgets import QMainWindow

from dpplanner.gui.status import StatusArea
from event_count import EventCount


def _status(qtbot, busy_text: str) -> tuple[QMainWindow, StatusArea]:
    window = QMainWindow()
    qtbot.addWidget(window)
    status = StatusArea(window.statusBar(), lambda: busy_text)
    window.show()
    return window, status


def test_a_burst_of_progress_repaints_the_bar_a_few_times_and_shows_the_last(qtbot):
    _window, status = _status(qtbot, "Computing compositions")
    status.set_busy(True)
    qtbot.waitUntil(status.progress.isVisible)      # after PROGRESS_DELAY_MS
    spy = EventCount(status.progress)
    for i in range(1, 101):
        status.set_progress(i / 100)
    qtbot.waitUntil(lambda: status.progress.value() == 1000)
    assert spy.count <= 3, f"{spy.count} repaints for 100 progress messages"
    assert status.label.text() == "Computing compositions…"


def test_progress_that_comes_while_the_bar_is_hidden_is_shown_with_it(qtbot):
    _window, status = _status(qtbot, "Redistributing")
    status.set_busy(True)
    status.set_progress(0.4)            # before the bar appears
    qtbot.waitUntil(status.progress.isVisible)
    assert status.progress.value() == 400
    status.set_busy(False)
    status.set_busy(True)               # the next job starts from nothing
    qtbot.waitUntil(status.progress.isVisible)
    assert status.progress.value() == 0


def _after_the_delay(qtbot) -> None:
    """Until a timer started now with the status bar's delay has fired (timers of one interval
    fire in the order they were started)."""
    from PySide6.QtCore import QTimer

    from dpplanner.gui.status import PROGRESS_DELAY_MS

    timer = QTimer(singleShot=True, interval=PROGRESS_DELAY_MS)
    with qtbot.waitSignal(timer.timeout):
        timer.start()


def test_work_under_way_is_named_only_if_it_lasts_and_never_over_a_refusal(qtbot, monkeypatch):
    """A redistribution of a few tens of ms flashed "Redistributing the budget…" on every edit, and
    each change of the message laid the status bar and the window out again."""
    _window, status = _status(qtbot, "Redistributing")
    texts: list[str] = []
    real = status.label.setText
    monkeypatch.setattr(status.label, "setText", lambda text: texts.append(text) or real(text))
    work = "Redistributing the budget…"
    status.show_pending(work)
    status.retract(work)            # done within the moment
    _after_the_delay(qtbot)
    assert texts == [] and status.label.text() == ""

    status.show_pending(work)       # still under way after it
    qtbot.waitUntil(lambda: status.label.text() == work)
    status.retract(work)
    assert status.label.text() == ""

    status.show_pending(work)
    status.show_message("Not changed: ε must be positive", 0, error=True)
    _after_the_delay(qtbot)
    assert status.label.text() == "Not changed: ε must be positive"
