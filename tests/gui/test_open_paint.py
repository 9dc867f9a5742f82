"""What opening a plan paints: every number on screen, from few calls through Python (the table
asks for a cell's roles in one call, the row header measures one number per length, and the
cells that need a block's privacy are filled a turn of the event loop after the first paint)."""

from __future__ import annotations

import dataclasses

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QStyleOptionViewItem, QTableView

from dpplanner.gui.table_model import COLUMN_INDEX, COLUMNS
from dpplanner.model import Plan, files
from dpplanner.model.examples import example_path


def _on_screen(window, row: int, key: str):
    """The cell as the window last drew it (its backing store), not drawn afresh."""
    view = window.statistics_panel.view
    rect = view.visualRect(window.statistics_panel.model.index(row, COLUMN_INDEX[key]))
    shot = QApplication.primaryScreen().grabWindow(window.winId()).toImage()
    corner = view.viewport().mapTo(window, rect.topLeft())
    return shot.copy(corner.x(), corner.y(), rect.width(), rect.height())


def _colours(image) -> int:
    return len({image.pixel(x, y) for x in range(image.width()) for y in range(image.height())})


def test_a_plan_opened_again_shows_its_error_bounds_on_screen(qtbot, shown):
    """The columns keep their widths when the same plan opens again, so nothing but the fill
    draws the error and δ_i cells the first paint left empty."""
    from keys import handle_posted_events, wait_idle

    plan = files.load_plan(example_path("synthetic-100"))
    for _ in range(2):
        shown.document.load(plan, None, "synthetic-100")
        wait_idle(qtbot, shown)
        handle_posted_events()
    gaussian = next(r for r, s in enumerate(shown.plan) if s.mechanism.value == "gaussian")
    for row, key in ((0, "error"), (gaussian, "delta")):
        assert _colours(_on_screen(shown, row, key)) > 1, f"row {row + 1}'s {key} is not drawn"


def test_an_opened_plan_is_drawn_in_the_table_a_turn_after_the_rest_of_the_window(qtbot, shown):
    """Opening a plan redraws most of the window on its turn of the event loop; the table, whose
    first paint is the longest part of that, is drawn on a turn of its own after it."""
    from keys import handle_posted_events, wait_idle

    painted = []

    class Watch(QObject):
        def eventFilter(self, watched, event) -> bool:  # noqa: N802  (Qt's name)
            if event.type() == QEvent.Type.Paint:
                painted.append(watched)
            return False

    viewport, watch = shown.statistics_panel.view.viewport(), Watch()
    viewport.installEventFilter(watch)
    shown.document.load(files.load_plan(example_path("synthetic-100")), None, "synthetic-100")
    QApplication.sendPostedEvents()         # the opening's own turn: what it posted, its repaint
    assert painted == []
    wait_idle(qtbot, shown)
    handle_posted_events()
    assert viewport in painted
    assert shown.statistics_panel.model.index(0, COLUMN_INDEX["error"]).data()


def test_the_drawn_cells_carry_the_models_values(qtbot, shown):
    """A paint asks for every role of a cell in one call (multiData): what the delegate draws is
    what data() says, role by role."""
    from keys import handle_posted_events, wait_idle

    shown.document.load(files.load_plan(example_path("psi-survey")), None, "psi-survey")
    wait_idle(qtbot, shown)
    handle_posted_events()
    model, view = shown.statistics_panel.model, shown.statistics_panel.view
    delegate = view.itemDelegate()
    for row in range(model.rowCount()):
        for column in range(len(COLUMNS)):
            index = model.index(row, column)
            option = QStyleOptionViewItem()
            delegate.initStyleOption(option, index)
            assert option.text == str(index.data() or "")
            assert option.font.bold() == bool(index.data(Qt.ItemDataRole.FontRole)
                                              and index.data(Qt.ItemDataRole.FontRole).bold())
            check = index.data(Qt.ItemDataRole.CheckStateRole)
            assert bool(option.features & QStyleOptionViewItem.ViewItemFeature.HasCheckIndicator) \
                == (check is not None)


