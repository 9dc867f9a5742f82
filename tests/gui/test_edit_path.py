"""What one edit costs and where the engine runs: one validation, one plan event, one worker trip
per edit, and never a composition on the GUI thread."""

from __future__ import annotations

import importlib
import threading

from PySide6.QtCore import QSettings

from dpplanner import engine
from dpplanner.compute import jobs, profile_job
from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import Statistic
from dpplanner.model import plan as plan_module
from dpplanner.model.examples import example_path
from keys import wait_idle


def _window(qtbot, tmp_path, **kwargs) -> MainWindow:
    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(tmp_path / "recovery"), debounce_ms=10,
                        **kwargs)
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    return window


def _set(window, row: int, key: str, text: str) -> None:
    model = window.statistics_panel.model
    assert model.setData(model.index(row, COLUMN_INDEX[key]), text)


def test_one_edit_is_one_validation_one_plan_event_and_one_worker_trip(qtbot, tmp_path, monkeypatch):
    trips: list[str] = []

    def counted(fn):
        def run(request, cancel, progress):
            trips.append(fn.__name__)
            return fn(request, cancel, progress)
        return run

    window = _window(qtbot, tmp_path, evaluate_fn=counted(jobs.evaluate),
                     allocate_fn=counted(jobs.allocate), profile_fn=counted(profile_job.profile))
    assert window.document.open_example(example_path("psi-survey"))
    assert window.plan.budget.redistribute
    wait_idle(qtbot, window)
    validations, events = [], []
    real = plan_module.validate_state
    monkeypatch.setattr(plan_module, "validate_state", lambda *a: validations.append(1) or real(*a))
    window.plan.subscribe(events.append)

    def costs(edit) -> tuple[int, int, int]:
        validations.clear(), events.clear(), trips.clear()
        edit()
        wait_idle(qtbot, window)
        return len(validations), len(events), len(trips)

    # An ε edit that redistributes the others: the allocation and the new totals are one trip.
    assert costs(lambda: _set(window, 0, "epsilon", "0.05")) == (1, 1, 1)
    assert window.plan[0].epsilon == 0.05 and window.plan[0].held
    # A weight edit, and adding a statistic, likewise.
    assert costs(lambda: _set(window, 1, "weight", "2")) == (1, 1, 1)
    assert costs(lambda: window.editor.insert_statistic(0, Statistic("extra", epsilon=0.01))) == (1, 1, 1)
    # Without redistribution: the edit, then the evaluation of the new state.
    assert costs(lambda: window.editor.set_budget(redistribute=False)) == (1, 1, 1)
    assert costs(lambda: _set(window, 2, "epsilon", "0.02")) == (1, 1, 1)
    # The totals shown are those of the plan as it is now.
    shown = window.evaluation.last_result
    assert window.evaluation.result_is_current(shown)
    assert shown.request.epsilons == window.plan.composition_inputs().epsilons


def test_the_gui_thread_never_composes(qtbot, tmp_path, monkeypatch):
    threads: list[str] = []
    # (an evaluation's parts compose from the engine's inputs: compose_rows, curve_rows)
    modules = {m: importlib.import_module(f"dpplanner.engine.{m}") for m in ("compose", "curve")}
    watched = [(engine, n) for n in ("compose", "compose_all", "allocate", "curve", "privacy_profile")]
    for where, name in watched + [(modules["compose"], "compose_rows"), (modules["curve"], "curve_rows")]:
        real = getattr(where, name)

        def recording(*args, _real=real, **kwargs):
            threads.append(threading.current_thread().name)
            return _real(*args, **kwargs)
        monkeypatch.setattr(where, name, recording)

    window = _window(qtbot, tmp_path)
    window.show()
    assert window.document.open_example(example_path("psi-survey"))
    wait_idle(qtbot, window)
    _set(window, 1, "error", str(round(window.plan.privacy(1).error * 2, 6)))   # pins row 1
    wait_idle(qtbot, window)
    assert window.plan[1].held
    _set(window, 0, "epsilon", "0.04")                                          # pins row 0
    wait_idle(qtbot, window)
    window.editor.set_budget(epsilon=0.8)
    wait_idle(qtbot, window)
    window.editor.insert_statistic(0, Statistic("extra"))
    wait_idle(qtbot, window)
    window.editor.remove_statistics([0])
    wait_idle(qtbot, window)
    window.editor.rebalance_now()
    wait_idle(qtbot, window)
    # An impossible pin is refused from the worker too.
    with qtbot.waitSignal(window.editor.refused):
        _set(window, 2, "epsilon", "0.9")
    wait_idle(qtbot, window)
    window.plots.setCurrentWidget(window.profile_plot)
    qtbot.waitUntil(lambda: len(window.profile_plot._eps) > 0)
    assert len(threads) >= 8
    main = threading.main_thread().name
    assert main not in threads, f"{threads.count(main)} engine calls ran on the GUI thread"


