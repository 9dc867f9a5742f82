"""``dpplanner --smoke-test``: prove an installed or frozen app works, end to end, offscreen.

Opens the main window offscreen, loads an example plan, runs one full composition through the
compute controller's worker thread, saves and reloads the plan in a temporary folder and checks
the reloaded plan is the same. Exit code 0 on success; otherwise 1 with the failing step on stderr
(2 if a step hangs past the time limit). Settings, the recovery copy and the saved plan go to a
temporary folder, never the user's. Prints ``startup_seconds=`` (process launch to shown window)
when the launcher passes its launch time in ``DPPLANNER_LAUNCH_TIME`` (packaging/package_test.py
does), and ``window_seconds=`` (this function's start to shown window) always.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path
from typing import Any

import dpplanner
from dpplanner.model import display

#: The whole smoke test must finish within this many seconds (a frozen cold start included).
SMOKE_TIMEOUT_S = 120.0
#: Small (8 statistics), so the optimal composition is quick, yet it exercises every theorem.
SMOKE_EXAMPLE = "psi-survey"
#: Exit code when a step hangs: the watchdog ends the process without waiting for Qt.
TIMEOUT_EXIT_CODE = 2


class SmokeFailure(Exception):
    """A smoke-test step failed; ``step`` names it for the message."""

    def __init__(self, step: str, message: str) -> None:
        super().__init__(message)
        self.step = step


def run(timeout_s: float = SMOKE_TIMEOUT_S, example: str = SMOKE_EXAMPLE) -> int:
    """Run the smoke test; returns the process exit code (0 = everything worked)."""
    started = time.perf_counter()
    watchdog = threading.Timer(timeout_s, _give_up, args=(timeout_s,))
    watchdog.daemon = True
    watchdog.start()
    try:
        with tempfile.TemporaryDirectory(prefix="dpplanner-smoke-") as tmp:
            report = _smoke(Path(tmp), started, deadline=time.monotonic() + timeout_s, example=example)
    except SmokeFailure as exc:
        print(f"smoke test FAILED at {exc.step}: {exc}", file=sys.stderr)
        return 1
    except Exception:  # noqa: BLE001 - any crash is a failed smoke test, with its traceback
        print("smoke test FAILED with an unexpected error:\n" + traceback.format_exc(), file=sys.stderr)
        return 1
    finally:
        watchdog.cancel()
    for line in report:
        print(line)
    print("smoke test passed")
    sys.stdout.flush()
    return 0


def _give_up(timeout_s: float) -> None:
    print(f"smoke test FAILED: no result within {timeout_s:.0f} s (a step hung)", file=sys.stderr)
    sys.stderr.flush()
    os._exit(TIMEOUT_EXIT_CODE)   # the GUI thread may be stuck: do not wait for it


def _smoke(tmp: Path, started: float, deadline: float, example: str) -> list[str]:
    _isolate(tmp)
    from PySide6.QtCore import QSettings

    from dpplanner.gui.app import make_application
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings
    from dpplanner.model import files
    from dpplanner.model.examples import example_path

    _app = make_application()        # held until the window is closed: Qt needs it alive
    report: list[str] = []

    # -- the main window, shown (offscreen) -------------------------------------------------------
    settings = Settings(QSettings(str(tmp / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(tmp / "recovery"), debounce_ms=0)
    dialogs = _DialogGuard()
    try:
        window.show()
        _spin()                          # deliver the show, expose and first paint events
        if not window.isVisible() or window.windowHandle() is None or not window.windowHandle().isExposed():
            raise SmokeFailure("show window", "the main window was not shown")
        shown = time.perf_counter()
        report.append(f"window_seconds={shown - started:.3f}")
        launched = os.environ.get("DPPLANNER_LAUNCH_TIME")
        if launched:
            report.append(f"startup_seconds={time.time() - float(launched):.3f}")
        # The icon is read from resources/icons (next to the examples, or in the frozen bundle): a
        # null icon means the package lost its resources.
        if window.windowIcon().isNull():
            raise SmokeFailure("show window", "the main window has no icon (resources/icons not found)")

        # -- load an example plan ---------------------------------------------------------------
        try:
            source = example_path(example)
        except ValueError as exc:
            raise SmokeFailure("load example", str(exc)) from None
        opened = window.document.open_example(source)
        dialogs.check("load example")
        if not opened:
            raise SmokeFailure("load example", f"the window could not open {source}")
        if len(window.plan) == 0:
            raise SmokeFailure("load example", f"{source.name} opened with no statistics")
        report.append(f"smoke: opened {source.name} ({len(window.plan)} statistics, k={window.plan.k})")

        # -- one full composition through the window's worker thread ------------------------------
        result = _wait_for_evaluation(window, deadline)
        dialogs.check("composition")
        report.append(_check_totals(result))

        # -- save, then reopen through the window, in the temporary folder --------------------
        saved = tmp / "smoke.dpplan"
        expected = files.dumps_plan(window.plan)
        try:
            files.save_plan(window.plan, saved)
        except ValueError as exc:
            raise SmokeFailure("save", str(exc)) from None
        reopened = window.document.open_path(saved, confirm=False)
        dialogs.check("reload")
        if not reopened:
            raise SmokeFailure("reload", f"the window could not reopen {saved}")
        if files.dumps_plan(window.plan) != expected:
            raise SmokeFailure("reload", f"{saved.name} reopened differs from the plan that was saved")
        report.append(f"smoke: saved and reopened {saved.name} ({saved.stat().st_size} bytes), identical")

        # -- Help shows the documentation shipped with the app (docs/, found by help_docs) ------
        help_window = window.show_help()
        shown = help_window.browser.toPlainText()
        if help_window.browser.source().isEmpty() or len(shown) < 200:
            raise SmokeFailure("help", "the Help window shows no page (docs/ not found)")
        report.append(f"smoke: Help shows {help_window.browser.source().fileName()} "
                      f"({len(shown)} characters); dpplanner {dpplanner.__version__}")
    finally:
        # -- close: the window saves its state to the temporary settings and stops the worker ----
        window.close()
        dialogs.stop()
        if window.isVisible():           # refused (a dialog was dismissed): stop the worker anyway
            window.controller.shutdown()
    dialogs.check("close")
    if window.isVisible():
        raise SmokeFailure("close", "the main window refused to close")
    # Deliver what the close posted (the plots' moves and resizes, deferred deletes) while Python
    # can still run pyqtgraph's overrides: left to PySide's teardown at exit, they ended the
    # process with a segmentation fault after "smoke test passed" (7 runs in 16; 0 in 64 since).
    _spin()
    return report


class _DialogGuard:
    """Dismisses any modal dialog (an error box, a save prompt) and remembers what it said, so a
    smoke test never waits for a click that nobody will make offscreen."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer

        self.seen: list[str] = []
        self._timer = QTimer()
        self._timer.setInterval(50)
        self._timer.timeout.connect(self._dismiss)
        self._timer.start()

    def _dismiss(self) -> None:
        from PySide6.QtWidgets import QApplication, QMessageBox

        dialog = QApplication.activeModalWidget()
        if dialog is None:
            return
        text = dialog.text() if isinstance(dialog, QMessageBox) else ""
        self.seen.append(f"{dialog.windowTitle()}: {text}" if text else dialog.windowTitle())
        dialog.reject()

    def check(self, step: str) -> None:
        if self.seen:
            seen, self.seen = self.seen, []
            raise SmokeFailure(step, "a dialog appeared: " + " | ".join(seen))

    def stop(self) -> None:
        self._timer.stop()


