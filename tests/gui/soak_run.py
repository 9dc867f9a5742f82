"""The soak test's harness: open a start plan, run seeded random edits, then check the screen.

``run_soak`` never raises for what it finds: it returns a ``SoakReport`` whose ``describe()`` names
the seed, the start plan, every exception that escaped an edit (out of the edit call, or into Qt's
event loop, caught with pytest-qt's ``capture_exceptions``), every state overspending its budget
with redistribution on (checked after every edit), every place where the window shows
something other than a fresh computation on the final plan, and the whole edit log - everything
needed to replay the run (see docs/development/testing.md, "Soak test").
"""

from __future__ import annotations

import dataclasses
import math
import random
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QLineEdit

from dpplanner import engine
from dpplanner.compute import jobs
from dpplanner.engine.types import CancelToken
from dpplanner.gui.evaluation import PROFILE_DELAY_MS
from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.results_panel import COLUMNS as RESULT_COLUMNS, ResultsPanel
from dpplanner.gui.settings import Settings
from dpplanner.gui.shares_plot import SharesPlot
from dpplanner.gui.spent_meter import EMPTY
from dpplanner.gui.table_model import COLUMNS, RawRole, StatisticsTableModel
from dpplanner.model import files
from dpplanner.model.engine_inputs import allocation_request, composition_inputs
import soak_edits
from keys import reachable_states

#: Start plans: (name, shipped example, population N typed into the budget panel first).
STARTS = (("psi-survey with N = 6000", "psi-survey", "6000"), ("psi-survey", "psi-survey", None),
          ("census", "census", None))


@dataclass
class SoakReport:
    seed: int
    start: str
    edits: int
    log: list[str] = field(default_factory=list)
    escaped: list[str] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.escaped or self.mismatches)

    def describe(self) -> str:
        lines = [f"soak seed {self.seed} ({self.start}, {self.edits} edits): "
                 f"{len(self.escaped)} escaped exceptions, {len(self.mismatches)} mismatches",
                 f"replay: DPPLANNER_SOAK_SEEDS={self.seed} DPPLANNER_SOAK_EDITS={self.edits} "
                 "pytest tests/gui/test_soak.py -k random_edits"]
        lines += ["-- escaped --", *self.escaped] if self.escaped else []
        lines += ["-- mismatches --", *self.mismatches] if self.mismatches else []
        return "\n".join([*lines, "-- edit log --", *self.log])


