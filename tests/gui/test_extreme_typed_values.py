"""The extreme values of the robustness sweep, typed into the window's fields: each is stored
exactly, or refused with the reason beside the field, the plan as it was and the text kept."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QWidget

from keys import field, open_cell, retype, type_into, wait_idle


@pytest.mark.parametrize("name, text, reason", [
    ("Global epsilon", "1e308", "global epsilon = 1e308 is not allowed; it must be a number in (0, 100]"),
    ("Global epsilon", "1.7976931348623157e308", "global epsilon = 1.7976931348623157e308 is not allowed"),
    ("Global epsilon", "5e-324", "global epsilon = 5e-324 is too close to 0 to store exactly"),
    ("Global epsilon", "1e-300", "is too small for the statistics with OpenDP noise"),
    ("Global epsilon", "-1e-15", "global epsilon = -1e-15 is not allowed"),
    ("Global delta", "0.999999", "delta must be below 1/n"),
    ("Dataset size", "1e15", "dataset size n = 1e15 is not allowed"),
    ("Global delta", "1e-330", "global delta = 1e-330 is too close to 0 to store"),
    ("Dataset size", "0.99999999999999999", "dataset size n = 0.99999999999999999 is not a whole number"),
])
def test_an_extreme_budget_value_is_refused_beside_its_field(qtbot, window, name, text, reason):
    before = window.plan.snapshot()
    edit = field(window, name)
    type_into(qtbot, edit, text)
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before and edit.text() == text
    assert reason in edit.accessibleDescription()
    message = [label for label in window.findChildren(QWidget)
               if label.accessibleName() == f"{name}: problem"][0]
    assert message.isVisible() and reason in message.text()


@pytest.mark.parametrize("name, key, text, value", [
    ("Global delta", "delta", "1e-300", 1e-300),
    ("Global delta", "delta", "1e-15", 1e-15),
    ("Global epsilon", "epsilon", "1e-15", 1e-15),
    ("Dataset size", "dataset_size", "1", 1),
])
def test_an_extreme_budget_value_in_range_is_stored_exactly(qtbot, window, name, key, text, value):
    """(1e-15: the OpenDP count's error searched past 2^52 step by step, and the window froze.)"""
    edit = field(window, name)
    type_into(qtbot, edit, text)
    wait_idle(qtbot, window)
    assert getattr(window.plan.budget, key) == value and edit.text() == text
    assert not edit.accessibleDescription()


@pytest.mark.parametrize("key, text, reason", [
    ("epsilon", "1e308", "epsilon = 1e308 is not allowed; it must be a number in (0, 100]"),
    ("repetitions", "1000000", "number of releases = 1000000 is not allowed"),
    ("repetitions", "1000000000", "number of releases = 1000000000 is not allowed"),
])
def test_an_extreme_cell_value_is_refused_in_its_open_editor(qtbot, window, key, text, reason):
    before = window.plan.snapshot()
    editor = open_cell(window, 0, key)
    retype(editor, text)
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before
    assert editor.isVisible() and editor.text() == text
    assert reason in editor.accessibleDescription()


def test_the_least_normal_double_typed_as_an_epsilon_is_stored_exactly_and_pinned(qtbot, window):
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "2.2250738585072014e-308")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 2.2250738585072014e-308 and window.plan[0].held


def test_a_subnormal_epsilon_typed_in_a_cell_is_refused_in_its_open_editor(qtbot, window):
    """("3e-324" would be stored as 4.94e-324, 65 % off.)"""
    before = window.plan.snapshot()
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "3e-324")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan.snapshot() == before
    assert editor.isVisible() and editor.text() == "3e-324"
    # the field named once, as the Statistic tab's field says it ("Epsilon: epsilon = 3e-324 ...")
    reason = editor.accessibleDescription()
    assert reason.startswith("epsilon = 3e-324 is too close to 0 to store exactly"), reason
    assert reason.lower().count("epsilon") == 1, reason
