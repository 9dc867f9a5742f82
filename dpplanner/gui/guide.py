"""Onboarding in the user's words: the first-start guide (harm level -> dataset size -> first
statistic). The page on what ε and δ mean is the user guide's docs/guide/basics.md (Help menu)."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QPushButton, QWidget

from dpplanner.gui.settings import Settings
from dpplanner.model import Plan, PlanEvent


class FirstStartGuide(QFrame):
    """Three steps for a new user; each step's button takes them to the control, a tick shows
    what is already done, and a plan with all three done (an example, a finished plan) needs no
    guide. "Hide" dismisses it for good; Help > Getting started shows it again."""

    def __init__(self, plan: Plan, settings: Settings, steps: tuple[Callable[[], None], ...],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Getting started")
        self._plan = plan
        self._settings = settings
        texts = (("How sensitive are the data?", "Pick a harm level: it sets the global ε and δ.",
                  "Choose"),
                 ("How many records?", "Type the dataset size n (needed for means and proportions).",
                  "Type it"),
                 ("What do you want to release?", "Add your first statistic: a count, a mean, …",
                  "Add…"))
        grid = QGridLayout(self)
        title = QLabel("<b>Getting started</b> - three steps to a first plan")
        title.setToolTip("Help > What ε and δ mean explains the numbers")
        grid.addWidget(title, 0, 0, 1, 3)
        self.hide_button = QPushButton("Hide")
        self.hide_button.setToolTip("Hide this guide (Help > Getting started shows it again)")
        self.hide_button.clicked.connect(self.dismiss)
        grid.addWidget(self.hide_button, 0, 3)
        self.marks: list[QLabel] = []
        self.buttons: list[QPushButton] = []
        for i, ((question, hint, button_text), go) in enumerate(zip(texts, steps)):
            mark = QLabel()
            text = QLabel(f"{i + 1}. <b>{question}</b> {hint}")
            text.setWordWrap(True)
            text.setTextFormat(Qt.TextFormat.RichText)
            button = QPushButton(button_text)
            button.setAccessibleName(f"Step {i + 1}: {question}")
            button.setToolTip(hint)
            button.clicked.connect(go)
            grid.addWidget(mark, i + 1, 0)
            grid.addWidget(text, i + 1, 1, 1, 2)
            grid.addWidget(button, i + 1, 3)
            self.marks.append(mark)
            self.buttons.append(button)
        grid.setColumnStretch(1, 1)
        plan.subscribe(self._on_plan_event)
        self._update_marks()

    def done(self) -> list[bool]:
        """Which steps the plan already shows done."""
        b = self._plan.budget
        return [b.tier != "custom", b.dataset_size is not None, len(self._plan) > 0]

    def dismiss(self) -> None:
        self._settings.set("show_guide", False)
        self.hide()

    def reopen(self) -> None:
        self._settings.set("show_guide", True)
        self._update_marks()
        self.show()         # asked for: shown even when every step is done

    def _on_plan_event(self, _event: PlanEvent) -> None:
        self._update_marks()

    def _update_marks(self) -> None:
        done = self.done()
        for mark, step_done in zip(self.marks, done):
            mark.setText("✓" if step_done else "○")
            mark.setToolTip("done" if step_done else "still to do")
        self.setVisible(self._settings.get("show_guide") and not all(done))
