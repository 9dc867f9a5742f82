"""Issue 12.10: plain labels, expert settings under "Advanced", a help page on ε and δ, and a
first-start guide that a new user can dismiss and reopen."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLabel

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.model import Kind, Statistic


@pytest.fixture
def make_window(qtbot, tmp_path):
    def make() -> MainWindow:
        settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        win = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
        qtbot.addWidget(win, before_close_func=lambda w: w.editor.undo_stack.setClean())
        win.show()
        return win
    return make


def _labels(widget) -> set[str]:
    return {label.text() for label in widget.findChildren(QLabel) if label.isVisible()}


def test_plain_labels_and_expert_settings_folded_away(qtbot, make_window):
    window = make_window()
    panel = window.budget_panel
    labels = _labels(panel)
    assert {"Harm level", "Global ε", "Global δ", "Records n"} <= labels
    assert not {"Sensitivity", "ε_g", "accuracy η", "dataset n"} & labels
    assert not panel.eta.isVisible() and not panel.theorem.isVisible() and not panel.slack.isVisible()
    QTest.mouseClick(panel.advanced_toggle, Qt.MouseButton.LeftButton)
    assert panel.eta.isVisible() and panel.theorem.isVisible() and panel.slack.isVisible()
    assert "Engine accuracy η" in _labels(panel)
    headers = [window.statistics_panel.model.headerData(c, Qt.Orientation.Horizontal)
               for c in range(window.statistics_panel.model.columnCount())]
    assert "mech" not in headers and "reps" not in headers
    results = [window.results_panel.table.horizontalHeaderItem(c).text()
               for c in range(window.results_panel.table.columnCount())]
    assert "certified bracket" not in results


def test_help_explains_epsilon_delta_and_bounds(qtbot, make_window):
    window = make_window()
    help_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Help")
    basics = next(a for a in help_menu.actions() if "ε and δ" in a.text())
    basics.trigger()
    text = window.help_window.browser.toPlainText()     # docs/guide/basics.md
    assert "privacy loss" in text and "1/n" in text and "bounds" in text


def test_first_start_guide_walks_three_steps_and_can_be_dismissed(qtbot, make_window):
    window = make_window()
    guide = window.guide
    assert guide.isVisible()
    assert guide.done()[2] is False
    window.editor.insert_statistic(0, Statistic("count people", kind=Kind.COUNT, epsilon=0.1))
    qtbot.waitUntil(lambda: guide.done()[2])    # the edit may go through a rebalance
    assert guide.marks[2].text() == "✓"
    QTest.mouseClick(guide.buttons[1], Qt.MouseButton.LeftButton)
    assert window.focusWidget() is window.budget_panel.dataset_size.edit
    QTest.mouseClick(guide.hide_button, Qt.MouseButton.LeftButton)
    assert not guide.isVisible()
    again = make_window()                       # the same settings: stays dismissed
    assert not again.guide.isVisible()
    help_menu = next(a.menu() for a in again.menuBar().actions() if a.text() == "&Help")
    next(a for a in help_menu.actions() if "Getting started" in a.text()).trigger()
    assert again.guide.isVisible()


def test_a_finished_plan_needs_no_guide(qtbot, make_window):
    from dpplanner.model.examples import example_path

    window = make_window()
    assert window.guide.isVisible()
    window.document.open_example(example_path("census"), confirm=False)
    assert all(window.guide.done()) and not window.guide.isVisible()
