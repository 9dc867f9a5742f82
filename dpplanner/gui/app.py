"""Start the application: QApplication, the main window, the first plan, the recovery offer."""

from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QApplication

import dpplanner
from dpplanner.gui import gc_guard

ORGANIZATION = "dpplanner"
APPLICATION = "dpplanner"
DEFAULT_EXAMPLE = "psi-survey"
#: The engine process starts once the window's table has been painted, or after this long if no
#: paint comes (a window started minimised).
ENGINE_START_LATEST_MS = 2000
BLAS_THREADS = "OPENBLAS_NUM_THREADS"
#: How often the window looks whether its start-up work is done (spare_start_up), and how many
#: times at most (a minute).
SPARE_POLL_MS = 100
SPARE_POLLS = 600


def make_application(argv: Optional[list[str]] = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    QCoreApplication.setOrganizationName(ORGANIZATION)
    QCoreApplication.setApplicationName(APPLICATION)
    QCoreApplication.setApplicationVersion(dpplanner.__version__)
    app.setDesktopFileName("dpplanner")
    gc_guard.install(app)
    return app


def open_initial_plan(window, plan_path: Optional[str]) -> None:
    """The plan given on the command line, else the example plan (what a first start shows).

    A plan that cannot be opened leaves the window empty with the error shown: silently showing
    an example instead could be taken for the user's plan."""
    from dpplanner.model.examples import example_paths

    if plan_path:
        window.document.open_path(plan_path, confirm=False)
        return
    examples = example_paths()
    if DEFAULT_EXAMPLE in examples:
        window.document.open_example(examples[DEFAULT_EXAMPLE])


def engine_in_process() -> bool:
    """Engine jobs in a child process unless frozen or switched off in the settings."""
    from dpplanner.compute import engine_process
    from dpplanner.gui.settings import Settings

    return bool(Settings().get("engine_in_process")) and engine_process.available()


@contextmanager
def _one_blas_thread():
    """While the window's modules are imported and its first rows computed (their noise
    calibrations import scipy), numpy's and scipy's OpenBLAS start one thread, not one per core:
    this process does no linear algebra (the engine process computes), and the extra threads cost
    CPU at import (about 60 ms, spinning beside the start-up on a busy machine). Processes started
    later (the engine process) get the environment as it was."""
    before = os.environ.get(BLAS_THREADS)
    os.environ.setdefault(BLAS_THREADS, "1")
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(BLAS_THREADS, None)


def start(plan_path: Optional[str] = None):
    """The window as `dpplanner` opens it - built, its first plan open, shown - before the event
    loop runs (which paints it)."""
    make_application()
    from dpplanner.compute import engine_process
    from dpplanner.gui.lazy_canvas import after_first_paint
    in_process = engine_in_process()
    # Made now, started after the first paint: on a busy machine a second interpreter importing
    # numpy and scipy would take turns with the window's own start-up. The first plan's jobs
    # wait for it (they would wait for its imports anyway).
    engine = engine_process.shared(start=False) if in_process else None
    with _one_blas_thread():
        from dpplanner.gui.main_window import MainWindow

        window = MainWindow(engine_in_process=in_process)
        open_initial_plan(window, str(Path(plan_path)) if plan_path else None)
        window.statistics_panel.model.fill_first_paint()
        if len(window.plan):
            window.statistics_panel.model.privacy(0)    # the first screenful, as its paint would
    if engine is not None:
        after_first_paint(window.statistics_panel.view.viewport(), engine.start)
        QTimer.singleShot(ENGINE_START_LATEST_MS, engine.start)
    window.show()
    spare_start_up(window)
    # Offer a recovery copy once the window is up (after a crash last time).
    QTimer.singleShot(0, window.document.offer_recovery)
    return window


def spare_start_up(window) -> QTimer:
    """Leave what the start-up made out of later garbage collections (gc_guard), now and once
    the window's work after its first paint is done: the plot canvas (pyqtgraph) and the rest of
    the engine (warm_up). Otherwise the first collections of the older generations go through
    every one of those objects on the GUI thread: 135 ms of the first edits' time on the
    1000-query example, 11 ms once they are spared.

    The second time only if the plan has not changed meanwhile: a plan opened or edited by then
    would be frozen with them, its cyclic garbage never collected. The window looks every
    SPARE_POLL_MS, and stops at that change, or after SPARE_POLLS looks (a window never painted
    builds no canvas). Returns the timer that looks."""
    from dpplanner.gui import warm_up

    gc_guard.spare_startup_objects()
    poll = QTimer(window, objectName="spare start-up")
    revision = window.plan.revision
    looks = [0]

    def spare_when_done() -> None:
        looks[0] += 1
        if window.plan.revision != revision:
            poll.stop()
        elif window.cost_plot.canvas_built() and window.cost_plot.spares_made() and warm_up.done():
            poll.stop()
            gc_guard.spare_startup_objects()
        elif looks[0] >= SPARE_POLLS:
            poll.stop()

    poll.timeout.connect(spare_when_done)
    poll.start(SPARE_POLL_MS)
    return poll


def run(plan_path: Optional[str] = None) -> int:
    window = start(plan_path)  # noqa: F841 - kept alive while the event loop runs
    return QApplication.instance().exec()
