"""A refused field still shown when the platform switches between light and dark (a new
application palette) is tinted again on the new scheme's background: the tint blended once kept
the old scheme's near-white pink under the new scheme's light text. Esc takes the mark off, and a
later switch leaves the field unmarked."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QPalette
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from dpplanner.gui import theme
from dpplanner.gui.fields import REFUSED_TINT
from keys import field, handle_posted_events, type_into


def background(edit) -> QColor:
    """The tint the field's style sheet paints it with (None: not marked)."""
    sheet = edit.styleSheet()
    return QColor(sheet.split("background: ")[1].split(";")[0]) if "background: " in sheet else None


def tint_on(base: QColor) -> QColor:
    red = QColor(theme.error_red())       # (the red of the scheme of the moment)
    return QColor(*(round(b + (r - b) * REFUSED_TINT / 255) for b, r in
                    ((base.red(), red.red()), (base.green(), red.green()), (base.blue(), red.blue()))))


def test_a_refused_field_is_tinted_again_on_a_switch_to_dark(qtbot, window, dark_switch):
    delta = field(window.budget_panel, "Global delta")
    type_into(qtbot, delta, "2")
    assert delta.accessibleDescription().startswith("Not applied")
    light_base = QApplication.palette(delta).color(QPalette.ColorRole.Base)
    assert background(delta) == tint_on(light_base)

    dark_switch(True)
    handle_posted_events()
    dark_base = QApplication.palette(delta).color(QPalette.ColorRole.Base)
    assert dark_base != light_base and background(delta) == tint_on(dark_base)
    assert delta.text() == "2"                     # still refused, still as typed

    QTest.keyClick(delta, Qt.Key.Key_Escape)       # the plan's value back: no mark
    dark_switch(False)                             # and back to light
    handle_posted_events()
    assert background(delta) is None
