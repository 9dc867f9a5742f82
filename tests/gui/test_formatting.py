import math

import pytest

from dpplanner.gui import formatting
from keys import handle_posted_events


@pytest.mark.parametrize("value", [0.250004, 0.24996, 1e-7 * 3.14159, 123456.7, 0.1, 2.0, 9.99996])
def test_upper_text_is_never_below_the_value(value):
    assert float(formatting.upper(value)) >= value
    assert float(formatting.lower(value)) <= value


def test_rounding_direction_matters():
    assert formatting.upper(0.250004) == "0.2501"
    assert formatting.lower(0.250004) == "0.2500"
    assert formatting.upper(9.99996) == "10.0000"
    assert formatting.upper(3.2e-7) == "3.200e-07"


def test_special_values():
    assert formatting.upper(math.inf) == "∞"
    assert formatting.upper(math.nan) == "n/a"
    assert formatting.upper(0.0) == "0"


def test_the_totals_columns_still_fit_their_numbers_after_an_update(qtbot):
    """The results table is filled with its header's resizing off (one measurement per update,
    not one per cell); the columns must still grow to fit wider numbers afterwards."""
    import dataclasses

    from dpplanner import engine
    from dpplanner.gui.results_panel import ResultsPanel

    totals = engine.compose_all([0.1], [0.0], 1e-6, mechanisms=["laplace"])
    panel = ResultsPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 300)
    panel.show()
    panel.set_results(totals, "basic")
    qtbot.waitUntil(lambda: not panel.drawing())       # (drawn on a turn of its own)
    narrow = panel.table.columnWidth(1)
    wide = {k: dataclasses.replace(v, epsilon=123456.789012) for k, v in totals.items()}
    panel.set_results(wide, "basic")
    qtbot.waitUntil(lambda: not panel.drawing())
    handle_posted_events()
    metrics = panel.table.fontMetrics()
    assert panel.table.columnWidth(1) > narrow
    assert panel.table.columnWidth(1) >= metrics.horizontalAdvance(panel.text_at("basic", "total ε"))
    assert panel.table.horizontalHeader().sectionResizeMode(1) == panel.table.horizontalHeader().ResizeMode.ResizeToContents
