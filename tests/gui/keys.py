"""What a user does with the keyboard, for the GUI tests: find a field by its accessible name,
type into it and press Enter, open a table cell's editor as a double-click does, and wait until
the window has nothing left to compute."""

from __future__ import annotations

from PySide6.QtCore import Qt

from dpplanner.gui.table_model import COLUMN_INDEX
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QLineEdit, QWidget


def wait_idle(qtbot, w):
    """Until the window has nothing left to compute (the table's cells left empty by its first
    paint of a plan included: filled a block a turn; its numbers kept as drawn until a result is;
    what a result changes, drawn a piece a turn),
    and still nothing once the events its last result posted have been handled (a follow-up job
    would have been submitted by then)."""
    def idle() -> bool:
        return (not w.controller.is_busy() and not w.editor.is_redistributing()
                and not w.statistics_panel.model.filling() and not w.statistics_panel.model.waiting()
                and not w.statistics_panel.model.releasing()
                and not w.turns.pending())

    for _ in range(100):
        qtbot.waitUntil(idle)
        handle_posted_events()
        if idle():
            return
    raise AssertionError("the window kept starting new jobs")


def handle_posted_events() -> None:
    """Handle what the last action posted to the event loop (queued signals, deferred layouts and
    column fits, zero-delay timers), as the window does before a person's next look at it. A few
    passes, since handling an event may post the next; never a guess at how long anything takes."""
    for _ in range(3):
        QApplication.processEvents()


def field(root: QWidget, name: str, cls=QLineEdit):
    """The one visible widget of class ``cls`` (a line edit by default) called ``name``."""
    found = [e for e in root.findChildren(cls) if e.accessibleName() == name and e.isVisible()]
    assert len(found) == 1, f"{len(found)} visible fields named {name!r}"
    return found[0]


def type_into(qtbot, edit: QLineEdit, text: str, key=Qt.Key.Key_Return) -> None:
    edit.setFocus()
    edit.selectAll()
    QTest.keyClick(edit, Qt.Key.Key_Delete)
    QTest.keyClicks(edit, text)
    QTest.keyClick(edit, key)


def cell(window, row: int, key: str):
    """The statistics table's index of ``row``'s ``key`` column."""
    return window.statistics_panel.model.index(row, COLUMN_INDEX[key])


def open_cell(window, row: int, key: str):
    """The editor of the statistics table's cell (row, column ``key``), opened on the current cell."""
    view = window.statistics_panel.view
    index = cell(window, row, key)
    view.setCurrentIndex(index)
    view.edit(index)
    editor = view.indexWidget(index) or QApplication.focusWidget()
    assert isinstance(editor, (QLineEdit, QComboBox))
    return editor


def retype(editor: QLineEdit, text: str) -> None:
    """Select all (Ctrl+A) and type ``text`` over it, without committing."""
    QTest.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClicks(editor, text)


def show_tab(window, title: str) -> None:
    """Click the tab called ``title`` above the plots (as a user does, with the mouse)."""
    bar = window.plots.tabBar()
    index = next(i for i in range(bar.count()) if bar.tabText(i).replace("&&", "&") == title)
    QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert window.plots.currentIndex() == index


def when_dialog(title: str, act) -> None:
    """Run ``act(dialog)`` once a modal dialog titled ``title`` is open (the code that opens it
    with exec() blocks until ``act`` closes it)."""
    from PySide6.QtCore import QTimer

    def attempt() -> None:
        dialog = QApplication.activeModalWidget()
        if dialog is None or dialog.windowTitle() != title:
            QTimer.singleShot(10, attempt)
            return
        act(dialog)
    QTimer.singleShot(0, attempt)


def reachable_states(window) -> list[tuple[str, object]]:
    """The plan's snapshot and both sides of every undo step: every state the window shows, saves
    or reaches by Undo/Redo, each named for a failure message."""
    found = [("the plan", window.plan.snapshot())]
    stack = window.editor.undo_stack
    for i in range(stack.count()):
        command = stack.command(i)
        found += [(f"undo step {i} ({command.text()}) before", command.before),
                  (f"undo step {i} ({command.text()}) after", command.after)]
    return found


def click_row(window, row: int) -> None:
    """A click on the statistics table's row ``row`` (its name), as a user selects a statistic."""
    view = window.statistics_panel.view
    rect = view.visualRect(window.statistics_panel.index_of(row, "name"))
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
