"""Start the application: QApplication, the main window, the first plan, the recovery offer."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

from PySide6.QtCore import QCoreApplication, QTimer
from PySide6.QtWidgets import QApplication

import dpplanner
from dpplanner.gui import gc_guard

ORGANIZATION = "dpplanner"
APPLICATION = "dpplanner"
DEFAULT_EXAMPLE = "psi-survey"


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


def start(plan_path: Optional[str] = None):
    """The window as `dpplanner` opens it - built, its first plan open, shown - before the event
    loop runs (which paints it)."""
    make_application()
    from dpplanner.gui.main_window import MainWindow

    window = MainWindow(engine_in_process=engine_in_process())
    open_initial_plan(window, str(Path(plan_path)) if plan_path else None)
    window.show()
    gc_guard.spare_startup_objects()
    # Offer a recovery copy once the window is up (after a crash last time).
    QTimer.singleShot(0, window.document.offer_recovery)
    return window


def run(plan_path: Optional[str] = None) -> int:
    window = start(plan_path)  # noqa: F841 - kept alive while the event loop runs
    return QApplication.instance().exec()
