"""Autosave cannot be starved: a copy is written at most N seconds after the first unsaved edit,
however often the user keeps editing, and it survives kill -9."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from dpplanner.gui.recovery import RecoveryStore
from dpplanner.model import files

EDITS = 30
EDIT_INTERVAL_MS = 200          # the "every second" of the issue, scaled down with N
AUTOSAVE_SECONDS = 1            # N

_CHILD = textwrap.dedent("""
    import os, signal, sys
    from PySide6.QtCore import QSettings
    from PySide6.QtTest import QTest
    from dpplanner.gui.app import make_application
    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings
    from dpplanner.model import Budget, Kind, Plan, Statistic

    ini, recovery, edits, interval, seconds = sys.argv[1:6]
    app = make_application()
    settings = Settings(QSettings(ini, QSettings.Format.IniFormat))
    settings.set("autosave_seconds", int(seconds))
    window = MainWindow(settings=settings, recovery_dir=recovery, debounce_ms=10)
    plan = Plan(Budget(epsilon=1.0, redistribute=False, dataset_size=1000),
                [Statistic("start", kind=Kind.COUNT, epsilon=0.5)])
    window.document.load(plan, None, "t")
    for i in range(int(edits)):
        stat = window.plan[0]
        assert window.editor.update_statistic(0, {"name": f"edit {i}"}, "rename")
        QTest.qWait(int(interval))       # edits at least this far apart; timers run meanwhile
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.slow
def test_edits_every_interval_then_kill_recovers_all_but_the_last_n_seconds(tmp_path):
    recovery = tmp_path / "recovery"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, str(tmp_path / "s.ini"), str(recovery), str(EDITS),
         str(EDIT_INTERVAL_MS), str(AUTOSAVE_SECONDS)],
        env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -9, done.stderr
    copies = RecoveryStore(recovery).orphans()
    assert copies, "no recovery copy was left by the killed process"
    recovered = files.loads_plan(copies[0].plan_text)
    last = int(recovered[0].name.split()[1])
    # Every edit made more than N seconds before the kill is in the copy. Edits are at least
    # EDIT_INTERVAL_MS apart and the last one was EDIT_INTERVAL_MS before the kill, so at most
    # N / interval edits are younger than N seconds.
    lost_at_most = AUTOSAVE_SECONDS * 1000 // EDIT_INTERVAL_MS
    assert last >= EDITS - 1 - lost_at_most
