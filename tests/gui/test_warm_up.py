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
