"""The main window: wiring and layout only.

Panels and plots are widgets of their own; the editor applies edits (gui/editing.py), the document
object opens, saves and recovers the plan (gui/document.py), the evaluation keeps the totals and
plots current from the compute worker (gui/evaluation.py), imports and exports live in
gui/exports.py, the menus and toolbar in gui/menus.py and the status bar in gui/status.py.
"""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QIcon, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMessageBox, QSplitter, QTabWidget, QVBoxLayout, QWidget

from dpplanner.compute import engine_process, jobs, profile_job
from dpplanner.gui import layout as window_layout
from dpplanner.gui import menus, theme, warm_up
from dpplanner.gui.budget_panel import BudgetPanel
from dpplanner.gui.formatting import as_plain
from dpplanner.gui.compute import ComputeController
from dpplanner.gui.document import Document
from dpplanner.gui.editing import ALLOCATE, PlanEditor
from dpplanner.gui.evaluation import Evaluation
from dpplanner.gui.exports import Exports
from dpplanner.gui.appearance import Appearance
from dpplanner.gui.guide import FirstStartGuide
from dpplanner.gui.help_pages import HelpWindow
from dpplanner.gui.lazy_canvas import after_first_paint
from dpplanner.help_docs import GUIDE, Page
from dpplanner.gui.plan_details import PlanDetailsDialog
from dpplanner.gui.plots import CostPlot, ProfilePlot, SharesPlot
from dpplanner.gui.results_panel import ResultsPanel
from dpplanner.gui.settings import Settings
from dpplanner.gui.statistics_panel import StatisticsPanel
from dpplanner.gui.status import StatusArea
from dpplanner.gui.table_model import COLUMN_INDEX, COLUMNS
from dpplanner.gui.turns import Turns
from dpplanner.model import Plan, PlanEvent, files

REDISTRIBUTING = "Redistributing the budget…"


