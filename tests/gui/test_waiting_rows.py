"""A row whose error waits for the result of a redistributing edit (gui/table_numbers.py) reads
the same however it is asked: its display, its tooltip on hover and its paint all give the
numbers drawn before the edit, greyed as the Totals table greys late totals, and nothing of it is
computed meanwhile. Once the result is drawn it reads the plan's numbers, un-greyed."""

from __future__ import annotations

import threading

import pytest
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QHelpEvent
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem, QToolTip

from dpplanner.compute import jobs
from dpplanner.gui import row_privacy, theme
from dpplanner.gui.table_model import COLUMN_INDEX, RawRole, ShownRole
from dpplanner.model import files
from dpplanner.model.examples import example_path
from keys import handle_posted_events, open_cell, retype, wait_idle

ERROR, DELTA = COLUMN_INDEX["error"], COLUMN_INDEX["delta"]
_R = Qt.ItemDataRole


@pytest.fixture
def held_totals(qtbot, make_window, monkeypatch):
    """The window on synthetic-100 (redistributing), settled; then a redistribution's totals are
    composed only once ``gate.set()`` (its shares, which the table draws, come at once)."""
    gate = threading.Event()
    gate.set()
    real = jobs.evaluate

    def evaluate(request, cancel, progress, **kwargs):
        while not gate.wait(0.01):
            cancel.check()
        return real(request, cancel, progress, **kwargs)

    monkeypatch.setattr(jobs, "evaluate", evaluate)       # (the one the redistribution job calls)
    window = make_window(allocate_fn=lambda request, cancel, progress: jobs.allocate(request, cancel, progress))
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    window.document.load(files.load_plan(example_path("synthetic-100")), None, "synthetic-100")
    wait_idle(qtbot, window)
    handle_posted_events()
    # The numbers wait for the totals however long they take (not the window's progress delay).
    window.evaluation._after_limit.setInterval(10 ** 6)
    gate.clear()
    yield window, gate
    gate.set()


def _painted(view, index) -> QStyleOptionViewItem:
    """What the table's paint of the cell draws (its text and colours)."""
    option = QStyleOptionViewItem()
    option.initFrom(view)
    view.itemDelegate().initStyleOption(option, index)
    return option


def _hover_tip(view, index) -> str:
    """The tooltip shown when the mouse rests on the cell."""
    QToolTip.hideText()
    pos = view.visualRect(index).center()
    QTest.mouseMove(view.viewport(), pos)
    QApplication.sendEvent(view.viewport(), QHelpEvent(QEvent.Type.ToolTip, pos, view.viewport().mapToGlobal(pos)))
    return QToolTip.text()


def test_a_waiting_row_reads_as_drawn_greyed_until_the_result_is_drawn(qtbot, held_totals, monkeypatch):
    window, gate = held_totals
    model, view = window.statistics_panel.model, window.statistics_panel.view
    rows = range(view.rowAt(0), view.rowAt(view.viewport().height() - 1) + 1)
    edited, other = [r for r in rows if r > 2 and not window.plan[r].held][:2]
    before = {ERROR: model.index(other, ERROR).data()}
    epsilon = window.plan[other].epsilon
    computed: list[int] = []
    real = row_privacy.statistics_privacy
    monkeypatch.setattr(row_privacy, "statistics_privacy", lambda budget, stats, deltas:
                        computed.append(len(stats)) or real(budget, stats, deltas))

    signalled: set[tuple[int, int]] = set()         # the cells the view is told to draw again
    model.dataChanged.connect(lambda top, bottom, *_: signalled.update(
        (r, c) for r in range(top.row(), bottom.row() + 1) for c in range(top.column(), bottom.column() + 1)))
    editor = open_cell(window, edited, "epsilon")
    retype(editor, repr(window.plan[edited].epsilon * 3))
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(model.waiting)
    handle_posted_events()
    assert model.waiting() and window.controller.is_busy()       # the totals still to come
    assert window.plan[other].epsilon != epsilon        # redistributed, its error not drawn yet
    computed.clear()
    assert (other, ERROR) in signalled          # drawn greyed
    signalled.clear()
    index = model.index(other, ERROR)
    assert index.data() == index.data(ShownRole) == before[ERROR]
    late = theme.late_text().color()
    assert index.data(_R.ForegroundRole).color() == late
    option = _painted(view, index)
    assert option.text == before[ERROR]
    assert option.palette.color(option.palette.ColorRole.Text) == late
    tip = index.data(_R.ToolTipRole)
    assert before[ERROR] in tip and "before the last change" in tip
    assert _hover_tip(view, index) == tip
    # (its δ_i, the plan's split of δ, needs no calibration: drawn with the change)
    delta = model.index(other, DELTA)
    assert delta.data(RawRole) == window.plan.privacy(other).delta
    assert _painted(view, delta).text == delta.data() and delta.data(_R.ForegroundRole).color() != late
    assert computed == []               # nothing of the waiting rows computed on the GUI thread

    gate.set()
    wait_idle(qtbot, window)
    handle_posted_events()
    assert (other, ERROR) in signalled          # drawn again, un-greyed
    index = model.index(other, ERROR)
    now = window.plan.privacy(other)
    assert index.data(RawRole) == now.shown_error
    assert index.data() == index.data(ShownRole) != before[ERROR]
    assert index.data(_R.ForegroundRole) is None        # (a typed target's colour: not greyed)
    assert _painted(view, index).text == index.data()
    assert "before the last change" not in _hover_tip(view, index)
