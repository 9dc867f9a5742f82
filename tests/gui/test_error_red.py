"""The error red reads on the window it is drawn on: at least 4.5:1 against its background in a
light and in a dark palette, and a reason shown in red when the platform switches between them
is redrawn in the new scheme's red (the light scheme's red read at ~2.6:1 on a dark window)."""

from __future__ import annotations

import pytest
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from dpplanner.gui import theme
from keys import field, handle_posted_events, type_into


def _window(palette: QPalette) -> QColor:
    return palette.color(QPalette.ColorRole.Window)


def _text(label) -> QColor:
    """The colour ``label``'s text is drawn in (its style sheet's, once polished)."""
    label.ensurePolished()
    return label.palette().color(QPalette.ColorRole.WindowText)


@pytest.mark.parametrize("window", ["#ffffff", "#efefef", "#1e1e1e", "#2b2b2b", "#353535", "#404040"])
def test_the_error_red_reads_on_light_and_dark_windows(qapp, window):
    palette = QPalette(qapp.palette())
    palette.setColor(QPalette.ColorRole.Window, QColor(window))
    assert theme.contrast(QColor(theme.error_red(palette)), QColor(window)) >= 4.5


def test_the_plots_error_red_reads_on_their_backgrounds():
    for plot in (theme.LIGHT, theme.DARK):
        assert theme.contrast(QColor(plot.budget_line), QColor(plot.background)) >= 4.5


def test_the_contrast_ratio_is_wcags():
    assert theme.contrast(QColor("#000000"), QColor("#ffffff")) == pytest.approx(21)
    assert theme.contrast(QColor("#777777"), QColor("#ffffff")) == pytest.approx(4.48, abs=0.01)
    assert theme.contrast(QColor("#c0392b"), QColor("#2b2b2b")) < 4.5       # (why a second red)


def test_a_refusal_follows_a_switch_between_light_and_dark(qtbot, window, dark_switch):
    delta = field(window.budget_panel, "Global delta")
    type_into(qtbot, delta, "2")
    handle_posted_events()
    reason = field(window.budget_panel, "Global delta: problem", cls=type(window.budget_panel.message))
    assert reason.text().startswith("Not applied")
    drawn = []
    for dark in (False, True, False):
        dark_switch(dark)
        handle_posted_events()
        drawn.append(_text(reason).name())
        assert theme.contrast(_text(reason), _window(QApplication.palette())) >= 4.5, dark
    assert drawn == [theme.ERROR_RED, theme.ERROR_RED_ON_DARK, theme.ERROR_RED]


def test_a_reason_made_before_its_window_follows_a_switch(qtbot, window, dark_switch):
    """The table's reason beneath it is styled as the panel is made, before the panel is put in
    the window (and stays hidden until a refusal): it follows a switch all the same."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from keys import open_cell, retype, wait_idle

    reason = window.statistics_panel.refusal
    dark_switch(True)
    handle_posted_events()
    editor = open_cell(window, 2, "epsilon")
    retype(editor, "99")                    # (no room for it: refused, with the reason shown)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    handle_posted_events()
    assert reason.isVisible() and reason.text().startswith("Not changed")
    drawn = [_text(reason).name()]
    dark_switch(False)
    handle_posted_events()
    drawn.append(_text(reason).name())
    assert drawn == [theme.ERROR_RED_ON_DARK, theme.ERROR_RED]
