"""What the statistics table draws again after an edit: the cells it changed, no more. An ε_i typed
with redistribution moves every free epsilon and error, and the edited row's pin; the names,
kinds and noises of the other rows and the deltas stay as drawn (the errors are drawn greyed
until the result is, then again), and a column is measured again
only where its cells changed. Without redistribution only the edited row is drawn again. A paint
of what did not change asks the plan for nothing."""

from __future__ import annotations

from collections import Counter

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication

from dpplanner.gui.table_model import COLUMN_INDEX, StatisticsTableModel
from keys import handle_posted_events, open_cell, retype, wait_idle


def _free_row(window) -> int:
    return next(r for r, s in enumerate(window.plan) if not s.held and r > 2)


def _type_epsilon(qtbot, window, row: int, factor: float = 1.05) -> None:
    editor = open_cell(window, row, "epsilon")
    retype(editor, repr(window.plan[row].epsilon * factor))
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    handle_posted_events()


def test_a_typed_epsilon_once_redistributed_redraws_the_numbers_only(qtbot, synthetic_100, monkeypatch):
    model = synthetic_100.statistics_panel.model
    row = _free_row(synthetic_100)
    # Typed once uncounted: the pin, and columns a digit wider (which moves every cell) come now.
    _type_epsilon(qtbot, synthetic_100, row)
    assert synthetic_100.plan[row].held
    drawn: list[tuple[int, int]] = []
    real = StatisticsTableModel.multiData
    monkeypatch.setattr(model, "multiData", lambda index, roles:
                        drawn.append((index.row(), index.column())) or real(model, index, roles))
    # (closing the cell's editor gives the table the focus back: Qt draws it all again then)
    synthetic_100.plan.subscribe(lambda _event: drawn.clear())
    numbers = [COLUMN_INDEX[k] for k in ("epsilon", "delta", "error")]
    before = _numbers_on_screen(synthetic_100, numbers)
    _type_epsilon(qtbot, synthetic_100, row, 1 / 1.05)
    kept = {COLUMN_INDEX[k] for k in ("name", "kind", "mechanism")}
    others = {(r, c) for r, c in drawn if c in kept and r != row}
    assert not others, f"cells that did not change were drawn again: {sorted(others)[:5]}"
    after = _numbers_on_screen(synthetic_100, numbers)
    moved = {cell for cell in before if before[cell] != after[cell]}
    assert len({r for r, c in moved if c == COLUMN_INDEX["epsilon"]}) > 10    # redistributed
    # every number that moved, and no other (the deltas do not move with the epsilons), but the
    # errors, drawn greyed while the result is composed and again with it (table_numbers.py)
    assert moved <= set(drawn)
    assert {(r, c) for r, c in drawn if c in numbers and c != COLUMN_INDEX["error"] and r != row} <= moved


def _numbers_on_screen(window, columns) -> dict:
    view, model = window.statistics_panel.view, window.statistics_panel.model
    last = view.rowAt(view.viewport().height() - 1)
    return {(r, c): model.index(r, c).data() for r in range(last + 1) for c in columns}


def test_a_paint_of_what_did_not_change_asks_the_plan_for_nothing(qtbot, synthetic_100, monkeypatch):
    model = synthetic_100.statistics_panel.model
    asked = Counter()
    real = StatisticsTableModel._data
    monkeypatch.setattr(model, "_data", lambda row, stat, key, role: asked.update([key]) or
                        real(model, row, stat, key, role))
    synthetic_100.statistics_panel.view.viewport().repaint()
    assert not asked
    _type_epsilon(qtbot, synthetic_100, _free_row(synthetic_100))
    assert asked["error"] > 10                  # (counted where the plan changed)


def test_a_typed_epsilon_measures_only_the_columns_it_changed(qtbot, synthetic_100, monkeypatch):
    fitter = synthetic_100.statistics_panel.columns
    measured = Counter()
    real = fitter._texts
    monkeypatch.setattr(fitter, "_texts",
                        lambda column, rows: measured.update([column]) or real(column, rows))
    _type_epsilon(qtbot, synthetic_100, _free_row(synthetic_100))
    assert measured[COLUMN_INDEX["error"]] >= 1
    for key in ("name", "mechanism"):
        assert not measured[COLUMN_INDEX[key]], f"the {key} column was measured again"


