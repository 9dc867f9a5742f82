"""The helper process (compute/helper_process.py) and the work handed to it: when it starts,
which half of an evaluation it takes, and how jobs and lower twins are sent to it and collected
(with stand-ins for the helper, so these run in this process)."""

from __future__ import annotations

import time

import pytest

from dpplanner import engine
from dpplanner.compute import engine_process, handover, helper_process, jobs, split
from engine_jobs import Slow, slow_job, synthetic_100_request

pytestmark = pytest.mark.slow


@pytest.mark.skipif(helper_process.usable_cpus() < 2, reason="needs two usable cores")
def test_the_helper_starts_only_a_while_after_the_first_result(monkeypatch):
    """Start-up must not share the cores with a second interpreter's imports: the first call asks
    for the helper to be started HELPER_DELAY_S later and computes alone meanwhile."""
    monkeypatch.setattr(engine_process, "_in_child", True)      # as inside the engine process
    monkeypatch.setattr(helper_process, "_helper", None)
    monkeypatch.setattr(helper_process, "_helper_timer", None)
    monkeypatch.setattr(helper_process, "HELPER_DELAY_S", 600.0)
    assert helper_process.helper() is None
    timer = helper_process._helper_timer
    assert timer.interval == 600.0 and helper_process._helper is None     # started later, by it
    timer.cancel()
    timer.function()            # (as the timer would, without waiting for it)
    end = time.monotonic() + 120
    while helper_process.helper() is None and time.monotonic() < end:
        time.sleep(0.05)
    started = helper_process._helper
    try:
        assert started is not None and helper_process.helper() is started
        assert started.run(slow_job, Slow(0.01), engine.CancelToken(), lambda f: None) == started._proc.pid
    finally:
        started.close()


