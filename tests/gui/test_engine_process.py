"""Engine jobs in the child process: same numbers, cancel, errors, a crashed child is replaced."""

from __future__ import annotations

import gc
import os
import threading
import time

import numpy as np
import pytest

from dpplanner import engine
from dpplanner.compute import engine_process, handover, helper_process, jobs
from dpplanner.gui.compute import ComputeController
from dpplanner.compute.engine_process import in_engine_process
from dpplanner.model.requests import CurveView
from engine_jobs import Slow, helper_pid, helper_ran, helper_up, slow_job, synthetic_100_request
from probe import Probe

#: Each test talks to a spawned child process (seconds to start on a busy machine).
pytestmark = pytest.mark.slow


@in_engine_process
def failing_job(request, cancel, progress):
    raise ValueError("epsilons[4] = -1 is negative; allowed: eps >= 0")


@in_engine_process
def buggy_job(request, cancel, progress):
    return {}["missing"]


@in_engine_process
def dying_job(request, cancel, progress):
    os._exit(3)


@in_engine_process
def echoing_job(request, cancel, progress):
    return jobs.AllocateResult(request.request_id, request, None, None, "a refusal")


@pytest.fixture(scope="module")
def process():
    proc = engine_process.EngineProcess()
    yield proc
    proc.close()


@pytest.fixture
def probe(qtbot):
    return Probe()


@pytest.fixture
def controller(qtbot, process):
    ctl = ComputeController(debounce_ms=10, engine_process=process)
    yield ctl
    ctl.shutdown()


def test_jobs_run_in_another_process(qtbot, controller, probe):
    with qtbot.waitSignal(probe.result) as blocker:
        controller.submit("x", slow_job, Slow(0.01), probe.handlers)
    assert blocker.args[0] != os.getpid()


def test_the_same_numbers_as_in_this_process(qtbot, controller, probe, small_plan):
    request = small_plan().evaluation_request(CurveView())
    with qtbot.waitSignal(probe.result) as blocker:
        controller.submit("evaluate", jobs.evaluate, request, probe.handlers)
    remote = blocker.args[0]
    local = jobs.evaluate(remote.request, engine.CancelToken(), lambda f: None)
    # repr: nan (kov does not apply here) must compare equal to nan
    assert {k: repr((v.epsilon, v.epsilon_lower, v.delta)) for k, v in remote.totals.items()} == \
        {k: repr((v.epsilon, v.epsilon_lower, v.delta)) for k, v in local.totals.items()}
    for name in local.curve.upper:
        assert np.array_equal(remote.curve.upper[name], local.curve.upper[name], equal_nan=True)


def test_cancel_reaches_the_child_and_it_stays_usable(qtbot, controller, probe):
    got = []
    probe.result.connect(lambda result: got.append(result))
    with qtbot.waitSignal(controller.progressChanged):   # it runs in the child
        controller.submit("x", slow_job, Slow(60), probe.handlers)
    with qtbot.waitSignal(probe.cancelled):
        controller.cancel("x")
    qtbot.waitUntil(lambda: not controller.is_busy())
    with qtbot.waitSignal(probe.result):
        controller.submit("x", slow_job, Slow(0.01), probe.handlers)   # would wait 60 s if the child ignored it
    assert len(got) == 1


def test_errors_come_back_as_messages(qtbot, controller, probe):
    with qtbot.waitSignal(probe.failed) as blocker:
        controller.submit("x", failing_job, Slow(0), probe.handlers)
    assert blocker.args == ["epsilons[4] = -1 is negative; allowed: eps >= 0"]
    with qtbot.waitSignal(probe.failed) as blocker:
        controller.submit("x", buggy_job, Slow(0), probe.handlers)
    assert blocker.args[0].startswith("KeyError: 'missing' (buggy_job, line")


def test_a_dead_child_is_replaced(qtbot, controller, probe):
    with qtbot.waitSignal(probe.failed) as blocker:
        controller.submit("x", dying_job, Slow(0), probe.handlers)
    assert "stopped unexpectedly" in blocker.args[0]
    with qtbot.waitSignal(probe.result):
        controller.submit("x", slow_job, Slow(0.01), probe.handlers)


