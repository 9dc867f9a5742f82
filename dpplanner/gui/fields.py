"""Input widgets whose limits come from the model's validation rules (never restated here).

A ``FieldRule`` of ``dpplanner.model.validation`` knows its range, whether it is a whole number and
whether it may be empty; these helpers turn one into a spin box or a line edit with a validator.
Optional fields use a line edit so "empty" is representable.
"""

from __future__ import annotations

import math
from typing import Optional

from PySide6.QtCore import QLocale
from PySide6.QtGui import QDoubleValidator, QIntValidator
from PySide6.QtWidgets import QDoubleSpinBox, QLineEdit, QSpinBox, QWidget

from dpplanner.model.validation import FieldRule

_INT_MAX = 2_147_483_647


def spin_box(rule: FieldRule, parent: QWidget | None = None) -> QSpinBox | QDoubleSpinBox:
    """A spin box limited to the rule's closed range (open ends are left to the model to refuse)."""
    if rule.integer:
        box = QSpinBox(parent)
        box.setRange(int(max(rule.minimum, -_INT_MAX)), int(min(rule.maximum, _INT_MAX)))
    else:
        box = QDoubleSpinBox(parent)
        box.setDecimals(rule.decimals)
        box.setRange(rule.minimum, rule.maximum)
        box.setStepType(QDoubleSpinBox.StepType.AdaptiveDecimalStepType)
    box.setKeyboardTracking(False)
    box.setToolTip(f"{rule.label}: {rule.describe()}")
    return box


class NumberEdit(QLineEdit):
    """A line edit for numbers with a very wide range (δ = 1e-9, n = 10^9) or that may be empty."""

    def __init__(self, rule: FieldRule, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.rule = rule
        if rule.integer:
            validator = QIntValidator(parent)
            validator.setRange(int(max(rule.minimum, -_INT_MAX)), int(min(rule.maximum, _INT_MAX)))
        else:
            validator = QDoubleValidator(parent)
            validator.setNotation(QDoubleValidator.Notation.ScientificNotation)
        validator.setLocale(QLocale.c())     # "0.5", never "0,5": float() reads the text
        self.setValidator(validator)
        empty = " (may be left empty)" if rule.optional else ""
        self.setToolTip(f"{rule.label}: {rule.describe()}{empty}")
        self.setPlaceholderText("—" if rule.optional else rule.describe())

    def value(self) -> Optional[float]:
        """The number typed (None when empty). Raises ValueError for text that is not a number."""
        text = self.text().strip()
        if not text:
            return None
        try:
            number = float(text)
        except ValueError:
            raise ValueError(f"{self.rule.label}: {text!r} is not a number; it must be "
                             f"{self.rule.describe()}") from None
        if self.rule.integer and math.isfinite(number) and number == math.floor(number):
            return int(number)
        return number

    def set_value(self, value: Optional[float]) -> None:
        self.setText("" if value is None else f"{value:g}" if not self.rule.integer else str(int(value)))
