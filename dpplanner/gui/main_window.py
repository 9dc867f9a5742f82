"""The main window: wiring only. Panels, plots, the editor and the compute controller do the work."""

from __future__ import annotations

import dataclasses
import math
import os
from pathlib import Path
from typing import Callable, Optional

from PySide6.QtCore import QStandardPaths, Qt, QTimer
from PySide6.QtGui import (
    QAction, QCloseEvent, QDragEnterEvent, QDropEvent, QGuiApplication, QIcon, QKeySequence,
)
from PySide6.QtWidgets import (
    QFileDialog, QLabel, QMainWindow, QMessageBox, QProgressBar, QSplitter, QTabWidget, QToolButton,
)

from dpplanner.gui import engine_process, jobs, theme
from dpplanner.gui.budget_panel import BudgetPanel
from dpplanner.gui.compute import ComputeController
from dpplanner.gui.editing import ALLOCATE, PlanEditor, Refusal
from dpplanner.gui.help_pages import PAGES, HelpDialog, about_html
from dpplanner.gui.plots import CostPlot, ProfilePlot, SharesPlot, export_item
from dpplanner.gui.recovery import RecoveryCopy, RecoveryStore
from dpplanner.gui.results_panel import ResultsPanel
from dpplanner.gui.settings import Settings
from dpplanner.gui.statistics_panel import StatisticsPanel
from dpplanner.model import Plan, PlanEvent
from dpplanner.model import csvio, files, report
from dpplanner.model.examples import example_paths

EVALUATE = "evaluate"
REDISTRIBUTING = "Redistributing the budget…"
PROFILE = "profile"
PLAN_FILTER = "dpplanner plans (*.dpplan);;All files (*)"
#: Progress is only shown for jobs that are still running after this long (no flicker).
PROGRESS_DELAY_MS = 250
#: Quiet time after the totals before the (slower) privacy profile starts.
PROFILE_DELAY_MS = 300


