"""A thin QAbstractTableModel over the plan's statistics.

It translates PlanEvents into Qt's row signals and reads everything it shows from the plan.
Because the plan has already changed when its event arrives, the model keeps its own copy of the
rows and swaps it in between ``begin*`` and ``end*``, so views (and ``qtmodeltester``) always see
row counts that match the signals. Edits are not applied here: ``setData`` hands them to the
PlanEditor, which validates, applies, records undo and redistributes.
"""

from __future__ import annotations

from functools import cache
from operator import attrgetter
from typing import Any, Callable, Optional

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

from dpplanner.gui import formatting
from dpplanner.gui.icons import pin_icon
from dpplanner.gui.row_privacy import PRIVACY_BLOCK, RowPrivacy
from dpplanner.gui.table_columns import COLUMN_INDEX, COLUMNS
from dpplanner.gui.table_fill import ResetFill
from dpplanner.gui.table_numbers import PlanWideNumbers
from dpplanner.gui.table_tooltips import cell_tooltip, waiting_tooltip
from dpplanner.gui.editing import PlanEditor, Refusal
from dpplanner.model import (FIELD_RULES, Kind, Mechanism, Plan, PlanError, PlanEvent, Statistic,
                             StatisticPrivacy)
from dpplanner.model.statistic import noise_words
from dpplanner.model.typed import parse_text


#: The fields each other column shows of a statistic (its text, pin, or greyed text), and all of them.
_COLUMN_FIELDS = {COLUMN_INDEX[key]: attrgetter(*fields) for key, fields in (
    ("name", ("name",)), ("variable", ("variable",)), ("kind", ("kind",)),
    ("mechanism", ("kind", "mechanism", "noise")), ("held", ("held",)), ("weight", ("weight",)),
    ("repetitions", ("repetitions",)))}
_SHOWN_FIELDS = attrgetter("name", "variable", "kind", "mechanism", "noise", "held", "weight", "repetitions")
NUMERIC = {"epsilon", "delta", "error", "weight", "repetitions"}

#: Role with the raw Python value of a cell (floats unrounded, enums as members).
RawRole = Qt.ItemDataRole.UserRole + 1
#: Role with the text a cell shows now: None for a cell left empty until its block's privacy is
#: computed, or off screen with its privacy not computed (what a column's fit measures: it
#: computes nothing); a number kept as drawn until a change's result is drawn, that number.
ShownRole = Qt.ItemDataRole.UserRole + 2
_R = Qt.ItemDataRole
_DISPLAY, _EDIT, _CHECK, _DECORATION, _TOOLTIP, _ALIGNMENT, _FONT, _FOREGROUND = (int(r) for r in (
    _R.DisplayRole, _R.EditRole, _R.CheckStateRole, _R.DecorationRole, _R.ToolTipRole,
    _R.TextAlignmentRole, _R.FontRole, _R.ForegroundRole))
#: The roles a paint of a cell asks for (QStyledItemDelegate.initStyleOption), kept per cell.
_PAINTED = (_DISPLAY, _CHECK, _DECORATION, _ALIGNMENT, _FONT, _FOREGROUND, int(_R.BackgroundRole))
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_SELECTABLE = Qt.ItemFlag.ItemIsEnabled | Qt.ItemFlag.ItemIsSelectable
_CHECKABLE = _SELECTABLE | Qt.ItemFlag.ItemIsUserCheckable
_EDITABLE = _SELECTABLE | Qt.ItemFlag.ItemIsEditable