def make_window(qtbot, folder: Path, debounce_ms: int) -> MainWindow:
    settings = Settings(QSettings(str(folder / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(folder / "recovery"), debounce_ms=debounce_ms)
    # No "save changes?" box when pytest-qt closes the window at teardown.
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.show()
    return window


def wait_idle(qtbot, window) -> None:
    """Until no job runs or waits, no rebalance is due and the profile's quiet time has passed."""
    def idle() -> bool:
        return not window.controller.is_busy() and not window.editor.is_redistributing()

    qtbot.waitUntil(idle)
    qtbot.wait(PROFILE_DELAY_MS + 50)
    qtbot.waitUntil(idle)


def open_start(window, qtbot, folder: Path, example: str, population) -> Path:
    """File > Examples > <example>, the population typed if any, saved, and opened again: a saved
    document with an empty undo stack, the state that undoing everything must give back."""
    action = next(a for a in window.examples_menu.actions() if a.text() == example)
    action.trigger()
    if population is not None:
        soak = soak_edits.Soak(window, qtbot, random.Random(0))
        soak.type_into(soak_edits.by_name(window.budget_panel, QLineEdit, "Population size"), population)
        wait_idle(qtbot, window)
        assert window.plan.budget.population == int(population), "the start plan did not take N"
    path = folder / "start.dpplan"
    assert window.document.save_to(path)
    assert window.document.open_path(path, confirm=False)
    wait_idle(qtbot, window)
    return path


def run_soak(qtbot, folder: Path, seed: int, edits: int, qtlog=None) -> SoakReport:
    """``qtlog``: pytest-qt's fixture, so each Qt warning is logged at the edit it came from."""
    rng = random.Random(seed)
    start, example, population = STARTS[seed % len(STARTS)]
    report = SoakReport(seed, start, edits)
    window = make_window(qtbot, folder, debounce_ms=rng.choice((1, 10, 100)))
    start_path = open_start(window, qtbot, folder, example, population)
    start_snapshot = window.plan.snapshot()
    soak = soak_edits.Soak(window, qtbot, rng)
    report.log = soak.log
    spends: dict = {}
    with qtbot.capture_exceptions() as caught:
        for i in range(edits):
            edit = soak_edits.pick(rng)
            seen = len(caught)
            logged = len(qtlog.records) if qtlog is not None else 0
            try:
                line = edit(soak)
            except Exception:  # noqa: BLE001 - an escaping exception is what the soak looks for
                line = f"{edit.__name__}: RAISED"
                report.escaped.append(f"edit {i} ({edit.__name__}): {traceback.format_exc()}")
            qtbot.wait(rng.randint(0, 30))
            if qtlog is not None:
                line += "".join(f" [Qt: {r.message}]" for r in qtlog.records[logged:])
            soak.log.append(f"{i:4d} {line}")
            report.escaped += [f"edit {i} ({line}) into Qt: {''.join(traceback.format_exception(*e))}"
                               for e in caught[seen:]]
            report.mismatches += [f"after edit {i} ({line}): {m}" for m in overspent(window, spends)]
        seen = len(caught)
        wait_idle(qtbot, window)
        report.mismatches += [f"after the edits: {m}" for m in screen_mismatches(qtbot, window)]
        report.mismatches += undo_mismatches(qtbot, window, start_snapshot, start_path, folder)
        report.mismatches += [f"after undoing all: {m}" for m in screen_mismatches(qtbot, window)]
        report.escaped += [f"while checking: {''.join(traceback.format_exception(*e))}"
                           for e in caught[seen:]]
    return report


def undo_mismatches(qtbot, window, start_snapshot, start_path: Path, folder: Path) -> list[str]:
    """Edit > Undo until it is disabled: the start plan, unmodified, saved byte for byte."""
    stack = window.editor.undo_stack
    for _ in range(stack.count() + 1):
        if not window.undo_action.isEnabled():
            break
        window.undo_action.trigger()
        qtbot.wait(0)
    wait_idle(qtbot, window)
    found = []
    if window.undo_action.isEnabled():
        found.append("Undo still enabled after undoing every step")
    if window.plan.snapshot() != start_snapshot:
        found.append("undoing every edit did not restore the start plan")
    if window.document.modified:
        found.append("the document is still marked modified at the start of the undo stack")
    end_path = folder / "end.dpplan"
    if not window.document.save_to(end_path):
        found.append("saving the restored plan failed")
    elif end_path.read_bytes() != start_path.read_bytes():
        found.append("the restored plan saves to different bytes than the start document")
    return found


# == the plan never overspends ========================================================================
def overspent(window, spends: dict) -> list[str]:
    """Every state the window holds - the plan, and both sides of every undo step - that has
    redistribution on and spends more than its spendable budget under its theorem (composed anew,
    each distinct state once: ``spends`` remembers them). The start plans are balanced, so with
    redistribution on no state may be over, settled or not (GUIDE: a plan never overspends)."""
    over = []
    for what, state in reachable_states(window):
        if not (state.budget.redistribute and state.statistics):
            continue
        key = dataclasses.replace(allocation_request(state.budget, state.statistics), revision=0)
        if key not in spends:
            inputs = composition_inputs(state.budget, state.statistics)
            spends[key] = engine.compose(list(inputs.epsilons), list(inputs.deltas), inputs.delta_g,
                                         theorem=state.budget.theorem, eta=inputs.eta,
                                         multiplicities=list(inputs.multiplicities),
                                         mechanisms=list(inputs.mechanisms) or None).epsilon
        if spends[key] > state.budget.spendable_epsilon:
            over.append(f"{what} spends ε {spends[key]!r} with redistribution on, over the "
                        f"spendable {state.budget.spendable_epsilon!r}")
    return over


# == the screen against a fresh computation ==========================================================
def screen_mismatches(qtbot, window) -> list[str]:
    wait_idle(qtbot, window)
    fresh = files.loads_plan(files.dumps_plan(window.plan))      # the plan as saved, a new object
    found = _table_mismatches(window, fresh)
    if not len(fresh):
        if window.results_panel.table.rowCount():
            found.append("an empty plan still shows totals")
        return found
    inputs = fresh.composition_inputs()
    totals = engine.compose_all(list(inputs.epsilons), list(inputs.deltas), inputs.delta_g,
                                eta=inputs.eta, multiplicities=list(inputs.multiplicities),
                                mechanisms=list(inputs.mechanisms) or None)
    found += _totals_mismatches(qtbot, window, totals)
    request = fresh.evaluation_request(window.evaluation.view())
    shown = window.evaluation.last_result
    if shown is None:
        return found + ["no evaluation is shown for a plan with statistics"]
    ignored = {"request_id"} | ({"repeat_index"} if request.curve_mode == "prefix" else set())
    differ = [f.name for f in dataclasses.fields(request) if f.name not in ignored
              and getattr(request, f.name) != getattr(shown.request, f.name)]
    if differ:
        return found + [f"the totals and curve shown were computed for another {', '.join(differ)}"]
    curve = jobs.evaluate(request, CancelToken(), lambda _f: None).curve
    found += _curve_mismatches(window, curve, request)
    found += _shares_mismatches(window, fresh)
    return found


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _table_mismatches(window, fresh) -> list[str]:
    shown = window.statistics_panel.model
    expected = StatisticsTableModel(fresh)
    if shown.rowCount() != expected.rowCount():
        return [f"the table shows {shown.rowCount()} rows, the plan has {expected.rowCount()}"]
    found = []
    roles = (Qt.ItemDataRole.DisplayRole, RawRole, Qt.ItemDataRole.CheckStateRole)
    for row in range(expected.rowCount()):
        for col, column in enumerate(COLUMNS):
            for role in roles:
                a = shown.data(shown.index(row, col), role)
                b = expected.data(expected.index(row, col), role)
                if not _same(a, b):
                    found.append(f"row {row} {column.key} ({role}): shown {a!r}, fresh {b!r}")
    expected.detach()
    return found


def _totals_mismatches(qtbot, window, totals) -> list[str]:
    found = []
    result = window.evaluation.last_result
    if result is None:
        return ["no totals are shown for a plan with statistics"]
    for name, comp in totals.items():
        got = result.totals.get(name)
        key = (comp.applicable, comp.epsilon, comp.delta, comp.epsilon_lower)
        if got is None or not all(map(_same, key, (got.applicable, got.epsilon, got.delta, got.epsilon_lower))):
            found.append(f"total under {name}: shown {got}, fresh {comp}")
    try:
        best = engine.best(totals)
    except ValueError:
        best = None
    expected = ResultsPanel()
    expected.set_results(totals, best)
    qtbot.waitUntil(lambda: not expected.drawing())    # (drawn on a turn of its own)
    table, fresh_table = window.results_panel.table, expected.table
    if table.rowCount() != fresh_table.rowCount():
        return found + [f"the totals table has {table.rowCount()} rows, fresh {fresh_table.rowCount()}"]
    for row in range(fresh_table.rowCount()):
        for col, title in enumerate(RESULT_COLUMNS):
            if title == "time":
                continue
            a, b = table.item(row, col).text(), fresh_table.item(row, col).text()
            if a != b:
                found.append(f"totals table row {row} {title}: shown {a!r}, fresh {b!r}")
    spent = totals.get(window.plan.budget.theorem)
    known = spent is not None and spent.applicable and not math.isnan(spent.epsilon)
    if known == (window.budget_panel.meter.format() in ("—", EMPTY)):
        found.append(f"the budget meter shows {window.budget_panel.meter.format()!r} for {spent}")
    expected.deleteLater()
    return found


def _curve_mismatches(window, curve, request) -> list[str]:
    plot = window.cost_plot
    if curve is None:
        return ["the fresh cost curve failed"] if plot.items else []
    found = []
    ks = np.asarray(curve.ks, dtype=float)
    for name, values in curve.upper.items():
        values = np.asarray(values, dtype=float)
        drawn = not np.all(np.isnan(values))
        if drawn != (name in plot.items):
            found.append(f"cost curve {name}: drawn {name in plot.items}, expected {drawn}")
            continue
        if drawn:
            x, y = plot.curve_data(name)
            expected = np.where(np.isfinite(values), values, np.nan)
            if not (np.array_equal(x, ks) and np.array_equal(y, expected, equal_nan=True)):
                found.append(f"cost curve {name} differs from a fresh curve")
    marked = 10 ** plot.k_line.value() if plot.log_k.isChecked() else plot.k_line.value()
    if request.curve_mode == "prefix" and not math.isclose(marked, request.k, rel_tol=1e-12):
        found.append(f"the plan's k is marked at {marked}, the plan has k = {request.k}")
    return found


def _shares_mismatches(window, fresh) -> list[str]:
    window.plots.setCurrentWidget(window.shares_plot)       # the bars refresh while shown
    expected = SharesPlot()
    expected.set_plan(fresh, fresh.privacy_all())
    shown = window.shares_plot
    found = []
    for what in ("shares", "errors"):
        if not np.array_equal(getattr(shown, what), getattr(expected, what), equal_nan=True):
            found.append(f"the shares plot's {what} differ from a fresh plot of the plan")
    expected.deleteLater()
    return found
