"""Onboarding in the user's words: the first-start guide (harm level -> dataset size -> first
statistic). The page on what ε and δ mean is the user guide's docs/guide/basics.md (Help menu)."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QPushButton, QWidget

from dpplanner.gui.settings import Settings
from dpplanner.model import Plan, PlanEvent


class FirstStartGuide(QFrame):
    """Three steps for a new plan; each step's button takes the user to the control, a tick shows
    what they have done. Step 1 is done when the user chose a budget (a harm level, or a typed ε
    or δ) - a new plan's default budget is no choice. Once all three are done the guide leaves for
    this plan and does not come back mid-work (removing the last statistic does not undo the
    steps). A plan opened from a file or an example needs no guide. "Hide" dismisses it for good;
    Help > Getting started shows it again."""

    def __init__(self, plan: Plan, settings: Settings, steps: tuple[Callable[[], None], ...],
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Getting started")
        self._plan = plan
        self._settings = settings
        self._budget_chosen = False
        self._finished = False          # all three done (or an opened plan): the guide has left
        self._asked = False             # shown from the Help menu: stays until hidden
        self._wanted = settings.get("show_guide")      # (changed by dismiss and reopen only)
        texts = (("How sensitive are the data?", "Pick a harm level, or type the global ε and δ.",
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

    def start(self, new: bool) -> None:
        """Another plan in the window: a new one starts the steps afresh; an opened one (its
        budget chosen by whoever wrote it) needs no guide."""
        self._budget_chosen = False
        self._finished = not new
        self._asked = False
        self._update_marks()

    def budget_chosen(self) -> None:
        """The user picked a harm level or typed a global ε or δ (even the preset's own values)."""
        self._budget_chosen = True
        self._update_marks()

    def done(self) -> list[bool]:
        """Which steps are done."""
        b = self._plan.budget
        return [self._budget_chosen or self._finished, b.dataset_size is not None, len(self._plan) > 0]

    def dismiss(self) -> None:
        self._wanted = False
        self._settings.set("show_guide", False)
        self._asked = False
        self.hide()

    def reopen(self) -> None:
        self._wanted = True
        self._settings.set("show_guide", True)
        self._asked = True
        self._update_marks()
        self.show()         # asked for: shown even when every step is done

    def _on_plan_event(self, _event: PlanEvent) -> None:
        self._update_marks()

    def _update_marks(self) -> None:
        """(On every change of the plan: only a mark whose step changed is set again.)"""
        done = self.done()
        for mark, step_done in zip(self.marks, done):
            text = "✓" if step_done else "○"
            if mark.text() != text:
                mark.setText(text)
                mark.setToolTip("done" if step_done else "still to do")
        if all(done):
            self._finished = True
        self.setVisible(self._asked or (self._wanted and not self._finished))
