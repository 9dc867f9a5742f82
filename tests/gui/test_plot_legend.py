"""The cost plot's legend draws each theorem's sample as its curve is drawn now: curves of at most
20 points have point markers, and when a typed number of releases takes the plan past 20 (or back)
the legend's samples on screen lose (or regain) them with the curves."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QImage
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from dpplanner.model import files
from dpplanner.model.examples import example_path
from keys import handle_posted_events, open_cell, retype, wait_idle


def _type_releases(qtbot, window, text: str) -> None:
    editor = open_cell(window, 0, "repetitions")
    retype(editor, text)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    handle_posted_events()


def _stale_samples(window) -> list[str]:
    """The legend's samples whose pixels on screen (the window's backing store, as last drawn)
    differ from a fresh paint of the plot."""
    plot = window.cost_plot
    screen = QApplication.primaryScreen().grabWindow(window.winId()).toImage()
    stale = []
    for sample, label in plot.legend.items:
        rect = plot.view.mapFromScene(sample.sceneBoundingRect()).boundingRect()
        corner = plot.view.mapTo(window, rect.topLeft())
        shown = screen.copy(corner.x(), corner.y(), rect.width(), rect.height())
        fresh = plot.view.grab(rect).toImage()
        fmt = QImage.Format.Format_RGB32
        if shown.convertToFormat(fmt) != fresh.convertToFormat(fmt):
            stale.append(label.text)
    return stale


def test_the_legend_samples_follow_the_curves_markers(qtbot, shown):
    shown.document.load(files.load_plan(example_path("psi-survey")), None, "psi-survey")
    wait_idle(qtbot, shown)
    handle_posted_events()
    items = shown.cost_plot.items
    assert items and all(item.opts["symbol"] == "o" for item in items.values())
    assert _stale_samples(shown) == []
    _type_releases(qtbot, shown, "30")         # k past 20: no markers
    assert all(item.opts["symbol"] is None for item in items.values())
    assert _stale_samples(shown) == []
    _type_releases(qtbot, shown, "1")          # back to a few points: markers again
    assert all(item.opts["symbol"] == "o" for item in items.values())
    assert _stale_samples(shown) == []
