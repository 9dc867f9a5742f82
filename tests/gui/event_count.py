"""Counting the events of one type a widget is given (paints, layout requests), for the GUI tests
that check a change redraws or lays out no more than it must."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QEvent, QObject


class EventCount(QObject):
    """``count``: the events of type ``kind`` ``widget`` has been given since this was made, those
    while ``when()`` holds only."""

    def __init__(self, widget, kind: QEvent.Type = QEvent.Type.Paint,
                 when: Callable[[], bool] = lambda: True) -> None:
        super().__init__()
        self.kind, self.when, self.count = kind, when, 0
        widget.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:     # noqa: N802  (Qt's name)
        if event.type() == self.kind and self.when():
            self.count += 1
        return False