def test_one_usable_core_gets_no_helper(monkeypatch):
    """Under ``taskset -c 0`` (or any affinity of one processor) a second engine process would only
    take turns with the first: none is started, whatever the machine's count of cores."""
    monkeypatch.setattr(engine_process, "_in_child", True)      # as inside the engine process
    monkeypatch.setattr(helper_process, "_helper", None)
    monkeypatch.setattr(helper_process, "_helper_timer", None)
    monkeypatch.setattr(helper_process.os, "cpu_count", lambda: 8)
    monkeypatch.setattr(helper_process.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert helper_process.usable_cpus() == 1
    assert helper_process.helper() is None and helper_process._helper_timer is None
    monkeypatch.setattr(helper_process.os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    assert helper_process.usable_cpus() == 2


def test_the_helper_gets_the_optimal_half_of_an_evaluation():
    """About half the work each: this process computes pld's total and curve and zcdp, the
    helper the rest (optimal's total and prefix curve, which concurrent shares, are most of it).
    After an allocation under pld, pld's total is already in memory (its last composition): then
    filter and the cheap rows are computed here too (in the helper, its half was ~20 ms the
    longer; with all of them here in a manual edit, this half was ~10 ms the longer)."""
    sent = []

    class Side:
        def claim(self):
            return True

        def start_claimed(self, fn, request):
            sent.append(request.request.theorems)
            self.job = (fn, request)
            return 1

        def take_part(self, job, part=0):
            return True

        def finish_claimed(self, job, token, progress):
            fn, request = self.job
            return fn(request, token, progress)

    request = synthetic_100_request()
    for total_known in (False, True):
        jobs._evaluate_beside(Side(), request, *split.halves(request.theorems, total_known), engine.CancelToken(),
                              lambda f: None)
    assert sent == [("basic", "advanced", "kov", "optimal", "concurrent", "filter"), ("optimal", "concurrent")]


def test_an_allocation_under_pld_says_its_total_is_known(monkeypatch):
    """jobs.allocate tells the evaluation that pld's total is in memory only when it allocated
    under pld (an old file's plan may redistribute under optimal)."""
    from dpplanner.model import files
    from dpplanner.model.examples import example_path
    from dpplanner.model.requests import CurveView

    told = []
    monkeypatch.setattr(jobs, "evaluate", lambda request, cancel, progress, total_known=False, sent=None:
                        told.append(total_known))
    plan = files.load_plan(example_path("psi-survey"))
    for theorem in ("pld", "optimal"):
        budget = plan.budget.replace(theorem=theorem)
        jobs.allocate(jobs.AllocateRequest(budget, plan.statistics, CurveView()), engine.CancelToken(), lambda f: None)
    assert told == [True, False]


class _RecordingSide:
    """A stand-in helper that records when jobs are sent and runs them when collected."""

    def __init__(self, events):
        self.events, self.jobs = events, {}

    def claim(self):
        return True

    def start_claimed(self, fn, request):
        self.events.append("sent")
        self.jobs[len(self.jobs) + 1] = (fn, request)
        return len(self.jobs)

    def take_part(self, job, part=0):
        return True

    def finish_claimed(self, job, token, progress):
        fn, request = self.jobs.pop(job)
        self.events.append("collected")
        return fn(request, token, progress)


def test_the_helpers_half_is_sent_before_this_half_starts(monkeypatch):
    """The helper's job leaves before this process computes its own part (a waiting thread that
    sent it first needed the interpreter lock from the computing one: up to 5 ms late)."""
    events = []
    real = jobs._totals

    def here_part(request, *a, **k):
        if "pld" in request.theorems:
            events.append("here starts")
        return real(request, *a, **k)

    monkeypatch.setattr(jobs, "_totals", here_part)
    request = synthetic_100_request()
    got = jobs._evaluate_beside(_RecordingSide(events), request, *split.halves(request.theorems),
                                engine.CancelToken(), lambda f: None)
    assert events[:2] == ["sent", "here starts"] and events.count("collected") == 1
    assert set(got.totals) == set(request.theorems)


def test_a_lower_twin_is_sent_before_the_upper_one_is_composed(monkeypatch):
    """offload's runner sends the job from the calling thread before returning, and collects it
    when the composition asks for it."""
    events = []
    side = _RecordingSide(events)
    monkeypatch.setattr(helper_process, "helper", lambda start=True: side)
    wait = handover.in_helper(lambda x, cancel: x * 2, (21,), None)
    assert events == ["sent"]
    assert wait() == 42 and events == ["sent", "collected"]


def test_a_failing_half_here_still_ends_the_helpers_claim(monkeypatch):
    """If this process's part raises (a cancellation), the helper's job is still collected, which
    ends the claim: the helper is free for the next job."""
    events = []

    def here_part(request, *a, **k):
        raise engine.Cancelled("computation cancelled")

    monkeypatch.setattr(jobs, "_totals", here_part)
    request = synthetic_100_request()
    side = _RecordingSide(events)
    monkeypatch.setattr(side, "finish_claimed", lambda job, token, progress: events.append("collected"))
    with pytest.raises(engine.Cancelled):
        jobs._evaluate_beside(side, request, *split.halves(request.theorems), engine.CancelToken(), lambda f: None)
    assert events == ["sent", "collected"]


def test_a_job_the_helper_cannot_take_is_computed_here(monkeypatch):
    """A job that cannot be sent (here: its arguments do not pickle; or a dead pipe) is computed in
    this process instead, for an evaluation's half and for a lower twin alike."""
    events = []

    class Unsendable(_RecordingSide):
        def start_claimed(self, fn, request):
            raise TypeError("cannot pickle '_thread.lock' object")

    side = Unsendable(events)
    monkeypatch.setattr(helper_process, "helper", lambda start=True: side)
    assert handover.in_helper(lambda x, cancel: x * 2, (21,), None) is None
    request = synthetic_100_request()
    got = jobs._evaluate_beside(side, request, *split.halves(request.theorems), engine.CancelToken(),
                                lambda f: None)
    assert set(got.totals) == set(request.theorems) and got.curve is not None
