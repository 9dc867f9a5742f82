"""Python's cyclic garbage collector runs on the GUI thread only.

Left automatic, a collection runs in whichever thread allocates when a threshold is crossed, most
often the compute worker, which allocates the most. A collected cycle that holds a Qt wrapper
then destroys its C++ object from the worker while the GUI thread uses Qt: a segfault or a
deadlock inside Edit > Undo, found by the soak test (seed 106, and the stale-totals check).
Automatic collection is therefore switched off and a timer on the GUI thread collects the
generations that are due, by the collector's own thresholds.
"""

from __future__ import annotations

import gc

from PySide6.QtCore import QObject, QTimer

#: How often the GUI thread looks at the collector's counts. Cheap (three integers) when nothing
#: is due; a young-generation collection takes well under a millisecond.
INTERVAL_MS = 200


class GuiThreadCollector(QObject):
    """Owned by the application; collects on the thread it lives in (the GUI thread)."""

    def __init__(self, parent: QObject) -> None:
        super().__init__(parent)
        self.thresholds = gc.get_threshold()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.collect_due)
        self._timer.start(INTERVAL_MS)

    def collect_due(self) -> int:
        """Collect the oldest generation whose count passed its threshold; returns it, or -1."""
        counts = gc.get_count()
        for generation in (2, 1, 0):
            if counts[generation] > self.thresholds[generation]:
                gc.collect(generation)
                return generation
        return -1

    def close(self) -> None:
        """Automatic collection again (a test session that leaves the GUI tests)."""
        self._timer.stop()
        gc.enable()
        self.setParent(None)


def spare_startup_objects() -> None:
    """Leave every object alive now out of all later collections (``gc.freeze``): called once the
    window is built, when what exists - modules, classes, the window - lives as long as the
    application. Collections then look only at what the plan and its results allocate. Without
    it the first one, due before the first paint, went through every object the window's imports
    (scipy, pyqtgraph, Qt's enums) had made since automatic collection was switched off, and the
    older generations' collections went through them again later."""
    gc.freeze()


def install(app: QObject) -> GuiThreadCollector:
    """Once per application (later calls return the same collector)."""
    collector = app.findChild(GuiThreadCollector)
    return collector if collector is not None else GuiThreadCollector(app)
