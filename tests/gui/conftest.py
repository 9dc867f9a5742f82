"""GUI tests: offscreen, isolated settings, never the user's files."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QCoreApplication, QSettings  # noqa: E402
from pytestqt.qtbot import QtBot  # noqa: E402

#: How long a test waits for what must happen (a result, a signal, a condition) before it fails.
#: A wait ends as soon as its condition holds, so this costs nothing when the test passes; it is
#: long because a busy machine (or one core shared with two busy loops) is many times slower.
WAIT_MS = 120_000


class PatientQtBot(QtBot):
    """pytest-qt's bot, whose waits default to WAIT_MS instead of 5 s."""

    def waitUntil(self, callback, *, timeout: int = WAIT_MS):
        return super().waitUntil(callback, timeout=timeout)

    def waitSignal(self, signal, *, timeout: int = WAIT_MS, **kwargs):
        return super().waitSignal(signal, timeout=timeout, **kwargs)

    def waitSignals(self, signals, *, timeout: int = WAIT_MS, **kwargs):
        return super().waitSignals(signals, timeout=timeout, **kwargs)

    def waitCallback(self, *, timeout: int = WAIT_MS, **kwargs):
        return super().waitCallback(timeout=timeout, **kwargs)

    def waitExposed(self, widget, *, timeout: int = WAIT_MS):
        return super().waitExposed(widget, timeout=timeout)

    def waitActive(self, widget, *, timeout: int = WAIT_MS):
        return super().waitActive(widget, timeout=timeout)


@pytest.fixture
def qtbot(qapp, request):
    return PatientQtBot(request)


@pytest.fixture(scope="package", autouse=True)
def collect_garbage_on_the_gui_thread(qapp):
    """As the application does (gui/gc_guard.py): a collection in the compute worker can destroy
    Qt objects from the wrong thread and crash the test run."""
    from dpplanner.gui import gc_guard

    collector = gc_guard.install(qapp)
    yield collector
    collector.close()


@pytest.fixture(autouse=True)
def no_unexpected_error_box(monkeypatch, request):
    """An error box no test asked for fails the test at once with its text: a real one is modal
    and would hang the run until its timeout. A test that expects one patches it itself, or is
    marked real_error_boxes (the smoke test closes them as a user would)."""
    from PySide6.QtWidgets import QMessageBox

    shown: list[str] = []
    if request.node.get_closest_marker("real_error_boxes"):
        yield shown
        return

    def record(kind: str):
        def box(parent, title, text, *args, **kwargs):
            shown.append(f"{kind} {title!r}: {text}")
            return QMessageBox.StandardButton.Ok
        return staticmethod(box)

    monkeypatch.setattr(QMessageBox, "warning", record("warning"))
    monkeypatch.setattr(QMessageBox, "critical", record("critical"))
    yield shown
    assert not shown, f"an error box no test expected was shown: {shown}"


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path, monkeypatch):
    """Every test gets its own settings file and app-data folder under tmp_path."""
    QSettings.setDefaultFormat(QSettings.Format.IniFormat)
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "settings"))
    QCoreApplication.setOrganizationName("dpplanner-tests")
    QCoreApplication.setApplicationName(f"dpplanner-test-{os.getpid()}")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    yield tmp_path / "settings"


def _small_plan(theorem: str = "basic", redistribute: bool = True):
    from dpplanner.model import Budget, Kind, Mechanism, Plan, Statistic

    budget = Budget(epsilon=1.0, delta=1e-6, theorem=theorem, redistribute=redistribute,
                    dataset_size=1000)
    stats = [
        Statistic("count a", kind=Kind.COUNT, epsilon=0.25),
        Statistic("mean b", variable="income", kind=Kind.MEAN, lower=0, upper=100, epsilon=0.5, weight=2),
        Statistic("hist c", variable="age", kind=Kind.HISTOGRAM, bins=10, epsilon=0.25,
                  mechanism=Mechanism.GAUSSIAN),
    ]
    return Plan(budget, stats)


@pytest.fixture
def small_plan():
    """A factory: three statistics, global (1, 1e-6), basic composition for exact checks."""
    return _small_plan


