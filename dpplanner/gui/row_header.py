"""The statistics table's row numbers, measured by how many digits they have.

Qt sizes a table's row header from the contents of its first and last hundred sections, asking
the model for four roles of each, every time the rows or the view's geometry change: opening a
plan of thousands of statistics asked ~1800 times through Python, four times over (~9 ms of the
GUI thread each). Numbers with as many digits measure alike (a font's digits share one width), so
one number of each length is measured, once per font and style.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QHeaderView, QWidget


class RowHeader(QHeaderView):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(Qt.Orientation.Vertical, parent)
        # as QTableView sets up the row header it makes itself
        self.setSectionsClickable(True)
        self.setHighlightSections(True)
        self._sizes: dict[int, QSize] = {}      # digits -> the size of a number that long

    def sectionSizeFromContents(self, logical_index: int) -> QSize:     # noqa: N802  (Qt's name)
        digits = len(str(logical_index + 1))
        size = self._sizes.get(digits)
        if size is None:
            size = self._sizes[digits] = super().sectionSizeFromContents(logical_index)
        return size

    def changeEvent(self, event) -> None:       # noqa: N802  (Qt's name)
        if event.type() in (QEvent.Type.FontChange, QEvent.Type.StyleChange):
            self._sizes.clear()
        super().changeEvent(event)