def test_the_row_header_of_thousands_of_rows_measures_as_qts_own_with_few_calls(qtbot, shown, monkeypatch):
    base = files.load_plan(example_path("synthetic-1000"))
    plan = Plan(base.budget, [s.replace(name=f"{s.name} {i}") for i in range(10) for s in base.statistics])
    from keys import handle_posted_events

    model = shown.statistics_panel.model
    calls = []
    real = model.headerData

    def counted(section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Vertical:
            calls.append(section)
        return real(section, orientation, role)

    monkeypatch.setattr(model, "headerData", counted)
    shown.document.load(plan, None, "thousands of rows")
    qtbot.waitUntil(lambda: shown.statistics_panel.view.verticalHeader().width() > 0)
    handle_posted_events()
    assert len(shown.plan) == 10 * len(base) > 1000
    assert len(calls) < 400         # Qt's own asked ~3400 times while the plan opened
    plain = QTableView()            # Qt's own row header, on the same rows
    qtbot.addWidget(plain)
    plain.setModel(model)
    header = shown.statistics_panel.view.verticalHeader()
    assert header.sizeHint().width() == plain.verticalHeader().sizeHint().width()


def test_the_windows_first_paint_shows_every_number(qtbot, monkeypatch):
    """Nothing is on screen before the window's first paint that could react meanwhile: that
    paint draws the error bounds of the plan `dpplanner` opens, not a turn of the event loop
    later. (The columns are not fitted here: a fit measures the first rows, which computes
    their privacy whenever it comes before the paint.)"""
    from dpplanner.gui import app
    from dpplanner.gui.lazy_canvas import after_first_paint
    from dpplanner.gui.table_columns import ColumnFitter

    monkeypatch.setattr(app, "engine_in_process", lambda: False)
    monkeypatch.setattr(ColumnFitter, "fit", lambda self, columns=None: None)
    window = app.start()
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    seen = []
    after_first_paint(window.statistics_panel.view.viewport(),
                      lambda: seen.append(_colours(_on_screen(window, 0, "error"))))
    qtbot.waitUntil(lambda: bool(seen))
    assert seen[0] > 1


def test_a_column_fit_after_a_plan_opens_computes_no_privacy(qtbot, shown, monkeypatch):
    """The fit measures the cells as drawn: those the first paint leaves empty are measured once
    their block is filled (a fit of the first rows computed their accuracy on the GUI thread)."""
    import dpplanner.gui.row_privacy as row_privacy
    from keys import handle_posted_events, wait_idle

    blocks = []
    real = row_privacy.statistics_privacy
    monkeypatch.setattr(row_privacy, "statistics_privacy", lambda *a: blocks.append(1) or real(*a))
    shown.document.load(files.load_plan(example_path("synthetic-100")), None, "synthetic-100")
    panel = shown.statistics_panel
    panel.columns.fit()
    assert blocks == []
    wait_idle(qtbot, shown)
    handle_posted_events()
    assert blocks
    text = panel.model.index(0, COLUMN_INDEX["error"]).data()
    assert panel.view.columnWidth(COLUMN_INDEX["error"]) >= panel.view.fontMetrics().horizontalAdvance(text)


def test_the_cells_a_plan_opened_with_are_filled_a_block_a_turn(qtbot, shown):
    """Each turn of the event loop computes one block of rows and redraws only its cells, until
    every row on screen shows its error bound."""
    from dpplanner.gui.table_model import PRIVACY_BLOCK
    from keys import handle_posted_events, wait_idle

    model = shown.statistics_panel.model
    filled = []
    model.dataChanged.connect(lambda top, bottom, *_: filled.append((top.row(), bottom.row())))
    shown.document.load(files.load_plan(example_path("synthetic-100")), None, "synthetic-100")
    wait_idle(qtbot, shown)
    handle_posted_events()
    view = shown.statistics_panel.view
    last = view.rowAt(view.viewport().height() - 1)
    assert last >= PRIVACY_BLOCK
    assert len(filled) >= 2 and all(b - t < PRIVACY_BLOCK for t, b in filled)
    assert set(range(last + 1)) <= {r for t, b in filled for r in range(t, b + 1)}
    assert _colours(_on_screen(shown, last, "error")) > 1


def test_a_plan_opened_paints_its_table_before_the_cost_plot_moves_its_budget_line(qtbot, shown):
    from PySide6.QtCore import QEvent, QObject
    from keys import wait_idle

    plot = shown.cost_plot
    qtbot.waitUntil(plot.canvas_built)
    wait_idle(qtbot, shown)
    before = plot.budget_line.value()
    base = files.load_plan(example_path("synthetic-100"))
    plan = Plan(dataclasses.replace(base.budget, epsilon=2 * base.budget.epsilon), base.statistics)
    assert plan.budget.spendable_epsilon != before
    seen = []

    class FirstPaint(QObject):
        def eventFilter(self, watched, event) -> bool:     # noqa: N802
            if event.type() == QEvent.Type.Paint and not seen:
                seen.append(plot.budget_line.value())
            return False

    watcher = FirstPaint()
    shown.statistics_panel.view.viewport().installEventFilter(watcher)
    shown.document.load(plan, None, "synthetic-100")
    qtbot.waitUntil(lambda: bool(seen))
    assert seen == [before]
    qtbot.waitUntil(lambda: plot.budget_line.value() == plan.budget.spendable_epsilon)


def test_an_opened_plan_is_drawn_once_with_every_number_on_screen(qtbot, shown, monkeypatch):
    """The rows on screen are computed a block a turn before the table is drawn: its first paint
    draws every error bound on screen, at the width they need (drawn first with them left empty,
    the table was drawn whole again when the first block widened the error column)."""
    import dpplanner.gui.row_privacy as row_privacy
    from dpplanner.gui.table_columns import rows_on_screen
    from dpplanner.gui.table_model import PRIVACY_BLOCK, ShownRole
    from keys import handle_posted_events, wait_idle

    computed = []
    real = row_privacy.statistics_privacy
    monkeypatch.setattr(row_privacy, "statistics_privacy",
                        lambda budget, stats, deltas: computed.append(len(stats)) or real(budget, stats, deltas))
    view, model = shown.statistics_panel.view, shown.statistics_panel.model
    error = COLUMN_INDEX["error"]
    first = []

    class FirstPaint(QObject):
        def eventFilter(self, watched, event) -> bool:     # noqa: N802
            if event.type() == QEvent.Type.Paint and not first:
                top, bottom = rows_on_screen(view)
                first.append((view.columnWidth(error),
                              [model.index(row, error).data(ShownRole) for row in range(top, bottom + 1)]))
            return False

    watcher = FirstPaint()
    view.viewport().installEventFilter(watcher)
    shown.document.load(files.load_plan(example_path("synthetic-100")), None, "synthetic-100")
    wait_idle(qtbot, shown)
    handle_posted_events()
    width, errors = first[0]
    assert len(errors) > PRIVACY_BLOCK and all(errors)
    assert width == view.columnWidth(error)
    assert computed and max(computed) <= PRIVACY_BLOCK      # a block a turn


def test_the_first_block_is_filled_on_a_turn_after_the_paint_that_left_it_empty(qtbot, shown):
    """A timer due when the first paint after opening a plan ends runs before the first block's
    fill: started by the paint, the fill ran right after it, one stall of the GUI thread with it.
    (A plan opened while the window is hidden: its first paint, when shown, leaves them empty.)"""
    from PySide6.QtCore import QTimer

    model = shown.statistics_panel.model
    order = []
    model.dataChanged.connect(lambda *_: order.append("fill"))
    other = QTimer(singleShot=True, interval=0)
    other.timeout.connect(lambda: order.append("other"))

    class AfterFirstPaint(QObject):
        def eventFilter(self, watched, event) -> bool:     # noqa: N802
            if event.type() != QEvent.Type.Paint:
                return False
            watched.removeEventFilter(self)
            QApplication.sendEvent(watched, event)         # the paint, then the timer started
            order.append("paint" if model.filling() else "paint filled")
            other.start()
            return True

    watcher = AfterFirstPaint()
    shown.hide()
    shown.document.load(files.load_plan(example_path("synthetic-100")), None, "synthetic-100")
    shown.statistics_panel.view.viewport().installEventFilter(watcher)
    shown.show()
    qtbot.waitUntil(lambda: "fill" in order)
    assert order[:2] == ["paint", "other"]
    qtbot.waitUntil(lambda: not model.filling())
