"""Issue 12 items 2, 4 and 7, typed into the real widgets: what the plan stores is what was typed,
or the plan keeps its value and the reason shows next to the field that was typed in."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QKeySequence
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QWidget

from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import Kind, Plan, Statistic
from dpplanner.engine.validation import DISCRETE_MIN_EPSILON
from dpplanner.gui import theme
from keys import field, handle_posted_events, open_cell, retype, type_into, wait_idle

NAMES = ("Global epsilon", "Global delta", "Dataset size", "Population size", "Confidence", "Reserve",
         "Delta to statistics")


@pytest.fixture
def window(window):
    """The conftest's window with Budget > Advanced unfolded (the δ split is an expert setting)."""
    QTest.mouseClick(window.budget_panel.advanced_toggle, Qt.MouseButton.LeftButton)
    return window


def message_of(edit: QLineEdit) -> str:
    return edit.accessibleDescription()


def test_every_budget_control_has_a_plain_english_name(window):
    for name in NAMES:
        assert field(window, name)


@pytest.mark.parametrize("name, key, text, value", [
    ("Global epsilon", "epsilon", "0.5", 0.5),
    ("Global delta", "delta", "1e-7", 1e-7),
    ("Dataset size", "dataset_size", "2500", 2500),
    ("Population size", "population", "100000", 100000),
    ("Confidence", "confidence", "99", 0.99),
    ("Reserve", "reserve", "12.5", 0.125),
    ("Delta to statistics", "delta_split", "33.3", 0.333),
])
def test_a_typed_budget_value_is_stored_exactly(qtbot, window, name, key, text, value):
    type_into(qtbot, field(window, name), text)
    wait_idle(qtbot, window)
    assert getattr(window.plan.budget, key) == value
    assert field(window, name).text() == text


@pytest.mark.parametrize("name, key, text, reason", [
    ("Global epsilon", "epsilon", "150", "global epsilon = 150 is not allowed"),
    ("Global epsilon", "epsilon", "1e309", "global epsilon = 1e309 is not allowed"),
    ("Dataset size", "dataset_size", "-250.5", "dataset size n = -250.5 is not allowed"),
    ("Dataset size", "dataset_size", "2.5", "dataset size n = 2.5 is not a whole number"),
    ("Reserve", "reserve", "100", "reserve = 100 % is not allowed"),
    ("Delta to statistics", "delta_split", "100", "delta to statistics = 100 % is not allowed"),
    ("Global delta", "delta", "0.01", "delta must be below 1/n"),        # a whole-plan rule
])
def test_a_refused_budget_value_stays_typed_with_the_reason_and_the_plan_keeps_its_value(
        qtbot, window, name, key, text, reason):
    before = window.plan.snapshot()
    edit = field(window, name)
    shown = edit.text()
    type_into(qtbot, edit, text)
    assert window.plan.snapshot() == before
    assert edit.text() == text                      # nothing dropped: not 15, 13, 2505 or 25
    assert reason in message_of(edit)
    message = [label for label in window.findChildren(QWidget)
               if label.accessibleName() == f"{name}: problem"][0]
    assert message.isVisible() and reason in message.text()
    QTest.keyClick(edit, Qt.Key.Key_Escape)         # dismissed: the plan's value is back
    assert edit.text() == shown and not message.isVisible()


def test_a_budget_too_small_for_the_pins_is_refused_at_the_field_typed_in(qtbot, window):
    editor = open_cell(window, 0, "epsilon")
    type_in_cell(qtbot, editor, "0.5")
    wait_idle(qtbot, window)
    assert window.plan[0].held
    before = window.plan.snapshot()
    edit = field(window, "Global epsilon")
    type_into(qtbot, edit, "0.4")               # refused once the redistribution has run
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before and edit.text() == "0.4"
    assert "the pinned statistics alone need ε 0.5000" in message_of(edit)


def test_enter_again_on_a_refused_value_still_says_why(qtbot, window):
    edit = field(window, "Global epsilon")
    type_into(qtbot, edit, "1e309")
    edit.setAccessibleDescription("")
    QTest.keyClick(edit, Qt.Key.Key_Return)
    assert "is not allowed" in message_of(edit)


def type_in_cell(qtbot, editor: QLineEdit, text: str) -> None:
    assert isinstance(editor, QLineEdit)
    retype(editor, text)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    handle_posted_events()      # the commit, and the redistribution it starts


