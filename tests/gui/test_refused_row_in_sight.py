"""A change refused with its reason beneath the table (the pinned statistics leave no room) keeps
the refused row in sight: the reason takes a few lines from the table, and the row, current and
at the bottom of the table, was left scrolled out of view beneath it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.model.examples import example_path
from keys import click_row, open_cell, retype, wait_idle


def test_the_refused_row_stays_in_sight_when_the_reason_takes_room(qtbot, shown):
    window = shown
    assert window.document.open_example(example_path("synthetic-100"), confirm=False)
    wait_idle(qtbot, window)
    view = window.statistics_panel.view
    # the last row shown whole, at the bottom of the table
    last = max(r for r in range(len(window.plan)) if view.viewport().rect().contains(view.visualRect(
        window.statistics_panel.index_of(r, "name"))))
    click_row(window, last)
    before = window.plan[last].epsilon
    editor = open_cell(window, last, "epsilon")
    retype(editor, "5")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[last].epsilon == before and window.statistics_panel.refusal.isVisible()
    rect = view.visualRect(window.statistics_panel.index_of(last, "name"))
    assert view.viewport().rect().contains(rect), (rect, view.viewport().rect())
