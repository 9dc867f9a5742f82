"""The table's noise column, the Statistic tab and the report name a statistic's noise in one
wording (model/display.py): a continuous-noise statistic never reads as plain "Laplace" in the
table while the tab says it is the idealised continuous noise."""

from __future__ import annotations

import html
import re

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox

from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import display
from dpplanner.model.statistic import Noise
from keys import field, handle_posted_events
from test_release_window import pick_with_keys


@pytest.fixture
def window(statistic_tab_window):
    return statistic_tab_window


def noise_cell(window, row: int) -> str:
    model = window.statistics_panel.model
    return model.data(model.index(row, COLUMN_INDEX["mechanism"]), Qt.ItemDataRole.DisplayRole)


def report_noise(window, tmp_path) -> list[str]:
    """The noise column of the exported report's first table, what each statistic is (File >
    Export Report)."""
    path = tmp_path / "report.html"
    assert window.exports.export_report(path)
    rows = re.findall(r'<tr><td>\d+</td><td class="name">.*?</tr>', path.read_text(encoding="utf-8"))
    return [html.unescape(re.findall(r"<td[^>]*>(.*?)</td>", row)[4]) for row in rows[:len(window.plan)]]


def test_a_continuous_noise_statistic_is_named_alike_in_the_table_the_tab_and_the_report(window, tmp_path):
    window.statistics_panel.select_row(1)                       # mean b, Laplace, OpenDP's noise
    implemented = field(window.statistics_panel.inspector, "Noise implemented by", QComboBox)
    assert noise_cell(window, 1) == "Laplace" and implemented.currentText() == "OpenDP 0.16"
    pick_with_keys(implemented, Noise.CONTINUOUS.label)
    assert window.plan[1].noise is Noise.CONTINUOUS
    assert implemented.currentText() == f"continuous ({display.IDEAL})"
    assert noise_cell(window, 1) == f"Laplace ({display.IDEAL})"
    assert noise_cell(window, 2) == "Gaussian"                  # hist c: OpenDP's Gaussian
    assert report_noise(window, tmp_path) == ["Laplace", "Laplace (ideal)", "Gaussian"]


def test_the_noise_column_is_as_wide_as_the_noise_its_statistics_have(qtbot, window):
    """Narrow while every statistic has OpenDP's noise (the table of a plan with wide errors fits
    at 1280 px); once one has the idealised noise its word is read whole, and stays so."""
    view = window.statistics_panel.view
    metrics = view.fontMetrics()
    column = COLUMN_INDEX["mechanism"]
    assert view.columnWidth(column) < metrics.horizontalAdvance(display.noise(False, True))
    window.statistics_panel.select_row(0)
    pick_with_keys(field(window.statistics_panel.inspector, "Noise implemented by", QComboBox),
                   Noise.CONTINUOUS.label)
    handle_posted_events()
    assert noise_cell(window, 0) == "Laplace (ideal)"
    assert view.columnWidth(column) >= metrics.horizontalAdvance("Laplace (ideal)") + 8
