"""The grouping fields of a statistic, shared by the inspector and the + Statistic dialog.

A statistic released "by" a grouping (region, age group x sex) is one row of the plan with one
cell per group (``model/contributions.py``): what it is grouped by, the groups (their number g or
their keys, or "select them privately" when they are not known in advance), whether the grouping
is a property of the individual (L0 = 1), and the two contribution bounds L0 and L∞ (empty: the
default derived from c and the grouping, shown in the field). Numbers are ``RuleField``s: a typed
value is kept exactly or refused with the reason beneath it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtWidgets import QCheckBox, QFormLayout, QLineEdit

from dpplanner.gui.fields import RuleField
from dpplanner.gui.formatting import as_plain
from dpplanner.model import FIELD_RULES, Budget, Statistic
from dpplanner.model.contributions import default_max_groups, default_max_rows, group_count
from dpplanner.model.explanations import unit_label

#: The number fields, with their accessible names and form labels.
GROUP_NUMBERS = (("groups", "Number of groups", "Groups g"),
                 ("max_groups", "Groups per individual", "Groups each (L0)"),
                 ("max_rows", "Rows per individual in one group", "Rows in one (L∞)"),
                 ("selection_share", "Share of epsilon for selecting the groups", "ε to select"))
#: Every field this widget edits (the Statistic's names).
GROUP_FIELDS = ("group_by", "groups", "group_keys", "one_group_each", "max_groups", "max_rows",
                "select_groups", "selection_share")


class GroupingFields:
    """Adds the grouping rows to ``form``; ``submit(key, value)`` is called with each typed value
    (exact) or ticked box. ``show`` puts a statistic's values in the fields."""

    def __init__(self, form: QFormLayout, submit: Optional[Callable[[str, Any], None]] = None) -> None:
        self._submit = submit or (lambda _k, _v: None)
        self.group_by = QLineEdit()
        self.group_by.setAccessibleName("Grouped by")
        self.group_by.setPlaceholderText("not grouped")
        self.group_by.setToolTip("Release the statistic once per group (e.g. region, or age group × "
                                 "sex): one row of the plan, one cell per group. Empty: not grouped.")
        self.keys = QLineEdit()
        self.keys.setAccessibleName("Group keys")
        self.keys.setPlaceholderText("e.g. north, south, east (or give g)")
        self.keys.setToolTip("The groups' public keys, comma-separated (their number is g).")
        self.one_each = QCheckBox()           # (its texts name the plan's unit: _name_unit)
        self.one_each.setAccessibleName("One group per individual")
        self.select = QCheckBox("groups not known in advance: select them privately")
        self.select.setAccessibleName("Select the groups privately")
        self.numbers: dict[str, RuleField] = {}
        for key, name, _label in GROUP_NUMBERS:
            field = RuleField(FIELD_RULES[key], name, FIELD_RULES[key].title)
            field.submitted.connect(lambda v, k=key: self._submit(k, v))
            self.numbers[key] = field
        # (``show`` puts the derived defaults' values here once a statistic is shown)
        self.numbers["max_groups"].edit.setPlaceholderText("default: 1 if one group each, or min(c, g)")
        self.numbers["max_rows"].edit.setPlaceholderText("default: c")
        self._name_unit("individual")
        self.group_by.editingFinished.connect(lambda: self._text("group_by", self.group_by))
        self.keys.editingFinished.connect(lambda: self._text("group_keys", self.keys))
        self.one_each.toggled.connect(lambda on: self._submit("one_group_each", on))
        self.select.toggled.connect(lambda on: self._submit("select_groups", on))
        # typing a grouping shows the fields it needs at once (g, keys, bounds)
        self.group_by.textChanged.connect(lambda _t: self._follow())
        self.select.toggled.connect(lambda _on: self._follow())
        self._form = form
        self._shown_text = {"group_by": "", "group_keys": ""}
        form.addRow("Grouped by", self.group_by)
        labels = {key: label for key, _n, label in GROUP_NUMBERS}
        form.addRow(labels["groups"], self.numbers["groups"])
        form.addRow("Group keys", self.keys)
        form.addRow("", self.one_each)
        form.addRow(labels["max_groups"], self.numbers["max_groups"])
        form.addRow(labels["max_rows"], self.numbers["max_rows"])
        form.addRow("", self.select)
        form.addRow(labels["selection_share"], self.numbers["selection_share"])

    def _name_unit(self, unit: str) -> None:
        """The texts that speak of one protected individual, in the plan's word ("household")."""
        self.one_each.setText(f"one group per {unit} (L0 = 1)")
        # (as plain text: the unit is the plan's own word)
        self.one_each.setToolTip(as_plain(f"Tick when the grouping is a property of the {unit} (region "
                                          f"of residence, age group): every {unit} is in exactly one group."))
        self.select.setToolTip(as_plain(f"The keys are not public (e.g. the occupations that occur): each "
                                        f"group is released only if its noisy count (each {unit} counted "
                                        "once) reaches a threshold, paid for with a share of the statistic's "
                                        "ε (and δ)."))
        self.numbers["max_groups"].set_tip(f"Groups per {unit}: at most how many groups one {unit}'s "
                                           "rows fall in")
        self.numbers["max_rows"].set_tip(f"Rows per {unit} in one group: at most how many of one "
                                         f"{unit}'s rows fall in one group")

    def _follow(self) -> None:
        self.set_grouped(bool(self.group_by.text().strip()), self.select.isChecked())

    def _text(self, key: str, edit: QLineEdit) -> None:
        if edit.text() != self._shown_text[key]:
            self._shown_text[key] = edit.text()
            self._submit(key, edit.text().strip())

    def show(self, stat: Statistic, budget: Budget) -> None:
        """The statistic's values; the bounds left empty show their derived default."""
        self._shown_text = {"group_by": stat.group_by, "group_keys": stat.group_keys}
        self.group_by.setText(stat.group_by)
        self.keys.setText(stat.group_keys)
        for box, on in ((self.one_each, stat.one_group_each), (self.select, stat.select_groups)):
            box.blockSignals(True)
            box.setChecked(on)
            box.blockSignals(False)
        for key, field in self.numbers.items():
            field.set_value(getattr(stat, key))
        grouped = bool(stat.group_by.strip())
        c = budget.contributions
        unit = unit_label(budget.unit)
        self._name_unit(unit)
        if grouped:
            g = group_count(stat)
            self.numbers["groups"].edit.setPlaceholderText("the keys listed" if stat.group_keys.strip()
                                                           else "—")
            self.numbers["max_groups"].edit.setPlaceholderText(
                f"1 (one group per {unit})" if stat.one_group_each else
                f"{default_max_groups(stat, c)} (derived from c = {c}" + (f" and g = {g})" if g else ")"))
            self.numbers["max_rows"].edit.setPlaceholderText(f"{default_max_rows(stat, c)} (c)")
        self.set_grouped(grouped, stat.select_groups)

    def set_grouped(self, grouped: bool, select: bool = False) -> None:
        """Only "Grouped by" while the statistic is not grouped; the rest once it is."""
        for widget in (self.numbers["groups"], self.keys, self.one_each, self.numbers["max_groups"],
                       self.numbers["max_rows"], self.select):
            self._form.setRowVisible(widget, grouped)
        self._form.setRowVisible(self.numbers["selection_share"], grouped and select)

    def values(self) -> dict[str, Any]:
        """The typed grouping (the + Statistic dialog); raises PlanError naming the field."""
        out: dict[str, Any] = {"group_by": self.group_by.text().strip(),
                               "group_keys": self.keys.text().strip(),
                               "one_group_each": self.one_each.isChecked(),
                               "select_groups": self.select.isChecked()}
        for key, field in self.numbers.items():
            value = field.parsed()
            if value is not None or key != "selection_share":
                out[key] = value
        return out