def refused_typing(qtbot, window, row: int, key: str, text: str) -> str:
    """Type ``text`` into row ``row``'s ``key`` cell, expecting a refusal: its message (the plan
    as it was, checked)."""
    before = window.plan.snapshot()
    with qtbot.waitSignal(window.editor.refused) as blocker:
        type_in_cell(qtbot, open_cell(window, row, key), text)
    assert window.plan.snapshot() == before
    return blocker.args[0].message


@pytest.mark.parametrize("key, text, reason", [
    ("repetitions", "2.5", "number of releases = 2.5 is not a whole number"),
    ("repetitions", "0", "number of releases = 0 is not allowed"),
    ("epsilon", "1e309", "epsilon = 1e309 is not allowed"),
    ("epsilon", "0", "epsilon = 0 is not allowed; it must be a number in (0, 100]"),
    ("weight", "-1", "weight = -1 is not allowed"),
])
def test_a_refused_cell_keeps_its_editor_open_with_the_text_and_says_why(qtbot, window, key, text, reason):
    before = window.plan.snapshot()
    editor = open_cell(window, 0, key)
    type_in_cell(qtbot, editor, text)
    assert window.plan.snapshot() == before
    assert editor.isVisible() and editor.text() == text
    assert reason in editor.accessibleDescription()


def test_a_cell_takes_exactly_what_was_typed(qtbot, window):
    window.editor.set_budget(redistribute=False)
    editor = open_cell(window, 0, "repetitions")
    type_in_cell(qtbot, editor, "3")
    assert window.plan[0].repetitions == 3


def test_enter_on_an_unchanged_error_cell_changes_nothing(qtbot, window):
    before = window.plan.snapshot()
    editor = open_cell(window, 1, "error")
    assert isinstance(editor, QLineEdit)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    handle_posted_events()
    assert window.plan.snapshot() == before and window.editor.undo_stack.count() == 0


def test_a_typed_target_error_is_pinned_and_survives_adding_a_statistic(qtbot, window):
    panel = window.statistics_panel
    editor = open_cell(window, 1, "error")
    type_in_cell(qtbot, editor, "1")
    wait_idle(qtbot, window)
    pinned_eps = window.plan[1].epsilon
    assert window.plan[1].held and window.plan.privacy(1).error <= 1.0
    assert not panel.model.index(1, COLUMN_INDEX["held"]).data(Qt.ItemDataRole.DecorationRole).isNull()
    panel.select_row(2)
    assert panel.add_statistic(Kind.COUNT, Statistic("another", kind=Kind.COUNT))
    wait_idle(qtbot, window)
    assert window.plan[1].epsilon == pinned_eps     # redistribution never moves a pinned value
    assert window.plan.privacy(1).error <= 1.0


def test_a_typed_epsilon_is_pinned_and_a_too_large_one_names_the_real_cause(qtbot, window):
    editor = open_cell(window, 0, "epsilon")
    type_in_cell(qtbot, editor, "0.125")
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 0.125 and window.plan[0].held
    message = refused_typing(qtbot, window, 2, "epsilon", "99")
    assert message.startswith("ε_i = 99 for 'hist c' does not fit")    # as typed, not "99.0"
    # the other pin is named; the statistic being edited is not (issue 24)
    assert "unpin or lower some of the other pinned statistics: 1 ('count a');" in message
    assert "3 ('hist c')" not in message
    assert "target error" not in message
    assert message in window.statistics_panel.refusal.text()        # shown at the table too


@pytest.mark.parametrize("redistribute, key, refused", [(True, "epsilon", "99"), (False, "error", "1e-9")])
def test_a_refusal_in_the_status_bar_is_gone_once_a_valid_edit_changed_the_plan(
        qtbot, window, redistribute, key, refused):
    """The status bar must not go on saying "Not changed" about a plan that has just changed (with
    redistribution off, the edit changes it at once: no redistribution's message replaces it)."""
    if not redistribute:
        QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
        wait_idle(qtbot, window)
    assert window.plan.budget.redistribute == redistribute
    refused_typing(qtbot, window, 2, key, refused)
    assert window.status.label.text().startswith("Not changed")
    type_in_cell(qtbot, open_cell(window, 2, "epsilon"), "0.0625")
    wait_idle(qtbot, window)
    assert window.plan[2].epsilon == 0.0625
    assert not window.status.label.text().startswith("Not changed")


