"""``dpplanner --smoke-test``: passes on a working app, fails loudly (and in time) otherwise."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import time

import pytest

import dpplanner
from dpplanner.gui import smoke

SUBPROCESS_TIMEOUT_S = 300

# Qt's offscreen platform plugin has no window manager to pass size hints to; harmless here.
pytestmark = pytest.mark.qt_log_ignore(r"^This plugin does not support propagateSizeHints\(\)$")


def test_smoke_test_passes_in_process(qapp, capsys):
    assert smoke.run() == 0
    out = capsys.readouterr().out
    assert "smoke: opened psi-survey.dpplan" in out
    assert "smoke: composed" in out and "best " in out
    assert "identical" in out
    assert "smoke: Help shows window.md" in out and f"dpplanner {dpplanner.__version__}" in out
    assert out.rstrip().endswith("smoke test passed")


def test_the_window_has_finished_closing_when_the_smoke_test_returns(qapp, capsys):
    # What the close posts to the plots, left to PySide's teardown at exit, crashed the process
    # after "smoke test passed" (a segmentation fault in about 4 runs of 10).
    from PySide6.QtCore import QCoreApplication, QEvent, QObject

    class Pending(QObject):
        def __init__(self) -> None:
            super().__init__()
            self.types: set[str] = set()

        def eventFilter(self, _obj, event) -> bool:
            self.types.add(event.type().name)
            return False

    assert smoke.run() == 0
    pending = Pending()
    qapp.installEventFilter(pending)
    try:
        QCoreApplication.sendPostedEvents()
    finally:
        qapp.removeEventFilter(pending)
    closing = {QEvent.Type.DeferredDelete.name, QEvent.Type.GraphicsSceneResize.name,
               QEvent.Type.GraphicsSceneMove.name, QEvent.Type.PolishRequest.name}
    assert not pending.types & closing


def test_without_its_documentation_the_smoke_test_fails(qapp, capsys, monkeypatch):
    monkeypatch.setattr("dpplanner.gui.help_pages.docs_root", lambda: None)
    assert smoke.run() == 1
    assert "smoke test FAILED at help: the Help window shows no page" in capsys.readouterr().err


def test_unknown_example_fails_with_the_step_and_the_known_names(qapp, capsys):
    assert smoke.run(example="no-such-plan") == 1
    err = capsys.readouterr().err
    assert "smoke test FAILED at load example: no example plan called 'no-such-plan'" in err
    assert "psi-survey" in err


def test_worker_failure_fails_the_smoke_test(qapp, capsys, monkeypatch):
    def broken(*args, **kwargs):
        raise ValueError("engine broken on purpose")

    # what jobs.evaluate calls (the module: the package's name "compose" is the function)
    monkeypatch.setattr(importlib.import_module("dpplanner.engine.compose"), "compose_rows", broken)
    assert smoke.run() == 1
    err = capsys.readouterr().err
    assert "FAILED at composition: the worker reported: evaluate: engine broken on purpose" in err


def run_smoke_subprocess(code: str, **env) -> subprocess.CompletedProcess:
    environment = dict(os.environ, QT_QPA_PLATFORM="offscreen", **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=environment, timeout=SUBPROCESS_TIMEOUT_S)


@pytest.mark.slow                   # a fresh Python process with Qt
def test_hung_step_ends_the_process_with_the_timeout_code():
    # The worker sleeps far longer than the smoke test's time limit: the watchdog must end it.
    code = ("import sys, time\n"
            "import importlib\n"
            "compose = importlib.import_module('dpplanner.engine.compose')\n"
            "compose.compose_rows = lambda *args, **kwargs: time.sleep(600)\n"
            "from dpplanner.gui import smoke\n"
            "sys.exit(smoke.run(timeout_s=3))\n")
    proc = run_smoke_subprocess(code)
    assert proc.returncode == smoke.TIMEOUT_EXIT_CODE, proc.stderr
    assert "smoke test FAILED: no result within 3 s" in proc.stderr


@pytest.mark.slow                   # a fresh Python process with Qt
def test_command_line_flag_reports_startup_time():
    launched = time.time()
    code = "import sys\nfrom dpplanner.__main__ import main\nsys.exit(main(['--smoke-test']))\n"
    proc = run_smoke_subprocess(code, DPPLANNER_LAUNCH_TIME=repr(launched))
    assert proc.returncode == 0, proc.stderr
    lines = dict(line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line)
    startup = float(lines["startup_seconds"])
    window = float(lines["window_seconds"])
    # Launch-to-window includes interpreter start-up and imports, so it cannot be shorter.
    assert 0 < window <= startup <= time.time() - launched


def test_missing_icon_fails_the_smoke_test(qapp, capsys, monkeypatch):
    # What a bundle that lost resources/icons looks like to the window.
    monkeypatch.setattr("dpplanner.gui.main_window._app_icon", lambda: None)
    assert smoke.run() == 1
    assert "FAILED at show window: the main window has no icon" in capsys.readouterr().err


@pytest.mark.real_error_boxes
def test_error_dialog_is_dismissed_and_reported(qapp, capsys, monkeypatch):
    # Reopening the saved plan fails: the window shows a warning box, which nobody can click
    # offscreen. The smoke test must close it, report what it said, and not hang.
    from dpplanner.model import files

    real_load = files.load_plan

    def load_plan(path, *args, **kwargs):
        if str(path).endswith("smoke.dpplan"):
            raise files.PlanFileError(f"{path}: unreadable on purpose")
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(files, "load_plan", load_plan)
    assert smoke.run(timeout_s=60) == 1
    err = capsys.readouterr().err
    assert "FAILED at reload: a dialog appeared: Cannot open the plan: " in err
    assert "unreadable on purpose" in err
