"""Issue 12.11: dark mode follows the system palette live, and View > Colour scheme overrides it."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QColor, QGuiApplication, QPalette
from PySide6.QtWidgets import QApplication

from dpplanner.gui import theme
from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings


@pytest.fixture
def window(qtbot, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    win = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(win, before_close_func=lambda w: w.editor.undo_stack.setClean())
    original = QApplication.palette()
    yield win
    win.appearance.set_scheme("system")
    QApplication.setPalette(original)


def _plots(win):
    return (win.cost_plot, win.profile_plot, win.shares_plot)


def test_plots_follow_a_palette_change_live(qtbot, window):
    if QGuiApplication.styleHints().colorScheme() != Qt.ColorScheme.Unknown:
        pytest.skip("this platform reports its colour scheme; the palette is not what decides")
    assert all(p._theme is theme.LIGHT for p in _plots(window))
    dark = QPalette()
    dark.setColor(QPalette.ColorRole.Window, QColor("#202020"))
    dark.setColor(QPalette.ColorRole.WindowText, QColor("#e0e0e0"))
    QApplication.setPalette(dark)
    qtbot.waitUntil(lambda: all(p._theme is theme.DARK for p in _plots(window)))
    assert window.cost_plot.view.backgroundBrush().color().name() == theme.DARK.background


def test_view_menu_chooses_the_scheme_and_remembers_it(qtbot, window):
    window.appearance.actions["dark"].trigger()
    assert all(p._theme is theme.DARK for p in _plots(window))
    assert window.settings.get("colour_scheme") == "dark"
    window.appearance.actions["light"].trigger()
    assert all(p._theme is theme.LIGHT for p in _plots(window))
    window.appearance.actions["system"].trigger()
    assert window.settings.get("colour_scheme") == "system"
