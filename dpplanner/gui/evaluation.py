"""Keeping the derived views current: totals, cost curve and privacy profile from the worker.

After every plan change the totals and the cost-vs-k curve are recomputed on the compute worker
(one ``evaluate`` job, debounced) - unless the edit's redistribution brings them
(``PlanEditor.precomputed``: with its answer, or after it from the same job, which then runs as
ours). The job is given the plan's state (budget, statistics, view) and builds the engine's
request itself (``jobs.PlanEvaluation``): on a large plan that takes tens of milliseconds, which
the GUI thread does not spend; a state is compared with the one shown as it is. The slower privacy
profile follows as its own job once edits pause and only while its tab is shown. Results are
applied here, to the results panel, the budget bar and the plots; request ids alone decide whether
a result is still wanted (a plan change cancels the jobs it makes stale). The window only wires.
"""

from __future__ import annotations

from typing import Callable, Optional

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QTabWidget

from dpplanner.compute import jobs, profile_job
from dpplanner.gui.budget_panel import BudgetPanel
from dpplanner.gui.compute import ComputeController, Handlers
from dpplanner.gui.edit_steps import Precomputed
from dpplanner.gui.editing import PlanEditor
from dpplanner.gui.plots import CostPlot, ProfilePlot
from dpplanner.gui.results_panel import ResultsPanel
from dpplanner.gui.settings import Settings
from dpplanner.gui.statistics_panel import StatisticsPanel
from dpplanner.gui.status import PROGRESS_DELAY_MS
from dpplanner.model.requests import CurveView

EVALUATE = "evaluate"
PROFILE = "profile"
#: Quiet time after the totals before the (slower) privacy profile starts.
PROFILE_DELAY_MS = 300


#: How a status message about a failed part of the computation begins (and is recognised by).
PARTLY_FAILED = "Part of the computation failed - "
#: The results panel's note while the totals it shows are those of the plan before an edit.
COMPUTING = "Computing the totals of the plan as it is now: those shown are from before the last edit."


