"""Issue 24's minor points, as a depositor meets them: the status bar, the pin icon, the plots'
labels, ticks and legends, the Getting-started guide, where file dialogs open, and wording."""

from __future__ import annotations

import math

import pytest
from PySide6.QtCore import QPointF, QSettings, Qt
from PySide6.QtGui import QIcon
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QFileDialog

from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import Kind, Statistic
from dpplanner.model.examples import example_path
from keys import field, show_tab, type_into, wait_idle


@pytest.fixture
def make(qtbot, tmp_path):
    def make(example: str | None = "psi-survey") -> MainWindow:
        settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
        w = MainWindow(settings=settings, debounce_ms=10, recovery_dir=str(tmp_path / "recovery"))
        qtbot.addWidget(w, before_close_func=lambda x: x.editor.undo_stack.setClean())
        w.resize(1280, 800)
        if example:
            w.document.open_example(example_path(example), confirm=False)
        w.show()
        wait_idle(qtbot, w)
        return w
    return make


def test_the_busy_message_goes_when_the_work_is_done(qtbot, make, monkeypatch):
    window = make()
    status = window.status
    monkeypatch.setattr(status, "busy_text", lambda: "Computing compositions")    # a long job
    status.set_busy(True)
    status._show_progress()                 # as the delay timer does for a long job
    assert status.label.full_text().endswith("…")
    status.set_busy(False)
    assert status.label.full_text() == ""


def test_the_pin_is_a_drawn_icon_not_an_emoji(qtbot, make):
    window = make()
    model = window.statistics_panel.model
    window.editor.update_statistic(0, {"held": True}, "pin")
    wait_idle(qtbot, window)
    index = model.index(0, COLUMN_INDEX["held"])
    assert index.data(Qt.ItemDataRole.DisplayRole) == ""
    icon = index.data(Qt.ItemDataRole.DecorationRole)
    assert isinstance(icon, QIcon) and not icon.pixmap(16, 16).toImage().isNull()
    assert "📌" not in str(model.headerData(COLUMN_INDEX["held"], Qt.Orientation.Horizontal,
                                             Qt.ItemDataRole.ToolTipRole))


def test_the_budget_label_keeps_clear_of_the_last_markers(qtbot, make):
    window = make()
    plot = window.cost_plot
    label = plot.budget_label.sceneBoundingRect()
    vb = plot.plot_item.vb
    for name, item in plot.items.items():
        x, y = item.getData()
        end = vb.mapViewToScene(QPointF(x[-1], y[-1]))
        assert not label.adjusted(-4, -4, 4, 4).contains(end), name


def test_a_log_k_axis_ends_at_the_plans_k(qtbot, make):
    window = make("psi-survey")             # 8 queries
    QTest.mouseClick(window.cost_plot.log_k, Qt.MouseButton.LeftButton)
    low, high = window.cost_plot.x_range()
    assert high < 10 and high >= 8          # not 10 for 8 queries
    assert low <= 1


def test_clicking_a_legend_entrys_text_toggles_its_curve(qtbot, make):
    window = make()
    plot = window.cost_plot
    show_tab(window, "Cost vs k")
    sample, label = next((s, lab) for s, lab in plot.legend.items if lab.text == "basic")
    view = plot.view
    centre = view.mapFromScene(label.sceneBoundingRect().center())
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert "basic" in plot.hidden()
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=centre)
    assert "basic" not in plot.hidden()


def test_the_privacy_profile_names_its_theorem_and_writes_its_ticks_one_way(qtbot, make):
    window = make()
    show_tab(window, "Privacy profile")
    qtbot.waitUntil(lambda: len(window.profile_plot._eps) > 0, timeout=60000)
    plot = window.profile_plot
    labels = [lab.text for _s, lab in plot.legend.items]
    assert all(text.startswith("noise-aware (PLD)") for text in labels)
    axis = plot.plot_item.getAxis("left")
    strings = axis.logTickStrings([-1, -3, -5, -12], 1.0, 1.0)
    assert strings == ["10⁻¹", "10⁻³", "10⁻⁵", "10⁻¹²"]
    # the dashed line says it is the global δ, and its label is inside the plot
    label = plot.target_label
    assert label.isVisible() and label.toPlainText() == "δ_g = 1e-06"
    assert plot.plot_item.vb.sceneBoundingRect().contains(label.sceneBoundingRect().center())
    plot.clear()                            # no lower bound: no empty legend entry for one
    assert len(plot.legend.items) == 1


def test_the_shares_bars_have_a_colour_key(qtbot, make):
    window = make()
    show_tab(window, "Shares & errors")
    texts = [lab.text for _s, lab in window.shares_plot.legend.items]
    assert len(texts) == 2 and texts[0].startswith("free") and texts[1].startswith("pinned")


def test_the_errors_axis_writes_its_ticks_one_way(qtbot, make):
    """The errors bars' log axis read "10¹" beside "5" and "2": one notation per axis."""
    window = make()
    show_tab(window, "Shares & errors")
    axis = window.shares_plot.error_plot.getAxis("left")
    log2, log5 = math.log10(2), math.log10(5)
    assert axis.logTickStrings([log5 - 1, 0, log2, log5, 1, 1 + log2], 1.0, 1.0) == \
        ["0.5", "1", "2", "5", "10", "20"]
    assert axis.logTickStrings([-6, -3, 0, 3], 1.0, 1.0) == ["10⁻⁶", "10⁻³", "1", "10³"]


