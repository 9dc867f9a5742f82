"""Issue 23.9: plan text is shown as the text it is in the window (never as Qt rich text in the
inspector, the table's tooltips or a plot's axis label) and in the exported SVG and PNG (escaped,
control characters as visible escapes, so the SVG stays readable XML)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
from PySide6.QtCore import Qt
from PySide6 import QtGui
from PySide6.QtGui import QTextDocument

import svg_reading
from dpplanner.gui.plots import CostPlot
from dpplanner.gui.svg_export import export_plot
from dpplanner.gui.table_model import COLUMN_INDEX
from keys import type_into, wait_idle

MARKUP = "<b>bold</b><img src=x>"


def as_qt_shows(text: str) -> str:
    """What a tooltip reads as on screen: Qt takes text whose first line looks like HTML as HTML."""
    doc = QTextDocument()
    if QtGui.Qt.mightBeRichText(text):
        doc.setHtml(text)
    else:
        doc.setPlainText(text)
    return doc.toPlainText()


def test_a_variable_typed_as_markup_reads_as_typed_in_the_inspector_and_the_tooltip(qtbot, window):
    window.statistics_panel.select_row(1)                  # "mean b": its errors are in its units
    inspector = window.statistics_panel.inspector
    type_into(qtbot, inspector.variable, MARKUP)
    wait_idle(qtbot, window)
    assert window.plan[1].variable == MARKUP
    qtbot.waitUntil(lambda: MARKUP in inspector.units.text())
    for label in (inspector.units, inspector.sentence):
        assert label.textFormat() == Qt.TextFormat.PlainText
    model = window.statistics_panel.model
    tip = model.data(model.index(1, COLUMN_INDEX["error"]), Qt.ItemDataRole.ToolTipRole)
    assert MARKUP in as_qt_shows(tip)


def test_a_statistic_name_in_the_plot_label_and_its_svg_and_png_export(qtbot, tmp_path):
    name = MARKUP + ' & "q"\x1b\u202e'
    plot = CostPlot()
    qtbot.addWidget(plot)
    plot.resize(600, 400)
    ks = np.arange(1, 6)
    plot.set_repeat_statistic(name)
    plot.repeat_button.setChecked(True)
    plot.set_curve(SimpleNamespace(ks=ks, upper={"basic": 0.1 * ks}, lower={"basic": None}),
                   plan_k=3, epsilon_g=0.5)
    plot.show()
    qtbot.waitExposed(plot)
    shown = plot.plot_item.getAxis("bottom").label.toPlainText()
    assert MARKUP + ' & "q"\\x1b\\u202e' in shown           # drawn as text, not as bold markup
    assert MARKUP in as_qt_shows(plot.repeat_button.toolTip())
    target = tmp_path / "repeat.svg"
    export_plot(plot.view, target)
    _, labels = svg_reading.read(target)                     # readable XML
    assert any(MARKUP + ' & "q"\\x1b\\u202e' in label.text for label in labels)
    export_plot(plot.view, tmp_path / "repeat.png")          # rasterized from the same SVG
    assert (tmp_path / "repeat.png").stat().st_size > 0


def test_a_message_box_quoting_a_name_shows_it_as_typed(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    shown = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *a, **k: shown.append(a[2]))
    path = tmp_path / "bad.csv"
    path.write_text(f"name,kind,epsilon\n{MARKUP},mean,0.1\n")      # a mean without its bounds
    assert not window.exports.import_csv(path)
    assert len(shown) == 1 and f"('{MARKUP}')" in as_qt_shows(shown[0])
