"""A window whose totals wait: a small plan (redistribution off) settled within its budget, then
ε_i 5 typed in row 1's cell (the plan then spends 5.75 of 1) while the edit's totals are held."""

from __future__ import annotations

import threading

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.compute import jobs
from keys import open_cell, retype, wait_idle


def overspend_while_totals_wait(qtbot, make_window, small_plan):
    """The window, and the event that lets the held totals go on (set it before the test ends)."""
    slow, release = [], threading.Event()

    def engine_fn(request, cancel, progress):
        while slow and not release.wait(0.005):
            cancel.check()
        return jobs.evaluate(request, cancel, progress)

    window = make_window(evaluate_fn=engine_fn)
    window.document.load(small_plan(redistribute=False), None, "t")
    window.show()
    wait_idle(qtbot, window)
    assert window.budget_panel.meter.format().startswith("ε 1.0000 of 1")
    slow.append(1)
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "5")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    return window, release
