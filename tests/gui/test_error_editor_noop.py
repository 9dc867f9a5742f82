"""Issue 12.12: opening the error editor and pressing Enter without a change adds no undo step and
redistributes nothing."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_model import COLUMN_INDEX
from keys import handle_posted_events


def test_enter_on_an_unchanged_error_changes_nothing(qtbot, tmp_path, small_plan):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.document.load(small_plan(), None, "small")
    window.show()
    qtbot.waitUntil(lambda: not window.controller.is_busy() and not window.editor.is_redistributing())
    before = (window.editor.undo_stack.count(), window.plan.statistics)
    view = window.statistics_panel.view
    index = view.model().index(1, COLUMN_INDEX["error"])
    view.setCurrentIndex(index)
    view.edit(index)
    editor = QApplication.focusWidget()
    assert isinstance(editor, QLineEdit)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    handle_posted_events()
    assert not window.editor.is_redistributing()
    assert (window.editor.undo_stack.count(), window.plan.statistics) == before
