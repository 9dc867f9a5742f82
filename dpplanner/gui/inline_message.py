"""A refusal shown inside the window, for what has no field of its own to show it at (an export):
wrapped in full where a one-line status bar would cut it, without a modal box that blocks the
window until it is closed. It stays until the user closes it, tries again or changes the plan
(its reason may no longer hold), as the statistics table's reason beneath it does."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from dpplanner.gui import theme
from dpplanner.model import Plan


class InlineMessage(QFrame):
    def __init__(self, plan: Plan, name: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setObjectName("inlineMessage")
        theme.follow_scheme(self, lambda: f"#inlineMessage {{ border: 1px solid {theme.error_red()}; }}")
        # (a plain word-wrapped label: the box layout above it asks its height for the width it
        # gets, so it needs no WrappingLabel's minimum height)
        self.label = QLabel("")
        self.label.setWordWrap(True)
        self.label.setTextFormat(Qt.TextFormat.PlainText)      # it may quote a statistic's name
        theme.red_text(self.label)
        self.label.setAccessibleName(name)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.close_button = QToolButton()
        self.close_button.setText("×")
        self.close_button.setAutoRaise(True)
        self.close_button.setAccessibleName("Close the message")
        self.close_button.setToolTip("Close this message")
        self.close_button.clicked.connect(self.dismiss)
        row = QHBoxLayout(self)
        row.setContentsMargins(8, 4, 4, 4)
        row.addWidget(self.label, 1)
        row.addWidget(self.close_button, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()
        plan.subscribe(lambda _event: self.dismiss())

    def say(self, text: str) -> None:
        self.label.setText(text)
        self.show()

    def dismiss(self) -> None:
        if self.label.text():
            self.label.setText("")
            self.hide()
