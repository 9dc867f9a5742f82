"""Issue 12.9: columns fit the window and elide in the middle; numbers are never cut to "2.397e…"."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_columns import MIN_PX
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model.examples import example_path

NUMBERS = ("epsilon", "delta", "error", "weight", "repetitions")
TEXTS = ("variable", "kind", "mechanism")


def test_columns_fit_the_window_and_elide_in_the_middle(qtbot, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.resize(2560, 1200)
    window.document.open_example(example_path("census"), confirm=False)
    window.show()
    qtbot.waitUntil(lambda: not window.controller.is_busy() and not window.editor.is_redistributing(),
                    timeout=30000)
    view = window.statistics_panel.view
    fitter = window.statistics_panel.columns
    qtbot.wait(50)
    assert view.textElideMode() == Qt.TextElideMode.ElideMiddle
    # Wide: no horizontal scrolling; the numbers whole, the text columns give way (elided).
    columns = range(view.model().columnCount())
    assert sum(view.columnWidth(c) for c in columns) <= view.viewport().width() + 1
    for key in NUMBERS:
        assert view.columnWidth(COLUMN_INDEX[key]) == fitter.natural_width(COLUMN_INDEX[key])
    wide = {k: view.columnWidth(COLUMN_INDEX[k]) for k in TEXTS}
    # Narrower: the numbers still whole, the text columns narrower still, never below the minimum.
    window.resize(1600, 900)
    qtbot.wait(50)
    for key in NUMBERS:
        assert view.columnWidth(COLUMN_INDEX[key]) == fitter.natural_width(COLUMN_INDEX[key])
    assert all(MIN_PX <= view.columnWidth(COLUMN_INDEX[k]) < wide[k] for k in TEXTS)
