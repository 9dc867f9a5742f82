"""The statistics' names under the Shares & errors plot: shown only when each fits its
statistic's room in the plot area at the window's current width, else the statistics' numbers
with the axis title saying so - decided again when the window is resized."""

from __future__ import annotations

from PySide6.QtGui import QPainter, QPicture

from dpplanner.model.examples import example_path
from keys import handle_posted_events, show_tab, wait_idle

NUMBERS = "statistic number (as in the table)"


def drawn_names(plot) -> list[tuple[float, float, str]]:
    """(left, right, text) of each text the lower plot's bottom axis draws, as pyqtgraph lays
    them out (it leaves out a text that sticks out of the axis)."""
    axis = plot.error_plot.getAxis("bottom")
    picture = QPicture()
    painter = QPainter(picture)
    if axis.style["tickFont"]:
        painter.setFont(axis.style["tickFont"])
    _axis, _ticks, texts = axis.generateDrawSpecs(painter)
    painter.end()
    return sorted((rect.left(), rect.right(), text) for rect, _flags, text in texts)


def assert_names_fit_or_numbers(plot, count: int) -> bool:
    """True when the names are shown: every one, each within its statistic's room."""
    vb = plot.error_plot.vb
    x0, x1 = vb.viewRange()[0]
    room = vb.width() / (x1 - x0)
    title = plot.error_plot.getAxis("bottom").labelText
    texts = drawn_names(plot)
    if title == NUMBERS:
        assert all(text.isdigit() for _l, _r, text in texts), texts
        return False
    assert title == "" and len(texts) == count, texts           # none left out
    assert all(right - left <= room for left, right, _t in texts), (room, texts)
    assert all(a[1] <= b[0] for a, b in zip(texts, texts[1:])), texts     # none overlaps the next
    return True


def test_names_under_the_shares_fit_their_room_or_give_way_to_numbers(qtbot, shown):
    """census-tables' 7 names, ~80-95 px each: numbers at 1280 x 800 (where the plot area gives
    each statistic ~65 px) and at 1600 x 900 (~80 px), names at 2400 x 1000 (~130 px)."""
    window = shown                      # 1280 x 800
    window.document.open_example(example_path("census-tables"), confirm=False)
    wait_idle(qtbot, window)
    show_tab(window, "Shares & errors")
    handle_posted_events()
    plot, count = window.shares_plot, len(window.plan)
    shown_names = []
    for size in ((1280, 800), (1600, 900), (2400, 1000), (1280, 800)):
        window.resize(*size)
        handle_posted_events()
        shown_names.append(assert_names_fit_or_numbers(plot, count))
    assert shown_names == [False, False, True, False]
    assert [t for _l, _r, t in drawn_names(plot)] == [str(i) for i in range(1, count + 1)]