def _spin() -> None:
    """Run the event loop until the events queued so far (show, expose, paint) are handled."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(0, loop.quit)
    loop.exec()


def _isolate(tmp: Path) -> None:
    """Offscreen, with settings in ``tmp``: a smoke test leaves no trace in the user's settings.

    The window gets its own settings file and recovery folder explicitly; the default QSettings
    location is redirected as well, for anything that opens ``QSettings()`` on its own.
    """
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp / "settings"))


def _wait_for_evaluation(window: Any, deadline: float) -> Any:
    """Run the event loop until the window's worker has delivered the totals of the plan as it
    stands (a redistribution on load may change the plan and trigger another evaluation)."""
    from PySide6.QtCore import QEventLoop, Qt, QTimer

    failures: list[str] = []
    loop = QEventLoop()

    def current() -> bool:
        result = window.evaluation.last_result
        return (result is not None and not window.controller.is_busy()
                and window.evaluation.result_is_current(result))

    def check(*_args: Any) -> None:
        if current():
            loop.quit()

    def on_failed(message: str) -> None:
        failures.append(f"evaluate: {message}")
        loop.quit()

    # Queued, so the window's own slots have stored the result (and the controller has updated
    # its busy state) before ``current()`` looks.
    window.evaluation.evaluated.connect(check, Qt.ConnectionType.QueuedConnection)
    window.controller.busyChanged.connect(check, Qt.ConnectionType.QueuedConnection)
    window.evaluation.evaluationFailed.connect(on_failed)
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    timer.start(max(1, int((deadline - time.monotonic()) * 1000)))
    if not current():
        loop.exec()
    timer.stop()
    if failures:
        raise SmokeFailure("composition", "the worker reported: " + "; ".join(failures))
    if not current():
        raise SmokeFailure("composition", "no up-to-date result from the worker thread before the "
                                          "time limit")
    return window.evaluation.last_result


def _check_totals(result: Any) -> str:
    """The composition must have a best theorem with a finite total, and every certified lower
    bound must lie below its upper bound."""
    if not result.totals:
        raise SmokeFailure("composition", "the result holds no totals")
    for name, total in result.totals.items():
        if total.epsilon_lower is not None and not total.epsilon_lower <= total.epsilon:
            raise SmokeFailure("composition", f"{name}: certified lower bound {total.epsilon_lower} "
                                              f"exceeds the upper bound {total.epsilon}")
    if result.best is None or not math.isfinite(result.totals[result.best].epsilon):
        raise SmokeFailure("composition", "no theorem gave a finite total epsilon")
    best = result.totals[result.best]
    return (f"smoke: composed {len(result.totals)} theorems on the worker thread; best "
            f"{result.best}: epsilon <= {display.upper(best.epsilon, 6)} at delta {display.upper(best.delta, 3)}")
