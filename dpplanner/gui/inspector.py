"""The statistic inspector: every field of the selected statistic, editable, with what it means.

The table is for scanning; the inspector shows one statistic in full - name, variable, kind,
mechanism, the assumptions its noise depends on (bounds, bins, granularity, n), weight,
repetitions, ε_i and target error (typing either pins it), notes, its grouping (what it is
released by, the groups, L0 and L∞: ``grouping_fields``) and how one protected individual moves
it under the plan's unit of privacy - with the model's plain-language sentence. (The plan's own
title and description are edited from File > Title and Description; the unit of privacy from the
Budget panel.)

An edit the plan refuses stays typed with the reason at the field the reason concerns, and is
kept as *pending*: changing a count into a mean is refused for want of bounds, so the inspector
shows the bound fields with "type it here" and applies the kind together with the bounds once
they are typed. Selecting another statistic (or a change of the plan) drops what is pending.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox, QComboBox, QFormLayout, QGroupBox, QLabel, QLineEdit, QScrollArea, QVBoxLayout, QWidget,
)

from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.fields import RuleField
from dpplanner.gui.grouping_fields import GroupingFields
from dpplanner.gui.fitted_label import WrappingLabel
from dpplanner.gui.formatting import as_caption
from dpplanner.model import FIELD_RULES, KIND_FIELDS, Kind, Mechanism, PlanEvent, Statistic
from dpplanner.model import display
from dpplanner.model.explanations import unit_label
from dpplanner.model.implementation import implementation
from dpplanner.model.statistic import WHOLE_NUMBER_KINDS, Noise
from dpplanner.model.targets import typed_fields

#: The rule-checked number fields, in the order shown, with their accessible names.
NUMBER_FIELDS = (("lower", "Lower bound"), ("upper", "Upper bound"), ("bins", "Number of bins"),
                 ("granularity", "Granularity"), ("n", "Records"), ("weight", "Weight"),
                 ("repetitions", "Releases"), ("epsilon", "Statistic epsilon"),
                 ("delta", "Statistic delta"), ("error", "Target error"))
#: "individual" in the derivation's lines (contributions.py), for the plan's unit of privacy.
_INDIVIDUAL = re.compile(r"\bindividual\b")
_KIND_ONLY = {"lower", "upper", "bins", "granularity", "n", "delta"}


class StatisticInspector(QGroupBox):
    def __init__(self, editor: PlanEditor, parent: QWidget | None = None) -> None:
        super().__init__("No statistic selected", parent)
        self.setAccessibleName("Statistic inspector")
        self.editor = editor
        self.row = -1
        self._pending: dict[str, Any] = {}

        self.hint = WrappingLabel("Select a statistic in the table to see and edit all of it here.")
        self.name = self._line("Statistic name", "The statistic's name (plots, reports).")
        self.variable = self._line("Variable", "The variable (dataset column) it is computed on.")
        self.notes = self._line("Notes", "Anything a reader of the plan should know about it.")
        for key, edit in (("name", self.name), ("variable", self.variable), ("description", self.notes)):
            edit.editingFinished.connect(lambda k=key, e=edit: self._text_edit(k, e))
        self.kind = self._combo("Kind", Kind, "What is released.")
        self.mechanism = self._combo("Noise mechanism", Mechanism,
                                     "Laplace noise gives pure ε-DP; Gaussian noise needs a share of δ.")
        self.noise_source = self._combo(
            "Noise implemented by", Noise,
            "OpenDP 0.16: exactly the noise OpenDP adds (discrete, on the integers or a fine lattice), "
            "what an exported release script adds and the plan certifies. Continuous: the textbook "
            "noise, which no library adds exactly.")
        self.noise_source.activated.connect(
            lambda _i: self._submit("noise", Noise(self.noise_source.currentData())))
        self.whole = QCheckBox("values are whole numbers")
        self.whole.setAccessibleName("Values are whole numbers")
        self.whole.setToolTip("The variable only takes whole values: OpenDP sums integers exactly "
                              "and adds integer noise (the bounds must be whole numbers too).")
        self.whole.toggled.connect(lambda on: self._submit("integer", on))
        self.implementation = QLabel("")
        self.implementation.setWordWrap(True)
        self.implementation.setAccessibleName("How it is implemented")
        self.implementation.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.kind.activated.connect(lambda _i: self._submit("kind", Kind(self.kind.currentData())))
        self.mechanism.activated.connect(
            lambda _i: self._submit("mechanism", Mechanism(self.mechanism.currentData())))
        self.numbers: dict[str, RuleField] = {}
        for key, name in NUMBER_FIELDS:
            shown = display.error_field if key == "error" else None
            widget = RuleField(FIELD_RULES[key], name, FIELD_RULES[key].title, shown=shown)
            widget.submitted.connect(lambda v, k=key: self._submit(k, v))
            widget.dismissed.connect(lambda k=key: self._pending.pop(k, None))
            self.numbers[key] = widget
        self.pinned = QCheckBox("pinned")
        self.pinned.setAccessibleName("Pinned")
        self.pinned.setToolTip("A pinned statistic keeps its ε_i (or, pinned at a target error, the "
                               "ε_i that error needs after every edit) when the budget is "
                               "redistributed; untick to let redistribution move it. "
                               "Typing an ε_i or a target error pins it.")
        self.pinned.toggled.connect(lambda on: self._submit("held", on))
        self.units = QLabel("")
        self.moves = WrappingLabel("")
        self.moves.setTextFormat(Qt.TextFormat.PlainText)       # (it quotes the plan's unit)
        self.moves.setAccessibleName("How one individual moves it")
        self.moves.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sentence = WrappingLabel("")
        for label in (self.implementation, self.units, self.sentence):   # plan text, never markup
            label.setTextFormat(Qt.TextFormat.PlainText)
        self.sentence.setAccessibleName("What the numbers mean")
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.form = QFormLayout()
        self.form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self.form.addRow("Name", self.name)
        self.form.addRow("Variable", self.variable)
        self.form.addRow("What", self.kind)
        self.form.addRow("Noise", self.mechanism)
        self.form.addRow("Implemented by", self.noise_source)
        labels = {"lower": "Values from", "upper": "Values up to", "bins": "Bins",
                  "granularity": "Granularity", "n": "Over (records)", "weight": "Weight",
                  "repetitions": "Releases", "epsilon": "ε_i", "delta": "δ_i", "error": "Error ±"}
        for key, _name in NUMBER_FIELDS:
            self.form.addRow(labels[key], self.numbers[key])
            if key == "upper":
                self.form.addRow("", self.whole)
        self.form.addRow("", self.units)
        self.form.addRow("", self.pinned)
        self.form.addRow("Notes", self.notes)
        # the grouping's rows in the same form: their fields line up with those above
        self.group_title = QLabel("<b>Groups and the unit of privacy</b>")
        self.form.addRow(self.group_title)
        self.grouping = GroupingFields(self.form, lambda k, v: self._submit(k, v))
        self.grouping.group_by.textChanged.connect(lambda text: self._name_n(bool(text.strip())))
        self.stat_box = QWidget()
        stat_layout = QVBoxLayout(self.stat_box)
        stat_layout.setContentsMargins(0, 0, 0, 0)
        stat_layout.addLayout(self.form)
        stat_layout.addWidget(self.moves)
        stat_layout.addWidget(self.sentence)
        stat_layout.addWidget(self.implementation)
        stat_layout.addStretch(1)

        inner = QWidget()
        layout = QVBoxLayout(inner)
        layout.addWidget(self.hint)
        layout.addWidget(self.stat_box)
        scroll = QScrollArea()
        scroll.setWidget(inner)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        for edit in inner.findChildren(QLineEdit):
            edit.setMinimumWidth(40)        # fields shrink with the column instead of scrolling
        outer = QVBoxLayout(self)
        outer.setContentsMargins(4, 4, 4, 4)
        outer.addWidget(scroll)
        self._submitting = False
        editor.plan.subscribe(self._on_plan_event)
        editor.refused.connect(self._on_refused)
        editor.settling.connect(self._follow)
        self.refresh()

    # -- building -------------------------------------------------------------------------------
    def _line(self, name: str, tip: str) -> QLineEdit:
        edit = QLineEdit()
        edit.setAccessibleName(name)
        edit.setToolTip(tip)
        return edit

    def _combo(self, name: str, members, tip: str) -> QComboBox:
        box = QComboBox()
        for m in members:
            box.addItem(m.label, m.value)
        box.setAccessibleName(name)
        box.setToolTip(tip)
        return box

    # -- showing --------------------------------------------------------------------------------
    def set_row(self, row: int) -> None:
        self.row = row
        self._pending = {}
        self.refresh()

    def _follow(self, row_after) -> None:
        """Edits are about to land (those that waited for their redistribution too): keep showing
        the same statistic at its new row (one removed: the one that takes its place)."""
        if self.row >= 0:
            now = row_after(self.row)
            self.row = self.row if now is None else now

    def _on_plan_event(self, event: PlanEvent) -> None:
        if event.kind in ("inserted", "removed", "moved", "reset") or self.row >= len(self.editor.plan):
            self.row = min(self.row, len(self.editor.plan) - 1)
        self._pending = {}
        self.refresh()

    def refresh(self) -> None:
        plan = self.editor.plan
        has_row = 0 <= self.row < len(plan)
        self.hint.setVisible(not has_row)
        self.stat_box.setVisible(has_row)
        if not has_row:
            self.setTitle("No statistic selected")
            return
        stat = plan[self.row]
        privacy = plan.privacy(self.row)
        self.setTitle(as_caption(f"Statistic {self.row + 1}: {stat.name}"))
        for edit, text in ((self.name, stat.name), (self.variable, stat.variable),
                           (self.notes, stat.description)):
            edit.setText(text)
        self._show_choice(self.kind, stat.kind.value)
        self._show_choice(self.mechanism, stat.mechanism.value)
        self._show_choice(self.noise_source, stat.noise.value)
        self.whole.blockSignals(True)
        self.whole.setChecked(stat.integer)
        self.whole.blockSignals(False)
        impl = implementation(plan.budget, stat, privacy)
        self.implementation.setText("" if impl is None else "How it is implemented:\n" + "\n".join(
            f"{label}: {text}" for label, text in impl.rows()))
        values = {key: getattr(stat, key) for key, _n in NUMBER_FIELDS if key not in ("delta", "error")}
        # A target error is shown as typed (it is what the plan keeps); otherwise the error bound
        # the ε_i gives, rounded up.
        targeted = stat.target_error is not None
        self.numbers["error"].set_shown(None if targeted else display.error_field)
        # (a grouped statistic's error and target are one group's, as in the table)
        error = privacy.cell_error if stat.group_by and privacy.cell_error is not None else privacy.error
        values.update(delta=privacy.delta, error=stat.target_error if targeted else error)
        for key, widget in self.numbers.items():
            widget.set_value(values[key])
        self._name_n(bool(stat.group_by))
        self.pinned.blockSignals(True)
        self.pinned.setChecked(stat.held)
        self.pinned.setText("pinned at its target error" if targeted else
                            "pinned at its ε_i" if stat.held else "pinned")
        self.pinned.blockSignals(False)
        per = ", for one group" if stat.group_by else ""
        self.units.setText(f"the error above is in {privacy.units}{per}" if privacy.units else "")
        self.sentence.setText(privacy.problem and f"Cannot be released as set up: {privacy.problem}"
                              or privacy.explanation)
        self.grouping.show(stat, plan.budget)
        self.moves.setText(moves_text(plan.budget, stat, privacy))
        self._show_kind(stat.kind)

    def _name_n(self, grouped: bool) -> None:
        """A mean or proportion by group divides each group's sum by its (public) size: n is the
        smallest group's, which the plan's dataset size is not (as soon as a grouping is typed)."""
        dataset = self.editor.plan.budget.dataset_size
        self.form.labelForField(self.numbers["n"]).setText("Smallest group (records)" if grouped
                                                           else "Over (records)")
        self.numbers["n"].edit.setPlaceholderText(
            "each group's size is public: the smallest one" if grouped else
            f"the plan's dataset size ({display.count(dataset)})" if dataset else "—")

    def _show_choice(self, box: QComboBox, value: str) -> None:
        box.blockSignals(True)
        box.setCurrentIndex(box.findData(value))
        box.blockSignals(False)

    def _show_kind(self, kind: Kind) -> None:
        """Only the fields a kind uses; δ_i is typed for custom statistics only, error for others."""
        needed = set(KIND_FIELDS[kind])
        for key, widget in self.numbers.items():
            visible = key in needed if key in _KIND_ONLY else not (key == "error" and kind is Kind.CUSTOM)
            self.form.setRowVisible(widget, visible)
        self.form.setRowVisible(self.mechanism, kind is not Kind.CUSTOM)
        self.form.setRowVisible(self.noise_source, kind is not Kind.CUSTOM)
        self.form.setRowVisible(self.whole, kind in WHOLE_NUMBER_KINDS)
        self.moves.setVisible(kind is not Kind.CUSTOM)
        for widget in (self.group_title, self.grouping.group_by):
            self.form.setRowVisible(widget, kind is not Kind.CUSTOM)
        if kind is Kind.CUSTOM:
            self.grouping.set_grouped(False)

    # -- editing --------------------------------------------------------------------------------
    def _text_edit(self, key: str, edit: QLineEdit) -> None:
        if 0 <= self.row < len(self.editor.plan) and getattr(self.editor.plan[self.row], key) != edit.text():
            self._submit(key, edit.text().strip() if key == "name" else edit.text())

    def _submit(self, key: str, value: Any) -> None:
        row = self.row
        if not 0 <= row < len(self.editor.plan):
            return
        stat: Statistic = self.editor.plan[row]
        # A value typed again in a refused field replaces the refused one; the others still wait.
        waiting = {k: v for k, v in self._pending.items() if k != key}
        changes = {**waiting, key: value}
        act: Callable[[], bool]
        if key == "epsilon" and not waiting:
            act = lambda: self.editor.set_epsilon(row, value)            # noqa: E731
        elif key == "error" and not waiting:
            act = lambda: self.editor.set_target_error(row, value)       # noqa: E731
        else:
            act = lambda: self.editor.update_statistic(row, typed_fields(changes),  # noqa: E731
                                                       f"Edit {stat.name!r}")
        self._submitting = True
        try:
            accepted = act()
        finally:
            self._submitting = False
        if accepted:
            return      # applied (the plan event refreshes the fields) or being redistributed
        refusal = self.editor.last_refusal
        self._pending = changes
        if "kind" in changes:
            self._show_kind(changes["kind"])
        if changes.get("group_by"):      # grouped from now on: the fields that needs, to type
            self.grouping.set_grouped(True, changes.get("select_groups", stat.select_groups))
        numbers = {**self.numbers, **self.grouping.numbers}
        message = refusal.message if refusal is not None else "refused"
        target = numbers.get(refusal.field if refusal is not None and refusal.field else key)
        if target is None or not target.isVisibleTo(self):
            target = numbers.get(key)
        # Fields typed for the waiting change say nothing any more (their value waits with it).
        for typed in changes:
            if typed in numbers and numbers[typed] is not target:
                numbers[typed].clear_message()
        if target is not None:
            if target.rule.name != key and target.value() is None:
                # a field the change needs and the user has not seen yet: a prompt, not an error
                target.show_prompt(f"{message} - type it here; the change is made once every "
                                   "field it needs is typed")
            else:
                target.show_refusal(message)
        else:
            self.sentence.setText(f"Not applied: {message}")

    def _on_refused(self, refusal) -> None:
        """A refusal that arrives later (pins checked with the redistribution, on the worker) or
        from the table: shown at this statistic's field too."""
        if self._submitting or refusal.row != self.row:
            return
        widget = self.numbers.get(refusal.field or "") or self.grouping.numbers.get(refusal.field or "")
        if widget is not None and widget.isVisibleTo(self):
            widget.show_refusal(refusal.message)


