"""A refused export (File > Export Release Script… on a plan OpenDP cannot release as it is) says
why in the window - in full above the panels and in the status bar - without a modal box that
blocks the window; the message goes when the plan changes or the user closes it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QComboBox, QFileDialog

from dpplanner.model.statistic import Noise
from dpplanner.gui import theme
from keys import field, open_cell, retype, show_tab, wait_idle
from test_release_window import pick_with_keys


def export_release_from_the_menu(window, monkeypatch, target) -> None:
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    menu = [a for a in window.menuBar().actions() if a.text() == "&File"][0].menu()
    [a for a in menu.actions() if a.text() == "Export Release &Script…"][0].trigger()


def test_a_refused_export_says_why_in_the_window_without_a_modal_box(qtbot, statistic_tab_window,
                                                                     monkeypatch, tmp_path):
    window = statistic_tab_window
    window.statistics_panel.select_row(0)
    pick_with_keys(field(window.statistics_panel.inspector, "Noise implemented by", QComboBox),
                   Noise.CONTINUOUS.label)
    assert window.plan[0].noise is Noise.CONTINUOUS
    target = tmp_path / "release.py"
    export_release_from_the_menu(window, monkeypatch, target)
    assert not target.exists()
    assert QApplication.activeModalWidget() is None     # nothing waits for a click (nor a box:
    # the conftest fails the test on one)
    inline = window.exports.refusal
    reason = "planned with continuous noise, which OpenDP does not add"
    assert inline.isVisible() and reason in inline.label.text()
    assert inline.label.text().startswith("Not exported: cannot write a release script")
    status = window.status.label
    assert status.text() == inline.label.text() and theme.error_red() in status.styleSheet()
    # the user goes on working at once: the plan changes and the reason no longer stands
    show_tab(window, "Statistic")
    pick_with_keys(field(window.statistics_panel.inspector, "Noise implemented by", QComboBox),
                   Noise.OPENDP.label)
    wait_idle(qtbot, window)
    assert not inline.isVisible() and inline.label.text() == ""
    export_release_from_the_menu(window, monkeypatch, target)
    assert target.exists() and not inline.isVisible()


def test_the_refusal_closes_with_its_button_and_comes_back_on_the_next_try(qtbot, window, monkeypatch,
                                                                          tmp_path):
    """Over budget (redistribution off, an ε_i typed far above the budget): refused, as above."""
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert not window.plan.budget.redistribute
    cell = open_cell(window, 0, "epsilon")
    retype(cell, "3")
    QTest.keyClick(cell, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 3.0
    target = tmp_path / "release.py"
    export_release_from_the_menu(window, monkeypatch, target)
    inline = window.exports.refusal
    assert inline.isVisible() and "over budget" in inline.label.text() and not target.exists()
    QTest.mouseClick(inline.close_button, Qt.MouseButton.LeftButton)
    assert not inline.isVisible()
    export_release_from_the_menu(window, monkeypatch, target)
    assert inline.isVisible() and "over budget" in inline.label.text()
