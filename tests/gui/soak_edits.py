"""The soak test's user: random edits of every kind the window offers, through what a user touches.

Each edit is one function ``edit(soak) -> str`` that acts on the window the way a person would -
typing into a table cell's editor or calling the table model's ``setData`` on a real index (what
the delegate does), clicking the hold box, filling the Add dialog opened from its menu action,
typing into the budget panel's fields, stepping its combo boxes, triggering the toolbar and menu
actions (duplicate, remove, move, undo, redo, redistribute), the inspector and the cost plot's view
(``soak_views``; the table's cell edits are in ``soak_cell_edits``) - and returns a line for the edit log
that replays it in words. Values are drawn to hit the edges too: refused text, zero, huge and tiny
numbers, targets no ε can meet.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Optional

import shiboken6
from PySide6.QtCore import QItemSelectionModel, Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import (
    QApplication, QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
    QLineEdit, QWidget,
)

from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import Kind
import soak_views
from soak_cell_edits import (
    NAMES, custom_delta, hold, kind, mechanism, name, repetitions, target_error, typed_epsilon, variable,
    weight,
)


class Soak:
    """Drives one window with a seeded random source; ``log`` holds one line per edit."""

    def __init__(self, window, qtbot, rng: random.Random) -> None:
        self.window = window
        self.qtbot = qtbot
        self.rng = rng
        self.log: list[str] = []

    # -- where the user acts --------------------------------------------------------------------
    @property
    def panel(self):
        return self.window.statistics_panel

    def rows(self) -> int:
        return self.panel.model.rowCount()

    def random_row(self) -> Optional[int]:
        n = self.rows()
        return self.rng.randrange(n) if n else None

    def type_into(self, widget: QWidget, text: str) -> None:
        """Select what the field shows, type ``text``, press Enter (what a user does)."""
        widget.setFocus()
        QTest.keyClick(widget, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClick(widget, Qt.Key.Key_Delete)
        self.type_text(widget, text)
        QTest.keyClick(widget, Qt.Key.Key_Return)

    @staticmethod
    def type_text(widget: QWidget, text: str) -> None:
        """Key clicks for ASCII; other text is pasted (QTest cannot type "é")."""
        if text.isascii():
            QTest.keyClicks(widget, text)
        else:
            QApplication.clipboard().setText(text)
            QTest.keyClick(widget, Qt.Key.Key_V, Qt.KeyboardModifier.ControlModifier)

    def type_in_cell(self, row: int, key: str, text: str) -> str:
        """Open the cell's editor as a double-click would, type, commit with Enter; an editor
        that stays open (its text refused) is closed with Esc."""
        view = self.panel.view
        index = self.panel.model.index(row, COLUMN_INDEX[key])
        view.scrollTo(index)
        view.setCurrentIndex(index)
        if not self.panel.model.flags(index) & Qt.ItemFlag.ItemIsEditable:
            return "not editable"       # a double-click opens nothing (and Qt warns on edit())
        view.edit(index)
        editor = view.indexWidget(index)
        if editor is None:
            return "no editor (not editable)"
        self.type_into(editor, text)
        QApplication.processEvents()    # the released editor is deleted
        if shiboken6.isValid(editor) and editor.isVisible():
            QTest.keyClick(editor, Qt.Key.Key_Escape)
            return "refused in the editor, Esc"
        return "typed"

    def set_cell(self, row: int, key: str, value) -> str:
        """What the delegate does on commit: ``setData`` on the real index (model refusals and
        escaping exceptions alike reach the harness)."""
        ok = self.panel.model.setData(self.panel.model.index(row, COLUMN_INDEX[key]), value)
        return "accepted" if ok else "refused"

    def cell_edit(self, row: int, key: str, text: str) -> str:
        if self.rng.random() < 0.5:
            return self.type_in_cell(row, key, text)
        return self.set_cell(row, key, text)

    def select(self, rows: list[int]) -> None:
        self.panel.select_row(rows[0])
        selection = self.panel.view.selectionModel()
        flags = QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows
        for row in rows[1:]:
            selection.select(self.panel.model.index(row, 0), flags)

    # -- values a user might type ---------------------------------------------------------------
    def number(self, low: float, high: float) -> str:
        """Log-uniform in [low, high], written as a person would (a few significant digits)."""
        x = math.exp(self.rng.uniform(math.log(low), math.log(high)))
        return f"{x:.{self.rng.choice((1, 2, 3, 6))}g}"

    def junk(self) -> str:
        return self.rng.choice(("abc", "-1", "0", "", "1e400", "nan", "inf", "1,5", "2..3", "1e-320"))

    def maybe_junk(self, text: str, p: float = 0.12) -> str:
        return self.junk() if self.rng.random() < p else text


# == structure edits =================================================================================
def add(s: Soak) -> str:
    """Edit > Add statistic > <kind>: the dialog is filled by typing, then OK (or Cancel)."""
    chosen = s.rng.choice(list(Kind))
    row = s.random_row()
    if row is not None:
        s.panel.select_row(row)
    action = next(a for a in s.panel.add_menu.actions() if a.text() == chosen.label)
    outcome: list[str] = []
    QTimer.singleShot(0, lambda: _fill_add_dialog(s, outcome))
    action.trigger()
    return f"add {chosen.value} after row {row}: {' '.join(outcome) or 'no dialog'}"


def _fill_add_dialog(s: Soak, outcome: list[str]) -> None:
    dialog = QApplication.activeModalWidget()
    if not isinstance(dialog, QDialog):
        outcome.append("no modal dialog")
        return
    form = dialog.findChild(QFormLayout)
    lower = s.rng.choice((-100.0, 0.0, 1.0, 18.0))
    for i in range(form.rowCount()):
        label_item = form.itemAt(i, QFormLayout.ItemRole.LabelRole)
        field_item = form.itemAt(i, QFormLayout.ItemRole.FieldRole)
        if label_item is None or field_item is None or field_item.widget() is None:
            continue
        label = label_item.widget().text().lower() if isinstance(label_item.widget(), QLabel) else ""
        field = field_item.widget()
        edit = field if isinstance(field, QLineEdit) else field.findChild(QLineEdit)
        if isinstance(field, QComboBox):
            field.setCurrentIndex(s.rng.randrange(field.count()))
            continue
        if edit is None:
            continue
        text = _dialog_value(s, label, lower)
        if s.rng.random() < 0.08:
            text = s.junk()
        edit.setFocus()
        QTest.keyClick(edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClick(edit, Qt.Key.Key_Delete)
        s.type_text(edit, text)
        outcome.append(f"{label}={text!r}")
    buttons = dialog.findChild(QDialogButtonBox)
    if s.rng.random() < 0.1:
        buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
        outcome.append("Cancel")
        return
    buttons.button(QDialogButtonBox.StandardButton.Ok).click()
    if dialog.isVisible():          # refused: the reason is shown, the user gives up
        outcome.append("OK refused, Cancel")
        buttons.button(QDialogButtonBox.StandardButton.Cancel).click()
    else:
        outcome.append("OK")


def _dialog_value(s: Soak, label: str, lower: float) -> str:
    if label.startswith("name"):
        return s.rng.choice(NAMES)
    if label.startswith("variable"):
        return s.rng.choice(("income", "age", ""))
    if label.startswith("lower"):
        return f"{lower:g}"
    if label.startswith("upper"):
        return f"{lower + s.rng.choice((1, 10, 100, 1e5)):g}"
    if "bins" in label:
        return str(s.rng.choice((2, 10, 100)))
    if "granularity" in label:
        return s.rng.choice(("1", "0.5", "10"))
    if "dataset size" in label or "records" in label:
        return s.rng.choice(("", "100", "2500", "100000"))
    if label.startswith("delta") or label.startswith("δ"):
        return s.number(1e-10, 1e-6)
    if label.startswith("ε") or "epsilon" in label:
        return s.number(1e-3, 1.0)
    return "1"


def duplicate(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "duplicate: no rows"
    s.panel.select_row(row)
    s.panel.duplicate_action.trigger()
    return f"duplicate row {row}"


def remove(s: Soak) -> str:
    n = s.rows()
    if n <= 1:          # keep something to edit; an empty plan is reached through undo anyway
        return add(s)
    rows = s.rng.sample(range(n), k=min(n - 1, s.rng.choice((1, 1, 1, 2, 3))))
    s.select(sorted(rows))
    s.panel.remove_action.trigger()
    return f"remove rows {sorted(rows)}"


def move(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "move: no rows"
    s.panel.select_row(row)
    up = s.rng.random() < 0.5
    (s.panel.up_action if up else s.panel.down_action).trigger()
    return f"move row {row} {'up' if up else 'down'}"


# == budget and window actions =======================================================================
def by_name(parent: QWidget, kind, name: str):
    """The control a screen reader would announce as ``name`` (every control has one)."""
    found = [w for w in parent.findChildren(kind) if w.accessibleName() == name]
    assert len(found) == 1, f"{len(found)} controls named {name!r}"
    return found[0]


#: Budget fields by accessible name, with what a user might type there.
BUDGET_VALUES: dict[str, Callable[[Soak], str]] = {
    "Global epsilon": lambda s: s.number(0.05, 5.0),
    "Global delta": lambda s: s.number(1e-10, 1e-5),
    "Delta to statistics": lambda s: f"{s.rng.uniform(0, 99):.3g}",
    "Confidence": lambda s: f"{s.rng.uniform(50, 99.9):.3g}",
    "Engine accuracy": lambda s: s.number(1e-4, 0.1),
    "Dataset size": lambda s: s.rng.choice(("", "100", "2500", "100000", "1000000")),
    "Population size": lambda s: s.rng.choice(("", "6000", "10000", "1000000", "1e7", "2500")),
    "Reserve": lambda s: f"{s.rng.choice((0, 10, 50, 90)):g}",
}


def budget_field(s: Soak) -> str:
    name = s.rng.choice(list(BUDGET_VALUES))
    text = s.maybe_junk(BUDGET_VALUES[name](s), 0.1)
    field = by_name(s.window.budget_panel, QLineEdit, name)
    s.type_into(field, text)
    if field.accessibleDescription():   # refused: the reason is beneath it, Esc puts the value back
        QTest.keyClick(field, Qt.Key.Key_Escape)
        return f"budget {name} := {text!r}: refused, Esc"
    return f"budget {name} := {text!r}"


def budget_choice(s: Soak) -> str:
    """Step a combo box with the arrow keys (emits ``activated`` like a mouse choice), or click
    the redistribution box."""
    panel = s.window.budget_panel
    which = s.rng.choice(("Harm level", "Neighbouring datasets", "Theorem for redistribution",
                          "Theorem for redistribution", "Redistribute automatically"))
    if which == "Redistribute automatically":
        box = by_name(panel, QCheckBox, which)
        QTest.mouseClick(box, Qt.MouseButton.LeftButton)
        return f"budget {which} clicked: now {box.isChecked()}"
    box = by_name(panel, QComboBox, which)
    box.setFocus()
    key = s.rng.choice((Qt.Key.Key_Down, Qt.Key.Key_Up))
    QTest.keyClick(box, key)
    return f"budget {which} {'down' if key == Qt.Key.Key_Down else 'up'}: {box.currentText()!r}"


def _trigger(action, label: str) -> str:
    enabled = action.isEnabled()
    action.trigger()
    return label if enabled else f"{label} (disabled)"


def undo(s: Soak) -> str:
    return _trigger(s.window.undo_action, "Edit > Undo")


def redo(s: Soak) -> str:
    return _trigger(s.window.redo_action, "Edit > Redo")


def rebalance(s: Soak) -> str:
    return _trigger(s.window.rebalance_action, "Edit > Redistribute now")


def plot_tab(s: Soak) -> str:
    i = s.rng.randrange(s.window.plots.count())
    s.window.plots.setCurrentIndex(i)
    return f"show plot tab {s.window.plots.tabText(i)!r}"


#: (edit, relative frequency): every kind of edit, the typed ones most often.
EDITS: tuple[tuple[Callable[[Soak], str], int], ...] = (
    (typed_epsilon, 8), (target_error, 10), (weight, 5), (repetitions, 4), (hold, 5), (name, 2),
    (variable, 1), (kind, 4), (mechanism, 4), (custom_delta, 2), (add, 4), (duplicate, 3),
    (remove, 3), (move, 3), (budget_field, 10), (budget_choice, 4), (undo, 8), (redo, 4),
    (rebalance, 3), (plot_tab, 2), (soak_views.inspector, 6), (soak_views.curve_view, 2),
)


def pick(rng: random.Random) -> Callable[[Soak], str]:
    edits, weights = zip(*EDITS)
    return rng.choices(edits, weights=weights)[0]
