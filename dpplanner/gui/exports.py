"""File > Import and Export: statistics from and to CSV, the HTML report, the plot shown, the
OpenDP release script."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QTabWidget, QWidget

from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.evaluation import Evaluation
from dpplanner.gui.plots import export_item
from dpplanner.model import csvio, report
from dpplanner.release import export_script


class Exports(QObject):
    message = Signal(str, int, bool)        # text, timeout in ms, is an error (status bar)
    error = Signal(str, str)                # title, text (status bar and a warning box)

    def __init__(self, window: QWidget, editor: PlanEditor, evaluation: Evaluation,
                 plots: QTabWidget) -> None:
        super().__init__(window)
        self.window = window
        self.editor = editor
        self.plan = editor.plan
        self.evaluation = evaluation
        self.plots = plots
        self._last_plot = None
        plots.currentChanged.connect(lambda _i: self.shown_plot())

    def import_csv_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self.window, "Import statistics from CSV", "", "CSV files (*.csv)")
        if name:
            self.import_csv(name)

    def import_csv(self, path: str | Path) -> bool:
        try:
            stats = csvio.load_csv(path, self.plan.budget)
        except (OSError, ValueError) as exc:
            self.error.emit("Cannot import the CSV file", str(exc))
            return False
        return self.editor.replace_all(stats, f"Import {Path(path).name}")

    def export_csv_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self.window, "Export statistics to CSV", "", "CSV files (*.csv)")
        if name:
            self._export(lambda: csvio.save_csv(self.plan, name), name)

    def export_report_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self.window, "Export report", "", "HTML files (*.html)")
        if name:
            self.export_report(name)

    def export_report(self, path: str | Path) -> bool:
        kwargs = {}
        last = self.evaluation.last_result
        if last is not None and self.evaluation.result_is_current(last):
            # Reuse what the worker computed instead of composing again on the GUI thread.
            kwargs = dict(totals=last.totals, best=last.best)
            if last.request.curve_mode == "prefix" and last.curve is not None:
                kwargs["curve"] = last.curve
        return self._export(lambda: report.save_report(self.plan, path, **kwargs), path)

    def export_plot_dialog(self) -> None:
        name, chosen = QFileDialog.getSaveFileName(self.window, "Export plot", "", "PNG image (*.png);;SVG image (*.svg)")
        if name:
            if not Path(name).suffix:
                name += ".svg" if "svg" in chosen else ".png"
            self.export_plot(name)

    def shown_plot(self):
        """The plot tab shown, or the last one shown while another tab (the statistic) is."""
        widget = self.plots.currentWidget()
        if hasattr(widget, "view"):
            self._last_plot = widget
        return self._last_plot or self.plots.widget(0)

    def export_plot(self, path: str | Path) -> bool:
        item = self.shown_plot().view.ci        # the whole layout: plot, legend row and axes
        return self._export(lambda: export_item(item, path), path)

    def export_release_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self.window, "Export release script", "release.py",
                                              "Python scripts (*.py)")
        if name:
            self.export_release(name)

    def export_release(self, path: str | Path) -> bool:
        """Write the release script (a plan OpenDP cannot release as it is is refused with the
        reasons, nothing written)."""
        if not self._export(lambda: export_script(self.plan, path), path):
            return False
        customs = sum(1 for s in self.plan if s.kind.value == "custom")
        if customs:
            self.message.emit(f"Wrote {path}: fill in its {customs} custom statistic(s) before "
                              "running it", 10000, False)
        return True

    def _export(self, write: Callable[[], Optional[str]], path) -> bool:
        try:
            note = write()
        except (OSError, ValueError) as exc:
            self.error.emit("Export failed", str(exc))
            return False
        self.message.emit(f"Wrote {path}" + (f". Note: {note}." if note else ""),
                          15000 if note else 5000, False)
        return True
