
from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QFileDialog, QTabWidget, QWidget

from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.evaluation import Evaluation
from dpplanner.gui.inline_message import InlineMessage


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
        self._folder: Path | None = None        # where the last export or import went
        #: Why the last export was refused, in full (the window places it above its panels).
        self.refusal = InlineMessage(self.plan, "Why the export was refused")
        plots.currentChanged.connect(lambda _i: self.shown_plot())

    def suggested(self, ending: str = "") -> str:
        """Where a file dialog starts: the plan's folder and name, plus ``ending``."""
        document = self.window.document
        if document.path is not None:
            folder, stem = document.path.parent, document.path.stem
        else:
            folder = self._folder or document.start_folder()
            stem = document.display_name.removesuffix(" (example)").removesuffix(" (recovered)")
        return str(folder / f"{stem}{ending}") if ending else str(folder)

    def _chosen(self, name: str) -> str:
        if name:
            self._folder = Path(name).parent
        return name

    def import_csv_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self.window, "Import statistics from CSV",
                                              self.suggested(), "CSV files (*.csv)")
        if self._chosen(name):
            self.import_csv(name)

    def import_csv(self, path: str | Path) -> bool:
        from dpplanner.model import csvio      # (the exports' modules: not at start-up)

        try:
            stats = csvio.load_csv(path, self.plan.budget)
        except (OSError, ValueError) as exc:
            self.error.emit("Cannot import the CSV file", str(exc))
            return False
        return self.editor.replace_all(stats, f"Import {Path(path).name}")

    def export_csv_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self.window, "Export statistics to CSV",
                                              self.suggested(".csv"), "CSV files (*.csv)")
        if self._chosen(name):
            from dpplanner.model import csvio

            self._export(lambda: csvio.save_csv(self.plan, name), name)

    def export_report_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self.window, "Export report",
                                              self.suggested("-report.html"), "HTML files (*.html)")
        if self._chosen(name):
            self.export_report(name)

    def export_report(self, path: str | Path) -> bool:
        kwargs = {}
        last = self.evaluation.last_result
        if last is not None and self.evaluation.result_is_current(last):
            # Reuse what the worker computed instead of composing again on the GUI thread.
            kwargs = dict(totals=last.totals, best=last.best)
            if last.request.curve_mode == "prefix" and last.curve is not None:
                kwargs["curve"] = last.curve
        from dpplanner.model import report

        return self._export(lambda: report.save_report(self.plan, path, **kwargs), path)

    def export_plot_dialog(self) -> None:
        title = self.plots.tabText(self.plots.indexOf(self.shown_plot())).replace("&&", "and")
        slug = "-".join(title.lower().replace("and", " ").split())
        name, chosen = QFileDialog.getSaveFileName(self.window, "Export plot", self.suggested(f"-{slug}.png"),
                                                   "PNG image (*.png);;SVG image (*.svg)")
        if self._chosen(name):
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
        from dpplanner.gui.svg_export import export_plot      # (pyqtgraph: not at start-up)

        view = self.shown_plot().view           # the whole layout: plot, legend row and axes
        return self._export(lambda: export_plot(view, path), path)

    def export_release_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self.window, "Export release script",
                                              self.suggested("-release.py"), "Python scripts (*.py)")
        if self._chosen(name):
            self.export_release(name)

    def export_release(self, path: str | Path) -> bool:
        """Write the release script (a plan OpenDP cannot release as it is is refused with the
        reasons, nothing written)."""
        from dpplanner.release import export_script

        if not self._export(lambda: export_script(self.plan, path), path):
            return False
        customs = sum(1 for s in self.plan if s.kind.value == "custom")
        if customs:
            self.message.emit(f"Wrote {path}: fill in its {customs} custom statistic(s) before "
                              "running it", 10000, False)
        return True

    def _export(self, write: Callable[[], Optional[str]], path) -> bool:
        from dpplanner.release import ExportError

        self.refusal.dismiss()
        try:
            note = write()
        except ExportError as exc:
            # the plan as it is cannot be exported: a refusal, said in the status bar and in full
            # above the panels, as an edit's is, without a box that blocks the window
            text = f"Not exported: {exc}"
            self.refusal.say(text)
            self.message.emit(text, 15000, True)
            return False
        except (OSError, ValueError) as exc:        # the file could not be written
            self.error.emit("Export failed", str(exc))
            return False
        self.message.emit(f"Wrote {path}" + (f". Note: {note}." if note else ""),
                          15000 if note else 5000, False)
        return True
