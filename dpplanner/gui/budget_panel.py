"""The plan-wide budget: global (ε, δ), presets, δ split, confidence, η, reserve, redistribution."""

from __future__ import annotations

import math
from html import escape
from typing import Optional

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QProgressBar,
    QPushButton, QToolButton, QWidget,
)

from dpplanner import engine
from dpplanner.engine.types import Composition
from dpplanner.gui import formatting
from dpplanner.gui.editing import PlanEditor, Refusal
from dpplanner.gui.fields import RuleField
from dpplanner.model import (
    ALLOCATION_THEOREMS, BUDGET_RULES, CUSTOM_TIER, SENSITIVITY_TIERS, TIERS_BY_KEY, Budget,
    Neighbouring, PlanEvent,
)


class BudgetPanel(QGroupBox):
    def __init__(self, editor: PlanEditor, parent: QWidget | None = None) -> None:
        super().__init__("Budget", parent)
        self.editor = editor
        plan = editor.plan

        self.tier = QComboBox()
        for t in SENSITIVITY_TIERS:
            self.tier.addItem(f"{t.label} (ε={t.epsilon:g}, δ={t.delta:g})", t.key)
        self.tier.addItem("Custom", CUSTOM_TIER)
        self.tier.setAccessibleName("Harm level")
        self.tier.setToolTip("Presets by data sensitivity, as data repositories tier their holdings. "
                             "Choosing one sets the global ε and δ.")
        def field(key: str, name: str, tip: str) -> RuleField:
            return RuleField(BUDGET_RULES[key], name, tip)

        self.epsilon = field("epsilon", "Global epsilon",
                             "Global ε: the total privacy loss the whole release may have.")
        self.delta = field("delta", "Global delta", "Global δ: the probability the ε guarantee may "
                           "fail. Keep it well below 1/n.")
        self.split = field("delta_split", "Delta to statistics", "Share of the global δ (in %) "
                           "given to the Gaussian statistics; the rest is slack for the composition "
                           "theorem.")
        self.slack = QLabel()
        self.slack.setToolTip("δ left for composition: global δ × (1 − split).")
        self.confidence = field("confidence", "Confidence", "Confidence level 1 − β (in %) of every "
                                "error figure in the table.")
        self.eta = field("eta", "Engine accuracy", "Accuracy η of the optimal-composition engine: the "
                         "certified bracket of the optimal total is at most η wide.")
        self.dataset_size = field("dataset_size", "Dataset size", "Number of records n in the dataset "
                                  "(public). Needed for means and proportions; δ must stay below 1/n.")
        self.population = field("population", "Population size", "Population size N > n when the "
                                "dataset is a secret random sample of it: amplifies privacy "
                                "(functioning ε).")
        self.reserve = field("reserve", "Reserve", "Share of the global ε (in %) kept back for future "
                             "releases.")
        self.fields = {"epsilon": self.epsilon, "delta": self.delta, "delta_split": self.split,
                       "confidence": self.confidence, "eta": self.eta,
                       "dataset_size": self.dataset_size, "population": self.population,
                       "reserve": self.reserve}
        self.neighbouring = QComboBox()
        for n in Neighbouring:
            self.neighbouring.addItem(n.label, n.value)
        self.neighbouring.setAccessibleName("Neighbouring datasets")
        self.neighbouring.setToolTip("Which datasets count as neighbours; replace-one doubles some "
                                     "sensitivities.")
        self.redistribute = QCheckBox("redistribute automatically")
        self.redistribute.setAccessibleName("Redistribute automatically")
        self.redistribute.setToolTip("On: after every edit the free (not held) statistics are rescaled "
                                     "so the plan spends exactly the global ε under the chosen theorem.")
        self.theorem = QComboBox()
        for name in ALLOCATION_THEOREMS:
            self.theorem.addItem(name, name)
        self.theorem.setAccessibleName("Theorem for redistribution")
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
        grid.addWidget(QLabel("Harm level"), 0, 0)
        grid.addWidget(self.tier, 0, 1, 1, 3)
        grid.addWidget(QLabel("Global ε"), 1, 0)
        grid.addWidget(self.epsilon, 1, 1)
        grid.addWidget(QLabel("Global δ"), 1, 2)
        grid.addWidget(self.delta, 1, 3)
        grid.addWidget(QLabel("Records n"), 2, 0)
        grid.addWidget(self.dataset_size, 2, 1)
        grid.addWidget(QLabel("Population N"), 2, 2)
        grid.addWidget(self.population, 2, 3)
        grid.addWidget(QLabel("Confidence"), 3, 0)
        grid.addWidget(self.confidence, 3, 1)
        grid.addWidget(QLabel("Keep in reserve"), 3, 2)
        grid.addWidget(self.reserve, 3, 3)
        grid.addWidget(QLabel("δ to statistics"), 4, 0)
        grid.addWidget(self.split, 4, 1)
        row = QHBoxLayout()
        row.addWidget(self.redistribute)
        row.addStretch(1)
        row.addWidget(self.rebalance_button)
        grid.addLayout(row, 5, 0, 1, 4)
        meter_row = QFormLayout()
        meter_row.addRow("Spent", self.meter)
        grid.addLayout(meter_row, 6, 0, 1, 4)
        # Expert settings, folded away: a newcomer needs none of them to make a first plan.
        self.advanced_toggle = QToolButton()
        self.advanced_toggle.setText("Advanced")
        self.advanced_toggle.setCheckable(True)
        self.advanced_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_toggle.setAutoRaise(True)
        self.advanced_toggle.setToolTip("Expert settings: the δ left for composition, engine "
                                        "accuracy, neighbouring datasets and the theorem "
                                        "redistribution uses")
        self.advanced = QWidget()
        expert = QGridLayout(self.advanced)
        expert.setContentsMargins(0, 0, 0, 0)
        expert.addWidget(self.slack, 0, 0, 1, 4)
        expert.addWidget(QLabel("Engine accuracy η"), 1, 0)
        expert.addWidget(self.eta, 1, 1)
        expert.addWidget(QLabel("Neighbours"), 1, 2)
        expert.addWidget(self.neighbouring, 1, 3)
        expert.addWidget(QLabel("Theorem"), 2, 0)
        expert.addWidget(self.theorem, 2, 1, 1, 3)
        expert.setColumnStretch(1, 1)
        expert.setColumnStretch(3, 1)
        self.advanced.setVisible(False)
        self.advanced_toggle.toggled.connect(self._show_advanced)
        grid.addWidget(self.advanced_toggle, 7, 0, 1, 4)
        grid.addWidget(self.advanced, 8, 0, 1, 4)
        grid.addWidget(self.message, 9, 0, 1, 4)
        grid.setColumnStretch(1, 1)
        grid.setColumnStretch(3, 1)
        self.setLayout(grid)

        self.tier.activated.connect(self._on_tier)
        self._source: Optional[RuleField] = None
        for key, widget in self.fields.items():
            widget.submitted.connect(
                lambda v, k=key, w=widget: self._edit(w.edit.accessibleName().lower(), w, **{k: v}))
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
        for key, widget in self.fields.items():
            widget.set_value(getattr(b, key))
        self._reset_choices()
        self.rebalance_button.setEnabled(not b.redistribute)
        self.slack.setText(f"δ left for composition {formatting.lower(b.delta_slack, 2)}")
        self.message.setText("\n".join(self.editor.plan.warnings()))
        self._update_meter()

    # -- the meter ------------------------------------------------------------------------------
    def set_spent(self, composition: Optional[Composition]) -> None:
        """The plan's total under the budget's theorem (from the latest evaluation)."""
        self._spent = composition
        self._update_meter()

    def _update_meter(self) -> None:
        # QProgressBar.setValue repaints at once; with updates off, the three changes below are
        # painted together with the rest of the window (an edit paid for two paints here)
        self.meter.setUpdatesEnabled(False)
        try:
            self._fill_meter()
        finally:
            self.meter.setUpdatesEnabled(True)

    def _fill_meter(self) -> None:
        b = self.editor.plan.budget
        comp = self._spent
        available = b.spendable_epsilon
        over = False
        if comp is None or not comp.applicable or math.isnan(comp.epsilon):
            self.meter.setValue(0)
            self.meter.setFormat("—")
        elif comp.epsilon == math.inf:
            self.meter.setValue(1000)
            self.meter.setFormat(f"infeasible under {engine.theorem(comp.theorem).label}")
            over = True
        else:
            ratio = comp.epsilon / available        # may overflow to inf: only the bar's length
            self.meter.setValue(int(min(ratio, 1.0) * 1000))
            over = ratio > 1 + 1e-12
            self.meter.setFormat(f"ε {formatting.upper(comp.epsilon)} of {formatting.value(available, 4)} "
                                 f"({formatting.percent_of(comp.epsilon, available)}) under "
                                 f"{engine.theorem(comp.theorem).label}{'  (over budget)' if over else ''}")
        sheet = "QProgressBar::chunk { background: #c0392b; }" if over else ""
        if self.meter.styleSheet() != sheet:    # (setting a style sheet restyles the widget)
            self.meter.setStyleSheet(sheet)

    # -- to the plan ----------------------------------------------------------------------------
    def _show_advanced(self, shown: bool) -> None:
        self.advanced.setVisible(shown)
        self.advanced_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    def _on_tier(self, _index: int) -> None:
        key = self.tier.currentData()
        if key in TIERS_BY_KEY:
            t = TIERS_BY_KEY[key]
            self._edit("sensitivity preset", epsilon=t.epsilon, delta=t.delta)

    def _edit(self, what: str, source: Optional[RuleField] = None, **changes) -> None:
        """Hand a budget change to the editor; a refusal shows at ``source`` (the field typed in),
        which keeps the typed text, or beneath the panel for the other controls."""
        self.message.setText("")
        self._source = source
        try:
            accepted = self.editor.set_budget(f"Change {what}", **changes)
        finally:
            self._source = None
        if not accepted:
            self._reset_choices()

    def _reset_choices(self) -> None:
        """Put the plan's values back in the combo boxes and the check box after a refusal."""
        b = self.editor.plan.budget
        blockers = [QSignalBlocker(w) for w in (self.tier, self.neighbouring, self.redistribute,
                                                self.theorem)]
        self.tier.setCurrentIndex(self.tier.findData(b.tier))
        self.neighbouring.setCurrentIndex(self.neighbouring.findData(b.neighbouring.value))
        self.redistribute.setChecked(b.redistribute)
        self.theorem.setCurrentIndex(self.theorem.findData(b.theorem))
        del blockers

    def _on_refused(self, refusal: Refusal) -> None:
        target = self._source
        if target is None and refusal.row is None:
            # refused later, with the redistribution it needed: at the field it concerns
            target = self.fields.get(refusal.field or "")
        if target is not None:
            target.show_refusal(refusal.message)
        elif refusal.row is None:
            self.message.setText(f"<span style='color:#c0392b'>{escape(refusal.message)}</span>")
            self.message.setTextFormat(Qt.TextFormat.RichText)
