"""The Statistic tab at 1280x800 reads as one form: the grouping's fields start where the fields
above them start (they sat a few pixels off, in a form of their own), and the error's unit is
said beneath the error field in a sentence."""

from __future__ import annotations

from PySide6.QtCore import QPoint

from dpplanner.model.examples import example_path
from keys import click_row, field, show_tab, wait_idle


def left(widget) -> int:
    return widget.mapTo(widget.window(), QPoint(0, 0)).x()


def test_the_grouping_fields_line_up_with_the_statistic_fields(qtbot, shown):
    window = shown
    assert window.document.open_example(example_path("census-tables"), confirm=False)
    wait_idle(qtbot, window)
    grouped = next(i for i, s in enumerate(window.plan) if s.group_by)
    click_row(window, grouped)
    show_tab(window, "Statistic")
    wait_idle(qtbot, window)
    inspector = window.statistics_panel.inspector
    name = field(inspector, "Statistic name")
    for other in ("Grouped by", "Number of groups", "Group keys"):
        assert left(field(inspector, other)) == left(name), other
    assert inspector.units.text() == "the error above is in records, for one group"
