"""Issue 12.9: columns fit the window and elide in the middle; numbers are never cut to "2.397e…"."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_columns import MIN_PX
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model.examples import example_path

NUMBERS = ("epsilon", "error")


def test_columns_fit_the_window_and_elide_in_the_middle(qtbot, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.resize(1440, 900)
    window.document.open_example(example_path("census"), confirm=False)
    window.show()
    qtbot.waitUntil(lambda: not window.controller.is_busy() and not window.editor.is_redistributing(),
                    timeout=30000)
    view = window.statistics_panel.view
    fitter = window.statistics_panel.columns
    qtbot.wait(50)
    assert view.textElideMode() == Qt.TextElideMode.ElideMiddle
    shown = [c for c in range(view.model().columnCount()) if not view.isColumnHidden(c)]
    # No horizontal scrolling, the names readable, the numbers whole, nothing below the minimum.
    assert sum(view.columnWidth(c) for c in shown) <= view.viewport().width() + 1
    assert view.columnWidth(COLUMN_INDEX["name"]) >= 100
    for key in NUMBERS:
        c = COLUMN_INDEX[key]
        assert c in shown and view.columnWidth(c) == fitter.natural_width(c)
    assert all(view.columnWidth(c) >= MIN_PX for c in shown)
    # The cell being edited is never in a hidden column.
    hidden = [c for c in range(view.model().columnCount()) if view.isColumnHidden(c)]
    assert hidden                                  # this window is too narrow for all ten
    view.setCurrentIndex(view.model().index(0, hidden[0]))
    assert not view.isColumnHidden(hidden[0])
    # Wide enough: every column shows.
    window.statistics_panel.split.setSizes([2000, 10])
    window.resize(2560, 1200)
    qtbot.wait(50)
    assert not any(view.isColumnHidden(c) for c in range(view.model().columnCount()))
