"""Cell editors for the statistics table: number fields limited by the model's rules, combos."""

from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QModelIndex, Qt
from PySide6.QtWidgets import QComboBox, QLineEdit, QStyledItemDelegate, QStyleOptionViewItem, QWidget

from dpplanner.gui.fields import NumberEdit
from dpplanner.gui.table_model import COLUMNS
from dpplanner.model import FIELD_RULES, Kind, Mechanism


class StatisticDelegate(QStyledItemDelegate):
    def createEditor(self, parent: QWidget, option: QStyleOptionViewItem, index: QModelIndex) -> QWidget:
        key = COLUMNS[index.column()].key
        if key == "kind":
            box = QComboBox(parent)
            for kind in Kind:
                box.addItem(kind.label, kind.value)
            box.setToolTip(COLUMNS[index.column()].tooltip)
            return box
        if key == "mechanism":
            box = QComboBox(parent)
            for mech in Mechanism:
                box.addItem(mech.label, mech.value)
            box.setToolTip(COLUMNS[index.column()].tooltip)
            return box
        if key in FIELD_RULES:
            edit = NumberEdit(FIELD_RULES[key], parent)
            edit.setPlaceholderText("")
            return edit
        edit = QLineEdit(parent)
        edit.setToolTip(COLUMNS[index.column()].tooltip)
        return edit

    def setEditorData(self, editor: QWidget, index: QModelIndex) -> None:
        value = index.data(Qt.ItemDataRole.EditRole)
        if isinstance(editor, QComboBox):
            editor.setCurrentIndex(max(editor.findData(value), 0))
        elif isinstance(editor, NumberEdit):
            # Full precision (repr) so that opening and closing an editor changes nothing.
            editor.setText("" if value is None else repr(value) if isinstance(value, float) else str(value))
        elif isinstance(editor, QLineEdit):
            editor.setText("" if value is None else str(value))

    def setModelData(self, editor: QWidget, model: QAbstractItemModel, index: QModelIndex) -> None:
        if isinstance(editor, QComboBox):
            model.setData(index, editor.currentData(), Qt.ItemDataRole.EditRole)
        elif isinstance(editor, QLineEdit):
            text = editor.text()
            if text.strip() == "" and COLUMNS[index.column()].key != "variable":
                return          # an emptied cell means "never mind", not a value
            model.setData(index, text, Qt.ItemDataRole.EditRole)