class Evaluation(QObject):
    evaluated = Signal(object)              # EvaluateResult, now shown
    evaluationFailed = Signal(str)
    profiled = Signal(object)               # ProfileResult, now shown
    message = Signal(str, int, bool)        # text, timeout in ms, is an error (status bar)
    retracted = Signal(str)                 # a message of ours that no longer holds

    def __init__(self, editor: PlanEditor, controller: ComputeController, settings: Settings, *,
                 results_panel: ResultsPanel, budget_panel: BudgetPanel, cost_plot: CostPlot,
                 profile_plot: ProfilePlot, plots: QTabWidget, statistics_panel: StatisticsPanel,
                 evaluate_fn: Callable = jobs.evaluate, profile_fn: Callable = profile_job.profile) -> None:
        super().__init__(editor)
        self.editor = editor
        self.plan = editor.plan
        self.controller = controller
        self.settings = settings
        # Read once: nothing in the window changes it, and view() is asked ~4 times an edit (a
        # QSettings read each).
        self._curve_points = settings.get("curve_points")
        self.results_panel = results_panel
        self.budget_panel = budget_panel
        self.cost_plot = cost_plot
        self.profile_plot = profile_plot
        self.plots = plots
        self.statistics_panel = statistics_panel
        self.evaluate_fn = evaluate_fn
        # The job that builds the request and calls evaluate_fn runs where evaluate_fn may run.
        self._evaluate_plan = (jobs.evaluate_plan if getattr(evaluate_fn, "in_engine_process", False)
                               else jobs.evaluate_plan_here)
        self.profile_fn = profile_fn
        #: The result shown; ``_current`` says whether it is still the plan's and view's.
        self.last_result: Optional[jobs.EvaluateResult] = None
        self._current = False
        self._shown_state: Optional[tuple] = None       # (budget, statistics, view) of last_result
        self._prepared: Optional[tuple[tuple, jobs.EvaluateResult]] = None
        self._awaited: Optional[tuple] = None   # the state a redistribution's job evaluates for us
        self._profile_wanted = None
        self._profile_delay = QTimer(self)
        self._profile_delay.setSingleShot(True)
        self._profile_delay.setInterval(PROFILE_DELAY_MS)
        self._profile_delay.timeout.connect(self._start_profile)
        # Totals that take longer than the progress bar's delay are greyed out meanwhile (sooner
        # would flash on every quick edit): the table already shows the new epsilons.
        self._stale_delay = QTimer(self, singleShot=True, interval=PROGRESS_DELAY_MS)
        self._stale_delay.timeout.connect(self._grey_out)
        # What waits for the plan's result to be drawn (after_drawn), at most as long as the
        # totals are shown un-greyed while it is computed.
        self._after_drawn: dict[Callable[[], None], None] = {}
        self._after_limit = QTimer(self, singleShot=True, interval=PROGRESS_DELAY_MS)
        self._after_limit.timeout.connect(self._release)
        statistics_panel.model.set_after_result(self.after_drawn)
        plots.currentChanged.connect(lambda _i: self._start_profile())
        editor.view = self.view
        editor.precomputed.connect(self._prepare)

    def view(self) -> CurveView:
        mode = self.cost_plot.mode()
        # (the prefix curve repeats no row: selecting one leaves its view, and its result, as it is)
        row = self.statistics_panel.current_row() if mode == "repeat" else 0
        return CurveView(mode, self.cost_plot.k_limit(), self._curve_points, row)

    def _wanted(self) -> tuple:
        """The state the window shows now: its result is the one to show."""
        return self.plan.budget, self.plan.statistics, self.view()

    def plan_changed(self) -> None:
        self._current = False
        self._stale_delay.start()
        self._profile_wanted = None
        self.controller.discard(PROFILE)    # out of date; it follows the next totals

    def after_drawn(self, piece: Callable[[], None]) -> None:
        """Run ``piece`` once the result of the plan as it is now is drawn (on a turn after the
        cost plot's paint: the table's numbers that wait for it, gui/table_numbers.py), or its
        computation failed or was cancelled, or after PROGRESS_DELAY_MS at the latest. (Asked
        as the plan's change reaches its views, before this schedules its evaluation.)"""
        self._after_drawn[piece] = None
        if not self._after_limit.isActive():
            self._after_limit.start()

    def _release(self) -> None:
        self._after_limit.stop()
        pieces, self._after_drawn = self._after_drawn, {}
        for piece in pieces:
            piece()

    def result_is_current(self, result: jobs.EvaluateResult) -> bool:
        return self._current and result is self.last_result

    def schedule(self) -> None:
        if not len(self.plan):
            self._awaited = None
            self.controller.discard(EVALUATE)
            self.controller.discard(PROFILE)
            self.last_result = None
            self._current = False
            self._stale_delay.stop()
            self.results_panel.set_results({}, None, "Add a statistic to see the totals.")
            self.results_panel.draw_now()
            self.cost_plot.clear()
            self.profile_plot.clear()
            self.budget_panel.set_spent(None)
            self._release()
            return
        # Equal states give equal requests (the request is a function of the state alone).
        state = self._wanted()
        if self._awaited is not None:
            if self._awaited == state and self.controller.is_busy(EVALUATE):
                return                          # on its way
            self._awaited = None
            self.controller.discard(EVALUATE)   # for another state
        prepared, self._prepared = self._prepared, None
        if prepared is not None and prepared[0] == state:
            self.controller.discard(EVALUATE)   # anything running is for an older state
            self._apply(prepared[1], state)
            return
        if self._current and self._shown_state == state:
            self._release()
            return                              # shown already: nothing to recompute
        if self._current:
            self._stale_delay.start()           # (a new view of the same plan)
        self._current = False
        request = jobs.PlanEvaluation(*state, evaluate=self.evaluate_fn)
        self.controller.schedule(EVALUATE, self._evaluate_plan, request,
                                 Handlers(lambda result: self._apply(result, state), self._on_failed,
                                          self._on_cancelled))

    def _prepare(self, precomputed: Precomputed) -> None:
        state = precomputed.state
        if state[2] != self.view():
            return      # the view moved on while it was out: what schedule() asked for stays wanted
        if precomputed.evaluation is not None:
            self._prepared = (state, precomputed.evaluation)
        elif precomputed.follow(EVALUATE, Handlers(lambda result: self._apply(result, state),
                                                   self._on_failed, self._on_cancelled)):
            self._awaited = state

    def _apply(self, result: jobs.EvaluateResult, state: tuple) -> None:
        self._awaited = None
        if state != self._wanted():     # (a plan that took a state without an event, say)
            self.schedule()             # never shown under another plan or view: the wanted follows
            return
        # (the stale delay keeps running: the Totals are drawn a turn after the plot's paint)
        self.last_result = result
        self._shown_state = state
        self._current = True
        request = result.request
        budget = self.plan.budget
        note = (f"k = {request.k} queries, δ_g = {request.delta_g:g}, η = {request.eta:g}. "
                "Totals are sound upper bounds, rounded up.")
        self.results_panel.set_results(result.totals, result.best, note, state[1], request)
        self.budget_panel.set_spent(result.totals.get(budget.theorem), result.totals)
        if result.curve is not None:
            if request.curve_mode == "prefix":
                plan_k = request.k
            else:
                plan_k = request.multiplicities[request.repeat_index]
            self.cost_plot.set_curve(result.curve, plan_k, budget.spendable_epsilon)
            if self._after_drawn:
                self.cost_plot.after_paint(self._release)
        else:       # (its curve failed: the plan before's is not left drawn as this plan's)
            self.cost_plot.clear()
            self._release()
        # The profile is slower than everything above: it runs as its own job, only while its
        # tab is shown and once edits have paused, so it never delays the next edit.
        self._profile_wanted = request.profile_request()
        self._profile_delay.start()
        problems = "; ".join(f"{part}: {msg}" for part, msg in result.problems.items())
        if problems:
            self.message.emit(f"{PARTLY_FAILED}{problems}", 10000, True)
        else:       # clears only that message: a refusal shown meanwhile stays
            self.retracted.emit(PARTLY_FAILED)
        self.evaluated.emit(result)

    def _grey_out(self) -> None:
        if self._current:       # here but not yet drawn (its turn waits on a slow paint): draw it now
            self.results_panel.draw_now()
            self.cost_plot.fade_until_set()     # (never the plan before's curves as the new totals')
        elif self.last_result is not None:
            self.results_panel.set_stale(COMPUTING)
            self.budget_panel.set_spent_late()
            self.cost_plot.set_late()

    def _start_profile(self) -> None:
        if self._profile_wanted is None or self.plots.currentWidget() is not self.profile_plot:
            return
        if self.controller.is_busy(EVALUATE) or self.editor.is_redistributing():
            return          # the totals of a newer plan come first; they will ask again
        request, self._profile_wanted = self._profile_wanted, None
        self.controller.submit(PROFILE, self.profile_fn, request,
                               Handlers(self._show_profile, self._on_profile_failed))

    def _show_profile(self, result: profile_job.ProfileResult) -> None:
        self.profile_plot.set_profile(result.profile, self.plan.budget.delta)
        self.profiled.emit(result)

    def _on_profile_failed(self, message: str) -> None:
        self.profile_plot.clear()
        self.message.emit(f"The privacy profile could not be computed: {message}", 10000, True)

    def _on_failed(self, message: str) -> None:
        self._awaited = None
        self._stale_delay.stop()
        self._release()
        self.results_panel.set_stale(f"The computation failed: {message}")
        self._drop_drawn_totals()
        self.message.emit(f"The computation failed: {message}", 15000, True)
        self.evaluationFailed.emit(message)

    def _on_cancelled(self) -> None:
        self._awaited = None
        self._stale_delay.stop()
        self._release()
        self.results_panel.set_stale("Cancelled: the totals shown are from before the last edit.")
        self._drop_drawn_totals()
        self.message.emit("Computation cancelled.", 5000, False)

    def _drop_drawn_totals(self) -> None:
        """No total for the plan as it is: the plot and the Spent bar held the plan before's, which
        must not be drawn as this plan's (the Totals table keeps them, greyed, and says whose)."""
        self.cost_plot.clear()
        self.budget_panel.set_spent(None)
