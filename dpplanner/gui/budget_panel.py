"""The plan-wide budget: global (ε, δ), presets, δ split, confidence, η, reserve, redistribution."""

from __future__ import annotations

import math
from typing import Optional

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QGridLayout, QGroupBox, QHBoxLayout, QLabel,
    QProgressBar, QPushButton, QWidget,
)

from dpplanner.engine.types import Composition
from dpplanner.gui import formatting
from dpplanner.gui.editing import PlanEditor, Refusal
from dpplanner.gui.fields import NumberEdit
from dpplanner.model import (
    ALLOCATION_THEOREMS, BUDGET_RULES, CUSTOM_TIER, SENSITIVITY_TIERS, TIERS_BY_KEY, Budget,
    Neighbouring, PlanEvent,
)
from dpplanner.model.validation import FieldRule


def _percent_box(rule: FieldRule, tip: str) -> QDoubleSpinBox:
    """A spin box in percent over a fraction rule (open ends stop one step short)."""
    box = QDoubleSpinBox()
    box.setDecimals(2)
    step = 10 ** -box.decimals()
    low = rule.minimum * 100 + (0 if rule.min_inclusive else step)
    high = rule.maximum * 100 - (0 if rule.max_inclusive else step)
    box.setRange(low, high)
    box.setSuffix(" %")
    box.setKeyboardTracking(False)
    box.setToolTip(f"{tip}\nAllowed: {rule.label} {rule.describe()} (shown in percent).")
    return box


