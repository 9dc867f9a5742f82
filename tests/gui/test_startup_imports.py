"""The window imports what its first paint needs and no more: the engine runs in its own process,
and numpy, scipy and the composition theorems cost the window's start-up several hundred ms of CPU
on a busy machine. What the first paint of a plan draws - each statistic's error and δ_i - needs
only the noise calibrations of the statistics it shows (scipy for Gaussian and OpenDP noise)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from dpplanner.model import Budget, Kind, Mechanism, Plan, Statistic, files
from dpplanner.model.statistic import Noise
from dpplanner.model.examples import example_paths

#: Run in a fresh interpreter: the modules imported by importing the window, then by `dpplanner`'s
#: start-up (gui/app.py; its engine process is not started) until the table's first paint.
CHILD = """
import json, sys
from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication
from dpplanner.compute import engine_process
from dpplanner.gui import app
import dpplanner.gui.main_window
imported = sorted(sys.modules)
painted = []

class FirstPaint(QObject):
    def eventFilter(self, watched, event):
        if not painted and event.type() == QEvent.Type.Paint:
            painted.append(sorted(sys.modules))
            QTimer.singleShot(0, QApplication.instance().quit)
        return False

engine_process.EngineProcess.start = lambda self: None     # its jobs wait: only the paint counts
window = app.start(sys.argv[1])
watcher = FirstPaint()
window.statistics_panel.view.viewport().installEventFilter(watcher)
QApplication.instance().exec()
window.editor.undo_stack.setClean()
print(json.dumps([imported, painted[0]]))
"""
#: Engine modules the window may import before its first paint whatever the plan: the package
#: (its names are imported when first read), the cancel token, the theorem registry's words and
#: the memo and offload hooks the model and the compute layer name.
LIGHT_ENGINE = {"dpplanner.engine", "dpplanner.engine.lazy", "dpplanner.engine.types",
                "dpplanner.engine.theorems", "dpplanner.engine.memo", "dpplanner.engine.offload"}
#: Engine modules that compose or allocate: the engine process's work, never the first paint's.
COMPOSING = {"dpplanner.engine.theorem_inputs", "dpplanner.engine.compose", "dpplanner.engine.curve",
             "dpplanner.engine.allocate", "dpplanner.engine.profile", "dpplanner.engine.stats",
             "dpplanner.engine.advanced", "dpplanner.engine.kov", "dpplanner.engine.concurrent",
             "dpplanner.engine.filters", "dpplanner.engine.never_worse", "dpplanner.engine.optimal.pld"}


def _imports(plan_path, tmp_path) -> tuple[set[str], set[str]]:
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"),
               XDG_DATA_HOME=str(tmp_path / "data"), QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", CHILD, str(plan_path)], capture_output=True, text=True,
                         env=env, cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    imported, painted = json.loads(out.stdout.strip().splitlines()[-1])
    return set(imported), set(painted)


def _engine(modules: set[str]) -> set[str]:
    return {m for m in modules if m.startswith("dpplanner.engine")}


def _scipy(modules: set[str]) -> set[str]:
    return {m for m in modules if m == "scipy" or m.startswith("scipy.")}


def test_a_plan_of_continuous_laplace_noise_is_painted_without_scipy_or_the_engine(tmp_path):
    budget = Budget(epsilon=1.0, delta=1e-6)
    stats = [Statistic(name=f"count {i}", kind=Kind.COUNT, mechanism=Mechanism.LAPLACE,
                       noise=Noise.CONTINUOUS, epsilon=0.1) for i in range(5)]
    path = tmp_path / "laplace.dpplan"
    files.save_plan(Plan(budget, stats), path)
    imported, painted = _imports(path, tmp_path)
    assert not _scipy(imported) and _engine(imported) <= LIGHT_ENGINE
    assert not _scipy(painted) and _engine(painted) <= LIGHT_ENGINE
    assert "dpplanner.compute.jobs" in imported        # (the window binds its jobs: no engine with it)


def test_the_first_example_is_painted_with_its_noise_calibrations_and_no_theorem(tmp_path):
    imported, painted = _imports(example_paths()["psi-survey"], tmp_path)
    assert not _scipy(imported) and _engine(imported) <= LIGHT_ENGINE
    assert "scipy.special" in painted                    # its Gaussian and OpenDP noise's errors
    assert not _engine(painted) & COMPOSING
