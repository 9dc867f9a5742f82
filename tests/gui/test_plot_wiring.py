"""The window feeds the plots: the repeated statistic's name, relative errors, log k, export."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings


@pytest.fixture
def window(qtbot, tmp_path, small_plan):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    win = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(win, before_close_func=lambda w: w.editor.undo_stack.setClean())
    win.document.load(small_plan(), None, "small")
    return win


def test_repeat_mode_names_the_selected_statistic(qtbot, window):
    """Issue 12.8: "repeat one query" did not say which statistic it repeats."""
    window.statistics_panel.select_row(1)
    assert window.plan[1].name in window.cost_plot.repeat_button.text()
    window.statistics_panel.select_row(2)
    assert window.plan[2].name in window.cost_plot.repeat_button.text()


def test_shares_tab_shows_relative_errors(qtbot, window):
    window.plots.setCurrentWidget(window.shares_plot)
    privacy = window.plan.privacy_all()
    assert window.shares_plot.errors[0] == pytest.approx(100 * privacy[0].error / 1000)


def test_log_k_is_remembered(qtbot, window):
    window.cost_plot.log_k.setChecked(True)
    assert window.settings.get("curve_log_k") is True


def test_exported_plot_includes_the_legend(qtbot, window, tmp_path):
    window.show()
    qtbot.waitUntil(lambda: bool(window.cost_plot.items))
    assert window.exports.export_plot(tmp_path / "cost.svg")
    assert "optimal" in (tmp_path / "cost.svg").read_text()
