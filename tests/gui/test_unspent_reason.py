"""Issue 23: the window says why a redistribution leaves part of the budget unspent, under the
Spent bar, in the words of dpplanner-cli's note line; only while the plan is in a state a
redistribution left with a reason (after Undo or Redo back to it too)."""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.cli import main
from dpplanner.model import files
from dpplanner.model.examples import example_path
from keys import field, type_into, wait_idle


def _fine_eta_plan():
    """Discrete Laplace counts (one pinned) at eta = 1e-6: the total a redistribution lands on
    cannot be certified within eta (as tests/test_cli.py's plan for the note line)."""
    doc = json.loads(example_path("census").read_text(encoding="utf-8"))
    base = doc["statistics"][0]
    doc["budget"].update(epsilon=2.0, eta=1e-6, redistribute=True)
    doc["statistics"] = [dict(base, name="pinned", held=True, epsilon=0.01),
                         dict(base, name="free 1"), dict(base, name="free 2")]
    return files.loads_plan(json.dumps(doc))


def _note(window) -> str:
    label = window.budget_panel.unspent
    return label.text() if label.isVisible() else ""


def _cli_note(capsys, path) -> str:
    """The note line dpplanner-cli allocate prints for the plan saved at ``path``."""
    assert main(["allocate", str(path)]) == 0
    out = capsys.readouterr().out
    notes = [line for line in out.splitlines() if line.startswith("note: ")]
    assert len(notes) == 1, out
    return notes[0].removeprefix("note: ")


def _undo(window):
    QTest.keySequence(window, window.undo_action.shortcut())       # Edit > Undo's keys


def _redo(window):
    QTest.keySequence(window, window.redo_action.shortcut())


def test_the_reason_a_redistribution_leaves_budget_unspent_is_shown_until_it_no_longer_applies(
        qtbot, window, tmp_path, capsys):
    window.document.load(_fine_eta_plan(), None, "fine")
    wait_idle(qtbot, window)
    assert _note(window) == ""                 # opened: no redistribution has said anything yet

    type_into(qtbot, field(window, "Global epsilon"), "1.5")
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 1.5
    shown = _note(window)
    assert shown.startswith("Note: ") and "more than eta = 1e-06" in shown and "left unspent" in shown
    # the same words as the command line's note for the plan the window holds
    saved = tmp_path / "fine.dpplan"
    assert window.document.save_to(saved)
    assert shown == "Note: " + _cli_note(capsys, saved)

    QTest.mouseClick(window.budget_panel.advanced_toggle, Qt.MouseButton.LeftButton)
    type_into(qtbot, field(window, "Engine accuracy"), "0.001")
    wait_idle(qtbot, window)
    assert window.plan.budget.eta == 0.001
    assert _note(window) == ""                 # redistributed again, within eta: nothing to say

    _undo(window)
    wait_idle(qtbot, window)
    assert window.plan.budget.eta == 1e-6 and _note(window) == shown
    _redo(window)
    wait_idle(qtbot, window)
    assert window.plan.budget.eta == 0.001 and _note(window) == ""
    _undo(window)
    _undo(window)
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 2.0 and _note(window) == ""    # as opened
    _redo(window)
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 1.5 and _note(window) == shown


def test_turning_redistribution_off_clears_the_reason(qtbot, window):
    """The note is about the redistribution: with it off there is none to explain."""
    window.document.load(_fine_eta_plan(), None, "fine")
    wait_idle(qtbot, window)
    type_into(qtbot, field(window, "Global epsilon"), "1.5")
    wait_idle(qtbot, window)
    assert _note(window)
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert not window.plan.budget.redistribute and _note(window) == ""
