"""The statistics table with its own buttons (add per kind, duplicate, remove, move). The
inspector of the selected statistic is made here and follows the table's selection; the window
shows it in its own tab beside the plots, so the table keeps the left column's whole width."""

from __future__ import annotations

from typing import Optional

from PySide6.QtCore import QItemSelectionModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractItemView, QGroupBox, QHBoxLayout, QLabel, QMenu, QTableView,
    QToolButton, QToolTip, QVBoxLayout, QWidget,
)

from dpplanner.gui import formatting, theme
from dpplanner.gui.add_dialog import AddStatisticDialog
from dpplanner.gui.delegates import StatisticDelegate
from dpplanner.gui.editing import PlanEditor, Refusal
from dpplanner.gui.inspector import StatisticInspector
from dpplanner.gui.row_header import RowHeader
from dpplanner.gui.table_columns import ColumnFitter, rows_on_screen
from dpplanner.gui.table_model import COLUMN_INDEX, ShownRole, StatisticsTableModel
from dpplanner.gui.turns import Turns
from dpplanner.model import Kind, Statistic

#: The columns a new window shows: all fit the table at 1280 x 800 (the others are one tick away
#: in the header's right-click menu, and every field is in the Statistic tab).
DEFAULT_COLUMNS = ("name", "kind", "mechanism", "epsilon", "delta", "error", "held")


