"""The three plots: total epsilon against k (here), the privacy profile delta(eps)
(``profile_plot``), per-statistic shares and errors (``shares_plot``).

Views only: each takes finished numbers (an engine Curve / Profile, or per-row values) and draws
them. Nothing here computes a composition.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QButtonGroup, QHBoxLayout, QLabel, QRadioButton, QSpinBox, QVBoxLayout, QWidget,
)

from dpplanner.gui import formatting
from dpplanner.gui import theme as themes
from dpplanner.gui.plot_common import curve_pen, export_item, finite_or_nan, style_plot, theorem_label
from dpplanner.gui.profile_plot import ProfilePlot
from dpplanner.gui.shares_plot import SharesPlot

__all__ = ["CostPlot", "ProfilePlot", "SharesPlot", "export_item", "K_MAX_LIMIT"]

K_MAX_LIMIT = 100_000


class CostPlot(QWidget):
    """Total epsilon against k, one curve per theorem, with the plan's k and eps_g marked."""

    optionsChanged = Signal()
    hiddenChanged = Signal(list)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._theme = themes.current()
        self.view = pg.PlotWidget(background=self._theme.background)
        self.view.setToolTip("Total ε of the plan against the number of queries k, one curve per "
                             "theorem. Click a legend entry to hide or show its curve.")
        self.plot_item: pg.PlotItem = self.view.getPlotItem()
        self.plot_item.setLabel("left", "total ε")
        self.plot_item.setLabel("bottom", "k (number of queries)")
        # Bottom right: every curve rises with k, so that corner stays empty.
        self.legend = self.plot_item.addLegend(offset=(-10, -10), labelTextColor=self._theme.foreground)
        self.items: dict[str, pg.PlotDataItem] = {}
        self._hidden: set[str] = set()
        self._ks = np.zeros(0)
        self._upper: dict[str, np.ndarray] = {}

        self.k_line = pg.InfiniteLine(angle=90, movable=False)
        self.budget_line = pg.InfiniteLine(angle=0, movable=False)
        self.hover_line = pg.InfiniteLine(angle=90, movable=False)
        for line in (self.k_line, self.budget_line, self.hover_line):
            self.plot_item.addItem(line, ignoreBounds=True)
        self.hover_line.hide()
        self.budget_label = pg.TextItem(anchor=(1, 1))
        self.plot_item.addItem(self.budget_label, ignoreBounds=True)

        self.readout = QLabel(" ")
        self.readout.setToolTip("Values of every curve at the k under the mouse pointer.")
        self.readout.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        self.prefix_button = QRadioButton("plan prefixes")
        self.prefix_button.setToolTip("Plot the total ε of the first k statistics of the plan, in order.")
        self.repeat_button = QRadioButton("repeat one query")
        self.repeat_button.setToolTip("Plot the total ε of the selected statistic repeated k times.")
        self.prefix_button.setChecked(True)
        self._mode_group = QButtonGroup(self)
        self._mode_group.addButton(self.prefix_button)
        self._mode_group.addButton(self.repeat_button)
        self.k_max = QSpinBox()
        self.k_max.setRange(0, K_MAX_LIMIT)
        self.k_max.setSpecialValueText("plan's k")
        self.k_max.setPrefix("")
        self.k_max.setToolTip("Largest k on the plot (\"plan's k\": as many queries as the plan has).")
        self.k_max.setKeyboardTracking(False)
        self.prefix_button.toggled.connect(lambda _checked: self.optionsChanged.emit())
        self.k_max.valueChanged.connect(lambda _value: self.optionsChanged.emit())

        controls = QHBoxLayout()
        controls.addWidget(self.prefix_button)
        controls.addWidget(self.repeat_button)
        controls.addStretch(1)
        controls.addWidget(QLabel("k up to"))
        controls.addWidget(self.k_max)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 1)
        layout.addWidget(self.readout)
        layout.addLayout(controls)

        self.view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        self.apply_theme(self._theme)

    # -- options ------------------------------------------------------------------------------
    def mode(self) -> str:
        return "repeat" if self.repeat_button.isChecked() else "prefix"

    def set_mode(self, mode: str) -> None:
        (self.repeat_button if mode == "repeat" else self.prefix_button).setChecked(True)

    def k_limit(self) -> int | None:
        return self.k_max.value() or None

    def hidden(self) -> list[str]:
        return sorted(self._hidden)

    def set_hidden(self, names: Sequence[str]) -> None:
        self._hidden = set(names)
        for name, item in self.items.items():
            item.setVisible(name not in self._hidden)

    # -- data ---------------------------------------------------------------------------------
    def set_curve(self, curve, plan_k: int | None, epsilon_g: float | None) -> None:
        """Draw an engine Curve; ``plan_k`` and ``epsilon_g`` place the two marker lines."""
        self._ks = np.asarray(curve.ks, dtype=float)
        self._upper = {name: np.asarray(values, dtype=float) for name, values in curve.upper.items()}
        for name in list(self.items):
            if name not in self._upper:
                self._remove_item(name)
        for name, values in self._upper.items():
            if np.all(np.isnan(values)):        # never applicable (kov on unequal queries)
                if name in self.items:
                    self._remove_item(name)
                continue
            item = self.items.get(name)
            if item is None:
                item = self._add_item(name)
            item.setData(self._ks, finite_or_nan(values), connect="finite")
        if plan_k is not None and plan_k > 0:
            self.k_line.setPos(plan_k)
            self.k_line.show()
        else:
            self.k_line.hide()
        self.set_budget(epsilon_g)
        self.hover_line.hide()
        self.readout.setText(" ")

    def set_budget(self, epsilon_g: float | None) -> None:
        if epsilon_g is None or not math.isfinite(epsilon_g):
            self.budget_line.hide()
            self.budget_label.hide()
            return
        self.budget_line.setPos(epsilon_g)
        self.budget_line.show()
        self.budget_label.setText(f"ε_g = {formatting.exact(epsilon_g)}")
        x_end = float(self._ks[-1]) if len(self._ks) else 1.0
        self.budget_label.setPos(x_end, epsilon_g)
        self.budget_label.show()

    def clear(self) -> None:
        for name in list(self.items):
            self._remove_item(name)
        self._ks = np.zeros(0)
        self._upper = {}

    def curve_data(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """What is drawn for one theorem (x = k, y = total ε; nan where nothing is drawn)."""
        x, y = self.items[name].getData()
        return np.asarray(x), np.asarray(y)

    def readout_at(self, k: float) -> str:
        if not len(self._ks):
            return ""
        j = int(np.argmin(np.abs(self._ks - k)))
        parts = [f"k = {int(self._ks[j])}"]
        for name, values in self._upper.items():
            if name not in self.items or name in self._hidden:
                continue
            v = values[j]
            text = formatting.upper(v)     # a total ε is an upper bound: rounded up
            parts.append(f"{theorem_label(name)} {text}")
        return "   ".join(parts)

    # -- theme --------------------------------------------------------------------------------
    def apply_theme(self, theme: themes.PlotTheme) -> None:
        self._theme = theme
        self.view.setBackground(theme.background)
        style_plot(self.plot_item, theme)
        self.k_line.setPen(pg.mkPen(theme.marker_line, width=1, style=Qt.PenStyle.DotLine))
        self.hover_line.setPen(pg.mkPen(theme.marker_line, width=1))
        self.budget_line.setPen(pg.mkPen(theme.budget_line, width=1.5, style=Qt.PenStyle.DashLine))
        self.budget_label.setColor(theme.budget_line)
        self.legend.setLabelTextColor(theme.foreground)
        for name, item in self.items.items():
            item.setPen(curve_pen(theme, name))

    # -- internals ----------------------------------------------------------------------------
    def _add_item(self, name: str) -> pg.PlotDataItem:
        item = self.plot_item.plot([], [], pen=curve_pen(self._theme, name), name=theorem_label(name))
        item.setVisible(name not in self._hidden)
        # The legend's click toggles visibility; remember it so the choice survives redraws.
        item.visibleChanged.connect(lambda n=name, it=item: self._on_visibility(n, it))
        self.items[name] = item
        return item

    def _remove_item(self, name: str) -> None:
        item = self.items.pop(name)
        self.legend.removeItem(item)
        self.plot_item.removeItem(item)

    def _on_visibility(self, name: str, item: pg.PlotDataItem) -> None:
        before = set(self._hidden)
        if item.isVisible():
            self._hidden.discard(name)
        else:
            self._hidden.add(name)
        if before != self._hidden:
            self.hiddenChanged.emit(sorted(self._hidden))

    def _on_mouse_moved(self, pos) -> None:
        if not len(self._ks) or not self.plot_item.sceneBoundingRect().contains(pos):
            return
        k = self.plot_item.vb.mapSceneToView(pos).x()
        if k < self._ks[0] - 0.5 or k > self._ks[-1] + 0.5:
            self.hover_line.hide()
            return
        j = int(np.argmin(np.abs(self._ks - k)))
        self.hover_line.setPos(self._ks[j])
        self.hover_line.show()
        self.readout.setText(self.readout_at(self._ks[j]))