class MainWindow(QMainWindow):
    def __init__(self, *, settings: Optional[Settings] = None,
                 evaluate_fn: Callable = jobs.evaluate, allocate_fn: Callable = jobs.allocate,
                 profile_fn: Callable = profile_job.profile,
                 recovery_dir: Optional[str] = None, debounce_ms: int = 100,
                 engine_in_process: bool = False) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.appearance = Appearance(self.settings, self)     # before the plots: their colours
        self.plan = Plan()
        # The `dpplanner` app runs engine jobs in a child process (see app.py); embedders, the
        # smoke test and fakes injected by tests use the worker thread itself.
        self.controller = ComputeController(
            self, debounce_ms=debounce_ms,
            engine_process=engine_process.shared() if engine_in_process else None)
        self.editor = PlanEditor(self.plan, self.controller, allocate_fn, self)
        self.document = Document(self, self.editor, self.settings, recovery_dir)
        self.help_window: Optional[HelpWindow] = None       # made when Help is first opened

        self.turns = Turns(self)        # what a result changes on screen, a piece a turn
        self.budget_panel = BudgetPanel(self.editor, turns=self.turns)
        self.statistics_panel = StatisticsPanel(self.editor, turns=self.turns)
        self.results_panel = ResultsPanel(turns=self.turns)
        self.cost_plot = CostPlot(turns=self.turns)
        self.profile_plot = ProfilePlot()
        self.shares_plot = SharesPlot()
        # The right column: the plots, and the inspector of the selected statistic in a tab of its
        # own (beside the table it would leave the table too narrow for its columns at 1280 px).
        self.plots = QTabWidget()
        for widget, title, tip in (
                (self.cost_plot, "Cost vs k", "Total ε against the number of queries, per theorem"),
                (self.profile_plot, "Privacy profile", "Every (ε, δ) the whole plan satisfies"),
                (self.shares_plot, "Shares && errors", "Each statistic's share of ε and its error"),
                (self.statistics_panel.inspector, "Statistic",
                 "Every field of the statistic selected in the table, editable")):
            self.plots.setTabToolTip(self.plots.addTab(widget, title), tip)
        self.plots.setAccessibleName("Plots and the selected statistic")
        self.plots.setAccessibleDescription("Tabs: the cost against k, the privacy profile, each "
                                            "statistic's share and error, and the statistic "
                                            "selected in the table. File > Export Plot saves the "
                                            "plot shown.")
        self.plots.tabBar().setAccessibleName("Plot and statistic tabs")
        self.evaluation = Evaluation(
            self.editor, self.controller, self.settings, results_panel=self.results_panel,
            budget_panel=self.budget_panel, cost_plot=self.cost_plot, profile_plot=self.profile_plot,
            plots=self.plots, statistics_panel=self.statistics_panel, evaluate_fn=evaluate_fn,
            profile_fn=profile_fn)
        self.left = QSplitter(Qt.Orientation.Vertical)
        self.left.addWidget(self.budget_panel)
        self.left.addWidget(self.statistics_panel)
        self.left.setStretchFactor(1, 1)
        self.guide = FirstStartGuide(self.plan, self.settings, (
            lambda: (self.budget_panel.tier.setFocus(), self.budget_panel.tier.showPopup()),
            lambda: self.budget_panel.dataset_size.edit.setFocus(),
            lambda: self.statistics_panel.add_button.showMenu()))
        left_column = QWidget()
        column = QVBoxLayout(left_column)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.guide)
        column.addWidget(self.left, 1)
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.addWidget(self.results_panel)
        self.right.addWidget(self.plots)
        self.right.setStretchFactor(1, 1)
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.addWidget(left_column)
        self.main_split.addWidget(self.right)
        self.main_split.setStretchFactor(0, 1)
        self.main_split.setStretchFactor(1, 1)

        self.exports = Exports(self, self.editor, self.evaluation, self.plots)
        central = QWidget()             # an export's refusal, when there is one, above the panels
        stack = QVBoxLayout(central)
        stack.setContentsMargins(0, 0, 0, 0)
        stack.addWidget(self.exports.refusal)
        stack.addWidget(self.main_split, 1)
        self.setCentralWidget(central)
        self.status = StatusArea(self.statusBar(), self._busy_text, self.editor)      # (its refusals)
        self.status.cancel_button.clicked.connect(self.cancel_computation)
        self._build_actions()
        menus.build_menus(self)
        menus.build_toolbar(self)
        self.setAcceptDrops(True)
        icon = _app_icon()
        if icon is not None:
            self.setWindowIcon(icon)

        self.plots.currentChanged.connect(lambda _i: self._refresh_shares())
        self._shares_stale = True
        self.plan.subscribe(self._on_plan_event)
        self.document.titleChanged.connect(self._update_title)
        self.document.message.connect(lambda text, ms, error: self.show_message(text, ms, error=error))
        self.document.error.connect(self.show_error)
        self.exports.message.connect(lambda text, ms, error: self.show_message(text, ms, error=error))
        self.exports.error.connect(self.show_error)
        self.document.aboutToLoad.connect(self._on_about_to_load)
        self.document.loaded.connect(self.guide.start)
        # A budget chosen by the user (a preset, or ε or δ typed) is the guide's first step.
        self.budget_panel.tier.activated.connect(lambda _i: self.guide.budget_chosen())
        for field in (self.budget_panel.epsilon, self.budget_panel.delta):
            field.submitted.connect(lambda _v: self.guide.budget_chosen())
        self.evaluation.message.connect(lambda text, ms, error: self.show_message(text, ms, error=error))
        self.evaluation.retracted.connect(self.status.retract)
        self.controller.progressChanged.connect(lambda _channel, f: self.status.set_progress(f))
        self.controller.busyChanged.connect(self._on_busy)
        self.editor.redistributing.connect(self._on_redistributing)
        self.cost_plot.optionsChanged.connect(self._on_plot_options)
        self.cost_plot.hiddenChanged.connect(lambda names: self.settings.set("hidden_curves", names))
        self.statistics_panel.selectionChanged.connect(self._on_selection)
        self.cost_plot.logKChanged.connect(lambda on: self.settings.set("curve_log_k", on))
        self.appearance.changed.connect(self.apply_theme)

        self._restore_columns()
        self.cost_plot.set_mode(self.settings.get("curve_mode"))
        self.cost_plot.k_max.setValue(self.settings.get("curve_k_max"))
        self.cost_plot.set_hidden(self.settings.get("hidden_curves"))
        self.cost_plot.log_k.setChecked(self.settings.get("curve_log_k"))
        self._restore_layout()
        self._update_title()
        self._refresh_views()
        # The cost plot's canvas (pyqtgraph) once the table has been painted: not before it; and
        # the rest of the engine's modules (the window's later work needs them).
        after_first_paint(self.statistics_panel.view.viewport(), self.cost_plot.build_canvas)
        after_first_paint(self.statistics_panel.view.viewport(), warm_up.start)

    # == building =================================================================================
    def _action(self, text: str, tip: str, slot, shortcut=None) -> QAction:
        action = QAction(text, self)
        if isinstance(shortcut, QKeySequence.StandardKey):
            action.setShortcuts(shortcut)   # every key the platform has for it (Redo: Ctrl+Y, Ctrl+Shift+Z)
        elif shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if shortcut is not None:
            tip = f"{tip} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})"
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_actions(self) -> None:
        S = QKeySequence.StandardKey
        doc = self.document
        self.new_action = self._action("&New", "Start a new, empty plan", doc.new_plan, S.New)
        self.open_action = self._action("&Open…", "Open a .dpplan file", doc.open_dialog, S.Open)
        self.save_action = self._action("&Save", "Save the plan", doc.save, S.Save)
        self.save_as_action = self._action("Save &As…", "Save the plan under a new name", doc.save_as,
                                           S.SaveAs)
        self.import_csv_action = self._action("&Import CSV…", "Replace the statistics with those of a "
                                              "CSV file", self.exports.import_csv_dialog)
        self.export_csv_action = self._action("&Export CSV…", "Write the statistics table (with "
                                              "errors) to a CSV file", self.exports.export_csv_dialog)
        self.export_report_action = self._action("Export &Report…", "Write a self-contained HTML "
                                                 "report of the plan", self.exports.export_report_dialog)
        self.export_plot_action = self._action("Export &Plot…", "Save the plot shown as PNG or SVG",
                                               self.exports.export_plot_dialog)
        self.details_action = self._action("&Title and Description…", "The plan's title and "
                                           "description (the report's heading and first paragraph)",
                                           self.edit_plan_details)
        self.export_release_action = self._action(
            "Export Release &Script…", "Write a Python script that releases the plan's statistics "
            "with OpenDP 0.16 after checking them against the plan", self.exports.export_release_dialog)
        self.quit_action = self._action("&Quit", "Close dpplanner", self.close, S.Quit)
        stack = self.editor.undo_stack
        editor = self.editor
        self.undo_action = self._step_action("&Undo", editor.undo, S.Undo, stack.undoTextChanged,
                                             "nothing to undo")
        self.redo_action = self._step_action("&Redo", editor.redo, S.Redo, stack.redoTextChanged,
                                             "nothing to redo")
        # From the signals' arguments, not by asking the stack: it signals while being destroyed.
        stack.canUndoChanged.connect(lambda can: self.undo_action.setEnabled(
            can or editor.is_redistributing()))
        # A waiting edit ends the redo history once made, as any new edit does: no Redo meanwhile.
        stack.canRedoChanged.connect(
            lambda can: self.redo_action.setEnabled(can and not editor.is_redistributing()))
        editor.redistributing.connect(lambda active: (
            self.undo_action.setEnabled(editor.can_undo()),
            self.redo_action.setEnabled(stack.canRedo() and not active)))
        self.rebalance_action = self._action("Redistribute &now", "Rescale the free statistics to "
                                             "spend the global ε", self.editor.rebalance_now, "Ctrl+R")
        self.cancel_action = self._action("&Cancel computation", "Stop the running computation",
                                          self.cancel_computation)
        self.cancel_action.setEnabled(False)

    def _step_action(self, text: str, slot, shortcut, text_changed, idle: str) -> QAction:
        """Undo/Redo with a fixed label (QUndoStack's own actions put the step's name in the label,
        which grows and gets cut in the toolbar); the step is named in the tooltip instead."""
        action = self._action(text, "", slot, shortcut)
        keys = action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)
        verb = text.replace("&", "")

        def describe(step: str) -> None:
            tip = f"{verb} “{step}” ({keys})" if step else f"{verb}: {idle} ({keys})"
            action.setToolTip(as_plain(tip))
            action.setStatusTip(tip)

        action.setEnabled(False)
        describe("")
        text_changed.connect(describe)
        return action

    # == computing ================================================================================
    def _on_plan_event(self, event: PlanEvent) -> None:
        self.evaluation.plan_changed()
        self._refresh_views()

    def _on_about_to_load(self) -> None:
        self.editor.abandon()
        self.controller.discard()

    def _on_redistributing(self, active: bool) -> None:
        if active:
            self.status.show_pending(REDISTRIBUTING)     # if still redistributing after a moment
        else:
            self.status.retract(REDISTRIBUTING)     # but keep a refusal that replaced it

    def _refresh_views(self) -> None:
        """Cheap synchronous views now; the engine's numbers come from the worker."""
        self._shares_stale = True
        self._refresh_shares()
        self._name_repeated()
        self.cost_plot.set_budget(self.plan.budget.spendable_epsilon)
        self.evaluation.schedule()

    def _refresh_shares(self) -> None:
        """The bars need every row's accuracy (~20 ms per 1000 rows): only while they are shown."""
        if not self._shares_stale or self.plots.currentWidget() is not self.shares_plot:
            return
        self._shares_stale = False
        plan = self.plan
        privacy = self.statistics_panel.model.privacy_all()
        self.shares_plot.set_plan(plan, privacy)

    def _on_busy(self, busy: bool) -> None:
        self.cancel_action.setEnabled(busy)
        self.status.set_busy(busy)

    def _busy_text(self) -> Optional[str]:
        if not self.controller.is_busy():
            return None
        return "Redistributing" if self.controller.is_busy(ALLOCATE) else "Computing compositions"

    def cancel_computation(self) -> None:
        self.controller.cancel()

    def _on_plot_options(self) -> None:
        self.settings.set("curve_mode", self.cost_plot.mode())
        self.settings.set("curve_k_max", self.cost_plot.k_max.value())
        self.evaluation.schedule()

    def _name_repeated(self) -> None:
        """The statistic "repeat one query" repeats: the selected row (the first if none)."""
        plan = self.plan
        row = min(max(self.statistics_panel.current_row(), 0), len(plan) - 1)
        self.cost_plot.set_repeat_statistic(plan[row].name if len(plan) else "")

    def _on_selection(self, _row: int) -> None:
        self._name_repeated()
        if self.cost_plot.mode() == "repeat":
            self.evaluation.schedule()

    # == messages =================================================================================
    def show_message(self, text: str, timeout_ms: int = 5000, *, error: bool = False) -> None:
        self.status.show_message(text, timeout_ms, error=error)

    def show_error(self, title: str, text: str) -> None:
        self.show_message(f"{title}: {text}", 15000, error=True)
        QMessageBox.warning(self, title, as_plain(text))

    def edit_plan_details(self) -> None:
        PlanDetailsDialog(self.editor, self).exec()

    def show_help(self, page: Page = GUIDE[0], section: str = "") -> HelpWindow:
        """Open the Help window (one for the whole session) on a page of the documentation."""
        if self.help_window is None:
            self.help_window = HelpWindow(self)
        self.help_window.open(page, section)
        if self.help_window.isVisible():
            self.help_window.raise_()         # already open behind the main window: bring it up
        self.help_window.show()
        return self.help_window

    # == window ===================================================================================
    def _update_title(self) -> None:
        name = self.document.display_name
        self.setWindowTitle(f"{name}[*] — dpplanner")
        self.setWindowModified(self.document.modified)
        modified = " (modified)" if self.isWindowModified() else ""
        self.status.plan_label.setText(f"plan: {name}{modified}")

    def apply_theme(self) -> None:
        current = theme.current()
        for plot in (self.cost_plot, self.profile_plot, self.shares_plot):
            plot.apply_theme(current)
        self._refresh_views()

    def _restore_columns(self) -> None:
        """The table columns the user chose last time (by key: a new column is not lost)."""
        columns = self.statistics_panel.columns
        chosen = [COLUMN_INDEX[k] for k in self.settings.get("table_columns") if k in COLUMN_INDEX]
        if chosen:
            columns.set_shown(chosen)
        columns.shownChanged.connect(lambda shown: self.settings.set(
            "table_columns", [COLUMNS[c].key for c in shown]))

    def _restore_layout(self) -> None:
        window_layout.restore_layout(self, self.settings)

    def default_layout(self) -> None:
        window_layout.default_layout(self)

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _dropped_plan(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = _dropped_plan(event)
        if path is not None:
            event.acceptProposedAction()
            self.document.open_path(path)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.document.maybe_save():
            event.ignore()
            return
        window_layout.save_layout(self, self.settings)
        self.settings.sync()
        self.controller.shutdown()
        self.document.close()
        event.accept()


def _dropped_plan(event) -> Optional[str]:
    mime = event.mimeData()
    if not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile() and url.toLocalFile().endswith(files.SUFFIX):
            return url.toLocalFile()
    return None


def _app_icon() -> Optional[QIcon]:
    from dpplanner.model.examples import examples_dir

    folder = examples_dir()
    if folder is None:
        return None
    icons = folder.parent / "icons"
    icon = QIcon()
    for size in (16, 24, 32, 48, 64, 128, 256):
        path = icons / f"dpplanner-{size}.png"
        if path.exists():
            icon.addFile(str(path))
    return None if icon.isNull() else icon

