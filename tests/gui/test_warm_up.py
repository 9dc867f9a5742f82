"""After its first paint the window imports the rest of the engine in a background thread
(gui/warm_up.py), so that opening a plan does not import it on the GUI thread."""

from __future__ import annotations

import subprocess
import sys
import threading

from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtTest import QTest


def test_the_warm_up_imports_every_public_engine_name_and_the_fft():
    code = ("import sys\n"
            "from dpplanner.gui import warm_up\n"
            "from dpplanner import engine\n"
            "before = 'scipy.fft' in sys.modules\n"
            "warm_up.start().join()\n"
            "print(before, 'scipy.fft' in sys.modules, all(n in vars(engine) for n in engine.__all__))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "True", "True"]


def test_the_window_starts_it_once_its_table_is_painted(qtbot, tmp_path, monkeypatch, small_plan):
    from dpplanner.gui import warm_up
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings

    started = []
    monkeypatch.setattr(warm_up, "start", lambda: started.append(True))
    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(tmp_path / "r"))
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.document.load(small_plan(), None, "t")
    assert started == []
    window.show()
    qtbot.waitUntil(lambda: started == [True])


def _collected(obj) -> bool:
    """Whether the garbage collector still looks at ``obj`` (in a generation, not frozen)."""
    import gc

    return any(o is obj for generation in (0, 1, 2) for o in gc.get_objects(generation=generation))


def _count_spares(monkeypatch) -> list:
    """Each gc_guard.spare_startup_objects call appends to the list returned; the window computes
    on its thread (no engine process)."""
    from dpplanner.gui import app, gc_guard

    spared: list = []
    real = gc_guard.spare_startup_objects
    monkeypatch.setattr(gc_guard, "spare_startup_objects", lambda: (spared.append(True), real()))
    monkeypatch.setattr(app, "engine_in_process", lambda: False)
    return spared


def test_what_the_start_up_made_after_the_first_paint_is_spared_from_later_collections(qtbot, monkeypatch):
    """app.spare_start_up: the plot canvas's and the warm-up's objects join the frozen ones once
    both are done (the first older-generation collection went through them on the GUI thread:
    135 ms of an edit on the 1000-query example). An object made after the window is shown is in
    no collected generation once that work is done. (Not the freeze count: frozen objects that die
    leave it, and in a long test session more of them die meanwhile than the canvas adds.)"""
    import gc

    from dpplanner.gui import app, warm_up

    spared = _count_spares(monkeypatch)
    gc.unfreeze()
    try:
        window = app.start()
        qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
        assert spared == [True]                     # at once, what the start-up made
        made_after = [window]
        made_after.append(made_after)               # a cycle: tracked by the collector
        assert _collected(made_after)
        qtbot.waitUntil(lambda: window.cost_plot.canvas_built() and warm_up.done())
        qtbot.waitUntil(lambda: len(spared) == 2)
        assert gc.is_tracked(made_after) and not _collected(made_after)
    finally:
        gc.unfreeze()


def test_a_plan_changed_before_the_start_up_work_is_done_is_not_spared(qtbot, monkeypatch):
    """The second freeze would take the user's plan with it (its cyclic garbage never collected):
    the user edits at once, before the canvas and the warm-up are done, and what the edit made is
    still collected once they are."""
    import gc

    from keys import open_cell, retype

    from dpplanner.gui import app, warm_up

    spared = _count_spares(monkeypatch)
    held = threading.Event()        # the warm-up is not done before the user's edit
    monkeypatch.setattr(warm_up, "_import_engine", held.wait)
    monkeypatch.setattr(warm_up, "_thread", None)       # (an earlier window's, done long ago)
    gc.unfreeze()
    try:
        window = app.start()
        qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
        name = window.plan[0].name
        qtbot.waitExposed(window)
        editor = open_cell(window, 0, "name")
        retype(editor, "renamed")
        QTest.keyClick(editor, Qt.Key.Key_Return)
        qtbot.waitUntil(lambda: window.plan[0].name == "renamed" != name)
        made_after = [window.plan]
        made_after.append(made_after)               # a cycle: tracked by the collector
        held.set()
        qtbot.waitUntil(lambda: window.cost_plot.canvas_built() and warm_up.done())
        qtbot.waitUntil(lambda: not window.findChild(QTimer, "spare start-up").isActive())
        assert spared == [True]
        assert _collected(made_after)
    finally:
        held.set()
        gc.unfreeze()


def test_a_window_never_painted_stops_looking_whether_its_start_up_work_is_done(qtbot, tmp_path,
                                                                               monkeypatch):
    """Its canvas is never built (that waits for the table's first paint): the window looks
    SPARE_POLLS times, then no more."""
    import gc

    from dpplanner.gui import app
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings

    monkeypatch.setattr(app, "SPARE_POLL_MS", 1)
    monkeypatch.setattr(app, "SPARE_POLLS", 5)
    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(tmp_path / "r"))
    qtbot.addWidget(window)
    monkeypatch.setattr(gc, "freeze", lambda: None)     # (this test session's objects stay collected)
    poll = app.spare_start_up(window)
    assert poll.isActive()
    qtbot.waitUntil(lambda: not poll.isActive())
    assert not window.cost_plot.canvas_built()
