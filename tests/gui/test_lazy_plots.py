"""The plots' pyqtgraph canvases are built after the window's first paint (gui/lazy_canvas.py):
nothing of pyqtgraph is imported for the table to appear, and whatever was set before the canvas
existed (options, the budget line, curves) is on it once it is built."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from PySide6.QtCore import QSettings

from dpplanner import engine
from plot_curves import draw

#: A fresh interpreter: builds the window as `dpplanner` does, shows it, reports what was imported
#: before and after its table was first painted, and whether the cost plot then had its canvas.
_STARTUP = """
import sys
from PySide6.QtCore import QEvent, QObject, QTimer
from dpplanner.gui import app as dpplanner_app
built_before = "pyqtgraph" in sys.modules
window = dpplanner_app.start(None)      # as `dpplanner` starts: built, the example open, shown
app = dpplanner_app.QApplication.instance()
seen = {}
class Watch(QObject):
    def eventFilter(self, watched, event):
        if event.type() == QEvent.Type.Paint and "painted" not in seen:
            seen["painted"] = "pyqtgraph" in sys.modules
            seen["fft"] = "scipy.fft" in sys.modules
        return False
watch = Watch()     # before the window's own watchers (last installed, first asked); no paint yet
window.statistics_panel.view.viewport().installEventFilter(watch)
def done():
    if window.cost_plot.canvas_built():
        print("before-show", built_before, "at-first-paint", seen.get("painted"), "built", True,
              "fft-at-first-paint", seen.get("fft"))
        window.editor.undo_stack.setClean()
        app.quit()
poll = QTimer()
poll.timeout.connect(done)
poll.start(20)
app.exec()
"""


@pytest.mark.slow                   # a fresh Python process with Qt
def test_the_table_is_painted_before_pyqtgraph_and_scipy_fft_are_imported_and_the_cost_plot_follows(tmp_path):
    # The window's engine runs in its own process, as in `dpplanner`: a window computing on its
    # worker thread may import scipy.fft there before its first paint. Settings in tmp_path.
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path / "config"), XDG_DATA_HOME=str(tmp_path / "data"),
               XDG_CACHE_HOME=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", _STARTUP], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "before-show False at-first-paint False built True fft-at-first-paint False" in proc.stdout, \
        proc.stdout


def _curve(k: int) -> engine.Curve:
    ks = np.arange(1, k + 1)
    return engine.Curve(ks=ks, upper={"basic": 0.1 * ks, "advanced": 0.05 * ks},
                        lower={"basic": None, "advanced": None})


def test_what_is_set_before_the_canvas_is_on_it_once_built(qtbot):
    from dpplanner.gui.plots import CostPlot

    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.log_k.setChecked(True)
    plot.set_hidden(["advanced"])
    plot.set_repeat_statistic("income")
    plot.set_mode("repeat")
    plot.set_budget(2.5)
    assert not plot.canvas_built()
    draw(qtbot, plot, _curve(30), 30, 2.5)          # drawing a curve builds it
    assert plot.canvas_built()
    assert plot.plot_item.getAxis("bottom").logMode
    assert plot.budget_line.isVisible() and plot.budget_line.value() == 2.5
    assert "income" in plot.plot_item.getAxis("bottom").labelText
    assert not plot.items["advanced"].isVisible() and plot.items["basic"].isVisible()
    x, y = plot.curve_data("basic")
    assert list(x) == list(range(1, 31)) and y[-1] == pytest.approx(3.0)


def test_a_plot_in_a_hidden_tab_is_built_when_its_tab_is_shown(qtbot, tmp_path):
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings

    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.show()
    qtbot.waitUntil(window.cost_plot.canvas_built)      # after the first paint, unasked
    assert not window.shares_plot.canvas_built()
    window.plots.setCurrentWidget(window.shares_plot)
    assert window.shares_plot.canvas_built()
    qtbot.waitUntil(window.shares_plot.view.isVisible)
    window.plots.setCurrentWidget(window.cost_plot)
    qtbot.waitUntil(window.cost_plot.view.isVisible)
