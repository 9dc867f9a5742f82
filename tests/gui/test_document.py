"""The document life cycle: shipped examples are never overwritten, a failed open keeps what was
open, and the Undo/Redo labels keep their size."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog, QMessageBox

from dpplanner.gui import app
from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.model import files
from dpplanner.model.examples import example_path
from keys import open_cell, retype


@pytest.fixture
def window(qtbot, tmp_path):
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    w = MainWindow(settings=settings, recovery_dir=str(tmp_path / "recovery"), debounce_ms=10)
    qtbot.addWidget(w, before_close_func=lambda w: w.editor.undo_stack.setClean())
    return w


@pytest.fixture
def warnings(monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    return shown


def test_make_run_then_save_asks_where_and_leaves_the_example_intact(qtbot, window, monkeypatch,
                                                                    tmp_path):
    source = example_path("psi-survey")
    shipped = source.read_bytes()
    assert window.document.open_path(source, confirm=False)      # what `make run` does
    assert window.document.path is None
    assert "example" in window.windowTitle()
    editor = open_cell(window, 0, "name")                        # double-click, type, Enter
    retype(editor, "mine")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not window.editor.is_redistributing())
    assert window.plan[0].name == "mine"
    asked = []
    target = tmp_path / "mine.dpplan"
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda *a, **k: asked.append(a[2]) or (str(target), ""))
    assert window.document.save()                                # Ctrl+S
    assert asked and Path(asked[0]).name == "psi-survey.dpplan"  # Save asked where,
    assert Path(asked[0]).is_absolute()                          # not in the working folder
    assert source.read_bytes() == shipped
    assert files.load_plan(target)[0].name == "mine"
    assert window.document.path == target


def test_a_plan_that_cannot_be_opened_at_start_leaves_the_window_empty(window, warnings, tmp_path):
    broken = tmp_path / "broken.dpplan"
    broken.write_text("{ not json", encoding="utf-8")
    app.open_initial_plan(window, str(broken))
    assert len(window.plan) == 0                     # no example shown in its place
    assert window.document.display_name == "untitled"
    assert warnings                                  # the error is shown
    assert "Cannot open" in window.status.label.text()


def test_a_failed_open_keeps_the_plan_that_was_open(window, warnings, tmp_path):
    assert window.document.open_example(example_path("census"))
    before = window.plan.snapshot()
    assert not window.document.open_path(tmp_path / "missing.dpplan", confirm=False)
    assert window.plan.snapshot() == before
    assert window.document.display_name == "census (example)"
    assert warnings


def test_undo_and_redo_labels_do_not_grow(qtbot, window):
    assert window.document.open_example(example_path("psi-survey"))
    window.editor.set_budget(redistribute=False)
    window.editor.undo_stack.clear()
    assert not window.undo_action.isEnabled()
    stat = window.plan[0]
    long_name = "a statistic with a rather long name " * 3
    # the command's own text is what is under test, so the edit is made with that text
    assert window.editor.update_statistic(0, {"name": long_name}, "Rename " + long_name)
    assert window.undo_action.isEnabled()
    assert window.undo_action.text() == "&Undo"
    assert long_name in window.undo_action.toolTip()           # the step is named, in the tip
    window.undo_action.trigger()
    assert window.plan[0].name == stat.name
    assert window.redo_action.text() == "&Redo" and window.redo_action.isEnabled()
    assert long_name in window.redo_action.toolTip()
    window.redo_action.trigger()
    assert window.plan[0].name == long_name


def test_opening_a_file_that_left_fields_to_their_defaults_says_so(qtbot, window, tmp_path):
    import json

    doc = json.loads(example_path("census").read_text(encoding="utf-8"))
    del doc["budget"]["reserve"], doc["statistics"][0]["weight"], doc["statistics"][1]["weight"]
    path = tmp_path / "short.dpplan"
    path.write_text(json.dumps(doc))
    assert window.document.open_path(path, confirm=False)
    shown = window.status.label.text()
    assert "2 optional fields were not in the file and took their defaults" in shown
    assert "budget reserve = 0.0" in shown and "dpplanner-cli validate lists them" in shown


def test_opening_a_one_statistic_plan_counts_in_the_singular(window, tmp_path):
    """The status line reads "1 statistic" and "1 optional field was", not "1 statistics"."""
    import json

    doc = json.loads(example_path("census").read_text(encoding="utf-8"))
    doc["statistics"] = doc["statistics"][:1]
    del doc["budget"]["reserve"]
    path = tmp_path / "one.dpplan"
    path.write_text(json.dumps(doc))
    assert window.document.open_path(path, confirm=False)
    shown = window.status.label.text()
    assert f"Opened one.dpplan: 1 statistic, k = {window.plan.k}" in shown
    assert "1 optional field was not in the file" in shown


def test_every_key_the_platform_has_for_undo_and_redo_works(qtbot, window):
    """Redo held only the platform's first key (Ctrl+Y offscreen and on Windows): Ctrl+Shift+Z,
    which Windows and most Linux desktops also give it, did nothing."""
    from PySide6.QtGui import QKeySequence

    assert window.document.open_example(example_path("psi-survey"))
    window.editor.set_budget(redistribute=False)
    name = window.plan[0].name
    keys = {what: [k for k in QKeySequence.keyBindings(standard) if k.toString().startswith("Ctrl+")]
            for what, standard in (("undo", QKeySequence.StandardKey.Undo),    # (QTest cannot press
                                   ("redo", QKeySequence.StandardKey.Redo))}   # the keyboard's Undo key)
    assert len(keys["redo"]) > 1 and any(k.toString() == "Ctrl+Shift+Z" for k in keys["redo"])
    window.show()
    qtbot.waitExposed(window)
    view = window.statistics_panel.view     # (a text field has Undo keys of its own)
    view.setFocus()
    qtbot.waitUntil(view.hasFocus)
    for undo_key in keys["undo"]:
        for redo_key in keys["redo"]:
            assert window.editor.update_statistic(0, {"name": "renamed"}, "Rename")
            QTest.keySequence(view, undo_key)
            assert window.plan[0].name == name, undo_key.toString()
            QTest.keySequence(view, redo_key)
            assert window.plan[0].name == "renamed", redo_key.toString()
            QTest.keySequence(view, undo_key)
            assert window.plan[0].name == name