def moves_text(budget, stat: Statistic, privacy) -> str:
    """The unit of privacy and how one individual moves the statistic (contributions.py), its
    error in one group and in all of them, and the selection of its groups, in words."""
    if stat.kind is Kind.CUSTOM:
        return ""
    c = budget.contributions
    how = "the release keeps at most c rows each" if budget.truncate else "the data guarantee it"
    lines = [f"Protects one {budget.unit}, who contributes at most c = {c} row{'s' if c != 1 else ''} "
             f"({how}; set in the Budget panel)."]
    if privacy.moves is not None:
        # (the derivation's lines speak of "an individual": here, in the plan's word)
        unit = unit_label(budget.unit)
        lines += [_INDIVIDUAL.sub(lambda _m: unit, line[:1].upper() + line[1:]) + "."
                  for line in privacy.moves.lines]
        if stat.group_by:
            lines.append(_cost(budget.unit, stat, privacy.moves))
    if stat.group_by and privacy.cell_error is not None and privacy.error is not None:
        g = privacy.moves.groups if privacy.moves is not None else None
        lines.append(f"Error in one group: ± {display.error(privacy.cell_error)}; in "
                     f"{f'all {g} groups' if g else 'every released group'} at once: "
                     f"± {display.error(privacy.error)}.")
    if privacy.selection is not None:
        lines.append(privacy.selection.sentence(budget.unit))
    return "\n".join(lines)


def _cost(unit: str, stat: Statistic, moves) -> str:
    """What a table by group costs: one release of its ε_i however many groups it has (parallel
    composition over the groups an individual is not in), never one release per group."""
    g = moves.groups
    reps = stat.repetitions
    queries = "one query of k" if reps == 1 else f"each of its {reps} repetitions one query of k"
    return (f"Cost: {f'all {g} groups' if g else 'all its groups'} together are one release of "
            f"ε_i = {display.upper(stat.epsilon)} ({queries})"
            + (f", not {g} releases" if g and g > 1 else "")
            + f": one {unit} moves at most {moves.cells} of them.")
