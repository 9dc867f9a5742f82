"""A job's handlers as Qt signals, so a test can wait for what the controller delivers."""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from dpplanner.gui.compute import Handlers


class Probe(QObject):
    result = Signal(object)
    failed = Signal(str)
    cancelled = Signal()

    @property
    def handlers(self) -> Handlers:
        return Handlers(self.result.emit, self.failed.emit, self.cancelled.emit)
