"""A plot widget whose pyqtgraph canvas is built on first use, not with the widget.

Importing pyqtgraph and building a plot costs about as much CPU as the rest of the window's
start-up, and the window's first paint (the table with the plan) needs none of it. A plot keeps
its options and data as plain state from the start; its canvas (``CANVAS``: the pyqtgraph objects)
is built by ``build_canvas``: by the main window once the table has been painted, when a hidden
plot's tab is first shown (``BUILD_WHEN_SHOWN``), or by the first read of a canvas attribute.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QLayout, QVBoxLayout, QWidget


class LazyCanvas(QWidget):
    #: Attributes made by ``_build_canvas``: reading one before builds the canvas.
    CANVAS: frozenset[str] = frozenset()
    #: Build when the widget is first shown (a plot in a tab that is not the first one).
    BUILD_WHEN_SHOWN = True

    def __getattr__(self, name: str):
        # Only reached for attributes that do not exist (yet).
        if name in type(self).CANVAS and not self.__dict__.get("_canvas_built", False):
            self.build_canvas()
            return getattr(self, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def canvas_built(self) -> bool:
        return self.__dict__.get("_canvas_built", False)

    def build_canvas(self) -> None:
        """Build the canvas now (once) and draw the state kept so far on it."""
        if self.canvas_built():
            return
        self._canvas_built = True
        self._build_canvas()

    def _build_canvas(self) -> None:
        raise NotImplementedError

    def _lay_out(self, *below) -> None:
        """A column: the canvas's place (a stretch until it is built), then ``below`` (widgets
        or layouts)."""
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addStretch(1)
        for item in below:
            (layout.addLayout if isinstance(item, QLayout) else layout.addWidget)(item)

    def _place_canvas(self, view: QWidget) -> None:
        """Put the canvas where the stretch at the top of the widget's layout kept its place."""
        layout = self.layout()
        layout.removeItem(layout.itemAt(0))
        layout.insertWidget(0, view, 1)

    def showEvent(self, event) -> None:     # noqa: N802  (Qt's name)
        if self.BUILD_WHEN_SHOWN:
            self.build_canvas()
        super().showEvent(event)


class _FirstPaint(QObject):
    def __init__(self, widget: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(widget)
        self._callback = callback
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:     # noqa: N802  (Qt's name)
        if event.type() == QEvent.Type.Paint:
            watched.removeEventFilter(self)
            # After this paint has reached the screen, not inside it.
            QTimer.singleShot(0, self._callback)
            self.deleteLater()
        return False


def after_first_paint(widget: QWidget, callback: Callable[[], None]) -> None:
    """Call ``callback`` once, right after ``widget`` is first painted."""
    _FirstPaint(widget, callback)
