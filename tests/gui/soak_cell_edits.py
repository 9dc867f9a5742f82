"""The soak test's user, in the statistics table: typed cells (ε_i, error, weight, releases, name,
variable, δ_i), the hold box and the kind and mechanism columns. Same contract as ``soak_edits``:
each edit acts through what a user touches and returns a line for the edit log."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from dpplanner.gui.table_model import COLUMN_INDEX, RawRole
from dpplanner.model import Kind, Mechanism

if TYPE_CHECKING:
    from soak_edits import Soak

#: Names a user might type (the edges too: accents, 80 characters, blank, padded).
NAMES = ("income", "age", "rent", "région", "a" * 80, "count", "x", "mean income", "  padded  ")


def typed_epsilon(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "ε_i: no rows"
    text = s.maybe_junk(s.number(1e-4, 3.0))
    return f"row {row} ε_i := {text!r}: {s.cell_edit(row, 'epsilon', text)}"


def target_error(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "error: no rows"
    error = s.panel.model.data(s.panel.model.index(row, COLUMN_INDEX["error"]), RawRole)
    if isinstance(error, float) and math.isfinite(error) and error > 0:
        text = f"{error * 10 ** s.rng.uniform(-4, 2):.3g}"     # down to targets no ε can meet
    else:
        text = s.number(1e-6, 1e6)
    text = s.maybe_junk(text)
    return f"row {row} error := {text!r}: {s.cell_edit(row, 'error', text)}"


def weight(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "weight: no rows"
    text = s.maybe_junk(s.number(0.05, 20.0))
    return f"row {row} weight := {text!r}: {s.cell_edit(row, 'weight', text)}"


def repetitions(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "reps: no rows"
    text = s.maybe_junk(str(s.rng.choice((1, 1, 2, 3, 5, 12))), 0.2)
    return f"row {row} reps := {text!r}: {s.cell_edit(row, 'repetitions', text)}"


def hold(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "hold: no rows"
    index = s.panel.model.index(row, COLUMN_INDEX["held"])
    s.panel.view.scrollTo(index)
    s.panel.view.setCurrentIndex(index)
    before = s.panel.model.data(index, Qt.ItemDataRole.CheckStateRole)
    QTest.keyClick(s.panel.view, Qt.Key.Key_Space)          # the delegate toggles the box
    after = s.panel.model.data(index, Qt.ItemDataRole.CheckStateRole)
    return f"row {row} hold toggled (Space): {'changed' if after != before else 'refused'}"


def name(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "name: no rows"
    names = [st.name for st in s.window.plan]
    text = s.rng.choice((*NAMES, s.rng.choice(names), ""))
    return f"row {row} name := {text!r}: {s.cell_edit(row, 'name', text)}"


def variable(s: Soak) -> str:
    row = s.random_row()
    if row is None:
        return "variable: no rows"
    text = s.rng.choice(("income", "age", "", "v1"))
    return f"row {row} variable := {text!r}: {s.cell_edit(row, 'variable', text)}"


def _chosen(s: Soak, key: str, choices: list) -> str:
    """A random row's ``key`` cell set to one of ``choices`` (an enum's members) from its list."""
    row = s.random_row()
    if row is None:
        return f"{key}: no rows"
    value = s.rng.choice(choices).value
    return f"row {row} {key} := {value}: {s.set_cell(row, key, value)}"


def kind(s: Soak) -> str:
    return _chosen(s, "kind", list(Kind))


def mechanism(s: Soak) -> str:
    return _chosen(s, "mechanism", list(Mechanism))


def custom_delta(s: Soak) -> str:
    rows = [i for i, st in enumerate(s.window.plan) if st.kind is Kind.CUSTOM]
    if not rows:
        return kind(s)
    row = s.rng.choice(rows)
    text = s.maybe_junk(s.number(1e-10, 1e-5))
    return f"row {row} δ_i := {text!r}: {s.cell_edit(row, 'delta', text)}"
