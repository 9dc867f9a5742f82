"""The statistics table stays where the user scrolled it when edits chained onto a redistribution
land (the plan adopts them together) and on Undo: it selects the statistic the Statistic tab
shows without scrolling to it."""

from __future__ import annotations

import threading

from PySide6.QtCore import QPoint, Qt
from PySide6.QtTest import QTest

from dpplanner.compute import jobs
from dpplanner.model import Budget, Kind, Plan, Statistic
from keys import cell, wait_idle


def type_in_cell(window, row: int, key: str, text: str) -> None:
    """Click the cell, F2, select all, type, Enter."""
    view = window.statistics_panel.view
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view.visualRect(cell(window, row, key)).center())
    QTest.keyClick(view, Qt.Key.Key_F2)
    editor = view.focusWidget()
    assert editor is not view
    QTest.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(editor, text)
    QTest.keyClick(editor, Qt.Key.Key_Return)


def page_until(window, down: bool, done) -> None:
    """Click the scroll bar's groove below (or above) its handle, a page a click, until ``done()``."""
    bar = window.statistics_panel.view.verticalScrollBar()
    for _ in range(100):
        if done():
            return
        y = bar.height() - 30 if down else 30
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=QPoint(bar.width() // 2, y))
    raise AssertionError("the table did not scroll there")


def top_row(window) -> int:
    return window.statistics_panel.view.rowAt(0)


def test_chained_edits_and_undo_leave_the_table_where_it_was_scrolled(qtbot, make_window):
    window = make_window()
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.document.load(Plan(Budget(epsilon=1.0, delta=1e-6), [
        Statistic(f"count {i}", kind=Kind.COUNT, epsilon=0.01) for i in range(100)]), None, "t")
    wait_idle(qtbot, window)
    released = threading.Event()        # the redistributions wait: the edits below chain for sure

    def held_back(request, cancel, progress):
        while not released.wait(0.01):
            cancel.check()
        return jobs.allocate(request, cancel, progress)

    window.editor.allocate_fn = held_back
    view = window.statistics_panel.view
    for row in (1, 2, 3):
        type_in_cell(window, row, "epsilon", "0.005")
    page_until(window, True, lambda: view.rowAt(view.viewport().height() - 1) > 80)
    type_in_cell(window, 78, "epsilon", "0.005")
    assert window.editor.is_redistributing()
    page_until(window, False, lambda: top_row(window) == 0)     # back to the top meanwhile
    released.set()
    wait_idle(qtbot, window)
    assert [window.plan[r].epsilon for r in (1, 2, 3, 78)] == [0.005] * 4
    assert window.statistics_panel.current_row() == 78 == window.statistics_panel.inspector.row
    assert top_row(window) == 0

    QTest.keySequence(window, window.undo_action.shortcut())
    wait_idle(qtbot, window)
    assert window.plan[78].epsilon != 0.005
    assert window.statistics_panel.selected_rows() == [78] == [window.statistics_panel.inspector.row]
    assert top_row(window) == 0
