"""Recovery copies survive a reused process id and any crash; every orphan is offered, listed
with its plan, title, time and size, and none is deleted without the user's word (issue 23.5-6).

A crash is what the kernel does when a process dies: it drops the process's locks and leaves its
files. ``crash(store)`` does exactly that to a store of this process, which also makes the new
window below run under the crashed copy's process id - PID reuse, certain instead of likely."""

from __future__ import annotations

import json
import os

import pytest
from PySide6.QtCore import QSettings, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.recovery import RecoveryStore
from dpplanner.gui.settings import Settings
from dpplanner.model import Budget, Kind, Plan, Statistic, files
from keys import when_dialog


def plan(title: str, count: int) -> Plan:
    return Plan(Budget(epsilon=1.0, delta=1e-6, redistribute=False, dataset_size=1000),
                [Statistic(f"{title} {i}", kind=Kind.COUNT, epsilon=0.1) for i in range(count)],
                title=title)


def crash(store: RecoveryStore) -> None:
    """The process dies: its lock goes, its copy stays."""
    store._lock.release()


def autosaved(folder, title: str, count: int, source=None) -> RecoveryStore:
    store = RecoveryStore(folder)
    p = plan(title, count)
    store.save(files.dumps_plan(p), source)
    return store


@pytest.fixture
def new_window(qtbot, tmp_path):
    def make() -> MainWindow:
        settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        window = MainWindow(settings=settings, recovery_dir=str(tmp_path / "recovery"), debounce_ms=10)
        qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
        window.show()
        return window
    return make


def when_offered(act) -> None:
    when_dialog("Recover unsaved changes", act)


def rows(dialog) -> list[tuple[str, ...]]:
    table = dialog.table
    return [tuple(table.item(r, c).text() for c in range(table.columnCount()))
            for r in range(table.rowCount())]


def click_row(dialog, row: int) -> None:
    table = dialog.table
    rect = table.visualItemRect(table.item(row, 0))
    QTest.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())


def copies_on_disk(tmp_path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "recovery").glob("recovery-*.json"))


def test_a_copy_left_under_a_reused_process_id_is_offered_not_deleted(qtbot, tmp_path, new_window):
    crashed = autosaved(tmp_path / "recovery", "census draft", 3)
    crash(crashed)
    # The old naming put the process id in the name: the copy a crashed process of *this* id left.
    legacy = tmp_path / "recovery" / f"recovery-{os.getpid()}-1.json"
    legacy.write_text(json.dumps({"source": None, "saved_at": 5.0,
                                  "plan": files.dumps_plan(plan("old draft", 1))}))
    window = new_window()
    window.document.open_path(_saved(tmp_path, plan("first plan", 2)), confirm=False)
    assert crashed.file.exists() and legacy.exists()     # opening a plan deletes no one's copy
    seen = []
    when_offered(lambda d: (seen.extend(rows(d)), d.keep_button.click()))
    assert window.document.offer_recovery() is False
    assert [r[2] for r in seen] == ["“census draft”, 3 statistics, " + _kb(crashed.file),
                                    "“old draft”, 1 statistic, " + _kb(legacy)]
    assert crashed.file.exists() and legacy.exists()     # kept for later: offered again
    assert len(RecoveryStore(tmp_path / "recovery").orphans()) == 2


def test_two_orphans_are_both_offered_one_restored_the_other_kept(qtbot, tmp_path, new_window):
    first = autosaved(tmp_path / "recovery", "income survey", 4, "/plans/income.dpplan")
    second = autosaved(tmp_path / "recovery", "census", 2)
    crash(first)
    crash(second)
    window = new_window()
    listed = []

    def restore_the_census(dialog):
        listed.extend(rows(dialog))
        census = next(i for i, r in enumerate(rows(dialog)) if "census" in r[2])
        click_row(dialog, census)
        QTest.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)

    when_offered(restore_the_census)
    assert window.document.offer_recovery() is True
    assert {r[0] for r in listed} == {"income.dpplan", "an unsaved plan"}
    assert all("autosaved" not in r[1] and r[1][:4].isdigit() for r in listed)   # a time
    assert window.plan.title == "census" and [s.name for s in window.plan] == ["census 0", "census 1"]
    assert window.isWindowModified()
    assert not second.file.exists() and first.file.exists()
    # the restored plan is this window's own copy now, the other orphan is still offered
    assert window.document.recovery.file.exists()
    later = new_window()
    offered = []
    when_offered(lambda d: (offered.extend(rows(d)), d.keep_button.click()))
    later.document.offer_recovery()
    assert [r[0] for r in offered] == ["income.dpplan"]


def test_deleting_a_copy_asks_first_and_no_keeps_it(qtbot, tmp_path, new_window, monkeypatch):
    store = autosaved(tmp_path / "recovery", "draft", 1)
    crash(store)
    answers = [QMessageBox.StandardButton.No, QMessageBox.StandardButton.Yes]
    asked = []
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *a, **k: asked.append(a[2]) or answers.pop(0))
    window = new_window()

    def delete_twice(dialog):
        QTest.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)      # No
        assert store.file.exists() and dialog.isVisible()
        QTest.mouseClick(dialog.delete_button, Qt.MouseButton.LeftButton)      # Yes: the last
    when_offered(delete_twice)
    assert window.document.offer_recovery() is False
    assert len(asked) == 2 and "an unsaved plan (autosaved" in asked[0]
    assert copies_on_disk(tmp_path) == []


def test_save_as_keeps_a_copy_that_this_window_does_not_restore(qtbot, tmp_path, new_window, monkeypatch):
    from PySide6.QtWidgets import QFileDialog

    store = autosaved(tmp_path / "recovery", "side plan", 2)
    crash(store)
    target = tmp_path / "rescued"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    window = new_window()
    when_offered(lambda d: QTest.mouseClick(d.save_button, Qt.MouseButton.LeftButton))
    assert window.document.offer_recovery() is False
    assert files.load_plan(tmp_path / "rescued.dpplan").title == "side plan"
    assert copies_on_disk(tmp_path) == []


def test_a_running_windows_copy_is_never_offered_and_an_orphan_only_once(tmp_path):
    live = autosaved(tmp_path, "live", 1)
    dead = autosaved(tmp_path, "dead", 1)
    crash(dead)
    starting, also_starting = RecoveryStore(tmp_path), RecoveryStore(tmp_path)
    claimed = starting.orphans()
    assert [c.title for c in claimed] == ["dead"]
    assert also_starting.orphans() == []             # claimed by the first start meanwhile
    RecoveryStore.release(claimed)                   # "keep for later"
    assert [c.title for c in also_starting.orphans()] == ["dead"]
    assert live.file.exists() and dead.file.exists()


def test_an_unreadable_copy_is_listed_not_deleted(tmp_path):
    bad = tmp_path / "recovery-0123456789abcdef.json"
    bad.write_text("{half a cop")
    found = RecoveryStore(tmp_path).orphans()
    assert len(found) == 1 and found[0].problem and "cannot be read" in found[0].summary()
    assert bad.exists()


def _saved(tmp_path, p: Plan):
    path = tmp_path / f"{p.title}.dpplan"
    files.save_plan(p, path)
    return path


def _kb(path) -> str:
    size = path.stat().st_size
    return f"{size} bytes" if size < 1024 else f"{size / 1024:.1f} kB"
