"""What a result changes on screen, drawn a piece a turn of the event loop.

A result's slot and the events it posts (the repaints and layouts of what it changed) run back to
back: nothing else runs in between (a timer waits until the event loop is idle), so their costs
add up to one stall. A piece queued here runs on a timer's turn of its own, once the events
posted before it are handled, one piece a turn: the longest stall is the largest piece, not the
sum (the cost plot's paint, the budget panel's sentence laying the left column out again).
"""

from __future__ import annotations

from typing import Callable, Hashable

from PySide6.QtCore import QObject, QTimer


class Turns(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pieces: dict[Hashable, Callable[[], None]] = {}
        self._armed = False
        self._timer = QTimer(self, singleShot=True, interval=0)
        self._timer.timeout.connect(self._run_next)

    def later(self, key: Hashable, piece: Callable[[], None], first: bool = False) -> None:
        """Run ``piece`` on a turn of its own after the pieces queued before it (``first``: before
        them); queued again under the same ``key`` before it ran, it runs once, in its first place
        (``first``: at the front)."""
        if first:
            self._pieces = {key: piece, **{k: p for k, p in self._pieces.items() if k != key}}
        else:
            self._pieces[key] = piece
        self._arm()

    def pending(self, key: Hashable | None = None) -> bool:
        """Whether a piece (under ``key``, or any) is still to run."""
        return bool(self._pieces) if key is None else key in self._pieces

    def _arm(self) -> None:
        if self._armed or self._timer.isActive():
            return
        self._armed = True
        # The timer is started by a posted event, after those posted before it: started now, it
        # could fire before them and join their stall.
        QTimer.singleShot(0, self, self._start)

    def _start(self) -> None:
        self._armed = False
        if self._pieces:
            self._timer.start()

    def _run_next(self) -> None:
        if not self._pieces:
            return
        key = next(iter(self._pieces))
        try:
            self._pieces.pop(key)()
        finally:        # a piece that raised must not leave the ones after it (the plot's paint) unrun
            if self._pieces:
                self._arm()