@pytest.mark.parametrize("redistribute, key, refused", [(True, "epsilon", "99"), (False, "error", "1e-9")])
def test_a_refusal_in_the_status_bar_is_gone_once_undo_or_redo_changed_the_plan(
        qtbot, window, redistribute, key, refused):
    """Undo and Redo change the plan too: "Not changed: ..." said of the plan before goes with it."""
    if not redistribute:
        QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
        wait_idle(qtbot, window)
    first = window.plan[2].epsilon
    type_in_cell(qtbot, open_cell(window, 2, "epsilon"), "0.0625")
    wait_idle(qtbot, window)
    view = window.statistics_panel.view
    for step, epsilon in ((QKeySequence.StandardKey.Undo, first), (QKeySequence.StandardKey.Redo, 0.0625)):
        refused_typing(qtbot, window, 2, key, refused)
        assert window.status.label.text().startswith("Not changed")
        QTest.keyClick(QApplication.focusWidget(), Qt.Key.Key_Escape)       # the refused text let go
        view.setFocus()             # (a text field has Undo keys of its own)
        qtbot.waitUntil(view.hasFocus)
        QTest.keySequence(view, QKeySequence(step))
        wait_idle(qtbot, window)
        assert window.plan[2].epsilon == epsilon
        assert not window.status.label.text().startswith("Not changed")


def test_a_weight_too_small_for_discrete_noise_is_refused_in_the_users_words(qtbot, window):
    """Redistributed, a weight of 1e-20 would give 'count a' (OpenDP noise) an epsilon below what
    discrete noise is calibrated for: refused as typed, naming the weight, not the engine's release."""
    message = refused_typing(qtbot, window, 0, "weight", "1e-20")
    assert message.startswith("statistic 1 ('count a'): weight = 1e-20 leaves it too little ε for its "
                              "OpenDP noise")
    assert "raise its weight to at least 1.7e-19" in message and "mechanisms[" not in message
    assert message in window.statistics_panel.refusal.text()


def test_a_weight_just_above_the_floor_redistributes(qtbot, window):
    """A pin leaving 0.5 to weights 2 + w, the free epsilons at 0.1: 3e-19 passes the weight's
    check, and the redistribution gives 'count a' an epsilon its OpenDP noise is calibrated for
    (the search probes scales below its answer), no engine message."""
    window.document.load(Plan(window.plan.budget, [
        Statistic("count a", kind=Kind.COUNT, epsilon=0.1),
        Statistic("pinned", kind=Kind.COUNT, epsilon=0.5, held=True),
        Statistic("other", kind=Kind.COUNT, epsilon=0.1, weight=2.0)]), None, "t")
    wait_idle(qtbot, window)
    type_in_cell(qtbot, open_cell(window, 0, "weight"), "3e-19")
    wait_idle(qtbot, window)
    assert window.plan[0].weight == 3e-19 and not window.statistics_panel.refusal.text()
    assert window.plan[0].epsilon >= DISCRETE_MIN_EPSILON


def test_a_global_epsilon_too_small_for_discrete_noise_names_the_least_that_works(qtbot, window):
    before = window.plan.snapshot()
    edit = field(window, "Global epsilon")
    type_into(qtbot, edit, "1e-25")
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before and edit.text() == "1e-25"
    message = message_of(edit)
    assert "global ε = 1e-25 is too small for the statistics with OpenDP noise" in message
    assert "the least global ε that works for these statistics and weights is 2.2e-19" in message
    assert "sigma" not in message and "weight to" not in message


def test_the_add_dialog_stays_open_with_what_was_typed_when_the_plan_refuses(qtbot, window):
    panel = window.statistics_panel
    seen = {}

    def fill_in():
        dialog = panel.add_dialog
        type_into(qtbot, field(dialog, "Statistic delta"), "0.5", key=Qt.Key.Key_Tab)
        type_into(qtbot, field(dialog, "Statistic epsilon"), "0.2", key=Qt.Key.Key_Tab)
        dialog.accept()                              # the custom δ = 0.5 exceeds the δ slack
        seen["open"] = dialog.isVisible()
        seen["delta"] = field(dialog, "Statistic delta").text()
        seen["message"] = dialog.fields["delta"].message.text()
        dialog.reject()

    before = window.plan.snapshot()
    QTimer.singleShot(0, fill_in)
    assert not panel.add_statistic(Kind.CUSTOM)
    assert seen["open"] and seen["delta"] == "0.5"
    assert "deltas add up to 0.5" in seen["message"]
    assert window.plan.snapshot() == before


