"""`dpplanner` starts its engine process once the window's table has been painted (gui/app.py):
on a busy machine a second interpreter importing numpy and scipy beside the window's own start-up
delays the first paint. The first plan's jobs wait for it and their totals still arrive; a window
that is never painted gets its engine after ENGINE_START_LATEST_MS."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from PySide6.QtCore import QEvent, QObject

from dpplanner.compute import engine_process
from dpplanner.gui import app, lazy_canvas

pytestmark = pytest.mark.slow       # a spawned engine process


@pytest.fixture
def fresh_engine(monkeypatch):
    """`dpplanner`'s shared engine process, made anew for the test and closed after it."""
    monkeypatch.setattr(app, "engine_in_process", lambda: True)
    monkeypatch.setattr(engine_process, "_shared", None)
    yield
    if engine_process._shared is not None:
        engine_process._shared.close()


class FirstPaint(QObject):
    """Whether the engine process had been started when the widget was first painted."""

    def __init__(self, widget) -> None:
        super().__init__()
        self.engine_started: list[bool] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:     # noqa: N802  (Qt's name)
        if event.type() == QEvent.Type.Paint and not self.engine_started:
            self.engine_started.append(engine_process.shared()._proc is not None)
        return False


def _settled(window) -> bool:
    result = window.evaluation.last_result
    return result is not None and window.evaluation.result_is_current(result)


def _start(qtbot):
    window = app.start()
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    return window


def test_the_engine_process_starts_after_the_first_paint_and_computes_the_plan(qtbot, fresh_engine):
    window = _start(qtbot)
    assert engine_process.shared()._proc is None            # made, not started
    assert window.controller.is_busy("evaluate")           # the plan's totals wait for it
    paint = FirstPaint(window.statistics_panel.view.viewport())
    qtbot.waitUntil(lambda: _settled(window))
    assert paint.engine_started == [False]
    assert engine_process.shared()._proc.is_alive()
    assert window.results_panel.isVisible() and window.evaluation.last_result.totals


def test_a_window_never_painted_gets_its_engine_all_the_same(qtbot, fresh_engine, monkeypatch):
    monkeypatch.setattr(lazy_canvas, "after_first_paint", lambda widget, callback: None)
    monkeypatch.setattr(app, "ENGINE_START_LATEST_MS", 10)
    window = _start(qtbot)
    qtbot.waitUntil(lambda: _settled(window))
    assert engine_process.shared()._proc.is_alive()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task") or (os.cpu_count() or 1) < 2,
                    reason="counts threads in /proc; one core starts no BLAS threads anyway")
def test_the_window_imports_numpy_with_one_blas_thread_and_leaves_the_environment_as_it_was():
    code = ("import os\n"
            "from dpplanner.gui import app\n"
            "before = len(os.listdir('/proc/self/task'))\n"
            "with app._one_blas_thread():\n"
            "    import numpy\n"
            "print(len(os.listdir('/proc/self/task')) - before, os.environ.get(app.BLAS_THREADS))\n")
    env = {k: v for k, v in os.environ.items() if k != app.BLAS_THREADS}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.split() == ["0", "None"]
