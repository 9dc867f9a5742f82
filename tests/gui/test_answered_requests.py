"""A redistribution's request after another carries only the rows the edit changed: the engine
process rebuilds the rest from its previous answer (compute/answered.py), or asks for the whole
request when that answer is gone."""

from __future__ import annotations

import pickle

from PySide6.QtCore import QSettings

from dpplanner import engine
from dpplanner.compute import answered, jobs
from dpplanner.gui.main_window import MainWindow
from dpplanner.gui.settings import Settings
from dpplanner.gui.table_model import COLUMN_INDEX
from dpplanner.model import files
from dpplanner.model.examples import example_path
from dpplanner.model.redistribution import rebalanced
from dpplanner.model.requests import CurveView
from keys import wait_idle


def _answered_then_edited():
    """(the first request, its answer's statistics as the window holds them, the next request)."""
    trial = files.load_plan(example_path("synthetic-100")).trial()
    owner = answered.new_owner()
    first = jobs.AllocateRequest(trial.budget, trial.statistics, CurveView(), 1, owner)
    result = jobs.allocate(first, engine.CancelToken(), lambda _f: None)
    trial.apply_allocation(result.epsilons, held=[s.held for s in first.statistics])
    base = answered.Answered(owner, 1, trial.statistics)
    trial.update_statistic(3, trial[3].replace(epsilon=trial[3].epsilon * 1.05, held=True))
    return first, base, jobs.AllocateRequest(trial.budget, trial.statistics, CurveView(), 2, owner, base)


def test_the_next_request_sends_the_rows_the_edit_changed_and_gets_the_same_statistics():
    first, _base, second = _answered_then_edited()
    wire = pickle.dumps(second)
    assert len(wire) * 10 < len(pickle.dumps(first))
    assert pickle.loads(wire).statistics == second.statistics


def test_a_request_whose_answer_is_gone_or_differs_is_answered_with_resend():
    _first, base, second = _answered_then_edited()
    wire = pickle.dumps(second)
    # an answer whose epsilons are not those the window holds: not built on
    answered.remember(base.owner, base.key, tuple(s.replace(epsilon=s.epsilon * 2) for s in base.statistics))
    assert pickle.loads(wire).statistics is None
    answered._kept.clear()          # (a restarted engine process)
    gone = pickle.loads(wire)
    assert gone.statistics is None and jobs.allocate(gone, engine.CancelToken(), lambda _f: None).resend


def test_the_window_sends_a_request_whole_when_its_answer_is_gone(qtbot, tmp_path):
    """Each request crosses a pipe as the engine process would get it, after that process forgot
    every answer: the second edit's is rebuilt without statistics, and the window sends it again
    whole; the edit is made with the redistribution of its own state."""
    built_on: list[bool] = []

    def through_a_restarted_process(request, cancel, progress):
        built_on.append(request.base is not None)
        answered._kept.clear()
        return jobs.allocate(pickle.loads(pickle.dumps(request)), cancel, progress)

    settings = Settings(QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(tmp_path / "recovery"), debounce_ms=10,
                        allocate_fn=through_a_restarted_process)
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    assert window.document.open_example(example_path("synthetic-100"))
    wait_idle(qtbot, window)
    model = window.statistics_panel.model
    for row, text in ((0, "0.05"), (5, "0.04")):
        trial = window.plan.trial()
        trial.update_statistic(row, trial[row].replace(epsilon=float(text), held=True))
        assert model.setData(model.index(row, COLUMN_INDEX["epsilon"]), text)
        wait_idle(qtbot, window)
        assert window.plan.statistics == rebalanced(trial.budget, trial.statistics).statistics
    assert built_on == [False, True, False]
    shown = window.evaluation.last_result
    assert window.evaluation.result_is_current(shown)
    assert shown.request.epsilons == window.plan.composition_inputs().epsilons
