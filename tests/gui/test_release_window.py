"""Issue 25 points 2-4 in the window (and issue 24 item 7): each statistic says how its noise is
implemented and what implementing it needs; File > Export Release Script writes the script that
matches the plan. Typed and clicked as a user does."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QCheckBox, QComboBox, QFileDialog, QLabel

from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model.display import exact
from dpplanner.model.statistic import Noise
from dpplanner.release import check_script
from keys import field


@pytest.fixture
def window(statistic_tab_window):
    return statistic_tab_window


def pick_with_keys(box: QComboBox, label: str) -> None:
    """Open nothing: focus the combo and press Down/Up until ``label`` is current (as a keyboard
    user does), each key press activating the choice."""
    box.setFocus()
    target = box.findText(label)
    assert target >= 0
    while box.currentIndex() != target:
        QTest.keyClick(box, Qt.Key.Key_Down if box.currentIndex() < target else Qt.Key.Key_Up)


def test_the_inspector_shows_what_implementing_the_statistic_needs(window):
    window.statistics_panel.select_row(1)                # mean b: income in [0, 100], n = 1,000
    inspector = window.statistics_panel.inspector
    text = field(inspector, "How it is implemented", QLabel).text()
    p = window.plan.privacy(1)
    assert "Noise implemented by: OpenDP 0.16" in text and "Data type: real numbers" in text
    assert "Clamped to: [0, 100]" in text and "Missing values count as: 0" in text
    assert f"b = {p.opendp.scale!r}" in text.replace(",", "") and "multiples of 2^-" in text
    assert "at d_in = 1" in text and "δ_i: 0" in text
    assert field(inspector, "Noise implemented by", QComboBox).currentText() == "OpenDP 0.16"


def test_a_gaussian_shows_its_delta_and_rho(window):
    window.statistics_panel.select_row(2)                # hist c: Gaussian histogram of 10 bins
    text = field(window.statistics_panel.inspector, "How it is implemented", QLabel).text()
    p = window.plan.privacy(2)
    assert "discrete Gaussian, σ = " in text and "on integers" in text
    assert "ρ_i (zCDP): " in text and "δ_i: " in text and p.opendp.rho > 0


def test_choosing_continuous_noise_and_whole_numbers_by_keyboard(qtbot, window):
    window.statistics_panel.select_row(1)
    inspector = window.statistics_panel.inspector
    pick_with_keys(field(inspector, "Noise implemented by", QComboBox), Noise.CONTINUOUS.label)
    assert window.plan[1].noise is Noise.CONTINUOUS
    # the idealised noise in the table's words (display.noise), not "continuous Laplace"
    text = field(inspector, "How it is implemented", QLabel).text()
    assert "Noise: Laplace (ideal), b = " in text and "continuous Laplace" not in text
    whole = field(inspector, "Values are whole numbers", QCheckBox)
    whole.setFocus()
    QTest.keyClick(whole, Qt.Key.Key_Space)
    assert window.plan[1].integer is True
    pick_with_keys(field(inspector, "Noise implemented by", QComboBox), Noise.OPENDP.label)
    assert "Data type: whole numbers" in field(inspector, "How it is implemented", QLabel).text()
    # whole numbers need whole bounds: a fractional bound is refused at its field
    upper = field(inspector, "Upper bound")
    upper.setFocus()
    upper.selectAll()
    QTest.keyClicks(upper, "99.5")
    QTest.keyClick(upper, Qt.Key.Key_Return)
    assert window.plan[1].upper == 100
    problem = field(inspector, "Upper bound: problem", QLabel)
    assert "whole numbers, so the upper bound must be one too" in problem.text()


def test_the_noise_cell_tooltip_says_how_it_is_implemented(window):
    model = window.statistics_panel.model
    tip = model.data(model.index(0, COLUMN_INDEX["mechanism"]), Qt.ItemDataRole.ToolTipRole)
    assert "How it is implemented:" in tip and "discrete Laplace" in tip
    assert "Sensitivity: L1 1, L2 1 at d_in = 1" in tip


def test_export_release_script_writes_the_script_of_the_plan(qtbot, window, monkeypatch, tmp_path):
    target = tmp_path / "release.py"
    monkeypatch.setattr(QFileDialog, "getSaveFileName", lambda *a, **k: (str(target), ""))
    menu = [a for a in window.menuBar().actions() if a.text() == "&File"][0].menu()
    action = [a for a in menu.actions() if a.text() == "Export Release &Script…"][0]
    action.trigger()
    text = target.read_text()
    assert "opendp==0.16.*" in text and "PLAN = {" in text
    assert check_script(text, window.plan).matches


def test_a_continuous_plan_is_refused_with_the_reason_and_nothing_written(qtbot, window, monkeypatch,
                                                                         tmp_path):
    window.editor.update_statistic(0, {"noise": Noise.CONTINUOUS}, "continuous")
    assert not window.exports.export_release(tmp_path / "release.py")
    assert not (tmp_path / "release.py").exists()
    # said in the window, not in a box (the conftest fails the test on an unexpected one)
    assert "planned with continuous noise, which OpenDP does not add" in window.exports.refusal.label.text()


def test_the_report_names_the_ideal_noise_as_the_window_does(window, tmp_path):
    """The report's "How each statistic is implemented" row says "Laplace (ideal)" as its noise
    column and the window do, read back by an HTML parser and by Qt's rich-text renderer."""
    window.statistics_panel.select_row(1)
    pick_with_keys(field(window.statistics_panel.inspector, "Noise implemented by", QComboBox),
                   Noise.CONTINUOUS.label)
    assert window.plan[1].noise is Noise.CONTINUOUS
    assert window.exports.export_report(tmp_path / "report.html")
    html = (tmp_path / "report.html").read_text()
    b = window.plan.privacy(1).scale
    for text in (parsed_text(html), rendered_text(html)):
        assert f"Laplace (ideal), b = {exact(b)}" in text
        assert "continuous Laplace" not in text


def parsed_text(html: str) -> str:
    from html.parser import HTMLParser

    class Text(HTMLParser):
        words: list[str] = []

        def handle_data(self, data: str) -> None:
            self.words.append(data)

    reader = Text()
    reader.words = []
    reader.feed(html)
    return " ".join(reader.words)


def rendered_text(html: str) -> str:
    from PySide6.QtGui import QTextDocument

    document = QTextDocument()
    document.setHtml(html)
    return document.toPlainText()
