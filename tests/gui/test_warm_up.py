"""After its first paint the window imports the rest of the engine in a background thread
(gui/warm_up.py), so that opening a plan does not import it on the GUI thread."""

from __future__ import annotations

import subprocess
import sys

from PySide6.QtCore import QSettings


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


def test_what_the_start_up_made_after_the_first_paint_is_spared_from_later_collections(qtbot, monkeypatch):
    """app.spare_start_up: the plot canvas's and the warm-up's objects join the frozen ones once
    both are done (the first older-generation collection went through them on the GUI thread:
    135 ms of an edit on the 1000-query example). An object made after the window is shown is in
    no collected generation once that work is done. (Not the freeze count: frozen objects that die
    leave it, and in a long test session more of them die meanwhile than the canvas adds.)"""
    import gc

    from dpplanner.gui import app, gc_guard, warm_up

    def collected(obj) -> bool:
        return any(o is obj for generation in (0, 1, 2) for o in gc.get_objects(generation=generation))

    spared = []
    real = gc_guard.spare_startup_objects
    monkeypatch.setattr(gc_guard, "spare_startup_objects", lambda: (spared.append(True), real()))
    monkeypatch.setattr(app, "engine_in_process", lambda: False)
    gc.unfreeze()
    try:
        window = app.start()
        qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
        assert spared == [True]                     # at once, what the start-up made
        made_after = [window]
        made_after.append(made_after)               # a cycle: tracked by the collector
        assert collected(made_after)
        qtbot.waitUntil(lambda: window.cost_plot.canvas_built() and warm_up.done())
        qtbot.waitUntil(lambda: len(spared) == 2)
        assert gc.is_tracked(made_after) and not collected(made_after)
    finally:
        gc.unfreeze()