def test_opening_a_plan_leaves_the_engine_inputs_to_the_worker(qtbot, tmp_path, monkeypatch):
    """What each statistic is for the engine (its OpenDP noise, certified sensitivity: tens of
    milliseconds on a large plan) is worked out where the totals are computed, not on the GUI
    thread, when a plan opens or is evaluated after an edit."""
    from dpplanner.model import engine_inputs

    threads: list[str] = []
    real = engine_inputs.statistic_mechanisms
    monkeypatch.setattr(engine_inputs, "statistic_mechanisms",
                        lambda *a: threads.append(threading.current_thread().name) or real(*a))
    window = _window(qtbot, tmp_path)
    window.show()
    assert window.document.open_example(example_path("psi-survey"))
    wait_idle(qtbot, window)
    window.editor.set_budget(redistribute=False)
    wait_idle(qtbot, window)
    _set(window, 2, "epsilon", "0.02")
    wait_idle(qtbot, window)
    assert len(threads) >= 3
    assert threading.main_thread().name not in threads
    # ... and the totals shown are still those of the plan as it is now.
    shown = window.evaluation.last_result
    assert window.evaluation.result_is_current(shown)
    assert shown.request == window.plan.evaluation_request(window.evaluation.view())


def test_a_redistribution_answers_with_epsilons_not_statistics():
    """What crosses the pipe back from the engine process is the redistributed epsilons (with the
    evaluation), not the statistics, which the window has already: at 1000 statistics those cost
    milliseconds to pickle there and to unpickle here. They are the redistribution's statistics."""
    import pickle

    from dpplanner.compute import engine_process
    from dpplanner.model import files
    from dpplanner.model.redistribution import rebalanced
    from dpplanner.model.requests import CurveView

    trial = files.load_plan(example_path("psi-survey")).trial()
    trial.update_statistic(0, trial[0].replace(epsilon=0.05, held=True))
    request = jobs.AllocateRequest(trial.budget, trial.statistics, CurveView())
    result = jobs.allocate(request, engine.CancelToken(), lambda _f: None)
    assert b"Statistic" not in pickle.dumps(engine_process._unechoed(result, request))
    assert result.statistics == rebalanced(trial.budget, trial.statistics).statistics
    assert result.statistics[0].epsilon == 0.05


def test_a_redistributed_edit_shows_the_evaluation_that_came_with_it(qtbot, tmp_path, monkeypatch):
    """The evaluation that came back with a redistribution is shown for the plan's state, with no
    second evaluation; telling that it is the plan's compares no statistic field by field (it is
    given the very statistics the plan takes, not equal copies: 1000 comparisons at 1000)."""
    evaluations: list[int] = []

    def counted(request, cancel, progress):
        evaluations.append(1)
        return jobs.evaluate(request, cancel, progress)

    window = _window(qtbot, tmp_path, evaluate_fn=counted)
    assert window.document.open_example(example_path("psi-survey"))
    wait_idle(qtbot, window)
    compared: list[int] = []
    real_eq = Statistic.__eq__
    monkeypatch.setattr(Statistic, "__eq__", lambda a, b: compared.append(1) or real_eq(a, b))
    scheduled: list[int] = []
    real_schedule = window.evaluation.schedule

    def schedule() -> None:
        before = len(compared)
        real_schedule()
        scheduled.append(len(compared) - before)
    monkeypatch.setattr(window.evaluation, "schedule", schedule)
    evaluations.clear()
    _set(window, 0, "epsilon", "0.05")
    wait_idle(qtbot, window)
    shown = window.evaluation.last_result
    assert evaluations == [] and window.evaluation.result_is_current(shown)
    assert scheduled and set(scheduled) == {0}
    assert shown.request.epsilons == window.plan.composition_inputs().epsilons


def test_a_redistribution_is_sent_before_the_window_says_it_redistributes(qtbot, tmp_path):
    """The allocate job leaves before the window updates its status bar and actions for it (the
    engine process need not wait for them)."""
    window = _window(qtbot, tmp_path)
    assert window.document.open_example(example_path("psi-survey"))
    wait_idle(qtbot, window)
    seen: list[tuple[bool, bool]] = []
    window.editor.redistributing.connect(lambda on: seen.append((on, window.controller.is_busy("allocate"))))
    _set(window, 0, "epsilon", "0.05")
    wait_idle(qtbot, window)
    assert seen[0] == (True, True) and window.plan[0].epsilon == 0.05


def test_a_redistributed_edit_makes_the_window_busy_once(qtbot, tmp_path):
    """The window goes busy when the edit's job leaves and idle when its totals are in: handed on
    from the redistribution to the totals after its early answer, the job does not flip it off and
    on (each flip reaches the status bar's progress and the Cancel action)."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from keys import open_cell, retype

    window = _window(qtbot, tmp_path)
    window.show()
    assert window.document.open_example(example_path("psi-survey"))
    wait_idle(qtbot, window)
    flips: list[bool] = []
    window.controller.busyChanged.connect(flips.append)
    editor = open_cell(window, 0, "epsilon")
    retype(editor, "0.05")
    QTest.keyClick(editor, Qt.Key.Key_Return)
    wait_idle(qtbot, window)
    assert window.plan[0].epsilon == 0.05 and window.evaluation.result_is_current(window.evaluation.last_result)
    assert flips == [True, False]