def test_a_typed_epsilon_without_redistribution_signals_its_row_only(qtbot, synthetic_100):
    """Only the edited row's numbers on screen are signalled as changed (the rows off screen are
    signalled whole: a view draws nothing there). (The table then draws every cell once more as
    the cell editor closes and gives it the focus back: Qt's own.)"""
    model = synthetic_100.statistics_panel.model
    QTest.mouseClick(synthetic_100.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, synthetic_100)
    handle_posted_events()
    assert not synthetic_100.plan.budget.redistribute
    row = _free_row(synthetic_100)
    _type_epsilon(qtbot, synthetic_100, row, 0.9)      # (uncounted: the pin, and columns a digit wider)
    view = synthetic_100.statistics_panel.view
    last = view.rowAt(view.viewport().height() - 1)
    numbers = {COLUMN_INDEX[k] for k in ("epsilon", "delta", "error")}
    signalled: set[tuple[int, int]] = set()
    model.dataChanged.connect(lambda top, bottom, *_: signalled.update(
        (r, c) for r in range(top.row(), min(bottom.row(), last) + 1)
        for c in range(top.column(), bottom.column() + 1)))
    _type_epsilon(qtbot, synthetic_100, row, 0.95 / 0.9)
    assert (row, COLUMN_INDEX["epsilon"]) in signalled
    others = {(r, c) for r, c in signalled if c in numbers and r != row}
    assert not others, f"numbers that did not change were signalled: {sorted(others)[:5]}"


def test_an_undo_fills_the_cells_left_empty_once_and_the_table_rests(qtbot, synthetic_100):
    """An undo redraws the whole table (a reset): its paint leaves empty the error and delta
    cells of the rows whose accuracy is not known (those the undone redistribution moved) and
    fills them a block of rows a turn later. A block whose first row kept its accuracy (a pinned
    row) is filled once like the others, and then the table rests: nothing left to fill, no more
    paints, every row's accuracy the plan's."""
    from PySide6.QtCore import QEvent, QObject
    from PySide6.QtWidgets import QApplication

    from dpplanner.gui.row_privacy import PRIVACY_BLOCK

    model, view = synthetic_100.statistics_panel.model, synthetic_100.statistics_panel.view
    plan = synthetic_100.plan
    # a block on screen whose first row the user pins (by typing its epsilon), the rest free
    first = next(r for r in range(PRIVACY_BLOCK, len(plan), PRIVACY_BLOCK)
                 if not any(s.held for s in plan.statistics[r:r + PRIVACY_BLOCK]))
    assert first + PRIVACY_BLOCK < view.rowAt(view.viewport().height() - 1)
    _type_epsilon(qtbot, synthetic_100, first)
    other = _free_row(synthetic_100)
    _type_epsilon(qtbot, synthetic_100, other)         # redistributes every free row, not the pinned one
    events = []
    plan.subscribe(lambda event: events.append(event.kind))
    paints = []

    class Watch(QObject):
        def eventFilter(self, watched, event) -> bool:  # noqa: N802  (Qt's name)
            if event.type() == QEvent.Type.Paint:
                paints.append(watched)
            return False

    watch = Watch()
    view.viewport().installEventFilter(watch)
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)      # Edit > Undo
    assert events == ["reset"] and plan[first].held and not plan[other].held
    for _turn in range(40):         # a few blocks on screen: a few turns of the event loop each
        QApplication.processEvents()
        if paints and not model.filling():
            break
    assert paints and not model.filling(), f"still filling after 40 turns ({len(paints)} paints)"
    wait_idle(qtbot, synthetic_100)
    handle_posted_events()
    paints.clear()
    handle_posted_events()
    assert not paints
    assert [model.privacy(r) for r in range(len(plan))] == plan.privacy_all()