def test_the_window_plots_engine_numbers_through_the_process(qtbot, tmp_path, small_plan):
    from PySide6.QtCore import QSettings

    from dpplanner.gui.main_window import MainWindow
    from dpplanner.gui.settings import Settings

    settings = Settings(QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))
    window = MainWindow(settings=settings, recovery_dir=str(tmp_path / "r"), debounce_ms=10,
                        engine_in_process=True)
    qtbot.addWidget(window, before_close_func=lambda w: w.editor.undo_stack.setClean())
    window.document.load(small_plan(), None, "t")
    window.statistics_panel.model.setData(
        window.statistics_panel.model.index(0, 8), "3")          # weight: redistributes remotely
    qtbot.waitUntil(lambda: window.evaluation.last_result is not None and window.evaluation.result_is_current(window.evaluation.last_result)
                    and not window.editor.is_redistributing())
    assert sum(s.epsilon for s in window.plan) == pytest.approx(1.0, rel=1e-6)
    inputs = window.plan.composition_inputs()
    expected = engine.curve(list(inputs.epsilons), list(inputs.deltas), inputs.delta_g, mode="prefix",
                            points=window.settings.get("curve_points"),
                            multiplicities=list(inputs.multiplicities), mechanisms=list(inputs.mechanisms),
                            lower=False)    # as the window asks: the plot draws upper bounds only
    x, y = window.cost_plot.curve_data("optimal")
    assert np.array_equal(y, np.where(np.isfinite(expected.upper["optimal"]), expected.upper["optimal"], np.nan),
                          equal_nan=True)


@pytest.mark.skipif(helper_process.usable_cpus() < 2, reason="needs two usable cores")
def test_an_evaluation_splits_across_the_helper_with_the_same_numbers(process):
    """With a second core optimal and concurrent run in a helper process beside the others; the
    window gets the same numbers, in the same order, as from one process."""
    helper_up(process)
    request = synthetic_100_request()
    before = helper_ran(process, jobs._helper_half)
    got = process.run(jobs.evaluate, request, engine.CancelToken(), lambda f: None)
    assert helper_ran(process, jobs._helper_half) == before + 1     # the helper computed its half
    alone = jobs._evaluate(request, None, lambda f: None)
    assert list(got.totals) == list(alone.totals) == list(request.theorems)
    def numbers(c):     # (kov's nan != nan; the timings differ)
        return (repr(c.epsilon), repr(c.epsilon_lower), c.detail, c.applicable, c.reason)

    assert {n: numbers(c) for n, c in got.totals.items()} == {n: numbers(c) for n, c in alone.totals.items()}
    assert got.best == alone.best and not got.problems
    assert list(got.curve.upper) == list(alone.curve.upper)
    for name in alone.curve.upper:
        np.testing.assert_array_equal(got.curve.upper[name], alone.curve.upper[name])


@pytest.mark.skipif(helper_process.usable_cpus() < 2, reason="needs two usable cores")
def test_a_pld_total_composes_its_lower_twin_in_the_helper_with_the_same_answer(process):
    """A pld bracket's lower twin is composed in the idle helper beside the upper one
    (engine.offload), and the answer is the same. (An allocation's search composes upper ends
    only, and the one lower end of the scale it finds has nothing to run beside; with OpenDP's
    discrete noise and Gaussians one composition gives both ends: the plan's continuous noise.)"""
    from dataclasses import replace

    from dpplanner.model import files
    from dpplanner.model.examples import example_path
    from dpplanner.model.statistic import Kind, Noise

    plan = files.load_plan(example_path("synthetic-100"))
    stats = [s.replace(noise=Noise.CONTINUOUS) if s.kind is not Kind.CUSTOM else s for s in plan.statistics]
    stats[3] = replace(stats[3], epsilon=stats[3].epsilon * 1.05, held=True)
    helper_up(process)
    before = helper_ran(process, handover.apply)
    got = process.run(pld_total_only, (plan.budget, tuple(stats)), engine.CancelToken(), lambda f: None)
    assert helper_ran(process, handover.apply) > before
    assert got == pld_total_only((plan.budget, tuple(stats)), None, None)


def test_a_claimed_process_takes_no_other_job_until_its_own_has_run(process):
    """The offload runner claims the helper without waiting (a check and then run() could lose it
    to the evaluation's other half and wait for that whole job)."""
    assert _wait_claim(process)
    assert not process.claim() and not process.ready()
    process.finish_claimed(process.start_claimed(helper_pid, None), engine.CancelToken(), lambda f: None)
    assert process.claim()
    process.finish_claimed(process.start_claimed(helper_pid, None), engine.CancelToken(), lambda f: None)


