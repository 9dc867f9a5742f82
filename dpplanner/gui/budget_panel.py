"""The plan-wide budget: global (ε, δ), presets, δ split, confidence, η, reserve, redistribution,
and the unit of privacy (what one protected individual is, the most rows c each contributes, and
whether the release truncates to c rows)."""

from __future__ import annotations

from typing import Mapping, Optional

from PySide6.QtCore import QSignalBlocker, Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QGridLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit, QToolButton, QWidget,
)

from dpplanner import engine
from dpplanner.engine.types import Composition
from dpplanner.gui import formatting, theme
from dpplanner.gui.editing import PlanEditor, Refusal
from dpplanner.gui.fields import RuleField
from dpplanner.gui.fitted_label import WrappingLabel
from dpplanner.gui.spent_meter import SpentMeter
from dpplanner.gui.turns import Turns
from dpplanner.model import (
    ALLOCATION_THEOREMS, BUDGET_RULES, CUSTOM_TIER, SENSITIVITY_TIERS, TIERS_BY_KEY, Budget,
    Neighbouring, PlanEvent,
)
from dpplanner.model.explanations import unit_label


class BudgetPanel(QGroupBox):
    def __init__(self, editor: PlanEditor, parent: QWidget | None = None,
                 turns: Turns | None = None) -> None:
        super().__init__("Budget", parent)
        self.editor = editor
        self._turns = turns if turns is not None else Turns(self)     # see set_spent
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
        # (its tooltip, and the check box's text, name the plan's unit: refresh)
        self.contributions = field("contributions", "Rows per individual", "")
        self.unit = QLineEdit()
        self.unit.setAccessibleName("Unit of privacy")
        self.unit.setToolTip("What one protected individual is, in your words (a person, a "
                             "household, a firm): the plan protects every one of them.")
        self.unit.editingFinished.connect(self._on_unit)
        self.truncate = QCheckBox()
        self.truncate.setAccessibleName("Truncate to c rows")
        self.truncate.toggled.connect(lambda on: self._edit("truncation", truncate=on))
        self._labelled = {"Global ε": self.epsilon, "Global δ": self.delta, "Records n": self.dataset_size,
                          "Population N": self.population, "Confidence": self.confidence,
                          "Keep in reserve": self.reserve, "δ to statistics": self.split,
                          "Engine accuracy η": self.eta, "Rows each (c)": self.contributions}
        self.fields = {"epsilon": self.epsilon, "delta": self.delta, "delta_split": self.split,
                       "confidence": self.confidence, "eta": self.eta,
                       "dataset_size": self.dataset_size, "population": self.population,
                       "reserve": self.reserve, "contributions": self.contributions}
        self.neighbouring = QComboBox()
        for n in Neighbouring:
            self.neighbouring.addItem(n.label, n.value)
        self.neighbouring.setAccessibleName("Neighbouring datasets")
        # (its items name the plan's unit and c: _name_unit; a long one never widens the panel)
        self.neighbouring.setSizeAdjustPolicy(
            QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.neighbouring.setMinimumContentsLength(16)
        self.neighbouring.setToolTip("Which datasets count as neighbours; replace-one doubles some "
                                     "sensitivities.")
        self.redistribute = QCheckBox("redistribute automatically")
        self.redistribute.setAccessibleName("Redistribute automatically")
        self.redistribute.setToolTip("On: after every edit the free (not held) statistics are rescaled "
                                     "so the plan spends exactly the global ε under the chosen theorem.")
        self.theorem = QComboBox()
        for name in ALLOCATION_THEOREMS:      # the registry's labels, as the totals name them
            self.theorem.addItem(engine.theorem(name).label, name)
            self.theorem.setItemData(self.theorem.count() - 1, engine.theorem(name).summary,
                                     Qt.ItemDataRole.ToolTipRole)
        self.theorem.setAccessibleName("Theorem for redistribution")
        self.theorem.setToolTip("The composition theorem redistribution and the budget meter use.")
        self.spent = SpentMeter(editor, self._turns, self)
        self.rebalance_button, self.meter = self.spent.button, self.spent.bar
        self.assumption, self.over_reason = self.spent.assumption, self.spent.over_reason
        #: Why the last redistribution may leave part of the budget unspent, in the engine's words
        #: as the command line's note line (hidden while there is nothing to say).
        self.unspent = WrappingLabel("")
        self.unspent.setTextFormat(Qt.TextFormat.PlainText)
        self.unspent.setAccessibleName("Why budget is left unspent")
        self.unspent.setToolTip("Why the redistribution may leave part of the budget unspent "
                                "(the total it lands on could not be certified more tightly).")
        self.unspent.setVisible(False)
        self.message = WrappingLabel("")
        self.message.setAccessibleName("Budget warnings")
        self.message.setToolTip("Warnings about the budget and the reason an edit was refused.")

        grid = QGridLayout()
        grid.addWidget(QLabel("Harm level"), 0, 0)
        grid.addWidget(self.tier, 0, 1, 1, 3)
        row = 1
        for left, right in (("Global ε", "Global δ"), ("Records n", "Population N"),
                            ("Confidence", "Keep in reserve")):
            row = self._field_row(grid, row, (left, right))
        grid.addWidget(QLabel("Protects one"), row, 0)
        grid.addWidget(self.unit, row, 1)
        row = self._field_row(grid, row, (None, "Rows each (c)"), first=1)
        grid.addWidget(self.truncate, row, 0, 1, 4)
        row += 1
        buttons = QHBoxLayout()
        buttons.addWidget(self.redistribute)
        buttons.addStretch(1)
        buttons.addWidget(self.rebalance_button)
        grid.addLayout(buttons, row, 0, 1, 4)
        grid.addWidget(QLabel("Spent"), row + 1, 0)
        grid.addWidget(self.meter, row + 1, 1, 1, 3)
        grid.addWidget(self.over_reason, row + 2, 0, 1, 4)
        grid.addWidget(self.unspent, row + 3, 0, 1, 4)
        row += 2
        grid.addWidget(self.assumption, row + 2, 0, 1, 4)
        # Expert settings, folded away: a newcomer needs none of them to make a first plan.
        self.advanced_toggle = QToolButton()
        self.advanced_toggle.setText("Advanced")
        self.advanced_toggle.setCheckable(True)
        self.advanced_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.advanced_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.advanced_toggle.setAutoRaise(True)
        self.advanced_toggle.setAccessibleName("Advanced settings")
        self.advanced_toggle.setToolTip("Expert settings: the δ given to the statistics and the δ "
                                        "left for composition, engine accuracy, neighbouring "
                                        "datasets and the theorem the plan is spent under")
        self.advanced = QWidget()
        expert = QGridLayout(self.advanced)
        expert.setContentsMargins(0, 0, 0, 0)
        expert.addWidget(self.slack, 0, 2, 1, 2)
        next_row = self._field_row(expert, 0, ("δ to statistics", None))
        next_row = self._field_row(expert, next_row, ("Engine accuracy η", None))
        # as wide as the theorem's: its items say what a neighbour is in the plan's words
        expert.addWidget(QLabel("Neighbours"), next_row, 0)
        expert.addWidget(self.neighbouring, next_row, 1, 1, 3)
        next_row += 1
        expert.addWidget(QLabel("Theorem"), next_row, 0)
        expert.addWidget(self.theorem, next_row, 1, 1, 3)
        expert.setColumnStretch(1, 1)
        expert.setColumnStretch(3, 1)
        self.advanced.setVisible(False)
        self.advanced_toggle.toggled.connect(self._show_advanced)
        grid.addWidget(self.advanced_toggle, row + 3, 0, 1, 4)
        grid.addWidget(self.advanced, row + 4, 0, 1, 4)
        grid.addWidget(self.message, row + 5, 0, 1, 4)
        # Room the panel does not need goes below the last row: rows that grew would leave each
        # label centred beside a field drawn at its row's top.
        grid.setRowStretch(row + 6, 1)
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
        # a redistribution that changed no ε_i sends no plan event: its reason is shown then
        editor.redistributing.connect(lambda active: active or self._show_unspent())
        self._editing = False                   # a change from this panel is being tried
        self._waiting: set[str] = set()         # fields of this panel's edit being redistributed
        self.refresh()

    def _field_row(self, grid: QGridLayout, row: int, labels: tuple, first: int = 0) -> int:
        """One row of (label, field) pairs, then each field's reason on a row of its own as wide
        as the panel (a refusal's allowed range is read there: a field's column is too narrow).
        ``first``: the pair the first field takes (1: the right half). Returns the next free row."""
        fields = [(text, self._labelled[text]) for text in labels if text is not None]
        for j, (text, widget) in enumerate(fields, start=first):
            grid.addWidget(QLabel(text), row, 2 * j)
            grid.addWidget(widget, row, 2 * j + 1)
        for j, (_text, widget) in enumerate(fields):
            grid.addWidget(widget.detach_message(), row + 1 + j, 0, 1, 4)
        return row + 1 + len(fields)

    # -- from the plan --------------------------------------------------------------------------
    def _on_plan_event(self, event: PlanEvent) -> None:
        if event.kind in ("budget", "reset"):
            self._waiting = set()               # this panel's edit was made
            self.refresh()
        self._show_unspent()

    def _show_unspent(self) -> None:
        why = self.editor.unspent_reason()
        text = f"Note: {why}" if why else ""
        if self.unspent.text() != text:
            self.unspent.setText(text)
            self.unspent.setVisible(bool(text))

    def refresh(self) -> None:
        b: Budget = self.editor.plan.budget
        for key, widget in self.fields.items():
            widget.set_value(getattr(b, key))
        self.unit.setText(b.unit)
        self._name_unit(unit_label(b.unit), b.contributions)
        self._reset_choices()
        self.slack.setText(f"δ left for composition {formatting.lower(b.delta_slack, 2)}")
        self._show_warnings()
        self.spent.update()

    def _name_unit(self, unit: str, c: int) -> None:
        """The texts that speak of one protected individual, in the plan's word ("household")."""
        for i, n in enumerate(Neighbouring):
            self.neighbouring.setItemText(i, n.of(unit, c))
        self.truncate.setText(f"the release keeps at most c rows per {unit}")
        self.truncate.setToolTip(formatting.as_plain(
            f"Ticked: the release drops rows beyond c per {unit}. Unticked: the data already guarantee "
            "at most c rows each."))
        self.contributions.set_tip(f"c: the most rows (records) one protected {unit} contributes to "
                                   "the dataset. Every sensitivity is derived from it.")

    # -- the meter ------------------------------------------------------------------------------
    def set_spent(self, composition: Optional[Composition],
                  totals: Optional[Mapping[str, Composition]] = None) -> None:
        """The latest evaluation's total and every theorem's, for the Spent bar (SpentMeter)."""
        self.spent.set_spent(composition, totals)

    def set_spent_late(self) -> None:
        """The plan's total is late: the Spent bar greys the one before (SpentMeter.set_late)."""
        self.spent.set_late()

    def drawing(self) -> bool:
        """Whether a result's total is still to be shown (a turn of the event loop after set_spent)."""
        return self.spent.drawing()

    # -- to the plan ----------------------------------------------------------------------------
    def _show_advanced(self, shown: bool) -> None:
        self.advanced.setVisible(shown)
        self.advanced_toggle.setArrowType(Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow)

    def _on_unit(self) -> None:
        text = self.unit.text().strip()
        if text != self.editor.plan.budget.unit:
            self._edit("unit of privacy", unit=text)       # refused: kept, the reason below

    def _on_tier(self, _index: int) -> None:
        key = self.tier.currentData()
        if key in TIERS_BY_KEY:
            t = TIERS_BY_KEY[key]
            self._edit("sensitivity preset", epsilon=t.epsilon, delta=t.delta)

    def _edit(self, what: str, source: Optional[RuleField] = None, **changes) -> None:
        """Hand a budget change to the editor; a refusal shows at ``source`` (the field typed in),
        which keeps the typed text, or beneath the panel for the other controls."""
        self._show_warnings()
        if not self.editor.is_redistributing():
            self._waiting = set()
        self._source, self._editing = source, True
        try:
            accepted = self.editor.set_budget(f"Change {what}", **changes)
        finally:
            self._source, self._editing = None, False
        if not accepted:
            self._reset_choices()
        elif self.editor.is_redistributing():
            # its refusal may come with the redistribution (with those of edits chained to it)
            self._waiting |= set(changes)

    def _reset_choices(self) -> None:
        """Put the plan's values back in the combo boxes and the check box after a refusal."""
        b = self.editor.plan.budget
        blockers = [QSignalBlocker(w) for w in (self.tier, self.neighbouring, self.redistribute,
                                                self.theorem, self.truncate)]
        self.tier.setCurrentIndex(self.tier.findData(b.tier))
        self.neighbouring.setCurrentIndex(self.neighbouring.findData(b.neighbouring.value))
        self.redistribute.setChecked(b.redistribute)
        self.theorem.setCurrentIndex(self.theorem.findData(b.theorem))
        self.truncate.setChecked(b.truncate)
        del blockers

    def _on_refused(self, refusal: Refusal) -> None:
        """Only this panel's own edits are shown here: a statistic's refusal that names a field
        called "delta" (the + Statistic dialog's) is not the global δ's."""
        ours = self._editing or (refusal.row is None and (refusal.field or "") in self._waiting)
        if not ours:
            return
        self._waiting.discard(refusal.field or "")
        self._reset_choices()                   # a refused choice goes back to the plan's
        target = self._source
        if target is None and refusal.row is None:
            # refused later, with the redistribution it needed: at the field it concerns
            target = self.fields.get(refusal.field or "")
        if target is not None:
            target.show_refusal(refusal.message)
        elif refusal.row is None:
            self.message.setTextFormat(Qt.TextFormat.PlainText)
            self.message.setText(f"Not applied: {refusal.message}")
            theme.red_text(self.message)

    def _show_warnings(self) -> None:
        self.message.setTextFormat(Qt.TextFormat.PlainText)
        self.message.setText("\n".join(self.editor.plan.warnings()))
        theme.red_text(self.message, False)
