"""The table's selection as a user expects it: statistics added in quick succession land in the
order they were added, each right after the one added before it, the last one added selected
once they are in the plan; after a plan is reopened (or Undo) the table selects the statistic the
Statistic tab shows."""

from __future__ import annotations

from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QToolButton

from dpplanner.model import Kind, Plan, Statistic, files
from dpplanner.model.examples import example_path
from keys import click_row, field, show_tab, type_into, wait_idle


def names(window) -> list[str]:
    return [s.name for s in window.plan.statistics]


def add_count(qtbot, window, name: str) -> None:
    """+ Statistic > Count, the name typed, Enter."""
    panel = window.statistics_panel

    def fill_in():
        edit = field(panel.add_dialog, "Statistic name")
        edit.setFocus()
        QTest.keyClick(edit, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClicks(edit, name)
        QTest.keyClick(edit, Qt.Key.Key_Return)

    QTimer.singleShot(0, fill_in)
    action = next(a for a in panel.add_menu.actions() if a.text() == Kind.COUNT.label)
    action.trigger()


def test_adds_made_while_the_first_redistributes_land_in_order_after_the_selected_row(qtbot, window, gate):
    click_row(window, 0)
    for name in ("x1", "x2", "x3"):
        add_count(qtbot, window, name)
    assert window.editor.is_redistributing()       # none of them is in the plan yet
    gate.set()
    wait_idle(qtbot, window)
    assert names(window) == ["count a", "x1", "x2", "x3", "mean b", "hist c"]
    assert window.statistics_panel.current_row() == 3
    add_count(qtbot, window, "x4")                  # and the next goes after the last one
    wait_idle(qtbot, window)
    assert names(window) == ["count a", "x1", "x2", "x3", "x4", "mean b", "hist c"]
    assert window.statistics_panel.current_row() == 4


def test_adds_in_quick_succession_without_redistribution_land_in_order(qtbot, window):
    window.editor.set_budget(redistribute=False)
    wait_idle(qtbot, window)
    click_row(window, 1)
    for name in ("y1", "y2"):
        add_count(qtbot, window, name)
    wait_idle(qtbot, window)
    assert names(window) == ["count a", "mean b", "y1", "y2", "hist c"]
    assert window.statistics_panel.current_row() == 3


def shown(window) -> tuple[int, str, list[int]]:
    """The statistic the Statistic tab shows (row, its title) and the rows the table selects."""
    inspector = window.statistics_panel.inspector
    return inspector.row, inspector.title(), window.statistics_panel.selected_rows()


def test_a_reopened_plan_selects_the_row_the_statistic_tab_shows(qtbot, window, tmp_path):
    show_tab(window, "Statistic")
    click_row(window, 2)
    assert shown(window) == (2, "Statistic 3: hist c", [2])
    path = tmp_path / "t.dpplan"
    assert window.document.save_to(path)
    assert window.document.open_path(path, confirm=False)
    wait_idle(qtbot, window)
    assert shown(window) == (2, "Statistic 3: hist c", [2])
    assert window.statistics_panel.current_row() == 2
    # a plan with fewer statistics: the tab shows its last one, and the table selects it
    short = tmp_path / "short.dpplan"
    files.save_plan(Plan(window.plan.budget, [Statistic("only", kind=Kind.COUNT, epsilon=0.5)]), short)
    assert window.document.open_path(short, confirm=False)
    wait_idle(qtbot, window)
    assert shown(window) == (0, "Statistic 1: only", [0])


def test_undo_keeps_the_table_on_the_statistic_the_tab_shows(qtbot, window):
    show_tab(window, "Statistic")
    click_row(window, 1)
    type_into(qtbot, field(window.statistics_panel.inspector, "Statistic name"), "mean of b")
    wait_idle(qtbot, window)
    assert window.plan[1].name == "mean of b"
    QTest.keySequence(window, window.undo_action.shortcut())
    wait_idle(qtbot, window)
    assert window.plan[1].name == "mean b"
    assert shown(window) == (1, "Statistic 2: mean b", [1])


def test_the_add_dialog_offers_a_fresh_name_while_the_last_add_waits(qtbot, window, gate):
    offered = []
    panel = window.statistics_panel

    def accept_as_offered():
        dialog = panel.add_dialog
        offered.append(field(dialog, "Statistic name").text())
        QTest.keyClick(field(dialog, "Statistic name"), Qt.Key.Key_Return)

    for _ in range(3):
        QTimer.singleShot(0, accept_as_offered)
        next(a for a in panel.add_menu.actions() if a.text() == Kind.COUNT.label).trigger()
    gate.set()
    wait_idle(qtbot, window)
    assert offered == ["count", "count (2)", "count (3)"]
    assert names(window)[-3:] == offered


def test_duplicate_remove_and_move_are_greyed_with_no_statistic_to_act_on(qtbot, shown):
    """A new plan has no statistic, and an opened one none selected: the buttons (the toolbar's and
    the Edit menu's too) are greyed, not live buttons that do nothing."""
    window, panel = shown, shown.statistics_panel
    actions = (panel.duplicate_action, panel.remove_action, panel.up_action, panel.down_action)
    buttons = [b for b in panel.findChildren(QToolButton) if b.defaultAction() in actions]
    assert len(buttons) == 4 and not any(b.isEnabled() for b in buttons)
    window.document.load(files.load_plan(example_path("psi-survey")), None, "psi-survey")
    wait_idle(qtbot, window)
    assert panel.current_row() < 0 and not any(b.isEnabled() for b in buttons)
    click_row(window, 1)
    assert all(b.isEnabled() for b in buttons)
    QTest.mouseClick(next(b for b in buttons if b.defaultAction() is panel.duplicate_action),
                     Qt.MouseButton.LeftButton)
    wait_idle(qtbot, window)
    assert len(window.plan) == 9 and all(b.isEnabled() for b in buttons)
    panel.view.setFocus()
    QTest.keyClick(panel.view, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
    QTest.keyClick(panel.view, Qt.Key.Key_Delete)
    wait_idle(qtbot, window)
    assert len(window.plan) == 0 and not any(b.isEnabled() for b in buttons)
