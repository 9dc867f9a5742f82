"""The whole window and the user's files: save, close, reopen, recovery after a crash, drops,
imports, exports and recent files."""

from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

from dpplanner.gui.recovery import RecoveryStore
from dpplanner.model import files
from keys import cell, when_dialog


def test_save_close_and_reopen(qtbot, make_window, small_plan, tmp_path):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.statistics_panel.model.setData(cell(window, 0, "name"), "renamed")
    assert window.isWindowModified()
    path = tmp_path / "plan.dpplan"
    assert window.document.save_to(path)
    assert not window.isWindowModified()
    assert window.windowTitle().startswith("plan.dpplan")
    saved = window.plan.snapshot()
    window.close()
    again = make_window()
    assert str(path.resolve()) in again.settings.recent_files()
    assert again.document.open_path(path, confirm=False)
    assert again.plan.snapshot().statistics == saved.statistics
    assert again.plan.budget == saved.budget
    assert not again.isWindowModified()


def test_closing_with_unsaved_changes_asks_first(qtbot, make_window, small_plan, monkeypatch):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.show()
    window.statistics_panel.model.setData(cell(window, 0, "name"), "renamed")
    asked = []
    monkeypatch.setattr(QMessageBox, "warning",
                        lambda *a, **k: asked.append(a[2]) or QMessageBox.StandardButton.Cancel)
    assert not window.close()
    assert window.isVisible()
    assert "unsaved changes" in asked[0]


def test_recovery_after_a_simulated_crash(qtbot, make_window, small_plan, tmp_path):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.statistics_panel.model.setData(cell(window, 0, "name"), "unsaved work")
    window.document.write_recovery_copy()
    crashed = window.document.recovery.file
    assert crashed.exists()
    # A crash: the kernel drops the window's lock on its copy, the copy stays.
    window.document.recovery._lock.release()
    window.document.recovery = RecoveryStore(tmp_path / "elsewhere")    # that window is gone
    expected = window.plan.snapshot()
    window.editor.undo_stack.setClean()

    after = make_window()
    offered = []

    def restore(dialog):
        offered.append(dialog.table.item(0, 0).text())
        QTest.mouseClick(dialog.restore_button, Qt.MouseButton.LeftButton)
    when_dialog("Recover unsaved changes", restore)
    assert after.document.offer_recovery()
    assert offered == ["an unsaved plan"]
    assert after.plan.statistics == expected.statistics
    assert after.isWindowModified()          # recovered work still needs saving
    assert not crashed.exists()
    assert RecoveryStore(tmp_path / "recovery").orphans() == []


def test_a_clean_close_leaves_no_recovery_copy(qtbot, make_window, small_plan):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.statistics_panel.model.setData(cell(window, 0, "name"), "x")
    window.document.write_recovery_copy()
    assert window.document.recovery.file.exists()
    window.editor.undo_stack.undo()          # back to clean: the copy is dropped
    assert not window.document.recovery.file.exists()


def test_drop_of_a_plan_file_opens_it(qtbot, make_window, small_plan, tmp_path):
    from PySide6.QtCore import QMimeData, QPoint, QPointF, Qt, QUrl
    from PySide6.QtGui import QDropEvent

    path = tmp_path / "dropped.dpplan"
    files.save_plan(small_plan(), path)
    window = make_window()
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(path))])
    event = QDropEvent(QPointF(QPoint(10, 10)), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert window.document.display_name == "dropped.dpplan"
    assert len(window.plan) == 3


def test_exports_write_files(qtbot, make_window, small_plan, tmp_path):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    window.resize(1200, 800)
    assert window.exports.export_plot(tmp_path / "cost.png")
    window.plots.setCurrentIndex(2)
    eps = np.array([s.epsilon * s.repetitions for s in window.plan])
    assert np.allclose(window.shares_plot.shares, 100 * eps / eps.sum())
    assert window.exports.export_plot(tmp_path / "shares.svg")
    assert (tmp_path / "cost.png").stat().st_size > 1000
    assert b"<svg" in (tmp_path / "shares.svg").read_bytes()[:2000]


def test_import_csv_replaces_the_statistics_in_one_undo_step(qtbot, make_window, small_plan, tmp_path):
    from dpplanner.model import csvio

    source = small_plan(redistribute=False)
    source.update_statistic(0, source[0].replace(name="from csv"))
    path = tmp_path / "stats.csv"
    csvio.save_csv(source, path)
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    assert window.exports.import_csv(path)
    assert window.plan[0].name == "from csv"
    window.editor.undo_stack.undo()
    assert window.plan[0].name == "count a"


def test_report_export_and_recent_files(qtbot, make_window, small_plan, tmp_path):
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    qtbot.waitUntil(lambda: window.evaluation.last_result is not None)
    assert window.exports.export_report(tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "mean b" in html and "<svg" in html
    assert window.document.save_to(tmp_path / "a.dpplan")
    window.document.fill_recent_menu(window.recent_menu)
    titles = [a.text() for a in window.recent_menu.actions()]
    assert titles == ["a.dpplan"]


def test_a_file_with_a_subnormal_in_a_field_is_refused_naming_it_and_the_plan_stays(
        qtbot, make_window, small_plan, tmp_path, monkeypatch):
    """1e-310, the shortest text of its double, opened and then its field's shown text was refused
    when committed again: the file is refused by the field's own rule instead."""
    import json

    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]) or QMessageBox.StandardButton.Ok)
    window = make_window()
    window.document.load(small_plan(redistribute=False), None, "t")
    before = window.plan.snapshot()
    path = tmp_path / "tiny.dpplan"
    files.save_plan(small_plan(redistribute=False), path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["statistics"][0]["epsilon"] = 1e-310
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert not window.document.open_path(path, confirm=False)
    assert window.plan.snapshot() == before
    assert len(shown) == 1 and "statistic 1" in shown[0]
    assert "epsilon = 1e-310 is too close to 0 to store exactly" in shown[0]


@pytest.mark.parametrize("content", ['{"format_version": 1, "statistics": [', '{"format_version": 99}', None])
def test_a_bad_file_is_reported_and_the_plan_stays(qtbot, make_window, small_plan, tmp_path, monkeypatch,
                                                   content):
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]) or QMessageBox.StandardButton.Ok)
    window = make_window()
    window.document.load(small_plan(), None, "t")
    before = window.plan.snapshot()
    path = tmp_path / "bad.dpplan"
    if content is None:
        path.mkdir()                     # a folder named like a plan
    else:
        path.write_text(content, encoding="utf-8")
    assert not window.document.open_path(path, confirm=False)
    assert window.plan.snapshot() == before
    assert len(shown) == 1 and shown[0].strip()      # one box, with the loader's reason
    assert "Cannot open the plan" in window.status.label.text()
