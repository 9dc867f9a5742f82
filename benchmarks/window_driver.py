"""The window as the GUI benchmarks drive it (bench_gui, bench_groups): made and shown as `dpplanner`
makes it, settled when it shows the result for the current plan, edited through its table, and
the CPU time of its engine processes read from /proc (offscreen)."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def app():
    from dpplanner.gui.app import make_application

    return make_application([sys.argv[0]])


def window_on(scratch: str, example: Path | None = None):
    """The window as `dpplanner` starts it: ``example`` opened before it is shown; ``spare``: the
    timer of its start-up's second freeze (inactive once that is settled)."""
    from PySide6.QtCore import QSettings

    from dpplanner.gui.app import engine_in_process, spare_start_up
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings

    settings = Settings(QSettings(os.path.join(scratch, "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=os.path.join(scratch, "recovery"),
                        engine_in_process=engine_in_process())
    if example is not None:
        window.document.open_example(example)
    window.resize(1400, 900)
    window.show()
    window.spare = spare_start_up(window)
    return window


def settled(window) -> bool:
    result = window.evaluation.last_result
    # The privacy profile runs after the totals as its own job; the cost plot does not wait for it.
    return (result is not None and not window.editor.is_redistributing()
            and not window.controller.is_busy("evaluate") and not window.controller.is_busy("allocate")
            and window.evaluation.result_is_current(result))


def wait_settled(window, timeout_s: float = 600.0) -> float:
    """Run the event loop until the window shows the result for the current plan; returns the
    perf_counter() time at which that result was drawn (measured inside the result slot)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    done: list[float] = []

    def check(*_args) -> None:
        if not done and settled(window):
            done.append(time.perf_counter())
            loop.quit()

    # Connected after the window's own slot, so it runs once the plots have the new data.
    window.evaluation.evaluated.connect(check)
    window.editor.redistributing.connect(check)
    guard = QTimer()
    guard.setSingleShot(True)
    guard.timeout.connect(loop.quit)
    guard.start(int(timeout_s * 1000))
    QTimer.singleShot(0, check)
    loop.exec()
    window.evaluation.evaluated.disconnect(check)
    window.editor.redistributing.disconnect(check)
    if not done:
        raise RuntimeError(f"the window did not settle within {timeout_s:.0f} s")
    return done[0]


def wait_drawn(window, timeout_s: float = 600.0) -> float:
    """wait_settled, then on until the cost plot has painted that result (its paint waits for a
    turn of its own after the result's slot: gui/turns.py); returns the perf_counter() time just
    after that paint, or, where its turn asked for no paint (nothing moved), the time it ran."""
    from PySide6.QtCore import QEvent, QEventLoop, QObject, QTimer

    wait_settled(window, timeout_s)
    plot, loop, done, ran = window.cost_plot, QEventLoop(), [], []

    def finish(at: float | None = None) -> None:
        if not done:
            done.append(time.perf_counter() if at is None else at)
            loop.quit()

    class AfterPaint(QObject):
        def eventFilter(self, watched, event) -> bool:  # noqa: N802  (Qt's name)
            if event.type() == QEvent.Type.Paint and not plot.drawing():
                QTimer.singleShot(0, finish)        # (runs once this paint is done)
            return False

    def look() -> None:
        if not plot.drawing() and not ran:
            ran.append(time.perf_counter())
            poll.stop()
            QTimer.singleShot(100, lambda: finish(ran[0]))  # (no paint came: nothing was held back)

    watcher = AfterPaint()
    plot.view.viewport().installEventFilter(watcher)
    poll = QTimer(interval=1)
    poll.timeout.connect(look)
    poll.start()
    guard = QTimer(singleShot=True)
    guard.timeout.connect(loop.quit)
    guard.start(int(timeout_s * 1000))
    loop.exec()
    poll.stop()
    plot.view.viewport().removeEventFilter(watcher)
    if not done:
        raise RuntimeError(f"the cost plot was not painted within {timeout_s:.0f} s")
    return done[0]


def pause(ms: int) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def cell(window, row: int, key: str):
    from dpplanner.gui.table_model import COLUMN_INDEX

    return window.statistics_panel.model.index(row, COLUMN_INDEX[key])


def engine_cpu() -> float:
    """CPU seconds used so far by this process's children and theirs (the engine process and its
    helper), read from /proc (0 where there is none)."""
    total, pids = 0.0, descendants(os.getpid())
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick
    return total


def descendants(pid: int) -> list[int]:
    found, todo = [], [pid]
    while todo:
        parent = todo.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                children = Path(f"/proc/{parent}/task/{task}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                found.append(child)
                todo.append(child)
    return found
