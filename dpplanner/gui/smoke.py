"""``dpplanner --smoke-test``: prove an installed or frozen app works, end to end, offscreen.

Opens the main window offscreen, loads an example plan, runs one full composition through the
compute controller's worker thread, saves and reloads the plan in a temporary folder and checks
the reloaded plan is the same. Exit code 0 on success; otherwise 1 with the failing step on stderr
(2 if a step hangs past the time limit). Settings and files go to a temporary folder, never the
user's. Prints ``startup_seconds=`` (process launch to shown window) when the launcher passes its
launch time in ``DPPLANNER_LAUNCH_TIME`` (packaging/package_test.py does), and
``window_seconds=`` (this function's start to shown window) always.
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
from typing import Any, Callable

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
    from PySide6.QtCore import QCoreApplication
    from PySide6.QtWidgets import QApplication

    from dpplanner.gui.compute import ComputeController
    from dpplanner.gui.jobs import EvaluateRequest, evaluate
    from dpplanner.model import files
    from dpplanner.model.examples import example_path

    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "dpplanner"])
    QCoreApplication.setOrganizationName("dpplanner-smoke-test")
    report: list[str] = []

    # -- load an example plan -------------------------------------------------------------------
    try:
        source = example_path(example)
        plan = files.load_plan(source)
    except ValueError as exc:
        raise SmokeFailure("load example", str(exc)) from None
    report.append(f"smoke: loaded {source.name} ({len(plan)} statistics, k={plan.k})")

    # -- one full composition through the worker thread -------------------------------------------
    controller = ComputeController(debounce_ms=0)
    try:
        inputs = plan.composition_inputs()
        request = EvaluateRequest(inputs.epsilons, inputs.deltas, inputs.multiplicities,
                                  inputs.delta_g, inputs.eta)
        result = _wait_for_result(app, controller, "smoke", evaluate, request, deadline)
    finally:
        controller.shutdown()
    report.append(_check_totals(result))

    # -- save and reload in the temporary folder ------------------------------------------------
    saved = tmp / "smoke.dpplan"
    try:
        files.save_plan(plan, saved)
        reloaded = files.load_plan(saved)
    except ValueError as exc:
        raise SmokeFailure("save and reload", str(exc)) from None
    if files.dumps_plan(reloaded) != files.dumps_plan(plan):
        raise SmokeFailure("save and reload", f"{saved} reloaded differs from the plan that was saved")
    report.append(f"smoke: saved and reloaded {saved.name} ({saved.stat().st_size} bytes), identical")
    return report


def _isolate(tmp: Path) -> None:
    """Offscreen, with settings and app data in ``tmp``: a smoke test leaves no trace."""
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    if QApplication.instance() is None:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    for name in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        os.environ[name] = str(tmp / name.lower())
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp / "settings"))


def _wait_for_result(app: Any, controller: Any, channel: str, fn: Callable, request: Any,
                     deadline: float) -> Any:
    """Submit one job and run the event loop until its result (or failure) arrives."""
    from PySide6.QtCore import QEventLoop, QTimer

    outcome: dict[str, Any] = {}
    loop = QEventLoop()

    def on_result(name: str, result: Any) -> None:
        if name == channel:
            outcome["result"] = result
            loop.quit()

    def on_failed(name: str, message: str) -> None:
        if name == channel:
            outcome["error"] = message
            loop.quit()

    controller.resultReady.connect(on_result)
    controller.failed.connect(on_failed)
    request_id = controller.submit(channel, fn, request)
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    timer.start(max(1, int((deadline - time.monotonic()) * 1000)))
    loop.exec()
    timer.stop()
    if "error" in outcome:
        raise SmokeFailure("composition", f"the worker reported: {outcome['error']}")
    if "result" not in outcome:
        raise SmokeFailure("composition", "no result from the worker thread before the time limit")
    result = outcome["result"]
    if result.request_id != request_id:
        raise SmokeFailure("composition", f"got the result of request {result.request_id}, "
                                          f"expected {request_id}")
    return result


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
            f"{result.best}: epsilon <= {best.epsilon:.6g} at delta {best.delta:.3g}")
