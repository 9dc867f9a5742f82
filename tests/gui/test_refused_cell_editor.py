"""A number the table refuses stays in its open cell editor, marked red, and only it is read there:
the editor's tint is opaque, so the cell's own number is not painted through it ("-1" typed over
0.5000 read "-10.5000" with a translucent tint)."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from dpplanner.gui import theme
from keys import handle_posted_events, open_cell, retype, wait_idle


@pytest.fixture(params=["default", "dark"])
def palette(request):
    """The platform's palette, or a dark one (the tint is blended onto the field's base colour)."""
    before = QApplication.palette()
    if request.param == "dark":
        dark = QPalette(before)
        dark.setColor(QPalette.ColorRole.Base, QColor("#202020"))
        dark.setColor(QPalette.ColorRole.Text, QColor("#e0e0e0"))
        QApplication.setPalette(dark)
    yield request.param
    QApplication.setPalette(before)


def test_a_refused_number_is_read_alone_in_its_editor(qtbot, palette, window):
    wait_idle(qtbot, window)
    before = window.plan[1].epsilon
    editor = open_cell(window, 1, "epsilon")
    retype(editor, "-1")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    handle_posted_events()
    assert window.plan[1].epsilon == before and editor.isVisible() and editor.text() == "-1"
    assert theme.error_red() in editor.styleSheet()
    # the right part of the editor, past "-1" (left-aligned), where the cell's right-aligned
    # number lies beneath: one colour, the tint, with nothing of the number in it
    area = editor.geometry().adjusted(editor.width() // 2, 3, -3, -3)
    image = window.statistics_panel.view.viewport().grab(area).toImage()
    colours = {image.pixel(x, y) for x in range(image.width()) for y in range(image.height())}
    assert len(colours) == 1, f"{len(colours)} colours where the editor should be plain"
