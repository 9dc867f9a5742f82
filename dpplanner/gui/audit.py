"""What a person checks on a screen of the window, as code: the screenshot suite runs it on every
size, colour scheme, example plan and state (tools/screenshot.py --suite and the GUI tests).

- every control a person can use has a name a screen reader says (its accessible name, or for a
  button or a check box its own text);
- no text is cut: a label or a button at least as wide as its text needs, a combo box as wide as
  its current choice, the statistics table's kind, noise and number cells and the tab titles
  whole;
- every refusal or warning label shown is read in full: tall enough for all its lines and not
  cut off by the panels around it;
- the plots' axes show their values as they are (never scaled by an SI prefix: 0.6 read as 600).

Each check returns a list of problems in words (empty: nothing to fix).
"""

from __future__ import annotations

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import (
    QAbstractButton, QAbstractItemView, QAbstractSpinBox, QComboBox, QGraphicsView, QHeaderView,
    QLabel, QLineEdit, QMainWindow, QPlainTextEdit, QScrollBar, QTabBar, QTableView, QWidget,
)

from dpplanner.gui.fitted_label import FittedLabel, WrappingLabel

#: Pixels a text may overhang before it counts as cut (anti-aliasing, style margins).
SLACK = 2


def shown(widget: QWidget) -> bool:
    return widget.isVisible() and widget.width() > 0 and widget.height() > 0


def describe(widget: QWidget) -> str:
    name = widget.accessibleName() or widget.objectName() or getattr(widget, "text", lambda: "")()
    return f"{type(widget).__name__} {name!r}"


def _inside_composite(widget: QWidget) -> bool:
    """Parts of another control (a spin box's or a combo box's line edit, a view's scroll bar)."""
    parent = widget.parentWidget()
    while parent is not None:
        if isinstance(parent, (QAbstractSpinBox, QComboBox)):
            return True
        parent = parent.parentWidget()
    return False


def unnamed_controls(root: QWidget) -> list[str]:
    """Controls a screen reader would announce without a name."""
    kinds = (QLineEdit, QComboBox, QAbstractSpinBox, QAbstractItemView, QTabBar, QGraphicsView,
             QPlainTextEdit, QAbstractButton)
    problems = []
    for widget in root.findChildren(QWidget):
        if not isinstance(widget, kinds) or isinstance(widget, (QHeaderView, QScrollBar)):
            continue
        if not shown(widget) or _inside_composite(widget):
            continue
        if widget.accessibleName().strip():
            continue
        if isinstance(widget, QAbstractButton) and widget.text().replace("&", "").strip():
            continue            # a button is announced by its text
        problems.append(f"{describe(widget)} has no accessible name")
    return problems


def cut_texts(root: QWidget) -> list[str]:
    """Labels, buttons, combo boxes and tabs narrower than their text."""
    problems = []
    for widget in root.findChildren(QWidget):
        if not shown(widget) or _inside_composite(widget):
            continue
        if isinstance(widget, QLabel) and not isinstance(widget, (FittedLabel, WrappingLabel)):
            if widget.wordWrap() or not widget.text().strip():
                continue
            if widget.width() + SLACK < widget.minimumSizeHint().width():
                problems.append(f"{describe(widget)} is {widget.width()} px wide, its text needs "
                                f"{widget.minimumSizeHint().width()} px")
        elif isinstance(widget, QAbstractButton) and widget.text().strip():
            if widget.width() + SLACK < widget.minimumSizeHint().width():
                problems.append(f"{describe(widget)} is {widget.width()} px wide, its text needs "
                                f"{widget.minimumSizeHint().width()} px")
        elif isinstance(widget, QComboBox) and widget.currentText():
            need = widget.fontMetrics().horizontalAdvance(widget.currentText()) + 24
            if widget.width() + SLACK < need:
                problems.append(f"{describe(widget)} shows {widget.currentText()!r} in "
                                f"{widget.width()} px, which needs {need} px")
        elif isinstance(widget, QTabBar):
            for i in range(widget.count()):
                text = widget.tabText(i).replace("&&", "&")
                need = widget.fontMetrics().horizontalAdvance(text)
                if widget.tabRect(i).width() < need:
                    problems.append(f"tab {text!r} is cut ({widget.tabRect(i).width()} px for {need} px)")
    return problems


