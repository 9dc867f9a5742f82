"""The "Add statistic" dialog: one kind at a time, only the fields that kind needs."""

from __future__ import annotations

from typing import Optional

from PySide6.QtWidgets import (
    QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel, QLineEdit, QVBoxLayout, QWidget,
)

from dpplanner.gui.fields import NumberEdit
from dpplanner.model import FIELD_RULES, KIND_FIELDS, Budget, Kind, Mechanism, Statistic, validate_statistic
from dpplanner.model.validation import PlanError

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
    def __init__(self, kind: Kind, budget: Budget, *, name: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.kind = kind
        self.budget = budget
        self.setWindowTitle(f"Add statistic: {kind.label}")
        self.name_edit = QLineEdit(name)
        self.name_edit.setToolTip("A name for the statistic, shown in the table, the plots and reports.")
        self.variable_edit = QLineEdit()
        self.variable_edit.setToolTip("The variable (dataset column) it is computed on.")
        self.mechanism = QComboBox()
        for m in Mechanism:
            self.mechanism.addItem(m.label, m.value)
        self.mechanism.setToolTip("Laplace noise gives pure ε-DP; Gaussian noise needs a share of δ.")
        self.epsilon = NumberEdit(FIELD_RULES["epsilon"])
        self.epsilon.set_value(0.1)
        self.fields: dict[str, NumberEdit] = {}
        form = QFormLayout()
        form.addRow("Name", self.name_edit)
        form.addRow("Variable", self.variable_edit)
        if kind is not Kind.CUSTOM:
            form.addRow("Mechanism", self.mechanism)
        for field_name in KIND_FIELDS[kind]:
            rule = FIELD_RULES[field_name]
            edit = NumberEdit(rule)
            if field_name == "n" and budget.dataset_size is not None:
                edit.setPlaceholderText(f"plan's dataset size ({budget.dataset_size})")
            self.fields[field_name] = edit
            form.addRow(rule.label.capitalize(), edit)
        form.addRow("ε (initial)" if budget.redistribute else "ε", self.epsilon)
        if budget.redistribute:
            self.epsilon.setToolTip("Starting ε; with automatic redistribution on, the free "
                                    "statistics are rescaled to spend the global budget.")
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #c0392b")
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
        self._result: Optional[Statistic] = None

    def statistic(self) -> Statistic:
        """The statistic described by the fields; raises ValueError (PlanError) naming the field."""
        values = {name: edit.value() for name, edit in self.fields.items()}
        epsilon = self.epsilon.value()
        stat = Statistic(
            name=self.name_edit.text().strip(), variable=self.variable_edit.text().strip(),
            kind=self.kind,
            mechanism=Mechanism(self.mechanism.currentData()) if self.kind is not Kind.CUSTOM else Mechanism.LAPLACE,
            epsilon=epsilon if epsilon is not None else 0.1, **values)
        return validate_statistic(stat, None, self.budget)

    def accept(self) -> None:
        try:
            self._result = self.statistic()
        except (PlanError, ValueError) as exc:
            self.error_label.setText(str(exc))
            return
        super().accept()

    def result_statistic(self) -> Optional[Statistic]:
        return self._result