class BudgetPanel(QGroupBox):
    def __init__(self, editor: PlanEditor, parent: QWidget | None = None) -> None:
        super().__init__("Budget", parent)
        self.editor = editor
        plan = editor.plan

        self.tier = QComboBox()
        for t in SENSITIVITY_TIERS:
            self.tier.addItem(f"{t.label} (ε={t.epsilon:g}, δ={t.delta:g})", t.key)
        self.tier.addItem("Custom", CUSTOM_TIER)
        self.tier.setToolTip("Presets by data sensitivity, as data repositories tier their holdings. "
                             "Choosing one sets the global ε and δ.")
        rule = BUDGET_RULES["epsilon"]
        self.epsilon = QDoubleSpinBox()
        self.epsilon.setDecimals(4)
        self.epsilon.setRange(10 ** -4, rule.maximum)
        self.epsilon.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)
        self.epsilon.setKeyboardTracking(False)
        self.epsilon.setToolTip(f"Global ε: the total privacy loss the whole release may have.\n"
                                f"Allowed: {rule.describe()}.")
        self.delta = NumberEdit(BUDGET_RULES["delta"])
        self.delta.setToolTip("Global δ: the probability the ε guarantee may fail. Keep it well below "
                              f"1/n.\nAllowed: {BUDGET_RULES['delta'].describe()}.")
        self.split = _percent_box(BUDGET_RULES["delta_split"],
                                  "Share of the global δ given to the Gaussian statistics; the rest "
                                  "is slack for the composition theorem.")
        self.slack = QLabel()
        self.slack.setToolTip("δ left for composition: global δ × (1 − split).")
        self.confidence = _percent_box(BUDGET_RULES["confidence"],
                                       "Confidence level 1 − β of every error figure in the table.")
        self.eta = NumberEdit(BUDGET_RULES["eta"])
        self.eta.setToolTip("Accuracy η of the optimal-composition engine: the certified bracket of the "
                            f"optimal total is at most η wide.\nAllowed: {BUDGET_RULES['eta'].describe()}.")
        self.dataset_size = NumberEdit(BUDGET_RULES["dataset_size"])
        self.dataset_size.setToolTip("Number of records n in the dataset (public). Needed for means "
                                     "and proportions; δ must stay below 1/n. May be left empty.")
        self.population = NumberEdit(BUDGET_RULES["population"])
        self.population.setToolTip("Population size N > n when the dataset is a secret random sample "
                                   "of it: amplifies privacy (functioning ε). May be left empty.")
        self.reserve = _percent_box(BUDGET_RULES["reserve"],
                                    "Fraction of the global ε kept back for future releases.")
        self.neighbouring = QComboBox()
        for n in Neighbouring:
            self.neighbouring.addItem(n.label, n.value)
        self.neighbouring.setToolTip("Which datasets count as neighbours; replace-one doubles some "
                                     "sensitivities.")
        self.redistribute = QCheckBox("redistribute automatically")
        self.redistribute.setToolTip("On: after every edit the free (not held) statistics are rescaled "
                                     "so the plan spends exactly the global ε under the chosen theorem.")
        self.theorem = QComboBox()
        for name in ALLOCATION_THEOREMS:
            self.theorem.addItem(name, name)
        self.theorem.setToolTip("The composition theorem redistribution and the budget meter use.")
        self.rebalance_button = QPushButton("Redistribute now")
        self.rebalance_button.setToolTip("Rescale the free statistics once to spend the global ε.")
        self.meter = QProgressBar()
        self.meter.setRange(0, 1000)
        self.meter.setTextVisible(True)
        self.meter.setToolTip("Total ε of the plan under the chosen theorem, against the spendable "
                              "global ε (global ε minus the reserve).")
        self.message = QLabel("")
        self.message.setWordWrap(True)
        self.message.setToolTip("Warnings about the budget and the reason an edit was refused.")

        grid = QGridLayout()
        grid.addWidget(QLabel("Sensitivity"), 0, 0)
        grid.addWidget(self.tier, 0, 1, 1, 3)
        grid.addWidget(QLabel("ε_g"), 1, 0)
        grid.addWidget(self.epsilon, 1, 1)
        grid.addWidget(QLabel("δ_g"), 1, 2)
        grid.addWidget(self.delta, 1, 3)
        grid.addWidget(QLabel("δ to statistics"), 2, 0)
        grid.addWidget(self.split, 2, 1)
        grid.addWidget(self.slack, 2, 2, 1, 2)
        grid.addWidget(QLabel("confidence"), 3, 0)
        grid.addWidget(self.confidence, 3, 1)
        grid.addWidget(QLabel("accuracy η"), 3, 2)
        grid.addWidget(self.eta, 3, 3)
        grid.addWidget(QLabel("dataset n"), 4, 0)
        grid.addWidget(self.dataset_size, 4, 1)
        grid.addWidget(QLabel("population N"), 4, 2)
        grid.addWidget(self.population, 4, 3)
        grid.addWidget(QLabel("reserve"), 5, 0)
        grid.addWidget(self.reserve, 5, 1)
        grid.addWidget(QLabel("neighbours"), 5, 2)
        grid.addWidget(self.neighbouring, 5, 3)
        row = QHBoxLayout()
        row.addWidget(self.redistribute)
        row.addStretch(1)
        row.addWidget(QLabel("theorem"))
        row.addWidget(self.theorem)
        row.addWidget(self.rebalance_button)
        grid.addLayout(row, 6, 0, 1, 4)
        meter_row = QFormLayout()
        meter_row.addRow("spent", self.meter)
        grid.addLayout(meter_row, 7, 0, 1, 4)
        grid.addWidget(self.message, 8, 0, 1, 4)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.setLayout(grid)

        self.tier.activated.connect(self._on_tier)
        self.epsilon.valueChanged.connect(lambda v: self._edit("global ε", epsilon=v))
        self.delta.editingFinished.connect(lambda: self._edit_number(self.delta, "delta", "global δ"))
        self.split.valueChanged.connect(lambda v: self._edit("δ split", delta_split=v / 100))
        self.confidence.valueChanged.connect(lambda v: self._edit("confidence", confidence=v / 100))
        self.eta.editingFinished.connect(lambda: self._edit_number(self.eta, "eta", "accuracy η"))
        self.dataset_size.editingFinished.connect(
            lambda: self._edit_number(self.dataset_size, "dataset_size", "dataset size"))
        self.population.editingFinished.connect(
            lambda: self._edit_number(self.population, "population", "population size"))
        self.reserve.valueChanged.connect(lambda v: self._edit("reserve", reserve=v / 100))
        self.neighbouring.activated.connect(
            lambda _i: self._edit("neighbours", neighbouring=Neighbouring(self.neighbouring.currentData())))
        self.redistribute.toggled.connect(lambda on: self._edit("redistribution", redistribute=on))
        self.theorem.activated.connect(lambda _i: self._edit("theorem", theorem=self.theorem.currentData()))
        self.rebalance_button.clicked.connect(editor.rebalance_now)
        editor.refused.connect(self._on_refused)
        plan.subscribe(self._on_plan_event)
        self._spent: Optional[Composition] = None
        self.refresh()

    # -- from the plan --------------------------------------------------------------------------
    def _on_plan_event(self, event: PlanEvent) -> None:
        if event.kind in ("budget", "reset"):
            self.refresh()

    def refresh(self) -> None:
        b: Budget = self.editor.plan.budget
        blockers = [QSignalBlocker(w) for w in (
            self.tier, self.epsilon, self.delta, self.split, self.confidence, self.eta,
            self.dataset_size, self.population, self.reserve, self.neighbouring, self.redistribute,
            self.theorem)]
        self.tier.setCurrentIndex(self.tier.findData(b.tier))
        self.epsilon.setValue(b.epsilon)
        self.delta.set_value(b.delta)
        self.split.setValue(b.delta_split * 100)
        self.confidence.setValue(b.confidence * 100)
        self.eta.set_value(b.eta)
        self.dataset_size.set_value(b.dataset_size)
        self.population.set_value(b.population)
        self.reserve.setValue(b.reserve * 100)
        self.neighbouring.setCurrentIndex(self.neighbouring.findData(b.neighbouring.value))
        self.redistribute.setChecked(b.redistribute)
        self.theorem.setCurrentIndex(self.theorem.findData(b.theorem))
        del blockers
        self.rebalance_button.setEnabled(not b.redistribute)
        self.slack.setText(f"slack δ {formatting.lower(b.delta_slack, 2)}")
        self.message.setText("\n".join(self.editor.plan.warnings()))
        self._update_meter()

    # -- the meter ------------------------------------------------------------------------------
    def set_spent(self, composition: Optional[Composition]) -> None:
        """The plan's total under the budget's theorem (from the latest evaluation)."""
        self._spent = composition
        self._update_meter()

    def _update_meter(self) -> None:
        b = self.editor.plan.budget
        comp = self._spent
        available = b.spendable_epsilon
        if comp is None or not comp.applicable or math.isnan(comp.epsilon):
            self.meter.setValue(0)
            self.meter.setFormat("—")
            return
        if comp.epsilon == math.inf:
            self.meter.setValue(1000)
            self.meter.setFormat(f"infeasible under {comp.theorem}")
            return
        ratio = comp.epsilon / available
        self.meter.setValue(int(min(ratio, 1.0) * 1000))
        over = "  (over budget)" if ratio > 1 + 1e-12 else ""
        self.meter.setFormat(f"ε {formatting.upper(comp.epsilon)} of {formatting.value(available, 4)} "
                             f"({math.ceil(ratio * 1000) / 10:.1f}%) under {comp.theorem}{over}")
        self.meter.setStyleSheet("QProgressBar::chunk { background: #c0392b; }" if over else "")

    # -- to the plan ----------------------------------------------------------------------------
    def _on_tier(self, _index: int) -> None:
        key = self.tier.currentData()
        if key in TIERS_BY_KEY:
            t = TIERS_BY_KEY[key]
            self._edit("sensitivity preset", epsilon=t.epsilon, delta=t.delta)

    def _edit(self, what: str, **changes) -> None:
        self.message.setText("")
        if not self.editor.set_budget(f"Change {what}", **changes):
            self.refresh_values_only()

    def _edit_number(self, edit: NumberEdit, key: str, what: str) -> None:
        try:
            value = edit.value()
        except ValueError as exc:
            self._on_refused(Refusal(str(exc), None, key))
            self.refresh_values_only()
            return
        if value == getattr(self.editor.plan.budget, key):
            return
        self._edit(what, **{key: value})

    def refresh_values_only(self) -> None:
        """Put the plan's (unchanged) values back after a refused edit, keeping the message."""
        message = self.message.text()
        self.refresh()
        self.message.setText(message)

    def _on_refused(self, refusal: Refusal) -> None:
        if refusal.row is None:
            self.message.setText(f"<span style='color:#c0392b'>{refusal.message}</span>")
            self.message.setTextFormat(Qt.TextFormat.RichText)
