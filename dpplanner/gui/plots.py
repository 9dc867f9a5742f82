"""The three plots: total epsilon against k (here), the privacy profile delta(eps)
(``profile_plot``), per-statistic shares and errors (``shares_plot``).

Views only: each takes finished numbers (an engine Curve / Profile, or per-row values) and draws
them. Nothing here computes a composition.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QGraphicsItem, QHBoxLayout, QLabel, QRadioButton,
                               QSpinBox, QWidget)

from dpplanner.gui import formatting, theme as themes
from dpplanner.gui.cost_curves import LATE_OPACITY, TheoremCurves
from dpplanner.gui.curve_paint import CurvePaint
from dpplanner.gui.fitted_label import FittedLabel
from dpplanner.gui.formatting import as_caption, as_plain
from dpplanner.gui.lazy_canvas import LazyCanvas
from dpplanner.gui.profile_plot import ProfilePlot
from dpplanner.gui.shares_plot import SharesPlot
from dpplanner.gui.turns import Turns
from dpplanner.model.safe_text import markup

# pyqtgraph and plot_common (built on it) are imported with the first canvas (gui/lazy_canvas.py).

__all__ = ["CostPlot", "ProfilePlot", "SharesPlot", "K_MAX_LIMIT"]

K_MAX_LIMIT = 100_000
#: Room above the highest curve (or ε_g) so the ε_g label is never cut at the top.
_HEADROOM = 1.12


class CostPlot(CurvePaint, TheoremCurves, LazyCanvas):
    """Total epsilon against k, one curve per theorem, with the plan's k and eps_g marked.

    The view is framed from the data, not left to pyqtgraph's auto-range: k from the first to the
    last query (whole-number ticks), total ε from 0 to above the highest curve and ε_g, so a flat
    curve of one statistic is a line, not 0.2500000-0.2500015, and an empty plan resets the frame.

    The options (mode, largest k, log k, hidden curves) and the data are kept from the start; the
    pyqtgraph canvas is built after the window's first paint, or when a curve is first drawn.
    The curves themselves (one per theorem, their styling, legend entries and hiding) are
    ``TheoremCurves`` (gui/cost_curves.py).
    """

    CANVAS = frozenset({"view", "legend", "plot_item", "k_line", "budget_line", "hover_line",
                        "budget_label"})
    BUILD_WHEN_SHOWN = False        # the first tab: built once the table has been painted

    optionsChanged = Signal()
    hiddenChanged = Signal(list)
    logKChanged = Signal(bool)

    def __init__(self, parent: QWidget | None = None, turns: Turns | None = None) -> None:
        super().__init__(parent)
        self._theme = themes.current()
        # A result's curves are painted on a turn of their own (gui/curve_paint.py); the window's
        # pieces share one queue, one piece a turn.
        self._init_paint(turns if turns is not None else Turns(self))
        self._init_curves()
        self._legend_fitted: tuple = ()         # (legend edits, width) it was last fitted to
        self._ks = np.zeros(0)
        self._upper: dict[str, np.ndarray] = {}
        self._plan_k: int | None = None
        self._epsilon_g: float | None = None
        self._repeat_name = ""
        self._budget_moved = QTimer(self, singleShot=True, interval=0)
        self._budget_moved.timeout.connect(self._draw_moved_budget)

        # Two lines at most, whatever the number of curves: a read-out as wide as its text would
        # raise the window's minimum width (FittedLabel); the whole text is in its tooltip.
        self.readout = FittedLabel(" ", lines=2, tip=(
            "Total ε of the plan against the number of queries k, one curve per theorem; here, "
            "every curve's value at the k under the mouse pointer. Click a legend entry to hide or "
            "show its curve."))
        self.readout.setAccessibleName("Cost plot read-out")

        self.prefix_button = QRadioButton("plan prefixes")
        self.prefix_button.setToolTip("Plot the total ε of the first k statistics of the plan, in order.")
        self.repeat_button = QRadioButton("repeat one query")
        self.repeat_button.setToolTip("Plot the total ε of the selected statistic repeated k times.")
        self.prefix_button.setChecked(True)
        self._mode_group = QButtonGroup(self)
        self._mode_group.addButton(self.prefix_button)
        self._mode_group.addButton(self.repeat_button)
        self.log_k = QCheckBox("log k")
        self.log_k.setToolTip("A logarithmic k axis: small and large numbers of queries side by side.")
        self.k_max = QSpinBox()
        self.k_max.setRange(0, K_MAX_LIMIT)
        self.k_max.setSpecialValueText("plan's k")
        self.k_max.setToolTip("Largest k on the plot (\"plan's k\": as many queries as the plan has).")
        self.k_max.setAccessibleName("Largest k on the plot")
        self.k_max.setKeyboardTracking(False)
        self.prefix_button.toggled.connect(self._on_mode_toggled)
        self.k_max.valueChanged.connect(lambda _value: self.optionsChanged.emit())
        self.log_k.toggled.connect(self._on_log_toggled)

        controls = QHBoxLayout()
        controls.addWidget(self.prefix_button)
        controls.addWidget(self.repeat_button, 1)
        controls.addWidget(self.log_k)
        controls.addWidget(QLabel("k up to"))
        controls.addWidget(self.k_max)
        self._lay_out(self.readout, controls)

    def _build_canvas(self) -> None:
        import pyqtgraph as pg

        from dpplanner.gui.plot_common import IntegerAxis, legend_row

        self.view = pg.GraphicsLayoutWidget()
        about = ("Total ε of the plan against the number of queries k, one curve per theorem. "
                 "Click a legend entry to hide or show its curve.")
        self.view.setWhatsThis(about)
        self.view.setAccessibleName("Cost against k plot")
        self.view.setAccessibleDescription(about)
        self.legend = legend_row(self.view, self._theme)
        self.plot_item = self.view.addPlot(row=1, col=0, axisItems={"bottom": IntegerAxis("bottom")})
        self.plot_item.setLabel("left", "total ε")
        self.plot_item.setMenuEnabled(False)
        for name in ("left", "bottom"):     # (their tick labels: ~5 ms of each paint)
            self.plot_item.getAxis(name).setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self.k_line = pg.InfiniteLine(angle=90, movable=False)
        self.budget_line = pg.InfiniteLine(angle=0, movable=False)
        self.hover_line = pg.InfiniteLine(angle=90, movable=False)
        for line in (self.k_line, self.budget_line, self.hover_line):
            self.plot_item.addItem(line, ignoreBounds=True)
        self.hover_line.hide()
        # At the line's left end, above it: the right end is where the curves' last markers are.
        self.budget_label = pg.TextItem(anchor=(0, 1))
        self.plot_item.addItem(self.budget_label, ignoreBounds=True)
        self._place_canvas(self.view)
        self.view.viewport().installEventFilter(self)     # (curve_paint.py: paints held back)
        # The view paints every pixel it is asked to (its background brush first); without this Qt
        # fills the background into the window's backing store before each Paint event, and a
        # paint held back was flushed to the screen as an empty plot for a frame.
        self.view.viewport().setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent)
        self.view.scene().sigMouseMoved.connect(self._on_mouse_moved)
        # What was set before the canvas existed.
        self.plot_item.setLogMode(x=self.log_k.isChecked(), y=False)
        self._label_axis()
        self.apply_theme(self._theme)
        self._draw_budget()
        self._frame()
        # A curve per theorem, each made in a turn of the event loop of its own, not with a result.
        QTimer.singleShot(0, self, self._make_spares)

    # -- options ------------------------------------------------------------------------------
    def mode(self) -> str:
        return "repeat" if self.repeat_button.isChecked() else "prefix"

    def set_mode(self, mode: str) -> None:
        (self.repeat_button if mode == "repeat" else self.prefix_button).setChecked(True)

    def k_limit(self) -> int | None:
        return self.k_max.value() or None

    def set_repeat_statistic(self, name: str) -> None:
        """Name the statistic "repeat one query" repeats (the table's selection)."""
        if name == self._repeat_name:
            return          # (named again after every edit: a tooltip event and the axis looked at)
        self._repeat_name = name
        short = name if len(name) <= 24 else name[:23] + "…"
        self.repeat_button.setText(as_caption(f"repeat “{short}”") if name else "repeat one query")
        self.repeat_button.setToolTip(as_plain(
            f"Plot the total ε of “{name}” released k times (select another statistic in the "
            "table to change it)." if name else "Plot the total ε of the selected statistic repeated k times."))
        self._label_axis()

    # -- data ---------------------------------------------------------------------------------
    def set_curve(self, curve, plan_k: int | None, epsilon_g: float | None) -> None:
        """Draw an engine Curve; ``plan_k`` and ``epsilon_g`` place the two marker lines. Drawn on
        the turn of the event loop that paints it (gui/curve_paint.py), not in the result's slot:
        the curves' data, legend and frame (~12 ms of the GUI thread while a 10,000-query plan
        opened) made that slot one of the longest stalls."""
        self.build_canvas()
        self._ks = np.asarray(curve.ks, dtype=float)
        self._upper = {name: np.asarray(values, dtype=float) for name, values in curve.upper.items()}
        self._plan_k = plan_k if plan_k is not None and plan_k > 0 else None
        self._late = False
        self._unset = True
        self._budget_moved.stop()               # drawn with the rest
        self._set_epsilon_g(epsilon_g)
        self._paint_later()

    def _draw_set(self) -> None:
        """Draw what set_curve kept (on the curves' turn)."""
        self._unset = False
        self._draw_curves()
        self.hover_line.hide()
        note = self._coincide_note()
        if self.readout.text() != note:     # (a new text repaints the controls beneath the plot)
            self.readout.setText(note)
        self._draw_budget()
        self._fade(LATE_OPACITY if self._late else 1.0)
        self._frame()

    def set_budget(self, epsilon_g: float | None) -> None:
        """Mark ε_g. The window calls this on every plan change and the result's curve brings it
        again: the view is framed again only when it moved (a frame lays the plot out again),
        a turn of the event loop later (a plan opened paints its table first)."""
        if self._set_epsilon_g(epsilon_g):
            self._budget_moved.start()

    def _set_epsilon_g(self, epsilon_g: float | None) -> bool:
        """Keep ε_g; True if it moved."""
        epsilon_g = epsilon_g if epsilon_g is not None and math.isfinite(epsilon_g) else None
        if epsilon_g == self._epsilon_g:
            return False
        self._epsilon_g = epsilon_g
        return True

    def _draw_moved_budget(self) -> None:
        self._draw_budget()
        self._frame()

    def _draw_budget(self) -> None:
        if not self.canvas_built():
            return
        if self._epsilon_g is None:
            self.budget_line.hide()
            self.budget_label.hide()
        else:
            self.budget_line.setPos(self._epsilon_g)
            self.budget_line.show()
            self.budget_label.setText(f"ε_g = {formatting.exact(self._epsilon_g)}")
            self.budget_label.show()

    def clear(self) -> None:
        if not self.canvas_built():
            self._ks, self._upper, self._plan_k = np.zeros(0), {}, None
            return
        for name in list(self.items):
            self._remove_item(name)
        self._ks = np.zeros(0)
        self._upper = {}
        self._plan_k = None
        self.hover_line.hide()
        self.readout.setText(" ")
        self._frame()

    def _coincide_note(self) -> str:
        """Curves that lie exactly on top of each other look like one: say so."""
        from dpplanner.gui.plot_common import finite_or_nan

        drawn = [finite_or_nan(self._upper[n]) for n in self.items]
        if len(drawn) > 1 and all(np.array_equal(drawn[0], d, equal_nan=True) for d in drawn[1:]):
            return "Every theorem gives the same totals here: the curves lie on top of each other."
        return " "

    def readout_at(self, k: float) -> str:
        from dpplanner.gui.plot_common import theorem_label

        if not len(self._ks):
            return ""
        j = int(np.argmin(np.abs(self._ks - k)))
        parts = [f"k = {formatting.count(self._ks[j])}"]
        for name, values in self._upper.items():
            if name not in self.items or name in self._hidden:
                continue
            text = formatting.upper(values[j])     # a total ε is an upper bound: rounded up
            parts.append(f"{theorem_label(name)} {text}")
        return "   ".join(parts)

    def x_range(self) -> tuple[float, float]:
        """The k range shown (in k, also on a log axis)."""
        (x0, x1), _ = self.plot_item.vb.viewRange()
        return (10 ** x0, 10 ** x1) if self.log_k.isChecked() else (x0, x1)

    def y_range(self) -> tuple[float, float]:
        return tuple(self.plot_item.vb.viewRange()[1])

    # -- theme --------------------------------------------------------------------------------
    def apply_theme(self, theme: themes.PlotTheme) -> None:
        self._theme = theme
        if not self.canvas_built():
            return
        import pyqtgraph as pg

        from dpplanner.gui.plot_common import style_plot

        self.view.setBackground(theme.background)
        style_plot(self.plot_item, theme)
        self.k_line.setPen(pg.mkPen(theme.marker_line, width=1, style=Qt.PenStyle.DotLine))
        self.hover_line.setPen(pg.mkPen(theme.marker_line, width=1))
        self.budget_line.setPen(pg.mkPen(theme.budget_line, width=1.5, style=Qt.PenStyle.DashLine))
        self.budget_label.setColor(theme.budget_line)
        self.legend.set_text_colour(theme.foreground)
        for name, item in self.items.items():
            self._style_item(name, item, force=True)

    # -- internals ----------------------------------------------------------------------------
    def _x(self, k: float) -> float:
        """A k as the view's x coordinate (log10 on a log axis, as pyqtgraph stores it)."""
        return math.log10(k) if self.log_k.isChecked() else k

    def _frame(self) -> None:
        """Frame k and total ε from the data, ε_g and the plan's k (see the class docstring)."""
        if not self.canvas_built():
            return
        from dpplanner.gui.plot_common import fit_legend, rounded_up

        lo, hi = (float(self._ks[0]), float(self._ks[-1])) if len(self._ks) else (1.0, 10.0)
        if self._plan_k is not None:
            lo, hi = min(lo, self._plan_k), max(hi, self._plan_k)
        if self.log_k.isChecked():
            # up to the plan's last k, not the next power of ten (6 queries: 1 to 6, not 10)
            x0, x1 = math.log10(lo), max(math.log10(hi), math.log10(lo) + math.log10(2))
            pad = 0.03 * (x1 - x0)
        else:
            x0, x1 = lo, hi
            pad = 0.5 if hi - lo < 10 else 0.02 * (hi - lo)    # whole queries, never k = -2
        tops = [float(np.nanmax(v)) for n, v in self._upper.items()
                if n in self.items and n not in self._hidden and np.isfinite(v).any()]
        tops = [t for t in tops if math.isfinite(t)]
        if self._epsilon_g is not None:
            tops.append(self._epsilon_g)
        top = rounded_up(max(tops) * _HEADROOM) if tops and max(tops) > 0 else 1.0
        self.plot_item.vb.setRange(xRange=(x0 - pad, x1 + pad), yRange=(0.0, top), padding=0)
        if self._plan_k is not None:
            self.k_line.setPos(self._x(self._plan_k))
            self.k_line.show()
        else:
            self.k_line.hide()
        self.budget_label.setPos(x0 - pad, self._epsilon_g or 0.0)   # left edge, inside the view
        fitted = (self._legend_edits, self.view.width())
        if fitted != self._legend_fitted:       # (a refit lays the legend out again: ~1 ms an edit)
            self._legend_fitted = fitted
            fit_legend(self.legend, self.view)

    def _label_axis(self) -> None:
        if not self.canvas_built():
            return
        if self.mode() == "repeat" and self._repeat_name:
            # pyqtgraph draws an axis label as HTML: the name is escaped to show as typed
            label = f"k (times “{markup(self._repeat_name)}” is released)"
        else:
            label = "k (number of queries)"
        if self.plot_item.getAxis("bottom").labelText != label:    # (each one lays the axis out)
            self.plot_item.setLabel("bottom", label)

    def _on_mode_toggled(self, _checked: bool) -> None:
        self._label_axis()
        self.optionsChanged.emit()

    def _on_log_toggled(self, checked: bool) -> None:
        if self.canvas_built():
            self.plot_item.setLogMode(x=checked, y=False)
            self.hover_line.hide()
            self._frame()
        self.logKChanged.emit(checked)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if not self.canvas_built():
            return
        from dpplanner.gui.plot_common import fit_legend

        self._legend_fitted = (self._legend_edits, self.view.width())
        fit_legend(self.legend, self.view)

    def _on_mouse_moved(self, pos) -> None:
        if not len(self._ks) or not self.plot_item.sceneBoundingRect().contains(pos):
            return
        x = self.plot_item.vb.mapSceneToView(pos).x()
        k = 10 ** x if self.log_k.isChecked() else x
        if k < self._ks[0] - 0.5 or k > self._ks[-1] + 0.5:
            self.hover_line.hide()
            return
        j = int(np.argmin(np.abs(self._ks - k)))
        self.hover_line.setPos(self._x(self._ks[j]))
        self.hover_line.show()
        self.readout.setText(self.readout_at(self._ks[j]))
