"""The "Add statistic" dialog: one kind at a time, only the fields that kind needs.

OK hands the statistic to ``submit`` (the editor's insert); when the plan refuses it - a custom
statistic whose δ does not fit, say - the dialog stays open with everything typed and shows the
reason at the field it concerns. A statistic may be grouped from here too ("Grouped by": the
fields a grouping needs appear once it is typed, ``grouping_fields``).
"""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget,
)

from dpplanner.gui import theme
from dpplanner.gui.editing import Refusal
from dpplanner.gui.fields import RuleField, mark_refused
from dpplanner.gui.fitted_label import WrappingLabel
from dpplanner.gui.grouping_fields import GroupingFields
from dpplanner.model import FIELD_RULES, KIND_FIELDS, Budget, Kind, Mechanism, Statistic, validate_statistic
from dpplanner.model.validation import PlanError

#: Plain-English names of the dialog's fields (screen readers, tests).
FIELD_NAMES = {"lower": "Lower bound", "upper": "Upper bound", "bins": "Number of bins",
               "granularity": "Granularity", "n": "Records", "delta": "Statistic delta",
               "epsilon": "Statistic epsilon"}

_HELP = {
    Kind.COUNT: "How many records satisfy a condition.",
    Kind.SUM: "The sum of a variable; each record is clamped to the bounds.",
    Kind.MEAN: "The mean of a variable over n records; each record is clamped to the bounds.",
    Kind.PROPORTION: "The share of the n records that satisfy a condition.",
    Kind.HISTOGRAM: "Counts in each of a fixed number of bins or categories.",
    Kind.QUANTILE: "A CDF on a grid from lower to upper in steps of the granularity; quantiles "
                   "(median, quartiles) are read off it.",
    Kind.CUSTOM: "Any other mechanism: type its ε and δ directly.",
}