class MainWindow(QMainWindow):
    def __init__(self, *, settings: Optional[Settings] = None,
                 evaluate_fn: Callable = jobs.evaluate, allocate_fn: Callable = jobs.allocate,
                 profile_fn: Callable = jobs.profile,
                 recovery_dir: Optional[str] = None, debounce_ms: int = 100,
                 engine_in_process: bool = False) -> None:
        super().__init__()
        self.settings = settings or Settings()
        self.evaluate_fn = evaluate_fn
        self.profile_fn = profile_fn
        self.plan = Plan()
        self.path: Optional[Path] = None
        self.display_name = "untitled"
        self.last_result: Optional[jobs.EvaluateResult] = None
        # The `dpplanner` app runs engine jobs in a child process (see app.py); embedders, the
        # smoke test and fakes injected by tests use the worker thread itself.
        self.controller = ComputeController(
            self, debounce_ms=debounce_ms,
            engine_process=engine_process.shared() if engine_in_process else None)
        self.editor = PlanEditor(self.plan, self.controller, allocate_fn, self)
        self.recovery = RecoveryStore(recovery_dir or _default_recovery_dir())

        self.budget_panel = BudgetPanel(self.editor)
        self.statistics_panel = StatisticsPanel(self.editor)
        self.results_panel = ResultsPanel()
        self.cost_plot = CostPlot()
        self.profile_plot = ProfilePlot()
        self.shares_plot = SharesPlot()
        self.plots = QTabWidget()
        self.plots.addTab(self.cost_plot, "Cost vs k")
        self.plots.addTab(self.profile_plot, "Privacy profile")
        self.plots.addTab(self.shares_plot, "Shares && errors")
        self.plots.setToolTip("Plots of the plan; File > Export Plot saves the one shown.")
        self.left = QSplitter(Qt.Orientation.Vertical)
        self.left.addWidget(self.budget_panel)
        self.left.addWidget(self.statistics_panel)
        self.left.setStretchFactor(1, 1)
        self.right = QSplitter(Qt.Orientation.Vertical)
        self.right.addWidget(self.results_panel)
        self.right.addWidget(self.plots)
        self.right.setStretchFactor(1, 1)
        self.main_split = QSplitter(Qt.Orientation.Horizontal)
        self.main_split.addWidget(self.left)
        self.main_split.addWidget(self.right)
        self.main_split.setStretchFactor(0, 1)
        self.main_split.setStretchFactor(1, 1)
        self.setCentralWidget(self.main_split)

        self._build_status_bar()
        self._build_actions()
        self._build_menus()
        self._build_toolbar()
        self.setAcceptDrops(True)
        icon = _app_icon()
        if icon is not None:
            self.setWindowIcon(icon)

        self._autosave = QTimer(self)
        self._autosave.setSingleShot(True)
        self._autosave.setInterval(max(self.settings.get("autosave_seconds"), 1) * 1000)
        self._autosave.timeout.connect(self.write_recovery_copy)
        self._progress_delay = QTimer(self)
        self._progress_delay.setSingleShot(True)
        self._progress_delay.setInterval(PROGRESS_DELAY_MS)
        self._progress_delay.timeout.connect(self._show_progress)
        self._profile_wanted: Optional[jobs.ProfileRequest] = None
        self._profile_delay = QTimer(self)
        self._profile_delay.setSingleShot(True)
        self._profile_delay.setInterval(PROFILE_DELAY_MS)
        self._profile_delay.timeout.connect(self._start_profile)
        self.plots.currentChanged.connect(lambda _i: self._start_profile())
        self.plots.currentChanged.connect(lambda _i: self._refresh_shares())
        self._shares_stale = True
        self._message_timer = QTimer(self)
        self._message_timer.setSingleShot(True)
        self._message_timer.timeout.connect(self._clear_message)

        self.plan.subscribe(self._on_plan_event)
        self.controller.resultReady.connect(self._on_result)
        self.controller.failed.connect(self._on_failed)
        self.controller.cancelled.connect(self._on_cancelled)
        self.controller.progressChanged.connect(self._on_progress)
        self.controller.busyChanged.connect(self._on_busy)
        self.editor.refused.connect(self._on_refused)
        self.editor.redistributing.connect(self._on_redistributing)
        self.editor.redistributionFailed.connect(lambda m: self.show_message(m, 10000, error=True))
        self.editor.undo_stack.cleanChanged.connect(self._on_clean_changed)
        self.cost_plot.optionsChanged.connect(self._on_plot_options)
        self.cost_plot.hiddenChanged.connect(lambda names: self.settings.set("hidden_curves", names))
        self.statistics_panel.selectionChanged.connect(self._on_selection)
        hints = QGuiApplication.styleHints()
        hints.colorSchemeChanged.connect(lambda _scheme: self.apply_theme())

        self.cost_plot.set_mode(self.settings.get("curve_mode"))
        self.cost_plot.k_max.setValue(self.settings.get("curve_k_max"))
        self.cost_plot.set_hidden(self.settings.get("hidden_curves"))
        self._restore_layout()
        self._update_title()
        self._refresh_views()

    # == building =================================================================================
    def _build_status_bar(self) -> None:
        bar = self.statusBar()
        self.status_label = QLabel("")
        self.status_label.setToolTip("What happened last.")
        self.progress = QProgressBar()
        self.progress.setRange(0, 1000)
        self.progress.setMaximumWidth(180)
        self.progress.setToolTip("Progress of the running computation.")
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.setToolTip("Stop the running computation (the window keeps the last result).")
        self.cancel_button.clicked.connect(self.cancel_computation)
        self.plan_label = QLabel("")
        self.plan_label.setToolTip("The plan file and whether it has unsaved changes.")
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        bar.addPermanentWidget(self.plan_label)
        self.progress.hide()
        self.cancel_button.hide()

    def _action(self, text: str, tip: str, slot, shortcut=None) -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            tip = f"{tip} ({action.shortcut().toString(QKeySequence.SequenceFormat.NativeText)})"
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda _checked=False: slot())
        return action

    def _build_actions(self) -> None:
        S = QKeySequence.StandardKey
        self.new_action = self._action("&New", "Start a new, empty plan", self.new_plan, S.New)
        self.open_action = self._action("&Open…", "Open a .dpplan file", self.open_dialog, S.Open)
        self.save_action = self._action("&Save", "Save the plan", self.save, S.Save)
        self.save_as_action = self._action("Save &As…", "Save the plan under a new name", self.save_as, S.SaveAs)
        self.import_csv_action = self._action("&Import CSV…", "Replace the statistics with those of a "
                                              "CSV file", self.import_csv_dialog)
        self.export_csv_action = self._action("&Export CSV…", "Write the statistics table (with "
                                              "errors) to a CSV file", self.export_csv_dialog)
        self.export_report_action = self._action("Export &Report…", "Write a self-contained HTML "
                                                 "report of the plan", self.export_report_dialog)
        self.export_plot_action = self._action("Export &Plot…", "Save the plot shown as PNG or SVG",
                                               self.export_plot_dialog)
        self.quit_action = self._action("&Quit", "Close dpplanner", self.close, S.Quit)
        self.undo_action = self.editor.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence(S.Undo))
        self.undo_action.setToolTip("Undo the last change (Ctrl+Z)")
        self.redo_action = self.editor.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcut(QKeySequence(S.Redo))
        self.redo_action.setToolTip("Redo the change just undone (Ctrl+Shift+Z)")
        self.rebalance_action = self._action("Redistribute &now", "Rescale the free statistics to "
                                             "spend the global ε", self.editor.rebalance_now, "Ctrl+R")
        self.cancel_action = self._action("&Cancel computation", "Stop the running computation",
                                          self.cancel_computation)
        self.cancel_action.setEnabled(False)

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addActions([self.new_action, self.open_action])
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self.recent_menu.setToolTipsVisible(True)
        self.recent_menu.aboutToShow.connect(self._fill_recent_menu)
        self.examples_menu = file_menu.addMenu("E&xamples")
        self.examples_menu.setToolTipsVisible(True)
        for name, path in example_paths().items():
            action = self.examples_menu.addAction(name)
            action.setToolTip(f"Open the example plan {path.name} (as an untitled copy)")
            action.triggered.connect(lambda _c=False, p=path: self.open_example(p))
        file_menu.addSeparator()
        file_menu.addActions([self.save_action, self.save_as_action])
        file_menu.addSeparator()
        file_menu.addActions([self.import_csv_action, self.export_csv_action,
                              self.export_report_action, self.export_plot_action])
        file_menu.addSeparator()
        file_menu.addAction(self.quit_action)

        edit_menu = bar.addMenu("&Edit")
        edit_menu.addActions([self.undo_action, self.redo_action])
        edit_menu.addSeparator()
        add_menu = self.statistics_panel.add_menu
        add_menu.setTitle("Add &statistic")
        edit_menu.addMenu(add_menu)
        panel = self.statistics_panel
        edit_menu.addActions([panel.duplicate_action, panel.remove_action, panel.up_action,
                              panel.down_action])
        edit_menu.addSeparator()
        edit_menu.addActions([self.rebalance_action, self.cancel_action])

        view_menu = bar.addMenu("&View")
        for i, title in enumerate(("&Cost vs k", "Privacy &profile", "&Shares and errors")):
            action = view_menu.addAction(title)
            action.setShortcut(QKeySequence(f"Ctrl+{i + 1}"))
            action.setToolTip(f"Show the {title.replace('&', '').lower()} plot")
            action.triggered.connect(lambda _c=False, i=i: self.plots.setCurrentIndex(i))
        view_menu.addSeparator()
        prefix = view_menu.addAction("Plot plan &prefixes")
        prefix.triggered.connect(lambda: self.cost_plot.set_mode("prefix"))
        repeat = view_menu.addAction("Plot selected query &repeated")
        repeat.triggered.connect(lambda: self.cost_plot.set_mode("repeat"))
        view_menu.addSeparator()
        reset = view_menu.addAction("Reset &layout")
        reset.setToolTip("Put the panels back to their default sizes")
        reset.triggered.connect(self._default_layout)

        help_menu = bar.addMenu("&Help")
        help_menu.setToolTipsVisible(True)
        for key, (title, html) in PAGES.items():
            action = help_menu.addAction(title)
            action.setToolTip(f"What {title.lower()} is and when it applies")
            action.triggered.connect(lambda _c=False, t=title, h=html: self.show_help(t, h))
        help_menu.addSeparator()
        about = help_menu.addAction("&About dpplanner")
        about.triggered.connect(lambda: QMessageBox.about(self, "About dpplanner", about_html()))
        for menu in (file_menu, edit_menu, view_menu):
            menu.setToolTipsVisible(True)

    def _build_toolbar(self) -> None:
        tools = self.addToolBar("Main")
        tools.setObjectName("main-toolbar")
        tools.addActions([self.new_action, self.open_action, self.save_action])
        tools.addSeparator()
        add = QToolButton()
        add.setText("+ Statistic")
        add.setToolTip("Add a statistic: choose its kind")
        add.setMenu(self.statistics_panel.add_menu)
        add.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        tools.addWidget(add)
        tools.addActions([self.statistics_panel.duplicate_action, self.statistics_panel.remove_action])
        tools.addSeparator()
        tools.addActions([self.undo_action, self.redo_action])

    # == documents ================================================================================
    def new_plan(self) -> bool:
        if not self.maybe_save():
            return False
        self._load_plan(Plan(), None, "untitled")
        return True

    def open_dialog(self) -> None:
        if not self.maybe_save():
            return
        start = str(self.path.parent) if self.path else ""
        name, _ = QFileDialog.getOpenFileName(self, "Open plan", start, PLAN_FILTER)
        if name:
            self.open_path(name, confirm=False)

    def open_path(self, path: str | Path, *, confirm: bool = True) -> bool:
        if confirm and not self.maybe_save():
            return False
        path = Path(path)
        try:
            plan = files.load_plan(path)
        except (OSError, ValueError) as exc:
            self.settings.remove_recent_file(str(path))
            self.show_error("Cannot open the plan", str(exc))
            return False
        self._load_plan(plan, path, path.name)
        self.settings.add_recent_file(str(path.resolve()))
        return True

    def open_example(self, path: Path) -> bool:
        if not self.maybe_save():
            return False
        try:
            plan = files.load_plan(path)
        except (OSError, ValueError) as exc:
            self.show_error("Cannot open the example", str(exc))
            return False
        # An example opens as an untitled copy: Save asks where, the shipped file stays intact.
        self._load_plan(plan, None, f"{path.stem} (example)")
        return True

    def _load_plan(self, plan: Plan, path: Optional[Path], name: str) -> None:
        self.controller.cancel()
        self.plan.restore(plan.snapshot())
        self.path = path
        self.display_name = name
        self.editor.undo_stack.clear()
        self.editor.undo_stack.setClean()
        self.recovery.discard()
        self._update_title()
        self.show_message(f"Opened {name}: {len(self.plan)} statistics, k = {self.plan.k}", 5000)

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self._save_to(self.path)

    def save_as(self) -> bool:
        start = str(self.path) if self.path else self.display_name.split(" ")[0] + files.SUFFIX
        name, _ = QFileDialog.getSaveFileName(self, "Save plan", start, PLAN_FILTER)
        if not name:
            return False
        path = Path(name)
        if not path.suffix:
            path = path.with_suffix(files.SUFFIX)
        return self._save_to(path)

    def _save_to(self, path: Path) -> bool:
        try:
            files.save_plan(self.plan, path)
        except (OSError, ValueError) as exc:
            self.show_error("Cannot save the plan", str(exc))
            return False
        self.path = path
        self.display_name = path.name
        self.editor.undo_stack.setClean()
        self.recovery.discard()
        self.settings.add_recent_file(str(path.resolve()))
        self._update_title()
        self.show_message(f"Saved {path}", 5000)
        return True

    def maybe_save(self) -> bool:
        """Ask before throwing away unsaved changes. True: go ahead."""
        if self.editor.undo_stack.isClean():
            return True
        answer = QMessageBox.warning(
            self, "Unsaved changes", f"The plan {self.display_name} has unsaved changes. Save them?",
            QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel, QMessageBox.StandardButton.Save)
        if answer == QMessageBox.StandardButton.Save:
            return self.save()
        return answer == QMessageBox.StandardButton.Discard

    def import_csv_dialog(self) -> None:
        name, _ = QFileDialog.getOpenFileName(self, "Import statistics from CSV", "", "CSV files (*.csv)")
        if name:
            self.import_csv(name)

    def import_csv(self, path: str | Path) -> bool:
        try:
            stats = csvio.load_csv(path, self.plan.budget)
        except (OSError, ValueError) as exc:
            self.show_error("Cannot import the CSV file", str(exc))
            return False
        return self.editor.replace_all(stats, f"Import {Path(path).name}")

    def export_csv_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Export statistics to CSV", "", "CSV files (*.csv)")
        if name:
            self._export(lambda: csvio.save_csv(self.plan, name), name)

    def export_report_dialog(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Export report", "", "HTML files (*.html)")
        if name:
            self.export_report(name)

    def export_report(self, path: str | Path) -> bool:
        kwargs = {}
        if self.last_result is not None and self._result_is_current(self.last_result):
            # Reuse what the worker computed instead of composing again on the GUI thread.
            kwargs = dict(totals=self.last_result.totals, best=self.last_result.best)
            if self.last_result.request.curve_mode == "prefix" and self.last_result.curve is not None:
                kwargs["curve"] = self.last_result.curve
        return self._export(lambda: report.save_report(self.plan, path, **kwargs), path)

    def export_plot_dialog(self) -> None:
        name, chosen = QFileDialog.getSaveFileName(self, "Export plot", "", "PNG image (*.png);;SVG image (*.svg)")
        if name:
            if not Path(name).suffix:
                name += ".svg" if "svg" in chosen else ".png"
            self.export_plot(name)

    def export_plot(self, path: str | Path) -> bool:
        widget = self.plots.currentWidget()
        item = widget.view.ci if isinstance(widget, SharesPlot) else widget.plot_item
        return self._export(lambda: export_item(item, path), path)

    def _export(self, write: Callable[[], None], path) -> bool:
        try:
            write()
        except (OSError, ValueError) as exc:
            self.show_error("Export failed", str(exc))
            return False
        self.show_message(f"Wrote {path}", 5000)
        return True

    # == recovery =================================================================================
    def write_recovery_copy(self) -> None:
        if self.editor.undo_stack.isClean():
            self.recovery.discard()
            return
        try:
            self.recovery.save(files.dumps_plan(self.plan), str(self.path) if self.path else None)
        except OSError as exc:
            self.show_message(f"Could not write the recovery copy: {exc}", 10000, error=True)

    def offer_recovery(self, ask: Optional[Callable[[RecoveryCopy], bool]] = None) -> bool:
        """After a crash: offer the newest orphaned copy. ``ask`` replaces the dialog (tests)."""
        copies = self.recovery.orphans()
        if not copies:
            return False
        copy = copies[0]
        if ask is None:
            def ask(c: RecoveryCopy) -> bool:
                answer = QMessageBox.question(
                    self, "Recover unsaved changes?",
                    f"dpplanner did not close normally last time. A recovery copy of "
                    f"{c.describe()} exists. Restore it?")
                return answer == QMessageBox.StandardButton.Yes
        restored = False
        if ask(copy):
            try:
                plan = files.loads_plan(copy.plan_text)
            except ValueError as exc:
                self.show_error("The recovery copy cannot be read", str(exc))
            else:
                source = Path(copy.source) if copy.source else None
                self._load_plan(plan, source, (source.name if source else "untitled") + " (recovered)")
                # Recovered changes are unsaved changes: mark the document modified.
                self.editor.undo_stack.resetClean()
                self._update_title()
                self.write_recovery_copy()
                restored = True
        for c in copies:
            RecoveryStore.forget(c)
        return restored

    # == computing ================================================================================
    def _on_plan_event(self, event: PlanEvent) -> None:
        self._profile_wanted = None
        self.controller.cancel(PROFILE)     # out of date; it follows the next totals
        self._refresh_views()
        if not self.editor.undo_stack.isClean():
            self._autosave.start()

    def _on_redistributing(self, active: bool) -> None:
        if active:
            self.show_message(REDISTRIBUTING, 0)
        elif self.status_label.text() == REDISTRIBUTING:
            self.show_message("", 0)        # but keep a failure message that replaced it
        if not active:
            # Rebalanced, cancelled or failed: evaluate whatever the plan is now (a no-op when
            # that evaluation is already running).
            self.schedule_evaluation()

    def _refresh_views(self) -> None:
        """Cheap synchronous views now; the engine's numbers come from the worker."""
        self._shares_stale = True
        self._refresh_shares()
        self.cost_plot.set_budget(self.plan.budget.spendable_epsilon)
        if not self.editor.is_redistributing():
            # An edit that is being rebalanced is evaluated once its rebalance lands.
            self.schedule_evaluation()

    def _refresh_shares(self) -> None:
        """The bars need every row's accuracy (~20 ms per 1000 rows): only while they are shown."""
        if not self._shares_stale or self.plots.currentWidget() is not self.shares_plot:
            return
        self._shares_stale = False
        plan = self.plan
        privacy = self.statistics_panel.model.privacy_all()
        self.shares_plot.set_rows([s.name for s in plan], [s.epsilon * s.repetitions for s in plan],
                                  [p.error if p.error is not None else math.nan for p in privacy],
                                  [s.held for s in plan])

    def evaluation_request(self) -> Optional[jobs.EvaluateRequest]:
        if not len(self.plan):
            return None
        inputs = self.plan.composition_inputs()
        repeat_index = min(max(self.statistics_panel.current_row(), 0), len(self.plan) - 1)
        return jobs.EvaluateRequest(
            inputs.epsilons, inputs.deltas, inputs.multiplicities, inputs.delta_g, inputs.eta,
            curve_mode=self.cost_plot.mode(), curve_k_max=self.cost_plot.k_limit(),
            curve_points=self.settings.get("curve_points"), repeat_index=repeat_index)

    def schedule_evaluation(self) -> None:
        request = self.evaluation_request()
        if request is None:
            self.controller.cancel(EVALUATE)
            self.controller.cancel(PROFILE)
            self.last_result = None
            self.results_panel.set_results({}, None, "Add a statistic to see the totals.")
            self.cost_plot.clear()
            self.profile_plot.clear()
            self.budget_panel.set_spent(None)
            return
        self.controller.schedule(EVALUATE, self.evaluate_fn, request)

    def _result_is_current(self, result: jobs.EvaluateResult) -> bool:
        request = self.evaluation_request()
        return request is not None and request == dataclasses.replace(result.request, request_id=0)

    def _on_result(self, channel: str, result) -> None:
        if channel == PROFILE:
            inputs = self.plan.composition_inputs()
            if (result.request.epsilons, result.request.deltas, result.request.multiplicities) == \
                    (inputs.epsilons, inputs.deltas, inputs.multiplicities):
                self.profile_plot.set_profile(result.profile, self.plan.budget.delta)
            return
        if channel != EVALUATE:
            return
        self.last_result = result
        request = result.request
        plan = self.plan
        budget = plan.budget
        note = (f"k = {request.k} queries, δ_g = {request.delta_g:g}, η = {request.eta:g}. "
                "Totals are sound upper bounds, rounded up.")
        self.results_panel.set_results(result.totals, result.best, note)
        self.budget_panel.set_spent(result.totals.get(budget.theorem))
        if result.curve is not None:
            if request.curve_mode == "prefix":
                plan_k = request.k
            else:
                plan_k = request.multiplicities[request.repeat_index]
            self.cost_plot.set_curve(result.curve, plan_k, budget.spendable_epsilon)
        # The profile is slower than everything above: it runs as its own job, only while its
        # tab is shown and once edits have paused, so it never delays the next edit.
        self._profile_wanted = jobs.ProfileRequest(
            request.epsilons, request.deltas, request.multiplicities, eta=max(request.eta, 1e-3))
        self._profile_delay.start()
        problems = "; ".join(f"{part}: {msg}" for part, msg in result.problems.items())
        if problems:
            self.show_message(f"Part of the computation failed - {problems}", 10000, error=True)
        elif not self.editor.is_redistributing():
            self.show_message("", 0)

    def _start_profile(self) -> None:
        if self._profile_wanted is None or self.plots.currentWidget() is not self.profile_plot:
            return
        if self.controller.is_busy(EVALUATE) or self.editor.is_redistributing():
            return          # the totals of a newer plan come first; they will ask again
        request, self._profile_wanted = self._profile_wanted, None
        self.controller.submit(PROFILE, self.profile_fn, request)

    def _on_failed(self, channel: str, message: str) -> None:
        if channel == PROFILE:
            self.profile_plot.clear()
            self.show_message(f"The privacy profile could not be computed: {message}", 10000, error=True)
        if channel == EVALUATE:
            self.results_panel.set_stale(f"The computation failed: {message}")
            self.show_message(f"The computation failed: {message}", 15000, error=True)

    def _on_cancelled(self, channel: str) -> None:
        if channel == EVALUATE:
            self.results_panel.set_stale("Cancelled: the totals shown are from before the last edit.")
            self.show_message("Computation cancelled.", 5000)

    def _on_progress(self, channel: str, fraction: float) -> None:
        self.progress.setValue(int(fraction * 1000))

    def _on_busy(self, busy: bool) -> None:
        self.cancel_action.setEnabled(busy)
        if busy:
            self.progress.setValue(0)
            self._progress_delay.start()
        else:
            self._progress_delay.stop()
            self.progress.hide()
            self.cancel_button.hide()

    def _show_progress(self) -> None:
        if self.controller.is_busy():
            what = "Redistributing" if self.controller.is_busy(ALLOCATE) else "Computing compositions"
            self.status_label.setText(f"{what}…")
            self.progress.show()
            self.cancel_button.show()

    def cancel_computation(self) -> None:
        self.controller.cancel()

    def _on_plot_options(self) -> None:
        self.settings.set("curve_mode", self.cost_plot.mode())
        self.settings.set("curve_k_max", self.cost_plot.k_max.value())
        self.schedule_evaluation()

    def _on_selection(self, _row: int) -> None:
        if self.cost_plot.mode() == "repeat":
            self.schedule_evaluation()

    # == messages =================================================================================
    def _on_refused(self, refusal: Refusal) -> None:
        self.show_message(f"Not changed: {refusal.message}", 15000, error=True)

    def show_message(self, text: str, timeout_ms: int = 5000, *, error: bool = False) -> None:
        self.status_label.setStyleSheet("color: #c0392b" if error else "")
        self.status_label.setText(text)
        self.status_label.setToolTip(text or "What happened last.")
        # A timer owned by the window, so it dies with it (a bare singleShot could fire later).
        self._message_timer.stop()
        if timeout_ms:
            self._message_timer.start(timeout_ms)

    def _clear_message(self) -> None:
        self.status_label.setText("")
        self.status_label.setStyleSheet("")

    def show_error(self, title: str, text: str) -> None:
        self.show_message(f"{title}: {text}", 15000, error=True)
        QMessageBox.warning(self, title, text)

    def show_help(self, title: str, html: str) -> None:
        dialog = HelpDialog(title, html, self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()

    # == window ===================================================================================
    def _on_clean_changed(self, clean: bool) -> None:
        self._update_title()
        if clean:
            self.recovery.discard()

    def _update_title(self) -> None:
        self.setWindowTitle(f"{self.display_name}[*] — dpplanner")
        self.setWindowModified(not self.editor.undo_stack.isClean())
        modified = " (modified)" if self.isWindowModified() else ""
        self.plan_label.setText(f"plan: {self.display_name}{modified}")

    def _fill_recent_menu(self) -> None:
        self.recent_menu.clear()
        recent = self.settings.recent_files()
        for path in recent:
            action = self.recent_menu.addAction(os.path.basename(path))
            action.setToolTip(path)
            action.triggered.connect(lambda _c=False, p=path: self.open_path(p))
        if not recent:
            empty = self.recent_menu.addAction("(no recent plans)")
            empty.setEnabled(False)

    def apply_theme(self) -> None:
        current = theme.current()
        for plot in (self.cost_plot, self.profile_plot, self.shares_plot):
            plot.apply_theme(current)
        self._refresh_views()

    def _restore_layout(self) -> None:
        geometry = self.settings.window_geometry()
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1280, 800)
        state = self.settings.window_state()
        if state is not None:
            self.restoreState(state)
        restored = False
        for name, splitter in self._splitters().items():
            saved = self.settings.splitter_state(name)
            if saved is not None:
                restored = splitter.restoreState(saved) or restored
        if not restored:
            self._default_layout()

    def _default_layout(self) -> None:
        width = max(self.width(), 1000)
        height = max(self.height(), 600)
        left = width * 11 // 20
        self.main_split.setSizes([left, width - left])
        budget = self.budget_panel.sizeHint().height()
        self.left.setSizes([budget, max(height - budget, 200)])
        results = self.results_panel.preferred_height()
        self.right.setSizes([results, max(height - results, 300)])

    def _splitters(self) -> dict[str, QSplitter]:
        return {"main": self.main_split, "left": self.left, "right": self.right}

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:
        if _dropped_plan(event) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:
        path = _dropped_plan(event)
        if path is not None:
            event.acceptProposedAction()
            self.open_path(path)

    def closeEvent(self, event: QCloseEvent) -> None:
        if not self.maybe_save():
            event.ignore()
            return
        self.settings.save_window(self.saveGeometry(), self.saveState(),
                                  {n: s.saveState() for n, s in self._splitters().items()})
        self.settings.sync()
        self.controller.shutdown()
        self._autosave.stop()
        self.recovery.discard()
        event.accept()


def _dropped_plan(event) -> Optional[str]:
    mime = event.mimeData()
    if not mime.hasUrls():
        return None
    for url in mime.urls():
        if url.isLocalFile() and url.toLocalFile().endswith(files.SUFFIX):
            return url.toLocalFile()
    return None


def _default_recovery_dir() -> str:
    base = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return os.path.join(base or os.path.expanduser("~/.dpplanner"), "recovery")


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

