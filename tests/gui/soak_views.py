"""The soak test's user, beside the table: the inspector of the selected statistic and the cost
plot's view (prefix or repeat curve, log k, the largest k). Same contract as ``soak_edits``: each
edit acts through what a user touches and returns a line for the edit log."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit, QSpinBox

#: Inspector fields by accessible name, with what a user might type there.
INSPECTOR_VALUES = {
    "Statistic name": lambda s: s.rng.choice(("income", "age", "mean of rent", "région")),
    "Weight": lambda s: s.maybe_junk(s.number(0.1, 10.0)),
    "Releases": lambda s: s.maybe_junk(str(s.rng.choice((1, 2, 12, 365)))),
    "Statistic epsilon": lambda s: s.maybe_junk(s.number(1e-3, 2.0)),
    "Target error": lambda s: s.maybe_junk(s.number(1e-3, 1e5)),
    "Notes": lambda s: s.rng.choice(("", "from the 2021 wave", "ask the owner")),
}


def inspector(s) -> str:
    """Select a row, type into one of the inspector's fields, Enter."""
    row = s.random_row()
    if row is None:
        return "inspector: no statistics"
    s.select([row])
    which = s.rng.choice(sorted(INSPECTOR_VALUES))
    edits = [w for w in s.panel.inspector.findChildren(QLineEdit)
             if w.accessibleName() == which and w.isVisibleTo(s.panel.inspector)]
    if not edits:
        return f"inspector row {row} {which}: hidden for this kind"
    text = INSPECTOR_VALUES[which](s)
    s.type_into(edits[0], text)
    if edits[0].accessibleDescription():        # refused: the reason is beside the field; Esc
        QTest.keyClick(edits[0], Qt.Key.Key_Escape)
        return f"inspector row {row} {which} := {text!r}: refused, Esc"
    return f"inspector row {row} {which} := {text!r}"


def curve_view(s) -> str:
    """Switch the cost plot between prefixes and one repeated query, log k, or the largest k."""
    plot = s.window.cost_plot
    choice = s.rng.randrange(3)
    if choice == 0:
        button = plot.prefix_button if plot.mode() == "repeat" else plot.repeat_button
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)
        return f"cost plot mode: {plot.mode()}"
    if choice == 1:
        QTest.mouseClick(plot.log_k, Qt.MouseButton.LeftButton)
        return f"cost plot log k: {plot.log_k.isChecked()}"
    spin: QSpinBox = plot.k_max
    text = str(s.rng.choice((0, 5, 50, 400)))
    s.type_into(spin, text)
    return f"cost plot largest k := {text} (shown {spin.value()})"