class StatisticsTableModel(ResetFill, PlanWideNumbers, QAbstractTableModel):
    def __init__(self, plan: Plan, editor: Optional[PlanEditor] = None, parent=None) -> None:
        super().__init__(parent)
        self._plan = plan
        self._editor = editor
        self._rows: tuple[Statistic, ...] = plan.statistics
        self._privacy = RowPrivacy(plan)
        # The first and last rows on screen (the view's, once it says so: set_screen).
        self._screen: Callable[[], tuple[int, int]] = lambda: (0, -1)
        self._cells: dict[tuple[int, int], dict] = {}     # (row, column) -> its painted roles
        self._init_fill()
        self._init_numbers()
        plan.subscribe(self._on_plan_event)

    def detach(self) -> None:
        self._plan.unsubscribe(self._on_plan_event)

    # -- reading --------------------------------------------------------------------------------
    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section].title
            if role == Qt.ItemDataRole.ToolTipRole:
                return COLUMNS[section].tooltip
            if role == Qt.ItemDataRole.DecorationRole and COLUMNS[section].key == "held":
                return pin_icon()
        if orientation == Qt.Orientation.Vertical and role == Qt.ItemDataRole.DisplayRole:
            return str(section + 1)
        return None

    def privacy_all(self) -> list[StatisticPrivacy]:
        """Accuracy of every row, computed once per plan change and shared with the window."""
        return self._privacy.all()

    def set_screen(self, rows_on_screen: Callable[[], tuple[int, int]]) -> None:
        """``rows_on_screen()``: the first and last rows the view shows now."""
        self._screen = rows_on_screen

    def privacy(self, row: int) -> StatisticPrivacy:
        """Accuracy of one row, computed when the view first draws it (gui/row_privacy.py): with
        its block after a plan opened (the blocks are filled a turn each), else with the rows on
        screen below it (those a paint from it draws) - a row off screen with its block."""
        end = (row // PRIVACY_BLOCK + 1) * PRIVACY_BLOCK - 1
        if not self._fill_later:
            first, last = self._screen()
            if first <= row <= last:
                end = last
        return self._privacy.row(row, end)

    def statistic(self, row: int) -> Statistic:
        return self._rows[row]

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        row = index.row()
        if not index.isValid() or not (0 <= row < len(self._rows)):
            return None
        return self._data(row, self._rows[row], COLUMNS[index.column()].key, role)

    def multiData(self, index: QModelIndex | QPersistentModelIndex, roles) -> None:    # noqa: N802
        """Several roles of a cell in one call: a paint of the table asks for seven roles of
        every cell shown (a screenful: ~900 calls through Python one role at a time, ~130 so).
        A cell's painted roles are kept until the plan changes: a plan opened is painted again
        as its blocks fill, as its result lands, and on every scroll or hover."""
        row = index.row()
        if not index.isValid() or not (0 <= row < len(self._rows)):
            return
        cell = self._cells.get((row, index.column())) or self._waiting.get((row, index.column()))
        if cell is None:
            cell = self._painted(row, index.column())
        for wanted in roles:
            role = wanted.role()
            wanted.setData(cell[role] if role in cell else
                           self._data(row, self._rows[row], COLUMNS[index.column()].key, role))

    def _painted(self, row: int, column: int) -> dict:
        """The roles a paint asks of a cell (kept, unless the cell is left empty for now)."""
        stat, key = self._rows[row], COLUMNS[column].key
        later = self._shown_later(row, key)
        cell = {role: self._data(row, stat, key, role) for role in _PAINTED if not later or role != _DISPLAY}
        if later:
            cell[_DISPLAY] = ""
            self._unfilled.add(row // PRIVACY_BLOCK)
            self._arm_fill()
        else:
            self._cells[row, column] = cell
        return cell

    def shown_texts(self, column: int, rows) -> list:
        """``rows``' ShownRole in ``column``, in one call (a column fit reads ~50 cells)."""
        key, cells, waiting = COLUMNS[column].key, self._cells, self._waiting
        return [cells[row, column][_DISPLAY] if (row, column) in cells else
                waiting[row, column][_DISPLAY] if (row, column) in waiting else
                None if self._measured_later(row, key) else self._display(row, self._rows[row], key)
                for row in rows]

    def _data(self, row: int, stat: Statistic, key: str, role: int) -> Any:
        # Roles compared as plain ints, flags and brushes made once.
        if self._waiting and role != _EDIT and role != RawRole:
            kept = self._waiting.get((row, COLUMN_INDEX[key]))      # (gui/table_numbers.py)
            if kept is not None:
                return waiting_tooltip(kept[_DISPLAY], key) if role == _TOOLTIP else \
                    kept[_DISPLAY] if role == ShownRole else kept.get(role)
        if role == _DISPLAY:
            return self._display(row, stat, key)
        if role == _CHECK:
            return None if key != "held" else Qt.CheckState.Checked if stat.held else Qt.CheckState.Unchecked
        if role == _DECORATION:
            return pin_icon() if key == "held" and stat.held else None
        if role == _ALIGNMENT:
            return _RIGHT if key in NUMERIC else None
        if role == _FONT:
            # bold: a requirement the user set, not a consequence
            return _bold() if key == "error" and stat.target_error is not None else None
        if role == _FOREGROUND:
            return _grey() if key != "held" and not self._editable(stat, key) else None
        if role == _EDIT:
            value = self._raw(row, stat, key)
            return value.value if isinstance(value, (Kind, Mechanism)) else value
        if role == RawRole:
            return self._raw(row, stat, key)
        if role == ShownRole:
            return None if self._measured_later(row, key) else self._display(row, stat, key)
        if role == _TOOLTIP:
            return formatting.as_plain(cell_tooltip(self._plan.budget, stat, key, lambda: self.privacy(row)))
        return None

    def flags(self, index: QModelIndex | QPersistentModelIndex) -> Qt.ItemFlag:
        if not index.isValid():
            return Qt.ItemFlag.NoItemFlags
        key = COLUMNS[index.column()].key
        if key == "held":
            return _CHECKABLE
        return _EDITABLE if self._editable(self._rows[index.row()], key) else _SELECTABLE

    # -- writing --------------------------------------------------------------------------------
    def setData(self, index: QModelIndex | QPersistentModelIndex, value: Any,
                role: int = Qt.ItemDataRole.EditRole) -> bool:
        if not index.isValid() or self._editor is None:
            return False
        row = index.row()
        stat = self._rows[row]
        key = COLUMNS[index.column()].key
        if key == "held" and role == Qt.ItemDataRole.CheckStateRole:
            held = Qt.CheckState(value) == Qt.CheckState.Checked
            text = f"{'Pin' if held else 'Unpin'} {stat.name!r}"
            return self._editor.update_statistic(row, {"held": held}, text)
        if role != Qt.ItemDataRole.EditRole or not self._editable(stat, key):
            return False
        if key in NUMERIC and isinstance(value, str):
            try:        # exactly what was typed, or the reason it cannot be stored
                value = parse_text(FIELD_RULES[key], value, f"statistic {row + 1} ({stat.name!r})", row)
            except PlanError as exc:
                self._editor.refused.emit(Refusal(str(exc), row, key))
                return False
        if key == "error":
            return self._editor.set_target_error(row, value)
        if key == "epsilon":
            return self._editor.set_epsilon(row, value)
        if key in ("kind", "mechanism"):
            value = str(value)
        elif key in ("name", "variable"):
            value = str(value).strip() if key == "name" else str(value)
        # the editor refuses a value the statistic cannot take (at this cell) and skips no-ops
        return self._editor.update_statistic(row, {key: value}, f"Edit {COLUMNS[index.column()].title} "
                                             f"of {stat.name!r}", field=key)

    # -- plan events ----------------------------------------------------------------------------
    def _on_plan_event(self, event: PlanEvent) -> None:
        new_rows = self._plan.statistics
        if self._fill_later and not self.filling():
            self._fill_later = False    # the reset's paint left nothing to fill (every row kept)
        self._privacy.forget(new_rows)
        painted, self._cells = self._cells, {}
        waiting = self._take_waiting(event.kind)
        if event.kind == "inserted" and len(event.rows) == 1 and len(new_rows) == len(self._rows) + 1:
            row = event.rows[0]
            self.beginInsertRows(QModelIndex(), row, row)
            self._rows = new_rows
            self.endInsertRows()
        elif event.kind == "removed" and len(event.rows) == 1 and len(new_rows) == len(self._rows) - 1:
            row = event.rows[0]
            self.beginRemoveRows(QModelIndex(), row, row)
            self._rows = new_rows
            self.endRemoveRows()
        elif event.kind == "moved" and event.source is not None and event.destination is not None:
            src, dst = event.source, event.destination
            # Qt's destination is the row *before which* the moved row lands, in old numbering.
            self.beginMoveRows(QModelIndex(), src, src, QModelIndex(), dst + 1 if dst > src else dst)
            self._rows = new_rows
            self.endMoveRows()
        elif event.kind in ("changed", "budget", "metadata") and len(new_rows) == len(self._rows):
            old_rows, self._rows = self._rows, new_rows
            self._plan_wide_changed(painted, waiting, old_rows, event.rows)
            # The other cells of a row only where what they show changed (an edited statistic; a
            # redistribution moves epsilons alone): a view redraws the cells named, no more.
            for row in event.rows:
                old, new = (old_rows[row], new_rows[row]) if 0 <= row < len(new_rows) else (None, None)
                if old is not new and _SHOWN_FIELDS(old) != _SHOWN_FIELDS(new):
                    for column, shown in _COLUMN_FIELDS.items():
                        if shown(old) != shown(new):
                            self.dataChanged.emit(self.index(row, column), self.index(row, column))
        else:
            self.beginResetModel()
            self._rows = new_rows
            self._fill_later, self._unfilled = True, set()
            self.endResetModel()
        if event.rebalanced and event.kind in ("inserted", "removed", "moved"):
            self._plan_wide_changed()     # the same change redistributed the other rows' epsilons

    # -- cell helpers ---------------------------------------------------------------------------
    @staticmethod
    def _editable(stat: Statistic, key: str) -> bool:
        if key == "delta":
            return stat.kind is Kind.CUSTOM
        if key == "error":
            return stat.kind is not Kind.CUSTOM
        if key == "mechanism":
            return stat.kind is not Kind.CUSTOM
        return True

    def _raw(self, row: int, stat: Statistic, key: str) -> Any:
        if key == "delta":
            return self._privacy.delta(row)
        if key == "error":     # a target error as typed; otherwise the bound the ε_i gives
            return stat.target_error if stat.target_error is not None else self.privacy(row).shown_error
        return getattr(stat, key)

    def _display(self, row: int, stat: Statistic, key: str) -> Any:
        if key == "held":
            return ""               # the check box and the drawn pin say it
        if key == "kind":
            return stat.kind.label
        if key == "mechanism":
            return "—" if stat.kind is Kind.CUSTOM else noise_words(stat)
        if key == "epsilon":
            return formatting.upper(stat.epsilon)
        if key == "delta":
            d = self._privacy.delta(row)
            return "0" if d == 0 else formatting.upper(d, 3)
        if key == "error":
            p = self.privacy(row)
            if p.problem:
                return "⚠"
            if p.error is None:
                return "—"
            # An error bound is an upper bound too: rounded up, with its units (one group's).
            text = formatting.error_with_units(p.shown_error, p.units)
            return f"{text} per group" if stat.group_by else text
        if key == "weight":
            return f"{stat.weight:g}"
        if key == "repetitions":
            return str(stat.repetitions)
        return getattr(stat, key)


@cache
def _bold() -> QFont:
    font = QFont()
    font.setBold(True)
    return font


@cache
def _grey() -> QBrush:
    """The text of a cell that is computed, not typed."""
    return QBrush(QColor(128, 128, 128))
