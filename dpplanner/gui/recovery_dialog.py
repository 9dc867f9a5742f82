"""The offer after a crash: every orphaned recovery copy, listed with its plan, title, autosave
time and size. The user restores one into the window, saves any of them to a plan file, deletes
any (asked again first), or keeps the rest for the next start - nothing is deleted unasked."""

from __future__ import annotations

import time
from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView, QDialog, QDialogButtonBox, QHeaderView, QLabel, QMessageBox, QPushButton,
    QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget,
)

from dpplanner.gui.formatting import as_plain
from dpplanner.gui.recovery import RecoveryCopy, RecoveryStore

COLUMNS = ("Plan", "Autosaved", "Contents")


class RecoveryDialog(QDialog):
    def __init__(self, copies: list[RecoveryCopy], restore: Callable[[RecoveryCopy], bool],
                 save_as: Callable[[RecoveryCopy], bool], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Recover unsaved changes")
        self.copies = list(copies)
        self.restored = False
        self._restore, self._save_as = restore, save_as
        many = len(copies) > 1
        intro = QLabel(
            f"dpplanner did not close normally. {len(copies) if many else 'A'} recovery "
            f"cop{'ies' if many else 'y'} of unsaved work {'were' if many else 'was'} found. "
            "Restore one into this window, save any of them as a plan file, or keep them: "
            "kept copies are offered again at the next start.")
        intro.setTextFormat(Qt.TextFormat.PlainText)
        intro.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setAccessibleName("Recovery copies")
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.itemSelectionChanged.connect(self._update_buttons)
        buttons = QDialogButtonBox()
        self.restore_button = self._button(buttons, "&Restore", "Open the selected copy in this window",
                                           self._on_restore, QDialogButtonBox.ButtonRole.AcceptRole)
        self.save_button = self._button(buttons, "&Save As…", "Save the selected copy as a plan file",
                                        self._on_save_as, QDialogButtonBox.ButtonRole.ActionRole)
        self.delete_button = self._button(buttons, "&Delete…", "Delete the selected copy for good",
                                          self._on_delete, QDialogButtonBox.ButtonRole.DestructiveRole)
        self.keep_button = self._button(buttons, "&Keep for Later", "Close; the copies left are "
                                        "offered again at the next start", self.reject,
                                        QDialogButtonBox.ButtonRole.RejectRole)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addWidget(self.table, 1)
        layout.addWidget(buttons)
        self.resize(640, 300)
        self._fill()

    def _button(self, box: QDialogButtonBox, text: str, tip: str, slot, role) -> QPushButton:
        button = QPushButton(text)
        button.setToolTip(tip)
        button.setAutoDefault(False)
        button.clicked.connect(slot)
        box.addButton(button, role)
        return button

    def remaining(self) -> list[RecoveryCopy]:
        return list(self.copies)

    def selected(self) -> RecoveryCopy | None:
        rows = self.table.selectionModel().selectedRows()
        return self.copies[rows[0].row()] if rows else None

    def _fill(self) -> None:
        self.table.setRowCount(len(self.copies))
        for row, copy in enumerate(self.copies):
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(copy.saved_at))
            for col, text in enumerate((copy.name, when, copy.summary())):
                item = QTableWidgetItem(text)          # plain text: plan titles are never markup
                item.setToolTip(as_plain(copy.source or text))
                self.table.setItem(row, col, item)
        if self.copies:
            self.table.selectRow(0)
        self._update_buttons()

    def _update_buttons(self) -> None:
        copy = self.selected()
        readable = copy is not None and not copy.problem
        self.restore_button.setEnabled(readable)
        self.save_button.setEnabled(readable)
        self.delete_button.setEnabled(copy is not None)

    def _done_with(self, copy: RecoveryCopy) -> None:
        self.copies.remove(copy)
        self._fill()
        if not self.copies:
            self.accept()

    def _on_restore(self) -> None:
        copy = self.selected()
        if copy is not None and self._restore(copy):
            self.restored = True
            self.copies.remove(copy)
            self.accept()           # the window holds one plan: the others stay for later

    def _on_save_as(self) -> None:
        copy = self.selected()
        if copy is not None and self._save_as(copy):
            self._done_with(copy)

    def _on_delete(self) -> None:
        copy = self.selected()
        if copy is None:
            return
        answer = QMessageBox.question(
            self, "Delete the recovery copy?",
            as_plain(f"Delete the recovery copy of {copy.describe()}? Its unsaved changes are lost "
                     "for good."),
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
            QMessageBox.StandardButton.No)
        if answer == QMessageBox.StandardButton.Yes:
            RecoveryStore.forget(copy)
            self._done_with(copy)
