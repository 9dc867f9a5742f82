"""An edit reads no setting: each read is a QSettings lookup on the GUI thread (~0.1 ms), and the
plot's number of points was read four times an edit, the guide's wish to be shown once (and its
marks set again, unchanged)."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from keys import open_cell, wait_idle


def test_typing_an_epsilon_reads_no_setting(qtbot, window, monkeypatch):
    wait_idle(qtbot, window)
    reads: list[str] = []
    real = window.settings.get
    monkeypatch.setattr(window.settings, "get", lambda name: reads.append(name) or real(name))
    tips: list[str] = []            # (the guide's marks were set again, the same, at every edit)
    for mark in window.guide.marks:
        monkeypatch.setattr(mark, "setToolTip", lambda tip, real=mark.setToolTip: tips.append(tip) or real(tip))
    editor = open_cell(window, 0, "epsilon")
    QTest.keyClicks(editor, "0.125")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 0.125
    assert reads == [] and tips == []
    assert not window.guide.isVisible()         # (a plan opened: no guide)


def test_the_guide_read_once_still_follows_hide_and_getting_started(qtbot, window):
    """Hidden for good, a new plan shows no guide; asked for again, a new plan shows it."""
    guide = window.guide
    guide.dismiss()
    guide.start(True)               # (File > New)
    assert not guide.isVisible() and not window.settings.get("show_guide")
    guide.reopen()
    guide.dismiss()
    guide.reopen()
    guide.start(True)
    assert guide.isVisible() and window.settings.get("show_guide")
