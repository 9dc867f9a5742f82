"""The timer's recovery copy is written by the autosave thread: the window goes on meanwhile, the
copy holds the plan as it was when the timer fired, and a copy still waiting when the plan is
saved (or undone back to its saved state) is never written after that."""

from __future__ import annotations

import json
import threading

from dpplanner.model import files


def _unsaved(window, small_plan, name="unsaved work"):
    window.document.load(small_plan(redistribute=False), None, "t")
    assert window.editor.update_statistic(0, {"name": name}, "rename")
    assert window.document.modified


def _held_encoder(monkeypatch):
    """document_text whose first call waits (at most 30 s) for ``release``; ``started``/``finished``
    say where that call is."""
    started, release, finished = threading.Event(), threading.Event(), threading.Event()
    real = files.document_text

    def held(doc):
        if started.is_set():
            return real(doc)
        started.set()
        release.wait(30)
        try:
            return real(doc)
        finally:
            finished.set()
    monkeypatch.setattr(files, "document_text", held)
    return started, release, finished


def _drained(window) -> None:
    window.document._writer.submit(lambda: None).result()


def test_the_window_edits_on_while_the_copy_is_written(window, small_plan, monkeypatch):
    _unsaved(window, small_plan)
    started, release, finished = _held_encoder(monkeypatch)
    window.document._autosave.timeout.emit()            # the autosave timer fires
    assert started.wait(30)
    assert not finished.is_set()                        # the GUI thread is not waiting for it
    assert window.editor.update_statistic(0, {"name": "edited while saving"}, "rename")
    release.set()
    _drained(window)
    copy = files.loads_plan(json.loads(
        window.document.recovery.file.read_text(encoding="utf-8"))["plan"])
    assert copy[0].name == "unsaved work"               # the plan when the timer fired
    assert window.plan[0].name == "edited while saving"


def test_a_copy_still_being_encoded_is_not_written_once_the_plan_is_back_to_saved(
        window, small_plan, monkeypatch):
    _unsaved(window, small_plan)
    started, release, _finished = _held_encoder(monkeypatch)
    window.document._autosave.timeout.emit()
    assert started.wait(30)
    window.editor.undo_stack.undo()                     # back to the saved plan: nothing to recover
    assert not window.document.modified
    release.set()
    _drained(window)
    assert not window.document.recovery.file.exists()
    assert window.document.recovery._lock is None


def test_a_copy_written_now_is_not_overwritten_by_an_older_autosave(window, small_plan,
                                                                      monkeypatch):
    _unsaved(window, small_plan, "older")
    started, release, _finished = _held_encoder(monkeypatch)
    window.document._autosave.timeout.emit()
    assert started.wait(30)
    assert window.editor.update_statistic(0, {"name": "newer"}, "rename")
    # the older copy is let go a moment after the newer one is asked for (from another thread: the
    # window waits for the older one to be written first)
    threading.Timer(0.5, release.set).start()
    assert window.document.write_recovery_copy()
    _drained(window)
    text = window.document.recovery.file.read_text(encoding="utf-8")
    assert '\\"newer\\"' in text and '\\"older\\"' not in text
