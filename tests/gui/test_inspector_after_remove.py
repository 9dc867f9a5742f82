"""The Statistic tab shows the statistic the table selects after every removal - the first, a
middle, the last and the only row, Undo and Redo of it, redistribution on or off - so a value
typed there edits the statistic the table selects, never its neighbour."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QToolButton

from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model.examples import example_path
from keys import click_row, field, show_tab, type_into, wait_idle


def click_remove(qtbot, window) -> None:
    panel = window.statistics_panel
    button = next(b for b in panel.findChildren(QToolButton) if b.defaultAction() is panel.remove_action)
    QTest.mouseClick(button, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)


def press(qtbot, window, action) -> None:
    QTest.keySequence(window, action.shortcut())
    wait_idle(qtbot, window)


def assert_tab_shows_the_selected_row(window) -> None:
    panel, inspector = window.statistics_panel, window.statistics_panel.inspector
    row = panel.current_row()
    if row == -1:
        assert panel.selected_rows() == [] and inspector.title() == "No statistic selected"
        return
    assert panel.selected_rows() == [row]
    name = window.plan[row].name
    assert panel.model.index(row, COLUMN_INDEX["name"]).data() == name      # what the table shows
    assert inspector.title() == f"Statistic {row + 1}: {name}"
    assert field(inspector, "Statistic name").text() == name


def note_typed_in_the_tab(qtbot, window, text: str) -> str:
    """Type a note in the Statistic tab; the name of the statistic the plan stored it on."""
    type_into(qtbot, field(window.statistics_panel.inspector, "Notes"), text)
    wait_idle(qtbot, window)
    return next(s.name for s in window.plan if s.description == text)


@pytest.mark.parametrize("redistribute", [False, True])
@pytest.mark.parametrize("row", [0, 1, 2])
def test_the_tab_follows_the_table_through_removes_undo_and_redo(qtbot, window, redistribute, row):
    if not redistribute:
        QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
        wait_idle(qtbot, window)
    assert window.plan.budget.redistribute == redistribute
    show_tab(window, "Statistic")
    click_row(window, row)
    told = []       # each row the panel tells the tab (and the window) of: the table's and the plan's
    panel = window.statistics_panel
    panel.selectionChanged.connect(lambda r: told.append(
        (panel.model.index(r, COLUMN_INDEX["name"]).data(), window.plan[r].name) if r >= 0 else None))
    click_remove(qtbot, window)
    assert len(window.plan) == 2
    assert all(shown == stored for shown, stored in filter(None, told)), told
    assert_tab_shows_the_selected_row(window)
    selected = window.plan[window.statistics_panel.current_row()].name
    assert note_typed_in_the_tab(qtbot, window, "typed after the remove") == selected

    for action in (window.undo_action, window.undo_action, window.redo_action, window.redo_action):
        press(qtbot, window, action)
        assert_tab_shows_the_selected_row(window)
    assert len(window.plan) == 2

    while len(window.plan):         # down to the last statistic, and that one too
        left = len(window.plan)
        click_remove(qtbot, window)
        assert len(window.plan) == left - 1
        assert_tab_shows_the_selected_row(window)
    press(qtbot, window, window.undo_action)
    assert len(window.plan) == 1
    assert_tab_shows_the_selected_row(window)


def test_the_tab_follows_the_table_when_the_row_being_removed_is_clicked_meanwhile(qtbot, window, gate):
    show_tab(window, "Statistic")
    click_row(window, 1)
    click_remove_now = next(b for b in window.statistics_panel.findChildren(QToolButton)
                            if b.defaultAction() is window.statistics_panel.remove_action)
    QTest.mouseClick(click_remove_now, Qt.MouseButton.LeftButton)
    assert window.editor.is_redistributing() and len(window.plan) == 3
    click_row(window, 1)            # "mean b" again, still shown while its removal is redistributed
    gate.set()
    wait_idle(qtbot, window)
    assert [s.name for s in window.plan] == ["count a", "hist c"]
    assert_tab_shows_the_selected_row(window)


@pytest.mark.parametrize("by_key", [False, True])
@pytest.mark.parametrize("redistribute", [False, True])
@pytest.mark.parametrize("rows", [(1, 2), (0, 2, 5), (0, 1), (5, 6)])
def test_several_rows_removed_select_the_next_statistic_left(qtbot, window, redistribute, rows, by_key):
    """Rows picked with Ctrl+click and removed together: the table and the tab go on to the
    statistic after the last removed one (the last left when none is after), with the
    removal waiting for its redistribution as without it."""
    window.document.open_example(example_path("psi-survey"), confirm=False)
    wait_idle(qtbot, window)
    if window.plan.budget.redistribute != redistribute:
        QTest.mouseClick(window.budget_panel.redistribute, Qt.MouseButton.LeftButton)
        wait_idle(qtbot, window)
    show_tab(window, "Statistic")
    panel = window.statistics_panel
    names = [s.name for s in window.plan]
    left = [n for i, n in enumerate(names) if i not in rows]
    want = next((names[r] for r in range(rows[-1] + 1, len(names)) if r not in rows), left[-1])
    click_row(window, rows[0])
    for row in rows[1:]:
        rect = panel.view.visualRect(panel.index_of(row, "name"))
        QTest.mouseClick(panel.view.viewport(), Qt.MouseButton.LeftButton,
                         Qt.KeyboardModifier.ControlModifier, rect.center())
    assert panel.selected_rows() == list(rows)
    if by_key:
        QTest.keyClick(panel.view, Qt.Key.Key_Delete)
        wait_idle(qtbot, window)
    else:
        click_remove(qtbot, window)
    assert [s.name for s in window.plan] == left
    assert window.plan[panel.current_row()].name == want
    assert_tab_shows_the_selected_row(window)