def _wait_claim(process, timeout_s: float = 120.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if process.claim():
            return True
        time.sleep(0.05)
    return False


@in_engine_process
def pld_total_only(request, cancel, progress):
    """Only the plan's pld total (no evaluation, which would use the helper anyway)."""
    from dpplanner.engine.mechanisms import forget
    from dpplanner.model.engine_inputs import composition_inputs

    forget()        # (the brackets would be remembered from an earlier run in the same process)
    i = composition_inputs(*request)
    return engine.compose(list(i.epsilons), list(i.deltas), i.delta_g, "pld", i.eta, list(i.multiplicities),
                          mechanisms=list(i.mechanisms), cancel=cancel).epsilon


@pytest.mark.skipif(helper_process.usable_cpus() < 2, reason="needs two usable cores")
def test_a_cancelled_evaluation_leaves_the_helper_free(process):
    """Cancelled once it runs (its first progress comes after the helper was sent its half): the
    evaluation ends as cancelled however fast it was, and the helper is free for the next job.
    (Whether the helper started that half before the cancel reached it depends on the machine's
    speed: on a busy one it may find it cancelled first.)"""
    helper_up(process)
    before = helper_ran(process, jobs._helper_half)
    token = engine.CancelToken()
    with pytest.raises(engine.Cancelled):
        process.run(jobs.evaluate, synthetic_100_request(), token, lambda f: token.cancel())
    assert helper_up(process, timeout_s=30.0)
    assert helper_ran(process, jobs._helper_half) in (before, before + 1)


def test_a_result_holding_its_request_gets_the_callers_own_back(process, small_plan):
    """A result that holds the request it was computed for (a redistribution's: every statistic)
    does not carry it back through the pipe: the caller's own request object is put in its place."""
    request = jobs.AllocateRequest(small_plan().budget, small_plan().statistics, CurveView("prefix", None, 5, -1))
    result = process.run(echoing_job, request, engine.CancelToken(), lambda _f: None)
    assert result.request is request and result.refusal == "a refusal"
    allocated = process.run(jobs.allocate, request, engine.CancelToken(), lambda _f: None)
    assert allocated.request is request and allocated.evaluation.request.k == small_plan().k


def test_an_allocation_answers_its_epsilons_before_their_evaluation(process, small_plan):
    """Through the pipe, before the job's result: the redistributed epsilons without their
    evaluation (the window draws them meanwhile), holding the caller's own request."""
    plan = small_plan()
    request = jobs.AllocateRequest(plan.budget, plan.statistics, CurveView("prefix", None, 5, -1))
    early: list = []
    allocated = process.run(jobs.allocate, request, engine.CancelToken(), lambda _f: None, early.append)
    assert len(early) == 1 and early[0].evaluation is None and early[0].request is request
    assert early[0].epsilons == allocated.epsilons
    assert allocated.evaluation.request.epsilons == allocated.epsilons


def test_engine_jobs_queued_behind_a_busy_worker_are_all_answered(qtbot, process):
    """An engine job that waits for the worker is not overtaken by one sent on submit: that one's
    claim would hold the process, and only the worker (busy with the first) could end it."""
    gate = threading.Event()

    def blocking(request, cancel, progress):      # (in this process: it holds the worker)
        gate.wait()
        return "done"

    ctl = ComputeController(debounce_ms=10, engine_process=process)
    probes = [Probe(), Probe(), Probe()]
    try:
        assert _wait_claim(process)     # taken here: the next job cannot be sent on submit
        job = process.start_claimed(slow_job, Slow(0.01))
        ctl.submit("x", blocking, Slow(0), probes[0].handlers)
        ctl.submit("c", slow_job, Slow(0.01), probes[1].handlers)
        process.finish_claimed(job, engine.CancelToken(), lambda f: None)
        ctl.submit("a", slow_job, Slow(0.01), probes[2].handlers)   # the process is free again
        with qtbot.waitSignals([p.result for p in probes], timeout=120_000):
            gate.set()
    finally:
        gate.set()
        ctl.shutdown()


def test_closing_with_a_sent_job_uncollected_leaves_the_process_free(qtbot, process):
    """A job sent on submit holds the process until the worker collects its answer; a window
    closed before its worker got to it ends that claim itself (the process is shared)."""
    ctl = ComputeController(debounce_ms=10, engine_process=process)
    ctl._thread.quit()      # (the worker stops before it gets to the job: as at a close)
    ctl._thread.wait()
    assert _wait_claim(process)
    process.finish_claimed(process.start_claimed(slow_job, Slow(0)), engine.CancelToken(), lambda f: None)
    ctl.submit("x", slow_job, Slow(60), Probe().handlers)
    assert not process.claim()                  # sent: the job holds it
    ctl.shutdown()
    assert process.claim()
    process.finish_claimed(process.start_claimed(slow_job, Slow(0)), engine.CancelToken(), lambda f: None)


def test_a_handed_over_job_whose_collector_is_dropped_leaves_the_process_free(process):
    """A job handed over and never collected (its collector dropped uncalled) ends its claim: the
    process takes the next job at once, which gets its own answer (the dropped one is cancelled
    there, and its late message is not taken for the next job's)."""
    assert _wait_claim(process)
    process.finish_claimed(process.start_claimed(slow_job, Slow(0)), engine.CancelToken(), lambda f: None)
    collect, _job = handover.hand_over(process, slow_job, Slow(60), engine.CancelToken())
    del collect
    gc.collect()
    assert process.claim()
    assert process.finish_claimed(process.start_claimed(slow_job, Slow(0)), engine.CancelToken(),
                                  lambda f: None) == process._proc.pid
