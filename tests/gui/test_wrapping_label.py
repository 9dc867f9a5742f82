"""A WrappingLabel (the budget panel's refusals and notes) gets every line its text needs at its
width, and gives the room back when the text gets shorter or the window wider."""

from __future__ import annotations

from PySide6.QtWidgets import QVBoxLayout, QWidget

from dpplanner.gui.fitted_label import WrappingLabel


def _panel(qtbot, width: int):
    panel = QWidget()
    layout = QVBoxLayout(panel)
    label = WrappingLabel("")
    layout.addWidget(label)
    layout.addStretch(1)
    qtbot.addWidget(panel)
    panel.resize(width, 600)
    panel.show()
    qtbot.waitExposed(panel)
    return panel, label


def _settled(qtbot, label, height: int) -> None:
    qtbot.waitUntil(lambda: label.height() == height)


def test_a_shorter_text_gives_its_lines_back(qtbot):
    panel, label = _panel(qtbot, 220)
    label.setText("ε_g must be between 0 and 10 " * 8)
    long = label.needed_height()
    assert long >= 4 * label.fontMetrics().lineSpacing()
    _settled(qtbot, label, long)
    label.setText("ε_g = 1")
    one = label.needed_height()
    assert one < 2 * label.fontMetrics().lineSpacing()
    _settled(qtbot, label, one)


def test_a_wider_window_gives_its_lines_back(qtbot):
    panel, label = _panel(qtbot, 220)
    label.setText("the redistribution leaves up to 1e-6 of the budget unspent " * 4)
    narrow = label.needed_height()
    _settled(qtbot, label, narrow)
    panel.resize(1200, 600)
    qtbot.waitUntil(lambda: label.width() > 1000)
    wide = label.needed_height()
    assert wide < narrow
    _settled(qtbot, label, wide)


def test_the_same_text_set_again_lays_nothing_out(qtbot):
    """The totals' note is set again with every result: measuring its height moved the label's
    minimum height and back, which laid the panel, its splitters and the window out again."""
    from PySide6.QtCore import QCoreApplication, QEvent

    from event_count import EventCount

    panel, label = _panel(qtbot, 300)
    note = "k = 100 queries, δ_g = 1e-06, η = 0.001. Totals are sound upper bounds, rounded up."
    label.setText(note)
    _settled(qtbot, label, label.needed_height())

    QCoreApplication.sendPostedEvents()
    layouts = EventCount(panel, QEvent.Type.LayoutRequest)
    label.setText(note)
    QCoreApplication.sendPostedEvents()
    assert layouts.count == 0
    label.setText(note + " Again.")
    QCoreApplication.sendPostedEvents()
    assert layouts.count == 1
