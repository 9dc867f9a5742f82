"""Issue 12.9: columns fit the window and elide in the middle; nothing is cut to "2.397e…"."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_columns import MAX_PX, MIN_PX
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model.examples import example_path


def test_columns_fit_the_window_and_elide_in_the_middle(qtbot, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.resize(1280, 800)
    window.document.open_example(example_path("census"), confirm=False)
    window.show()
    qtbot.waitUntil(lambda: not window.controller.is_busy() and not window.editor.is_redistributing(),
                    timeout=30000)
    view = window.statistics_panel.view
    qtbot.wait(20)
    assert view.textElideMode() == Qt.TextElideMode.ElideMiddle
    shown = [c for c in range(view.model().columnCount()) if not view.isColumnHidden(c)]
    widths = [view.columnWidth(c) for c in shown]
    assert sum(widths) <= view.viewport().width() + 1          # no horizontal scrolling
    assert all(MIN_PX <= view.columnWidth(c) <= MAX_PX for c in shown if c != COLUMN_INDEX["name"])
    # The numbers stay, whole; the hidden columns are in the inspector beside the table.
    assert {COLUMN_INDEX[k] for k in ("name", "epsilon", "error")} <= set(shown)
    fitter = window.statistics_panel.columns
    assert all(view.columnWidth(c) == fitter.natural_width(c) for c in (COLUMN_INDEX["epsilon"], COLUMN_INDEX["error"]))
    # A wide window gives every column its whole text.
    window.resize(2560, 1200)
    qtbot.wait(50)
    assert not any(view.isColumnHidden(c) for c in range(view.model().columnCount()))
    metrics = view.fontMetrics()
    error = COLUMN_INDEX["error"]
    text = view.model().index(0, error).data()
    assert view.columnWidth(error) >= min(metrics.horizontalAdvance(text), MAX_PX - 18)
