"""A title or description no plan file could hold is refused in File > Title and Description,
with the reason, and the dialog stays open with the text as typed (issue 23.7). The size limit is
lowered for the test, so that a user can type past it in a few key clicks."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QDialogButtonBox

from dpplanner.model import saveable
from keys import when_dialog


def test_a_description_past_the_limit_is_refused_and_kept_in_the_dialog(qtbot, window, monkeypatch):
    import json

    from dpplanner.model.files import plan_to_document
    size = len(json.dumps(plan_to_document(window.plan), ensure_ascii=False, separators=(",", ":")))
    monkeypatch.setattr(saveable, "MAX_FILE_BYTES", size + 500)     # room for 500 more bytes
    seen = {}

    def type_too_much(dialog):
        dialog.description.setFocus()
        QTest.keyClicks(dialog.description, "long " * 140)
        ok = dialog.findChild(QDialogButtonBox).button(QDialogButtonBox.StandardButton.Ok)
        QTest.mouseClick(ok, Qt.MouseButton.LeftButton)
        seen["open"] = dialog.isVisible()
        seen["refusal"] = dialog.refusal.text()
        seen["typed"] = dialog.description.toPlainText()
        QTest.keyClick(dialog, Qt.Key.Key_Escape)            # Cancel
    when_dialog("Title and description of the plan", type_too_much)
    window.details_action.trigger()
    assert seen["open"] and seen["typed"] == "long " * 140
    assert seen["refusal"].startswith("Not applied: a plan file could not hold this plan")
    assert window.plan.description == "" and not window.editor.undo_stack.canUndo()
