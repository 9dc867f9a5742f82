"""The settings wrapper and the autosave recovery store."""

from __future__ import annotations

import json
import os

from PySide6.QtCore import QSettings

from dpplanner.gui.recovery import RecoveryStore
from dpplanner.gui.settings import MAX_RECENT_FILES, Settings


def test_recent_files_are_most_recent_first_without_duplicates(qapp, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    for i in range(MAX_RECENT_FILES + 3):
        settings.add_recent_file(f"/plans/{i}.dpplan")
    settings.add_recent_file("/plans/5.dpplan")
    recent = settings.recent_files()
    assert recent[0] == "/plans/5.dpplan"
    assert len(recent) == MAX_RECENT_FILES
    assert len(set(recent)) == len(recent)
    settings.remove_recent_file("/plans/5.dpplan")
    assert "/plans/5.dpplan" not in settings.recent_files()


def test_preferences_round_trip_through_an_ini_file(qapp, tmp_path):
    path = str(tmp_path / "s.ini")
    first = Settings(QSettings(path, QSettings.Format.IniFormat))
    first.set("curve_mode", "repeat")
    first.set("curve_k_max", 250)
    first.set("hidden_curves", ["basic"])
    first.sync()
    second = Settings(QSettings(path, QSettings.Format.IniFormat))
    assert second.get("curve_mode") == "repeat"
    assert second.get("curve_k_max") == 250
    assert second.get("hidden_curves") == ["basic"]
    assert Settings(QSettings(str(tmp_path / "new.ini"), QSettings.Format.IniFormat)).get("curve_points") == 100


def test_a_live_windows_copy_is_not_offered_but_a_dead_ones_is(tmp_path):
    mine = RecoveryStore(tmp_path)
    mine.save('{"plan": 1}', "/plans/a.dpplan")
    assert mine.orphans() == []          # our own copy: we are alive

    # A copy written by a process id that cannot exist any more (crashed earlier).
    dead_pid = 2 ** 22 + 12345
    leftover = tmp_path / f"recovery-{dead_pid}-1.json"
    leftover.write_text(json.dumps({"source": None, "saved_at": 5.0, "plan": "PLAN"}))
    other = RecoveryStore(tmp_path)
    found = other.orphans()
    assert [c.plan_text for c in found] == ["PLAN"]
    assert "unsaved plan" in found[0].describe()
    RecoveryStore.forget(found[0])
    assert other.orphans() == []


def test_discard_removes_the_copy_and_its_lock(tmp_path):
    store = RecoveryStore(tmp_path)
    store.save("x", None)
    assert store.file.exists() and store.file.with_suffix(".lock").exists()
    store.discard()
    assert not store.file.exists() and not store.file.with_suffix(".lock").exists()
    assert not any(p.name.endswith(".tmp") for p in os.scandir(tmp_path))


def test_autosave_temporaries_left_by_a_crash_are_removed_at_the_next_start(tmp_path):
    def leftover(name, age):
        path = tmp_path / name
        path.write_text("{half")
        t = path.stat().st_mtime - age
        os.utime(path, (t, t))
        return path

    stale = leftover(".recovery-ab3_x9kq.tmp", 3600)
    fresh = leftover(".recovery-zz3_x9kq.tmp", 0)          # another window autosaving right now
    other = leftover(".recovery-notours.tmp", 3600)
    assert RecoveryStore(tmp_path).orphans() == []
    assert not stale.exists() and fresh.exists() and other.exists()