class StatisticsPanel(QGroupBox):
    selectionChanged = Signal(int)      # current row, -1 when none

    def __init__(self, editor: PlanEditor, parent: QWidget | None = None,
                 turns: Optional[Turns] = None) -> None:
        super().__init__("Statistics", parent)
        self.editor = editor
        self.add_dialog: Optional[AddStatisticDialog] = None
        self.model = StatisticsTableModel(editor.plan, editor, self)
        self.view = QTableView()
        self.view.setVerticalHeader(RowHeader(self.view))
        self.view.setModel(self.model)
        self.model.set_screen(lambda: rows_on_screen(self.view))
        self.view.setItemDelegate(StatisticDelegate(self.view))
        self.view.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.view.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.view.setEditTriggers(QAbstractItemView.EditTrigger.DoubleClicked
                                  | QAbstractItemView.EditTrigger.EditKeyPressed
                                  | QAbstractItemView.EditTrigger.AnyKeyPressed)
        self.view.setAlternatingRowColors(True)
        self.view.setAccessibleName("Statistics table")
        corner = self.view.findChild(QAbstractButton)       # the top-left "select all" button
        if corner is not None:
            corner.setAccessibleName("Select all statistics")
        self.view.verticalHeader().setDefaultSectionSize(self.view.fontMetrics().height() + 8)
        # Columns as wide as their text; which ones show is the user's choice (the header's
        # right-click menu), never the rows' (see table_columns).
        self.columns = ColumnFitter(
            self.view, stretch=COLUMN_INDEX["name"],
            # (the noise column is as wide as the noise its statistics have: "Gaussian (ideal)"
            # for every plan would make census-tables scroll sideways at 1280 px)
            words={COLUMN_INDEX["kind"]: [k.label for k in Kind]},
            extra={COLUMN_INDEX["held"]: 22}, role=ShownRole, texts=self.model.shown_texts)
        self.columns.set_shown(COLUMN_INDEX[k] for k in DEFAULT_COLUMNS)
        self.view.setToolTip("The statistics of the plan. Double-click a cell to edit it; type a "
                             "target error (or an ε_i) to pin the statistic at it; untick its pin to let "
                             "redistribution move it again. The Statistic tab shows every field of the "
                             "selected one; right-click a column title to choose the columns.")
        self.view.selectionModel().currentRowChanged.connect(lambda _current, _previous: self._current_moved())

        self.add_menu = QMenu(self)
        for kind in Kind:
            action = self.add_menu.addAction(kind.label)
            action.setToolTip(f"Add a {kind.label.lower()} statistic")
            action.triggered.connect(lambda _checked=False, k=kind: self.add_statistic(k))
        self.add_button = self._button("+ Statistic", "Add a statistic: choose its kind")
        self.add_button.setMenu(self.add_menu)
        self.add_button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.duplicate_action = self._action("Duplicate", "Duplicate the selected statistic",
                                             QKeySequence("Ctrl+D"), self.duplicate_selected)
        self.remove_action = self._action("Remove", "Remove the selected statistics",
                                          QKeySequence(QKeySequence.StandardKey.Delete), self.remove_selected)
        self.up_action = self._action("Move up", "Move the selected statistic up (order matters for "
                                      "the prefix curve)", QKeySequence("Ctrl+Up"), lambda: self.move_selected(-1))
        self.down_action = self._action("Move down", "Move the selected statistic down",
                                        QKeySequence("Ctrl+Down"), lambda: self.move_selected(+1))
        # greyed with nothing to act on (a new plan, or none selected): they did nothing, silently
        selection = self.view.selectionModel()
        for signal in (selection.currentChanged, selection.selectionChanged, self.model.modelReset,
                       self.model.rowsInserted, self.model.rowsRemoved):
            signal.connect(lambda *_args: self._enable_actions())
        self._enable_actions()
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        for action in (self.duplicate_action, self.remove_action, self.up_action, self.down_action):
            button = QToolButton()
            button.setDefaultAction(action)
            buttons.addWidget(button)
        buttons.addStretch(1)
        self.refusal = QLabel("")
        self.refusal.setTextFormat(Qt.TextFormat.PlainText)    # it may quote a statistic's name
        self.refusal.setWordWrap(True)
        theme.red_text(self.refusal)
        self.refusal.setAccessibleName("Why the last edit was refused")
        self.refusal.hide()
        self.inspector = StatisticInspector(editor)
        self.selectionChanged.connect(self.inspector.set_row)
        layout = QVBoxLayout(self)
        layout.addLayout(buttons)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.refusal)
        editor.refused.connect(self.show_refusal)
        # an added statistic, or the one after those removed, once the edit is in the plan
        editor.placed.connect(self.select_row)
        editor.plan.subscribe(self._on_plan_event)
        if turns is not None:
            self.model.modelReset.connect(lambda: self._draw_later(turns))

    def _button(self, text: str, tip: str) -> QToolButton:
        button = QToolButton()
        button.setText(text)
        button.setToolTip(tip)
        return button

    def _action(self, text: str, tip: str, shortcut: QKeySequence, slot) -> QAction:
        action = QAction(text, self)
        action.setToolTip(f"{tip} ({shortcut.toString(QKeySequence.SequenceFormat.NativeText)})")
        action.setShortcut(shortcut)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        action.triggered.connect(slot)
        self.view.addAction(action)
        return action

    def _enable_actions(self) -> None:
        some = self.current_row() >= 0 or self.view.selectionModel().hasSelection()
        for action in (self.duplicate_action, self.remove_action, self.up_action, self.down_action):
            action.setEnabled(some)

    def _draw_later(self, turns: Turns) -> None:
        """Another plan in the table (opened, or Undo past chained edits): the table is drawn on a
        turn of the event loop of its own, after the window's other views, which the same change
        redraws on its turn (~8 ms of the GUI thread less there), and after the accuracy of the
        rows on screen is computed, a block on each turn before it: drawn once, with every number
        and the widths they need."""
        view, key = self.view, ("table", id(self))

        def draw() -> None:
            self.columns.fit_pending()
            if self.model.fill_screen_block():
                turns.later(key, draw)
            else:
                view.setUpdatesEnabled(True)

        if view.isVisible() and view.updatesEnabled():
            view.setUpdatesEnabled(False)
            turns.later(key, draw)

    def _on_plan_event(self, event) -> None:
        self.refusal.hide()
        row = self.inspector.row
        if event.kind == "reset":
            # A reset (a plan opened, Undo, edits adopted together) clears the table's selection
            # while the inspector keeps its statistic: the table selects that one, so the two
            # agree, and the view stays where the user scrolled it.
            if row >= 0 and row not in self.selected_rows():
                self.select_row(row, scroll=False)
            return
        # The table's current row moves with its rows (a removed one's neighbour takes its
        # place): the table selects it and the inspector shows it, never the statistic now at
        # the inspector's old number.
        current = self.current_row()
        if event.kind == "removed" and current >= 0 and not self.selected_rows():
            self.select_row(current, scroll=False)
        if current != row:
            self.selectionChanged.emit(current)

    def _current_moved(self) -> None:
        # Qt announces a removed current row's neighbour while the table still has the old rows,
        # numbered as they were: that number is no statistic of the plan, which has lost the row
        # already. The plan event that follows tells the inspector (above).
        if self.model.rowCount() == len(self.editor.plan):
            self.selectionChanged.emit(self.current_row())

    # -- selection ----------------------------------------------------------------------------
    def selected_rows(self) -> list[int]:
        return sorted({i.row() for i in self.view.selectionModel().selectedRows()})

    def current_row(self) -> int:
        index = self.view.currentIndex()
        return index.row() if index.isValid() else -1

    def select_row(self, row: int, scroll: bool = True) -> None:
        """Select ``row``; ``scroll``: bring it into view (an action on it), else the view stays
        where it is (the plan changed under the user's scrolling)."""
        if 0 <= row < self.model.rowCount():
            # explicitly: the view's own commands read the keys held (Ctrl of Ctrl+Z toggled the row
            # off again when Undo selected it)
            flags = QItemSelectionModel.SelectionFlag
            auto = self.view.hasAutoScroll()        # the view scrolls to a new current index
            self.view.setAutoScroll(auto and scroll)
            try:
                self.view.selectionModel().setCurrentIndex(self.model.index(row, 0),
                                                           flags.ClearAndSelect | flags.Rows)
            finally:
                self.view.setAutoScroll(auto)

    # -- actions ------------------------------------------------------------------------------
    def add_statistic(self, kind: Kind, stat: Optional[Statistic] = None) -> bool:
        """Open the dialog for ``kind`` (or add ``stat`` directly, used by tests and scripts) after
        the current statistic; the editor's ``placed`` selects it once it is in the plan."""
        row = self.current_row()
        if stat is None:
            def submit(new: Statistic):
                return None if self.editor.add_after(row, new) else self.editor.last_refusal

            dialog = AddStatisticDialog(kind, self.editor.plan.budget, submit=submit,
                                        name=self._fresh_name(kind.label.split(" ")[0].lower()), parent=self)
            self.add_dialog = dialog        # reachable while open (tests, accessibility tools)
            accepted = dialog.exec() == AddStatisticDialog.DialogCode.Accepted
            self.add_dialog = None
            return accepted
        return self.editor.add_after(row, stat)

    def duplicate_selected(self) -> bool:
        row = self.current_row()
        if row < 0:
            return False
        original = self.editor.plan[row]
        return self.editor.insert_statistic(row + 1, original.replace(name=self._fresh_name(original.name)))

    # Rows are those on screen: while an edit waits for its redistribution the table still shows
    # the plan before it, and the cursor stays on the statistic acted on there (the inspector
    # follows it when the edits land), so the next key press acts on the same statistic.
    def remove_selected(self) -> bool:
        rows = self.selected_rows() or ([self.current_row()] if self.current_row() >= 0 else [])
        if not rows:
            return False
        left = [r for r in range(len(self.editor.plan))
                if r not in rows and self.editor.row_now(r) is not None]
        after = [r for r in left if r > rows[-1]] or left[-1:]      # the next statistic left
        if not self.editor.remove_statistics(rows, after[0] if after else None):
            return False
        if after and self.editor.is_redistributing():
            self.select_row(after[0])       # on screen until the removal lands (then `placed`)
        return True

    def move_selected(self, step: int) -> bool:
        row = self.current_row()
        if row < 0 or not self.editor.move_statistic(row, row + step):
            return False
        self.select_row(row if self.editor.is_redistributing() else row + step)
        return True

    def _fresh_name(self, base: str) -> str:
        names = self.editor.names()
        if base not in names:
            return base
        i = 2
        while f"{base} ({i})" in names:
            i += 1
        return f"{base} ({i})"

    # -- refusals -------------------------------------------------------------------------------
    def show_refusal(self, refusal: Refusal) -> None:
        """Show the reason beneath the table until the next change, and at the refused cell."""
        if refusal.row is None or not (0 <= refusal.row < self.model.rowCount()):
            return
        self.refusal.setText(f"Not changed (row {refusal.row + 1}): {refusal.message}")
        self.refusal.show()
        column = COLUMN_INDEX.get(refusal.field or "", COLUMN_INDEX["name"])
        index = self.model.index(refusal.row, column)
        self.view.setCurrentIndex(index)
        # the reason takes its lines from the table now, not at the next layout: the refused row,
        # at the table's bottom, was left out of sight beneath it
        self.layout().activate()
        self.view.scrollTo(index)
        rect = self.view.visualRect(index)
        point = self.view.viewport().mapToGlobal(QPoint(rect.left(), rect.bottom()))
        QToolTip.showText(point, formatting.as_plain(refusal.message), self.view, rect, 8000)

    def index_of(self, row: int, key: str) -> QModelIndex:
        return self.model.index(row, COLUMN_INDEX[key])