def cut_cells(view: QTableView, columns: list[int]) -> list[str]:
    """Cells of ``columns`` on screen whose text is wider than the column (so elided)."""
    problems = []
    model, metrics = view.model(), view.fontMetrics()
    top = view.rowAt(0)
    if top < 0 or not shown(view):
        return problems
    bottom = view.rowAt(view.viewport().height() - 1)
    bottom = model.rowCount() - 1 if bottom < 0 else bottom
    for column in columns:
        if view.isColumnHidden(column):
            continue
        for row in range(top, bottom + 1):
            text = str(model.index(row, column).data() or "")
            need = metrics.horizontalAdvance(text) + 8
            if text and view.columnWidth(column) < need:
                title = model.headerData(column, Qt.Orientation.Horizontal)
                problems.append(f"row {row + 1}, column {title!r}: {text!r} needs {need} px, "
                                f"has {view.columnWidth(column)}")
    return problems


def scaled_axes(plots) -> list[str]:
    """Plot axes whose numbers are shown scaled (0.6 read as 600): no axis here has units."""
    problems = []
    for plot in plots:
        for name in ("left", "bottom"):
            axis = plot.getAxis(name)
            if axis.isVisible() and axis.autoSIPrefixScale != 1.0:
                problems.append(f"the {name} axis of {plot.getAxis(name).labelText!r} shows its "
                                f"values times {axis.autoSIPrefixScale:g}")
    return problems


def hidden_lines(root: QWidget, labels: list[QLabel]) -> list[str]:
    """Labels shown whose text is not all on screen: too short for their lines, or cut off by a
    panel around them."""
    problems = []
    window = root.window()
    for label in labels:
        if not shown(label) or not label.text().strip():
            continue
        if label.wordWrap() and label.height() < label.heightForWidth(label.width()):
            problems.append(f"{describe(label)} shows {label.height()} px of the "
                            f"{label.heightForWidth(label.width())} px its text needs")
            continue
        rect = QRect(label.mapTo(window, label.rect().topLeft()), label.size())
        parent = label.parentWidget()
        while parent is not None and parent is not window:
            box = QRect(parent.mapTo(window, parent.rect().topLeft()), parent.size())
            if not box.contains(rect):
                problems.append(f"{describe(label)} is cut off by {describe(parent)}")
                break
            parent = parent.parentWidget()
    return problems


def refusal_labels(window: QMainWindow) -> list[QLabel]:
    """The labels that give reasons: every field's, the budget panel's, the table's."""
    from dpplanner.gui.fields import RuleField

    labels = [f.message for f in window.findChildren(RuleField)]
    labels += [window.budget_panel.message, window.budget_panel.assumption,
               window.statistics_panel.refusal]
    return labels


def audit(window: QMainWindow) -> list[str]:
    """Everything above, for the whole window."""
    from dpplanner.gui.table_model import COLUMN_INDEX

    table = window.statistics_panel.view
    columns = [COLUMN_INDEX[k] for k in ("kind", "mechanism", "epsilon", "delta", "error")]
    plots = [window.cost_plot.plot_item, window.profile_plot.plot_item,
             window.shares_plot.share_plot, window.shares_plot.error_plot]
    return (unnamed_controls(window) + cut_texts(window) + cut_cells(table, columns)
            + hidden_lines(window, refusal_labels(window)) + scaled_axes(plots)
            + cut_legends([window.cost_plot.view, window.profile_plot.view, window.shares_plot.view]))


def cut_legends(views) -> list[str]:
    """Plots, and legend entries, that run past the right edge of their view."""
    import pyqtgraph as pg

    problems = []
    for view in views:
        if not shown(view):
            continue
        right = view.mapToScene(view.viewport().rect()).boundingRect().right()
        if view.ci.sceneBoundingRect().right() > right + SLACK:
            problems.append(f"the plot {view.accessibleName()!r} is wider than its tab: its right "
                            "end is cut off")
        for item in view.ci.items:
            if isinstance(item, pg.LegendItem) and item.isVisible():
                for _sample, label in item.items:
                    if label.sceneBoundingRect().right() > right + SLACK:
                        problems.append(f"the legend entry {label.text!r} runs past the plot's edge")
    return problems