def test_the_guide_waits_for_a_choice_completes_for_a_custom_budget_and_stays_away(qtbot, make):
    window = make(example=None)
    window.document.new_plan()
    guide = window.guide
    assert guide.isVisible() and guide.done() == [False, False, False]   # the default is no choice
    type_into(qtbot, field(window, "Global epsilon"), "0.7")             # a custom budget
    wait_idle(qtbot, window)
    assert guide.done()[0]
    type_into(qtbot, field(window, "Dataset size"), "5000")
    wait_idle(qtbot, window)
    window.editor.insert_statistic(0, Statistic("people", kind=Kind.COUNT))
    wait_idle(qtbot, window)
    assert not guide.isVisible()                                         # all three done
    window.statistics_panel.select_row(0)
    window.statistics_panel.remove_selected()
    wait_idle(qtbot, window)
    assert not guide.isVisible()                                         # not back mid-work
    window.editor.undo_stack.setClean()                                  # (no "save changes?")
    window.document.new_plan()
    assert guide.isVisible() and guide.done() == [False, False, False]


@pytest.mark.parametrize("action, ending", [("export_csv_action", "psi.csv"),
                                            ("export_report_action", "psi-report.html"),
                                            ("export_plot_action", "psi-cost-vs-k.png")])
def test_export_dialogs_open_in_the_plans_folder_with_its_name(qtbot, make, tmp_path, monkeypatch,
                                                                action, ending):
    window = make()
    saved = tmp_path / "plans" / "psi.dpplan"
    saved.parent.mkdir()
    assert window.document.save_to(saved)
    asked = {}
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, caption, start, filters: asked.update(start=start) or ("", ""))
    getattr(window, action).trigger()
    assert asked["start"] == str(saved.parent / ending)


def test_an_example_suggests_its_own_name(qtbot, make, monkeypatch):
    window = make("census")
    asked = {}
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, caption, start, filters: asked.update(start=start) or ("", ""))
    window.export_csv_action.trigger()
    assert asked["start"].endswith("census.csv") and "(example)" not in asked["start"]


def test_a_kind_change_prompts_for_the_bounds_and_the_prompt_goes_once_typed(qtbot, make):
    window = make()
    window.statistics_panel.select_row(0)                # respondents: a count
    show_tab(window, "Statistic")
    inspector = window.statistics_panel.inspector
    box = inspector.kind
    box.setCurrentIndex(box.findData(Kind.MEAN.value))
    box.activated.emit(box.currentIndex())
    lower = inspector.numbers["lower"]
    assert lower.message.isVisible() and "type it here" in lower.message.text()
    assert "Not applied" not in lower.message.text() and lower.edit.styleSheet() == ""   # a prompt
    type_into(qtbot, lower.edit, "0")
    assert not lower.message.isVisible()                 # typed: nothing more to say there
    assert inspector.numbers["upper"].message.isVisible()
    type_into(qtbot, inspector.numbers["upper"].edit, "100")
    wait_idle(qtbot, window)
    assert window.plan[0].kind is Kind.MEAN
    assert not any(w.message.isVisible() for w in inspector.numbers.values())


def test_releases_is_one_word_everywhere(qtbot, make):
    window = make()
    show_tab(window, "Statistic")
    window.statistics_panel.select_row(0)
    inspector = window.statistics_panel.inspector
    assert field(inspector, "Releases")
    assert window.statistics_panel.model.headerData(COLUMN_INDEX["repetitions"], Qt.Orientation.Horizontal) == "releases"


def test_a_refused_empty_field_says_so_in_plain_words(qtbot, make):
    window = make()
    edit = field(window, "Population size")
    type_into(qtbot, edit, "10")                        # N must exceed n = 2500
    text = edit.accessibleDescription()
    assert "The plan keeps this field empty" in text and "keeps empty" not in text


def test_quantile_and_proportion_errors_in_plain_words(qtbot, make):
    window = make()
    privacy = window.plan.privacy_all()
    median = next(p for s, p in zip(window.plan, privacy) if s.kind is Kind.QUANTILE)
    assert "records away in rank" in median.explanation and "percentiles" in median.explanation
    share = next(i for i, s in enumerate(window.plan) if s.kind is Kind.PROPORTION)
    cell = window.statistics_panel.model.index(share, COLUMN_INDEX["error"]).data()
    assert cell.endswith("% points")
    assert math.isfinite(float(cell.split()[1]))


def test_a_typed_value_reads_back_as_typed_in_the_cell_editor(qtbot, make):
    """Typed "2" was echoed "2.0" when the cell was edited again."""
    from keys import open_cell, retype

    window = make()
    for key, text in (("epsilon", "0.2"), ("weight", "2"), ("error", "0.5")):
        editor = open_cell(window, 1, key)
        retype(editor, text)
        QTest.keyClick(editor, Qt.Key.Key_Return)
        wait_idle(qtbot, window)
        again = open_cell(window, 1, key)
        assert again.text() == text, key
        QTest.keyClick(again, Qt.Key.Key_Escape)


def test_open_and_save_as_start_in_the_last_plans_folder_not_the_working_folder(qtbot, make, tmp_path,
                                                                                 monkeypatch):
    """A new or example plan has no folder: Save As offered 'untitled.dpplan' and Open '', both
    relative to the process's working folder (/ for an app started from a menu)."""
    window = make()
    saved = tmp_path / "plans" / "psi.dpplan"
    saved.parent.mkdir()
    assert window.document.save_to(saved)
    window.editor.undo_stack.setClean()
    window.new_action.trigger()
    assert window.status.label.full_text().startswith("A new plan, untitled: no statistics yet")
    asked = {}
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda parent, caption, start, filters: asked.update(save=start) or ("", ""))
    monkeypatch.setattr(QFileDialog, "getOpenFileName",
                        lambda parent, caption, start, filters: asked.update(open=start) or ("", ""))
    window.save_as_action.trigger()
    window.open_action.trigger()
    window.import_csv_action.trigger()
    assert asked["save"] == str(saved.parent / "untitled.dpplan")
    assert asked["open"] == str(saved.parent)
