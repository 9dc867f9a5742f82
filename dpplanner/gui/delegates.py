"""Cell editors for the statistics table: plain line edits read by the model's rules, combos.

A number cell takes no validator (a validator drops characters: "2.5" reps would become 25).
Enter or Tab on a number the rule refuses keeps the editor open with the typed text and shows the
reason at the cell; the model then refuses nothing that was not explained where it was typed.

What the user typed or chose in an open editor is theirs: a result landing meanwhile (which
refreshes every row) does not put the plan's value back into it, and Enter commits at once
rather than through Qt's queued call, which a landing result could overtake (the editor was then
released first and the typed value dropped: "commitData called with an editor that does not
belong to this view").
"""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QEvent, QModelIndex, QObject, QPoint, Qt
from PySide6.QtWidgets import (
    QAbstractItemDelegate, QComboBox, QLineEdit, QStyledItemDelegate, QStyleOptionViewItem, QToolTip,
    QWidget,
)

from dpplanner.gui import formatting
from dpplanner.gui.fields import mark_refused
from dpplanner.gui.table_model import COLUMNS
from dpplanner.model import FIELD_RULES, Kind, Mechanism, PlanError
from dpplanner.model.typed import format_value, parse_text

#: Plain-English names of the cells for screen readers (and tests).
ACCESSIBLE_NAMES = {"name": "Statistic name", "variable": "Variable", "kind": "Kind",
                    "mechanism": "Noise mechanism", "epsilon": "Statistic epsilon",
                    "delta": "Statistic delta", "error": "Target error", "weight": "Weight",
                    "repetitions": "Releases"}
_COMMIT_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab, Qt.Key.Key_Backtab)
_ENTER_KEYS = (Qt.Key.Key_Return, Qt.Key.Key_Enter)


class StatisticDelegate(QStyledItemDelegate):
    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex) -> QWidget:
        key = COLUMNS[index.column()].key
        if key in ("kind", "mechanism"):
            box = QComboBox(parent)
            for member in (Kind if key == "kind" else Mechanism):
                box.addItem(member.label, member.value)
            box.setToolTip(COLUMNS[index.column()].tooltip)
            box.setAccessibleName(ACCESSIBLE_NAMES[key])
            box.activated.connect(lambda _i: box.setProperty("chosen", True))
            return box
        edit = QLineEdit(parent)
        edit.setAccessibleName(ACCESSIBLE_NAMES.get(key, key))
        edit.setProperty("field_key", key)
        rule = FIELD_RULES.get(key)
        edit.setToolTip(f"{COLUMNS[index.column()].tooltip}\nAllowed: {rule.describe()}." if rule
                        else COLUMNS[index.column()].tooltip)
        return edit

    def setEditorData(self, editor: QWidget, index: QModelIndex) -> None:
        if editor.property("chosen") or (isinstance(editor, QLineEdit) and editor.isModified()):
            return              # the user's text or choice wins over a refresh of the row
        value = index.data(Qt.ItemDataRole.EditRole)
        if isinstance(editor, QComboBox):
            editor.setCurrentIndex(max(editor.findData(value), 0))
        elif isinstance(editor, QLineEdit):
            # Full precision, as typed ("2", not "2.0"; the rule's own formatting, which reads back
            # exactly); the text is remembered so that Enter without a change does nothing (no
            # undo step, no rebalance, no pin).
            key = COLUMNS[index.column()].key
            if value is None:
                editor.setText("")
            elif key in FIELD_RULES and isinstance(value, (int, float)) and not isinstance(value, bool):
                editor.setText(format_value(FIELD_RULES[key], value))
            else:
                editor.setText(str(value))
            editor.setProperty("initial_text", editor.text())

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: QModelIndex) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)
        elif isinstance(editor, QLineEdit):
            text = editor.text()
            if text == editor.property("initial_text"):
                return          # opened and closed without a change
            if text.strip() == "" and COLUMNS[index.column()].key != "variable":
                return          # an emptied cell means "never mind", not a value
            model.setData(index, text, Qt.ItemDataRole.EditRole)

    def eventFilter(self, editor: QObject, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.KeyPress and isinstance(editor, QLineEdit)
                and event.key() in _COMMIT_KEYS and editor.property("field_key") in FIELD_RULES
                and editor.text().strip()):
            try:
                parse_text(FIELD_RULES[editor.property("field_key")], editor.text())
            except PlanError as exc:
                refuse_in_editor(editor, str(exc))
                return True         # the editor stays open with what was typed
        if (event.type() == QEvent.Type.KeyPress and event.key() in _ENTER_KEYS
                and isinstance(editor, (QLineEdit, QComboBox))
                and not (isinstance(editor, QComboBox) and editor.view().isVisible())):
            self.commitData.emit(editor)
            self.closeEditor.emit(editor, QAbstractItemDelegate.EndEditHint.SubmitModelCache)
            return True
        return super().eventFilter(editor, event)


def refuse_in_editor(editor: QLineEdit, message: str) -> None:
    """Mark an open cell editor and say beneath it why its text cannot be stored."""
    mark_refused(editor)
    editor.setAccessibleDescription(message)
    QToolTip.showText(editor.mapToGlobal(QPoint(0, editor.height())), formatting.as_plain(message), editor)