def test_a_tiny_global_epsilon_reads_as_far_over_budget(qtbot, window, small_plan):
    """Soak seed 106: a spend over a tiny budget overflowed the meter's ratio to inf and the
    percentage raised OverflowError out of the plan's listener."""
    window.document.load(small_plan(redistribute=False), None, "t")
    type_into(qtbot, field(window, "Global epsilon"), "2.2250738585072014e-308")
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 2.2250738585072014e-308
    meter = window.budget_panel.meter.format()
    assert "over budget" in meter and "e+" in meter and "%" in meter, meter


def test_the_meter_turns_red_over_budget_and_back_restyled_only_when_that_changes(qtbot, window, small_plan,
                                                                                 monkeypatch):
    window.document.load(small_plan(redistribute=False), None, "t")
    from PySide6.QtGui import QPalette

    meter = window.budget_panel.meter
    palettes = []
    real = meter.setPalette
    monkeypatch.setattr(meter, "setPalette", lambda p: palettes.append(p) or real(p))
    type_into(qtbot, field(window, "Global epsilon"), "0.001")
    wait_idle(qtbot, window)
    # Issue 24: red with white text, centred (a style sheet on the chunk gave black on dark red).
    palette = meter.palette()
    assert "over budget" in meter.format() and meter.value() == 1000
    assert palette.color(QPalette.ColorRole.Highlight).name() == theme.ERROR_RED
    assert palette.color(QPalette.ColorRole.HighlightedText).name() == "#ffffff"
    assert meter.alignment() & Qt.AlignmentFlag.AlignHCenter and meter.styleSheet() == ""
    type_into(qtbot, field(window, "Global epsilon"), "0.002")
    wait_idle(qtbot, window)
    assert "over budget" in meter.format() and len(palettes) == 1      # still red: not set again
    type_into(qtbot, field(window, "Global epsilon"), "5")
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 5
    assert "over budget" not in meter.format() and len(palettes) == 2
    assert meter.palette().color(QPalette.ColorRole.Highlight).name() != theme.ERROR_RED
    assert meter.updatesEnabled()


def test_typing_a_population_size_redistributes(qtbot, window, small_plan):
    """Under pld, amplification by N makes every release a generic (ε, δ) one, which changes what
    the plan costs, so the free statistics are rebalanced to spend the budget under the new
    accounting (a hand-kept list of the budget fields that redistribute missed N)."""
    window.document.load(small_plan(theorem="pld"), None, "t")
    window.rebalance_action.trigger()                       # Edit > Redistribute now
    wait_idle(qtbot, window)
    before = window.plan.allocation_request()
    type_into(qtbot, field(window, "Population size"), "100000")
    wait_idle(qtbot, window)
    assert window.plan.budget.population == 100000
    assert [s.epsilon for s in window.plan.statistics] != list(before.epsilons)
    assert window.budget_panel.meter.format().startswith("ε ")
    assert "over budget" not in window.budget_panel.meter.format()
    assert window.budget_panel.meter.format().endswith("under noise-aware (PLD)")   # the label, not "pld"


def test_a_reserve_that_leaves_nothing_to_spend_is_refused_at_the_field(qtbot, window):
    """ε_g = 2.2250738585072014e-308 (the least that can be typed) with a reserve of
    99.99999999999999 %: (1 − reserve)·ε_g underflows to 0, which the budget meter divided by. The
    reserve is refused with the reason; the plan keeps its value."""
    QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    assert not window.plan.budget.redistribute
    type_into(qtbot, field(window, "Global epsilon"), "2.2250738585072014e-308")
    wait_idle(qtbot, window)
    assert window.plan.budget.epsilon == 2.2250738585072014e-308
    edit = field(window, "Reserve")
    type_into(qtbot, edit, "99.99999999999999")
    wait_idle(qtbot, window)
    assert window.plan.budget.reserve == 0.0 and edit.text() == "99.99999999999999"
    assert "leaves no epsilon to spend" in edit.accessibleDescription()
