"""Issue 12.9 and issue 24.10: columns as wide as their text; the words of the kind and noise
columns never elided; the columns shown are the user's choice, never the rows'."""

from __future__ import annotations

from PySide6.QtCore import QSettings, Qt

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_columns import MIN_PX, NAME_MIN_PX
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import Kind, Mechanism
from dpplanner.model.examples import example_path
from keys import handle_posted_events, wait_idle

NUMBERS = ("epsilon", "error")


def test_columns_fit_their_text_and_a_narrow_table_scrolls_instead_of_hiding(qtbot, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.resize(1440, 900)
    window.document.open_example(example_path("census"), confirm=False)
    window.show()
    wait_idle(qtbot, window)
    view = window.statistics_panel.view
    fitter = window.statistics_panel.columns
    handle_posted_events()
    shown = [c for c in range(view.model().columnCount()) if not view.isColumnHidden(c)]
    metrics = view.fontMetrics()
    # The kind and noise columns hold their longest word, whatever the rows hold.
    for key, words in (("kind", [k.label for k in Kind]), ("mechanism", [m.label for m in Mechanism])):
        assert view.columnWidth(COLUMN_INDEX[key]) >= max(metrics.horizontalAdvance(w) for w in words)
    for key in NUMBERS:
        c = COLUMN_INDEX[key]
        assert c in shown and view.columnWidth(c) >= fitter.natural_width(c)
    assert all(view.columnWidth(c) >= MIN_PX for c in shown)
    # Squeezed, the table keeps every column and scrolls sideways; the name keeps its minimum.
    window.main_split.setSizes([420, 1020])
    handle_posted_events()
    assert [c for c in range(view.model().columnCount()) if not view.isColumnHidden(c)] == shown
    assert view.columnWidth(COLUMN_INDEX["name"]) >= NAME_MIN_PX
    assert view.horizontalScrollBar().maximum() > 0
    assert view.textElideMode() == Qt.TextElideMode.ElideRight      # long names: the tooltip


def test_a_fit_reads_each_column_in_one_call(qtbot, tmp_path, monkeypatch):
    """A fit after an edit measures the first rows and those on screen (~50 cells a column): each
    column's texts come from the model in one call, not from two calls into it per cell, and
    the widths are those of the texts drawn."""
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.document.open_example(example_path("synthetic-100"), confirm=False)
    window.show()
    wait_idle(qtbot, window)
    panel = window.statistics_panel
    view, fitter, model = panel.view, panel.columns, panel.model
    cells = []
    monkeypatch.setattr(model, "data", lambda *a: cells.append(1))
    fitter.fit()
    assert cells == []
    metrics = view.fontMetrics()
    c = COLUMN_INDEX["error"]
    assert view.columnWidth(c) >= max(metrics.horizontalAdvance(t) for t in model.shown_texts(c, range(20)))


def test_a_plan_of_thousands_of_rows_opens_without_a_sideways_scroll_bar(qtbot, shown):
    """Its row numbers widen the row header and its rows bring the vertical scroll bar, both
    narrowing the table: the name column gives way at once, so no sideways scroll bar shows (one
    did for the table's first paint, until the fit a turn later hid it and the table was drawn
    again)."""
    from PySide6.QtCore import QEvent

    from dpplanner.model import Plan, files
    from event_count import EventCount

    base = files.load_plan(example_path("synthetic-1000"))
    plan = Plan(base.budget, [s.replace(repetitions=s.repetitions * 10) for s in base.statistics * 10])
    view = shown.statistics_panel.view
    sideways = EventCount(view.horizontalScrollBar(), QEvent.Type.Show)
    shown.document.load(plan, None, "thousands of rows")
    wait_idle(qtbot, shown)
    handle_posted_events()
    assert view.verticalScrollBar().isVisible()
    assert sideways.count == 0 and not view.horizontalScrollBar().isVisible()
    shown_columns = [c for c in range(view.model().columnCount()) if not view.isColumnHidden(c)]
    assert sum(view.columnWidth(c) for c in shown_columns) == view.viewport().width()
