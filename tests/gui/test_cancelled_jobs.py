"""A job whose token is cancelled before it starts does no work, whichever way it goes: queued on
the compute worker, sent to the engine process, handed to the helper, or cancelled while on its
way to a child. The processes' own counts of jobs run say whether any work started."""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import Counter
from types import SimpleNamespace

import pytest

from dpplanner import engine
from dpplanner.compute import engine_process, handover, helper_process, jobs, profile_job
from dpplanner.compute.engine_process import in_engine_process
from dpplanner.gui.compute import ComputeController
from dpplanner.model.requests import CurveView
from engine_jobs import Slow, helper_up, runs, slow_job
from probe import Probe

pytestmark = pytest.mark.slow


def jobs_of_every_kind() -> list[tuple]:
    """(job function, request) for each job the window sends to the engine process."""
    from dpplanner.model import files
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    evaluation = plan.evaluation_request(CurveView())
    return [(jobs.evaluate, evaluation),
            (jobs.allocate, jobs.AllocateRequest(plan.budget, plan.statistics, CurveView())),
            (profile_job.profile, evaluation.profile_request())]


KINDS = (jobs.evaluate, jobs.allocate, profile_job.profile, jobs._helper_half, handover.apply)


def _cancelled() -> engine.CancelToken:
    token = engine.CancelToken()
    token.cancel()
    return token


def _no_progress(fraction: float) -> None:
    raise AssertionError("a cancelled job reported progress: it started")


def _work(counts: dict) -> dict:
    return {fn: n for fn, n in counts.items() if fn in KINDS}


@pytest.fixture(scope="module")
def process():
    proc = engine_process.EngineProcess()
    yield proc
    proc.close()


def test_a_pre_cancelled_job_of_every_kind_raises_cancelled_in_this_process(monkeypatch):
    """As the worker thread runs them where there is no engine process (a frozen app): not one
    step of the work starts."""
    def started(*args, **kwargs):
        raise AssertionError("a cancelled job started its work")

    for name in ("_evaluate", "_evaluate_beside", "rebalanced"):
        monkeypatch.setattr(jobs, name, started)
    monkeypatch.setattr(jobs.engine, "privacy_profile", started)
    for fn, request in jobs_of_every_kind():
        with pytest.raises(engine.Cancelled):
            fn(request, _cancelled(), _no_progress)


def test_a_pre_cancelled_job_of_every_kind_is_never_sent_to_the_engine_process(process):
    before = _work(runs(process))
    for fn, request in jobs_of_every_kind():
        for _ in range(3):
            with pytest.raises(engine.Cancelled):
                process.run(fn, request, _cancelled(), _no_progress)
    assert _work(runs(process)) == before


def with_progress(fn, request, cancel):
    """An offloaded job's signature ``fn(*args, cancel)`` over a window job's."""
    return fn(request, cancel, _no_progress)


@in_engine_process
def hand_cancelled_jobs_to_the_helper(kinds, cancel, progress):
    """In the engine process: each job handed to the helper with a cancelled token, as an
    evaluation's half and as offloaded work; (how each ended, the helper's counts before, after)."""
    side = helper_process.helper(start=False)
    if side is None:
        raise RuntimeError("the helper is not up and free")
    count = (lambda: side.run(engine_process.runs, None, engine.CancelToken(), lambda f: None))
    before, ended = count(), []
    for fn, request in kinds:
        for hand in (lambda: (handover.hand_over(side, fn, request, _cancelled()) or (None,))[0],
                     lambda: handover.in_helper(with_progress, (fn, request), _cancelled())):
            try:
                collect = hand()
            except engine.Cancelled:
                ended.append("cancelled")
                continue
            ended.append("handed over" if collect is not None else "not taken")
            try:
                if collect is not None:
                    collect()       # ends the claim, so that the next question hangs nowhere
            except Exception:  # noqa: BLE001 - how it ended is already recorded
                pass
    return ended, before, count()


@pytest.mark.skipif(helper_process.usable_cpus() < 2, reason="needs two usable cores")
def test_a_pre_cancelled_job_of_every_kind_is_never_handed_to_the_helper(process):
    helper_up(process)
    kinds = jobs_of_every_kind()
    ended, before, after = process.run(hand_cancelled_jobs_to_the_helper, kinds, engine.CancelToken(),
                                       lambda f: None)
    assert ended == ["cancelled"] * 2 * len(kinds)
    assert _work(after) == _work(before)
    assert helper_up(process, timeout_s=30.0)        # and no claim was left behind


def test_a_job_cancelled_on_its_way_is_not_started_by_the_child(monkeypatch):
    """The child checks the token when a job arrives (the parent may cancel after sending it):
    such a job is answered "cancelled" without running; the next job runs."""
    monkeypatch.setattr(engine_process, "_in_child", False)   # (the child sets it: restored here)
    monkeypatch.setattr(engine_process, "_runs", Counter())
    monkeypatch.setattr(engine_process, "_parts", None)
    monkeypatch.setattr(engine_process, "_job_id", 0)
    parent, child = multiprocessing.Pipe()
    flag = SimpleNamespace(value=0)
    serving = threading.Thread(target=engine_process._child_main, args=(child, flag, None), daemon=True)
    serving.start()
    try:
        assert parent.recv()[0] == "ready"
        for job_id, (fn, request) in enumerate(jobs_of_every_kind(), 1):
            flag.value = job_id                 # the parent cancelled it after sending
            parent.send((job_id, fn, request))
            assert parent.recv() == ("cancelled", job_id, None)
        parent.send((9, engine_process.runs, None))
        assert parent.recv() == ("result", 9, {engine_process.runs: 1})
    finally:
        parent.close()
        serving.join(timeout=60)
    assert not serving.is_alive()


def test_jobs_cancelled_while_queued_never_reach_the_engine_process(qtbot, process):
    """Submitted behind a running job and cancelled before the worker thread reaches them."""
    probe = Probe()
    controller = ComputeController(debounce_ms=10, engine_process=process)
    try:
        before = _work(runs(process))
        with qtbot.waitSignal(controller.progressChanged):   # the worker is taken
            controller.submit("running", slow_job, Slow(60), probe.handlers)
        for i, (fn, request) in enumerate(jobs_of_every_kind()):
            controller.submit(f"kind {i}", fn, request, probe.handlers)
            controller.cancel(f"kind {i}")
        controller.cancel("running")
        with qtbot.waitSignal(probe.result) as last:     # the worker ran the queue
            controller.submit("last", slow_job, Slow(0), probe.handlers)
        assert last.args[0] != os.getpid()
        assert _work(runs(process)) == before
    finally:
        controller.shutdown()
