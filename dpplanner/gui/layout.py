"""The window's panel sizes: the default layout, and the saved one restored only while it is usable.

A layout saved by an earlier session can be one no person would choose: a window wider than this
screen, or a column squeezed below what its panels need (an earlier version let a long hover
read-out raise the plot column's minimum width, and the saved splitter then kept the left column
collapsed in every later session). On start the saved window and splitter sizes are checked and
whatever is unusable is put back to the default; splitters never collapse a panel to nothing.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QMainWindow, QSplitter

#: Bumped whenever the panels are rearranged: splitter states saved for another arrangement are
#: ignored (restoring them would size the wrong panels).
LAYOUT_VERSION = 2
#: The main split gives each column at least this share of the window.
MIN_COLUMN_SHARE = 0.3
#: The left (document) column's default share of the window: at 1280 px its table shows every
#: default column of a plan of grouped statistics (census-tables: an error "± 4,920 income per
#: group" is 192 px) without scrolling sideways, and the right column still holds the totals and
#: the plots' controls whole (0.55 left the pin column cut off behind a sideways scroll bar).
LEFT_SHARE = 0.57


def splitters(window) -> dict[str, QSplitter]:
    return {"main": window.main_split, "left": window.left, "right": window.right}


def default_layout(window: QMainWindow) -> None:
    """The panels' default sizes for the window's current size."""
    width = max(window.width(), 1000)
    height = max(window.height(), 600)
    left = int(width * LEFT_SHARE)
    window.main_split.setSizes([left, width - left])
    budget = window.budget_panel.sizeHint().height()
    window.left.setSizes([budget, max(height - budget, 200)])
    results = window.results_panel.preferred_height()
    window.right.setSizes([results, max(height - results, 300)])


def restore_layout(window: QMainWindow, settings) -> None:
    """The saved window geometry and panel sizes where they are usable, the defaults elsewhere."""
    for splitter in splitters(window).values():
        splitter.setChildrenCollapsible(False)
    geometry = settings.window_geometry()
    if geometry is not None and window.restoreGeometry(geometry):
        fit_to_screen(window)
    else:
        window.resize(1280, 800)
    state = settings.window_state()
    if state is not None:
        window.restoreState(state)
    # Lay the hidden window out at its size now: splitter sizes are set and checked against the
    # panels' real extents, not those of a window not yet shown.
    window.layout().activate()
    window.centralWidget().layout().activate()      # (the panels under an export's refusal)
    default_layout(window)
    if settings.layout_version() != LAYOUT_VERSION:
        return
    for name, splitter in splitters(window).items():
        saved = settings.splitter_state(name)
        if saved is None:
            continue
        before = splitter.sizes()
        if not splitter.restoreState(saved) or not usable(splitter, name == "main"):
            splitter.setSizes(before)       # the default for this one


def usable(splitter: QSplitter, columns: bool = False) -> bool:
    """Every panel gets at least its minimum size; the two columns each a fair share."""
    sizes = splitter.sizes()
    total = sum(sizes)
    if total <= 0 or len(sizes) != splitter.count():
        return False
    horizontal = splitter.orientation() == Qt.Orientation.Horizontal
    for i, size in enumerate(sizes):
        hint = splitter.widget(i).minimumSizeHint()
        need = hint.width() if horizontal else hint.height()
        if size <= 0 or size < need:
            return False
        if columns and size < MIN_COLUMN_SHARE * total:
            return False
    return True


def fit_to_screen(window: QMainWindow) -> None:
    """A window larger than the screen it is on (a saved size from a bigger screen, or one a
    layout bug grew) is made to fit and moved into view."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None:
        return
    room: QRect = screen.availableGeometry()
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()
    width = min(window.width(), room.width() - extra_w)
    height = min(window.height(), room.height() - extra_h)
    if (width, height) != (window.width(), window.height()):
        window.resize(max(width, 1), max(height, 1))
    frame = window.frameGeometry()
    if not room.contains(frame):
        x = min(max(frame.x(), room.x()), room.right() - frame.width() + 1)
        y = min(max(frame.y(), room.y()), room.bottom() - frame.height() + 1)
        window.move(max(x, room.x()), max(y, room.y()))


def save_layout(window: QMainWindow, settings) -> None:
    settings.save_window(window.saveGeometry(), window.saveState(),
                         {n: s.saveState() for n, s in splitters(window).items()}, LAYOUT_VERSION)