def test_a_fill_due_from_before_a_reset_leaves_the_new_cells_to_their_own_fill(qtbot, synthetic_100):
    """Undo, Redo pressed fast: the fill the Undo's paint asked for may come after the Redo's
    reset and its column fit (which skips the cells left for a fill), before its paint. It finds nothing to fill; the cells the Redo's paint leaves empty
    are filled (and their columns fitted to them) all the same. (It ended the deferred fill for the
    new state: that paint drew the numbers itself, no fill told the columns, and the δ_i and error
    columns stayed fitted to their headers, every number elided.) That order is the event loop's,
    not the user's: here Qt handles the Redo's paint, a posted event, before the fill's timer, so
    keys alone never reach it; the test fires the column fit's and the fill's timers in it."""
    model, view = synthetic_100.statistics_panel.model, synthetic_100.statistics_panel.view
    _type_epsilon(qtbot, synthetic_100, _free_row(synthetic_100))
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)      # Edit > Undo
    for _turn in range(20):                     # its paint leaves cells for a fill
        QApplication.processEvents()
        if model._unfilled:
            break
    assert model._unfilled and model.filling()
    synthetic_100.redo_action.trigger()                # Edit > Redo, before anything is painted
    synthetic_100.statistics_panel.columns._timer.timeout.emit()     # the Redo's column fit, then
    model._fill_timer.timeout.emit()            # the Undo's fill, before the Redo's paint
    wait_idle(qtbot, synthetic_100)
    for _turn in range(40):
        QApplication.processEvents()
        if not model.filling():
            break
    first, last = view.rowAt(0), view.rowAt(view.viewport().height() - 1)
    metrics = view.fontMetrics()
    for key in ("delta", "error"):
        column = COLUMN_INDEX[key]
        widest = max(metrics.horizontalAdvance(model.index(r, column).data()) for r in range(first, last + 1))
        assert view.columnWidth(column) >= widest, key


def test_an_edit_after_a_reset_that_left_nothing_to_fill_draws_its_numbers_at_once(
        qtbot, synthetic_100, monkeypatch):
    """An Undo whose paint finds every row on screen kept leaves nothing to fill; the next edit's
    cells are drawn with their numbers, not left empty for a fill a turn later. (The user renames
    the last row, far below the rows shown, goes back to the top and undoes the rename.)"""
    model, view = synthetic_100.statistics_panel.model, synthetic_100.statistics_panel.view
    QTest.mouseClick(synthetic_100.budget_panel.redistribute, Qt.MouseButton.LeftButton)
    wait_idle(qtbot, synthetic_100)
    far = len(synthetic_100.plan) - 1
    assert far > view.rowAt(view.viewport().height() - 1) + 5       # (off screen)
    CTRL = Qt.KeyboardModifier.ControlModifier
    view.setFocus()
    QTest.keyClick(view, Qt.Key.Key_End, CTRL)                      # to the last row,
    QTest.keyClick(view, Qt.Key.Key_Home)                           # its name
    handle_posted_events()
    assert (view.currentIndex().row(), view.currentIndex().column()) == (far, COLUMN_INDEX["name"])
    QTest.keyClick(view, Qt.Key.Key_F2)                             # edit its name
    editor = QApplication.focusWidget()
    retype(editor, "renamed")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, synthetic_100)
    assert synthetic_100.plan[far].name == "renamed"
    QTest.keyClick(view, Qt.Key.Key_Home, CTRL)                     # back to the first row
    handle_posted_events()
    QTest.keyClick(view, Qt.Key.Key_Z, CTRL)                        # Edit > Undo
    wait_idle(qtbot, synthetic_100)
    handle_posted_events()
    assert synthetic_100.plan[far].name != "renamed" and view.rowAt(0) == 0
    empty = []
    painted = model._painted

    def watched(row, column):
        cell = painted(row, column)
        if column in (COLUMN_INDEX["delta"], COLUMN_INDEX["error"]) and cell[Qt.ItemDataRole.DisplayRole] == "":
            empty.append((row, column))
        return cell

    monkeypatch.setattr(model, "_painted", watched)
    row = next(r for r in range(3, 10) if not synthetic_100.plan[r].held)
    _type_epsilon(qtbot, synthetic_100, row, 0.9)
    assert not empty
