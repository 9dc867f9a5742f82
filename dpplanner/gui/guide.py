"""Onboarding in the user's words: the help page on what ε and δ mean and how to choose value
bounds, and the first-start guide (harm level -> dataset size -> first statistic)."""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QGridLayout, QLabel, QPushButton, QWidget

from dpplanner.gui.settings import Settings
from dpplanner.model import Plan, PlanEvent
from dpplanner.model.statistic import SENSITIVITY_TIERS


def basics_html() -> str:
    tiers = "".join(f"<li><b>{t.label}</b>: ε = {t.epsilon:g}, δ = {t.delta:g}</li>"
                    for t in SENSITIVITY_TIERS)
    return f"""
<p><b>ε (epsilon)</b> is the privacy loss: how much the whole release may change because of any one
person's record. With ε, anything an observer concludes about a person can become at most
e<sup>ε</sup> times more (or less) likely than without that person's data: about 1.1 times for
ε = 0.1, 2.7 times for ε = 1. Smaller is more private, and costs accuracy: every statistic gets
more noise.</p>
<p><b>δ (delta)</b> is the small probability that the ε promise fails. Keep it far below 1/n for a
dataset of n records (otherwise one record could be exposed outright); 10<sup>−6</sup> or less is usual.</p>
<p><b>The global budget</b> (ε<sub>g</sub>, δ<sub>g</sub>) is what the whole release may spend.
dpplanner splits it over the statistics and proves the total with a composition theorem; every
total shown is a valid upper bound.</p>
<p><b>Choosing the budget.</b> Start from the harm level of the data - what could happen to a
person if their record were exposed:</p><ul>{tiers}</ul>
<p>Then check the errors in the table: if they are too large to be useful, release fewer
statistics, coarser ones, or ask whether a larger ε is acceptable for these data.</p>
<p><b>Choosing value bounds.</b> Sums, means and quantiles need a lower and an upper bound on
each value. Take them from public knowledge (a questionnaire's range, a legal limit), never from
the data themselves: the smallest and largest value in the data are private too. Values outside
the bounds are clipped to them, which biases the result; bounds far wider than needed add noise
(the noise grows with the width). Counts, proportions and histograms need no bounds.</p>
<p><b>Confidence.</b> Each error in the table holds with this probability, e.g. 95 %: the
released value is within ± the error of the true one 95 times out of 100.</p>
"""


BASICS_TITLE = "What ε and δ mean, and how to choose them"


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
