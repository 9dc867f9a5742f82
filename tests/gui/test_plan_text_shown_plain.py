"""Issue 23.9: plan text is shown as the text it is in the window (never as Qt rich text in the
inspector, the table's tooltips or a plot's axis label) and in the exported SVG and PNG (escaped,
control characters as visible escapes, so the SVG stays readable XML)."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
from PySide6.QtCore import Qt
from PySide6 import QtGui
from PySide6.QtGui import QTextDocument

import svg_reading
from dpplanner.gui.plots import CostPlot
from dpplanner.gui.svg_export import export_plot
from dpplanner.gui.table_model import COLUMN_INDEX
from keys import field, show_tab, type_into, wait_idle
from plot_curves import draw

MARKUP = "<b>bold</b><img src=x>"


def as_qt_shows(text: str) -> str:
    """What a tooltip reads as on screen: Qt takes text whose first line looks like HTML as HTML."""
    doc = QTextDocument()
    if QtGui.Qt.mightBeRichText(text):
        doc.setHtml(text)
    else:
        doc.setPlainText(text)
    return doc.toPlainText()


def as_caption_shows(text: str) -> str:
    """What a menu entry, a button or a group box's title reads as on screen: "&&" is an "&", and
    a lone "&" is not shown (it underlines the next letter, the keyboard accelerator)."""
    return re.sub("&(.)", r"\1", text)


def test_an_ampersand_in_a_name_reads_as_typed_in_menus_buttons_and_titles(qtbot, window, tmp_path):
    name = "Sales & <b>returns</b>"          # (and markup: the tooltips are not rich text)
    window.statistics_panel.select_row(0)
    show_tab(window, "Statistic")
    inspector = window.statistics_panel.inspector
    type_into(qtbot, field(inspector, "Statistic name"), name)
    wait_idle(qtbot, window)
    assert window.plan[0].name == name
    assert as_caption_shows(inspector.title()) == f"Statistic 1: {name}"
    assert as_caption_shows(window.cost_plot.repeat_button.text()) == f"repeat “{name}”"
    # the Edit menu's Undo and Redo entries name the step they take back or do again
    type_into(qtbot, field(inspector, "Variable"), "sales")
    wait_idle(qtbot, window)
    undo, redo = window.undo_action, window.redo_action
    assert as_caption_shows(undo.text()) == "Undo"
    assert f"Undo “Edit '{name}'”" in as_qt_shows(undo.toolTip()) and name in undo.statusTip()
    undo.trigger()
    wait_idle(qtbot, window)
    assert window.plan[0].variable == ""
    assert f"Redo “Edit '{name}'”" in as_qt_shows(redo.toolTip()) and name in redo.statusTip()
    # File > Open Recent names a plan file as it is called
    redo.trigger()
    wait_idle(qtbot, window)
    assert window.document.save_to(tmp_path / "Sales & returns.dpplan")
    window.recent_menu.aboutToShow.emit()     # what opening it does (a popup grabs the keyboard)
    assert "Sales & returns.dpplan" in [as_caption_shows(a.text()) for a in window.recent_menu.actions()]


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
    draw(qtbot, plot, SimpleNamespace(ks=ks, upper={"basic": 0.1 * ks}, lower={"basic": None}),
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


def test_a_refused_markup_reads_as_typed_in_the_cell_tooltip_and_the_statistic_tab(qtbot, window):
    """A refusal quotes what was typed: in the table cell's tooltip and beneath the Statistic
    tab's field it reads as typed, not as markup."""
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolTip

    from keys import open_cell, retype

    editor = open_cell(window, 1, "epsilon")
    retype(editor, MARKUP)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    assert MARKUP in as_qt_shows(QToolTip.text())
    QTest.keyClick(editor, Qt.Key.Key_Escape)
    wait_idle(qtbot, window)
    show_tab(window, "Statistic")
    message = window.statistics_panel.inspector.numbers["epsilon"].message
    type_into(qtbot, field(window.statistics_panel.inspector, "Statistic epsilon"), MARKUP)
    assert message.isVisible() and MARKUP in message.text()
    assert message.textFormat() == Qt.TextFormat.PlainText


def test_the_pins_refusal_quotes_a_statistics_name_as_typed(qtbot, window, monkeypatch):
    """The refusal of pins that leave no room names the other pinned statistics; its tooltip at
    the table shows a name typed as markup as typed."""
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolTip

    from keys import open_cell, retype

    def type_cell(row: int, key: str, text: str) -> None:
        editor = open_cell(window, row, key)
        retype(editor, text)
        QTest.keyClick(editor, Qt.Key.Key_Return)
        wait_idle(qtbot, window)

    type_cell(0, "name", MARKUP)
    type_cell(0, "epsilon", "0.9")
    shown, show = [], QToolTip.showText
    monkeypatch.setattr(QToolTip, "showText", staticmethod(lambda *a, **k: shown.append(a[1]) or show(*a, **k)))
    type_cell(1, "epsilon", "0.5")
    assert window.plan[0].name == MARKUP and window.plan[1].epsilon != 0.5
    assert any(MARKUP in as_qt_shows(text) for text in shown), shown
