"""File > Title and Description: the plan's own title and a description of several lines.

They describe the whole plan (the report's heading and first paragraph, the command line's
header), so they are edited here and not among one statistic's fields. OK makes one undoable edit.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QPlainTextEdit, QVBoxLayout, QWidget,
)

from dpplanner.gui import theme
from dpplanner.gui.editing import PlanEditor


class PlanDetailsDialog(QDialog):
    def __init__(self, editor: PlanEditor, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.editor = editor
        plan = editor.plan
        self.setWindowTitle("Title and description of the plan")
        self.title = QLineEdit(plan.title)
        self.title.setAccessibleName("Plan title")
        self.title.setToolTip("The plan's title: the heading of the report and the command "
                              "line's summary.")
        self.title.setPlaceholderText("e.g. Household survey 2026, public-use tables")
        self.description = QPlainTextEdit(plan.description)
        self.description.setAccessibleName("Plan description")
        self.description.setToolTip("What the plan is for, who it is for, what the data are: the "
                                    "report's first paragraph.")
        self.description.setTabChangesFocus(True)
        intro = QLabel("These describe the whole plan; each statistic's own notes are in its "
                       "Statistic tab.")
        intro.setWordWrap(True)
        #: Why the edit was refused (the dialog then stays open with the text as typed).
        self.refusal = QLabel("")
        self.refusal.setTextFormat(Qt.TextFormat.PlainText)
        self.refusal.setWordWrap(True)
        theme.red_text(self.refusal)
        self.refusal.setAccessibleName("Why the title or description was not applied")
        self.refusal.hide()
        form = QFormLayout()
        form.addRow("Title", self.title)
        form.addRow("Description", self.description)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                   | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.refusal)
        layout.addWidget(buttons)
        self.resize(520, 320)

    def accept(self) -> None:
        plan = self.editor.plan
        title, description = self.title.text(), self.description.toPlainText()
        if (title, description) != (plan.title, plan.description):
            changes = {}
            if title != plan.title:
                changes["title"] = title
            if description != plan.description:
                changes["description"] = description
            if not self.editor.set_metadata(**changes):
                self.refusal.setText(f"Not applied: {self.editor.last_refusal.message}")
                self.refusal.show()
                return
        super().accept()