class AddStatisticDialog(QDialog):
    def __init__(self, kind: Kind, budget: Budget, *, name: str = "",
                 submit: Optional[Callable[[Statistic], Optional[Refusal]]] = None,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.budget = budget
        self.submit = submit
        self.setWindowTitle(f"Add statistic: {kind.label}")
        self.name_edit = QLineEdit(name)
        self.name_edit.setToolTip("A name for the statistic, shown in the table, the plots and reports.")
        self.name_edit.setAccessibleName("Statistic name")
        self.variable_edit = QLineEdit()
        self.variable_edit.setToolTip("The variable (dataset column) it is computed on.")
        self.variable_edit.setAccessibleName("Variable")
        self.mechanism = QComboBox()
        for m in Mechanism:
            self.mechanism.addItem(m.label, m.value)
        self.mechanism.setToolTip("Laplace noise gives pure ε-DP; Gaussian noise needs a share of δ.")
        self.mechanism.setAccessibleName("Noise mechanism")
        self.epsilon = RuleField(FIELD_RULES["epsilon"], FIELD_NAMES["epsilon"])
        self.epsilon.set_value(0.1)
        self.fields: dict[str, RuleField] = {}
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Variable", self.variable_edit)
        if kind is not Kind.CUSTOM:
            form.addRow("Mechanism", self.mechanism)
        for field_name in KIND_FIELDS[kind]:
            rule = FIELD_RULES[field_name]
            edit = RuleField(rule, FIELD_NAMES[field_name])
            if field_name == "n" and budget.dataset_size is not None:
                edit.edit.setPlaceholderText(f"plan's dataset size ({budget.dataset_size})")
            self.fields[field_name] = edit
            form.addRow(rule.title, edit)
        self.grouping: Optional[GroupingFields] = None
        if kind is not Kind.CUSTOM:
            self.grouping = GroupingFields(form)
            self.grouping.show(Statistic("", kind=kind), budget)
            # (after the grouping's own slots: its rows are shown by then)
            self.grouping.group_by.textChanged.connect(lambda _t: self._follow_grouping())
            self.grouping.select.toggled.connect(lambda _on: self._follow_grouping())
        self._form = form
        form.addRow("ε (initial)" if budget.redistribute else "ε", self.epsilon)
        if budget.redistribute:
            self.epsilon.edit.setToolTip("Starting ε; with automatic redistribution on, the free "
                                         "statistics are rescaled to spend the global budget.")
        self.error_label = WrappingLabel("")        # every line of the reason shows
        theme.red_text(self.error_label)
        self.error_label.setAccessibleName("Why the statistic was not added")
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        intro = QLabel(_HELP[kind])
        intro.setWordWrap(True)
        layout.addWidget(intro)
        layout.addLayout(form)
        layout.addWidget(self.error_label)
        layout.addWidget(buttons)
        # Wide enough that a reason reads in a few lines, not one word a line (255 px before).
        self._narrowest = self.fontMetrics().averageCharWidth() * 60
        self.setMinimumWidth(self._narrowest)
        self._result: Optional[Statistic] = None

    def _follow_grouping(self) -> None:
        """Once a grouping is typed, its rows show: the dialog widens to fit them (an explicit
        minimum width stops the layout from widening it, and the boxes' text was cut off), and
        the n of a mean or proportion by group says it is the smallest group's size."""
        grouped = bool(self.grouping.group_by.text().strip())
        n = self.fields.get("n")
        if n is not None:
            label = self._form.labelForField(n)
            label.setText("Smallest group's n" if grouped else FIELD_RULES["n"].title)
            n.edit.setPlaceholderText("each group's size is public: the smallest one" if grouped else
                                      (f"plan's dataset size ({self.budget.dataset_size})"
                                       if self.budget.dataset_size is not None else ""))
        self.layout().activate()
        wanted = max(self._narrowest, self.layout().totalMinimumSize().width())
        self.setMinimumWidth(wanted)
        if self.width() < wanted:
            self.resize(wanted, self.height())

    def statistic(self) -> Statistic:
        """The statistic described by the fields; raises PlanError naming the field."""
        values = {name: edit.parsed() for name, edit in self.fields.items()}
        if self.grouping is not None:
            values.update(self.grouping.values())
        epsilon = self.epsilon.parsed()
        stat = Statistic(
            name=self.name_edit.text().strip(), variable=self.variable_edit.text().strip(),
            kind=self.kind,
            mechanism=(Mechanism(self.mechanism.currentData()) if self.kind is not Kind.CUSTOM
                       else Mechanism.LAPLACE),
            epsilon=epsilon, **values)
        return validate_statistic(stat, None, self.budget)

    def accept(self) -> None:
        for edit in (*self.fields.values(), *self._grouping_numbers().values(), self.epsilon):
            edit.clear_message()
        self.error_label.setText("")
        try:
            stat = self.statistic()
        except PlanError as exc:
            self._show(str(exc), exc.field)
            return
        refusal = self.submit(stat) if self.submit is not None else None
        if refusal is not None:
            self._show(refusal.message, refusal.field)
            return
        self._result = stat
        super().accept()

    def _show(self, message: str, field: Optional[str]) -> None:
        """The reason beneath the field it concerns (or beneath the form); nothing typed is lost."""
        target = self.fields.get(field or "") or self._grouping_numbers().get(field or "") or \
            (self.epsilon if field == "epsilon" else None)
        if target is not None:
            target.message.setText(message[:1].upper() + message[1:])
            theme.red_text(target.message)
            target.message.show()
            mark_refused(target.edit)
            target.edit.setAccessibleDescription(target.message.text())
            target.edit.setFocus()
        else:
            self.error_label.setText(message)
        # The dialog grows to show every line of the reason (its fields kept their height and
        # the last line was cut off).
        self.layout().activate()
        self.resize(self.width(), max(self.height(), self.sizeHint().height()))

    def _grouping_numbers(self) -> dict[str, RuleField]:
        return {} if self.grouping is None else self.grouping.numbers

    def result_statistic(self) -> Optional[Statistic]:
        return self._result