@pytest.fixture
def make_window(qtbot, tmp_path):
    """A factory of windows not yet shown, settings and recovery copies in tmp_path (keyword
    arguments go to MainWindow)."""
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings

    def make(**kwargs) -> MainWindow:
        settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        kwargs.setdefault("recovery_dir", str(tmp_path / "recovery"))
        window = MainWindow(settings=settings, debounce_ms=10, **kwargs)
        # No "save changes?" box when pytest-qt closes the window at teardown.
        qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
        return window

    return make


@pytest.fixture
def shown(qtbot, make_window):
    """An empty window shown at 1280x800, the size the screenshots are judged at."""
    window = make_window()
    window.resize(1280, 800)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture
def synthetic_100(qtbot, shown):
    """The shown window on synthetic-100 (redistributing), settled and painted."""
    from dpplanner.model import files
    from dpplanner.model.examples import example_path
    from keys import handle_posted_events, wait_idle

    shown.document.load(files.load_plan(example_path("synthetic-100")), None, "synthetic-100")
    wait_idle(qtbot, shown)
    handle_posted_events()
    return shown


@pytest.fixture
def window(qtbot, tmp_path):
    """A shown window on ``small_plan()`` with its first evaluation done, settings in tmp_path
    (test files that need another window define their own ``window``)."""
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings
    from keys import wait_idle

    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    w = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(w, before_close_func=lambda x: x.editor.undo_stack.setClean())
    w.document.load(_small_plan(), None, "t")
    w.show()
    wait_idle(qtbot, w)
    return w


@pytest.fixture
def statistic_tab_window(qtbot, tmp_path):
    """A shown window on ``small_plan(redistribute=False)`` (typed epsilons stay as typed), its
    first evaluation done and the Statistic tab (the inspector) shown beside the plots."""
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings
    from keys import show_tab, wait_idle

    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    w = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
    qtbot.addWidget(w, before_close_func=lambda x: x.editor.undo_stack.setClean())
    w.document.load(_small_plan(redistribute=False), None, "t")
    w.show()
    wait_idle(qtbot, w)
    show_tab(w, "Statistic")
    wait_idle(qtbot, w)
    return w


@pytest.fixture
def gate(window):
    """The window's redistributions wait until ``gate.set()``: an edit made meanwhile is certainly
    made while one is pending, not by a race."""
    import threading

    from dpplanner.compute import jobs

    event = threading.Event()

    def held_back(request, cancel, progress):
        while not event.wait(0.01):
            cancel.check()
        return jobs.allocate(request, cancel, progress)

    window.editor.allocate_fn = held_back
    yield event
    event.set()


@pytest.fixture
def dark_switch(qapp):
    """``dark_switch(True)`` switches the application to a dark palette as the platform does,
    ``dark_switch(False)`` back to the light one (also at the end)."""
    from PySide6.QtGui import QColor, QPalette
    from PySide6.QtWidgets import QApplication

    light = QPalette(qapp.palette())
    dark = QPalette(light)
    for role, colour in ((QPalette.ColorRole.Base, "#1e1e1e"), (QPalette.ColorRole.Text, "#e8e8e8"),
                         (QPalette.ColorRole.Window, "#2b2b2b"), (QPalette.ColorRole.WindowText, "#e8e8e8")):
        dark.setColor(role, QColor(colour))
    yield lambda on: QApplication.setPalette(dark if on else light)
    QApplication.setPalette(light)


def pytest_collection_modifyitems(config, items):
    """Every GUI test is ``slow``: each opens a window with its worker thread (about a second
    apiece), so ``pytest -m "not slow"`` stays the quick engine/model loop and ``pytest tests/gui``
    is the window's. The offscreen platform warns that it cannot raise or resize native windows;
    that is the test platform talking, not our code, so those two messages alone fail no test."""
    marker = pytest.mark.qt_log_ignore(r"This plugin does not support (raise|propagateSizeHints)\(\)")
    for item in items:
        if "tests/gui" in str(item.fspath).replace("\\", "/"):
            item.add_marker(marker)
            item.add_marker(pytest.mark.slow)


@pytest.fixture
def cost_plot(qtbot):
    """A cost plot on its own, 800 x 400, shown and exposed."""
    from dpplanner.gui.plots import CostPlot

    widget = CostPlot()
    qtbot.addWidget(widget)
    widget.resize(800, 400)
    widget.show()
    qtbot.waitExposed(widget)
    return widget
