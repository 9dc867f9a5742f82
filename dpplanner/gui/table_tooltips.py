"""What a cell of the statistics table says in its tooltip: the column's own text, after what the
row's values add to it (an error bound in full and how it is reached, a pin, the functioning ε
and why an ε_i may be above the global ε, how the noise is implemented, a kind's assumptions, a
description)."""

from __future__ import annotations

from typing import Callable

from dpplanner.gui import formatting
from dpplanner.gui.table_columns import COLUMN_INDEX, COLUMNS
from dpplanner.model import Budget, Statistic, StatisticPrivacy
from dpplanner.model.explanations import above_global_tip
from dpplanner.model.implementation import implementation
from dpplanner.model.statistic import assumptions


def cell_tooltip(budget: Budget, stat: Statistic, key: str, privacy: Callable[[], StatisticPrivacy]) -> str:
    """The tooltip of ``stat``'s cell in column ``key``; ``privacy()`` gives the row's accuracy
    (asked for only by the columns that show it)."""
    column = COLUMNS[COLUMN_INDEX[key]]
    if key == "error":
        p = privacy()
        if p.problem:
            return f"This statistic cannot be released as set up: {p.problem}"
        if p.error is None:
            return column.tooltip
        # The sentence already names the units; the full value is what the cell rounds up.
        target = ("" if stat.target_error is None else
                  f"Target error {formatting.exact(stat.target_error)}, as typed: the statistic's "
                  "ε_i follows it after every edit (untick the pin to end it).\n\n")
        full = formatting.exact(p.shown_error)
        if stat.group_by:
            full = f"{full} in one group by {stat.group_by}, {formatting.exact(p.error)} in all at once"
        return f"{target}{p.explanation}\n\nError bound in full: {full}\n\n{column.tooltip}"
    if key == "held" and stat.held:
        pinned = (f"Pinned at its target error {formatting.exact(stat.target_error)}"
                  if stat.target_error is not None else
                  f"Pinned at ε_i = {formatting.exact(stat.epsilon)}")
        return f"{pinned}.\n\n{column.tooltip}"
    if key == "epsilon":
        p = privacy()
        text = f"ε_i = {formatting.exact(stat.epsilon)}"
        if p.functioning_epsilon != stat.epsilon:
            text += f" (functioning ε after amplification: {formatting.upper(p.functioning_epsilon, 6)})"
        if stat.epsilon > budget.spendable_epsilon:
            text += f"\n\n{above_global_tip(budget)}"
        return f"{text}\n\n{column.tooltip}"
    if key == "mechanism":
        impl = implementation(budget, stat, privacy())
        if impl is not None:
            rows = "\n".join(f"{label}: {text}" for label, text in impl.rows())
            return f"How it is implemented:\n{rows}\n\n{column.tooltip}"
    assumed = assumptions(stat, budget.dataset_size) if key == "kind" else ""
    if assumed:
        return f"{stat.kind.label}: {assumed}\n\n{column.tooltip}"
    if key == "name" and stat.description:
        return f"{stat.description}\n\n{column.tooltip}"
    return column.tooltip


def waiting_tooltip(shown: str, key: str) -> str:
    """The tooltip of an error cell drawn, greyed, as it was before the plan's last change until
    the change's result is drawn (gui/table_numbers.py)."""
    return (f"{shown}: as before the last change, drawn again in a moment with the change's totals."
            f"\n\n{COLUMNS[COLUMN_INDEX[key]].tooltip}")
