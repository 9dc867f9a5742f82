"""Keeping the derived views current: totals, cost curve and privacy profile from the worker.

After every plan change the totals and the cost-vs-k curve are recomputed on the compute worker
(one ``evaluate`` job, debounced); the slower privacy profile follows as its own job once edits
pause and only while its tab is shown. Results are applied to the results panel, the budget bar and
the plots here; the window only wires.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QTabWidget

from dpplanner.compute import jobs
from dpplanner.gui.budget_panel import BudgetPanel
from dpplanner.gui.compute import ComputeController
from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.plots import CostPlot, ProfilePlot
from dpplanner.gui.results_panel import ResultsPanel
from dpplanner.gui.settings import Settings
from dpplanner.gui.statistics_panel import StatisticsPanel

EVALUATE = "evaluate"
PROFILE = "profile"
#: Quiet time after the totals before the (slower) privacy profile starts.
PROFILE_DELAY_MS = 300


class Evaluation(QObject):
    message = Signal(str, int, bool)        # text, timeout in ms, is an error (status bar)

    def __init__(self, editor: PlanEditor, controller: ComputeController, settings: Settings, *,
                 results_panel: ResultsPanel, budget_panel: BudgetPanel, cost_plot: CostPlot,
                 profile_plot: ProfilePlot, plots: QTabWidget, statistics_panel: StatisticsPanel,
                 evaluate_fn: Callable = jobs.evaluate, profile_fn: Callable = jobs.profile) -> None:
        super().__init__(editor)
        self.editor = editor
        self.plan = editor.plan
        self.controller = controller
        self.settings = settings
        self.results_panel = results_panel
        self.budget_panel = budget_panel
        self.cost_plot = cost_plot
        self.profile_plot = profile_plot
        self.plots = plots
        self.statistics_panel = statistics_panel
        self.evaluate_fn = evaluate_fn
        self.profile_fn = profile_fn
        self.last_result: Optional[jobs.EvaluateResult] = None
        self._profile_wanted: Optional[jobs.ProfileRequest] = None
        self._profile_delay = QTimer(self)
        self._profile_delay.setSingleShot(True)
        self._profile_delay.setInterval(PROFILE_DELAY_MS)
        self._profile_delay.timeout.connect(self._start_profile)
        plots.currentChanged.connect(lambda _i: self._start_profile())
        controller.resultReady.connect(self._on_result)
        controller.failed.connect(self._on_failed)
        controller.cancelled.connect(self._on_cancelled)

    def plan_changed(self) -> None:
        self._profile_wanted = None
        self.controller.cancel(PROFILE)     # out of date; it follows the next totals

    def request(self) -> Optional[jobs.EvaluateRequest]:
        if not len(self.plan):
            return None
        inputs = self.plan.composition_inputs()
        repeat_index = min(max(self.statistics_panel.current_row(), 0), len(self.plan) - 1)
        return jobs.EvaluateRequest(
            inputs.epsilons, inputs.deltas, inputs.multiplicities, inputs.delta_g, inputs.eta,
            curve_mode=self.cost_plot.mode(), curve_k_max=self.cost_plot.k_limit(),
            curve_points=self.settings.get("curve_points"), repeat_index=repeat_index,
            mechanisms=inputs.mechanisms)

    def schedule(self) -> None:
        request = self.request()
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

    def result_is_current(self, result: jobs.EvaluateResult) -> bool:
        request = self.request()
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
        budget = self.plan.budget
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
            self.message.emit(f"Part of the computation failed - {problems}", 10000, True)
        elif not self.editor.is_redistributing():
            self.message.emit("", 0, False)

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
            self.message.emit(f"The privacy profile could not be computed: {message}", 10000, True)
        if channel == EVALUATE:
            self.results_panel.set_stale(f"The computation failed: {message}")
            self.message.emit(f"The computation failed: {message}", 15000, True)

    def _on_cancelled(self, channel: str) -> None:
        if channel == EVALUATE:
            self.results_panel.set_stale("Cancelled: the totals shown are from before the last edit.")
            self.message.emit("Computation cancelled.", 5000, False)
