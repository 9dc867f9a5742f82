"""An allocation's evaluation begins before the allocation ends (compute/ahead.py): the helper's
half leaves once the search has found the epsilons, before their total is verified; a half sent
for epsilons the verification then moved is dropped. The numbers are always those of the state
the allocation answers, computed in one process."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from dpplanner import engine
from dpplanner.compute import early, engine_process, helper_process, jobs
from dpplanner.model import files
from dpplanner.model.engine_inputs import composition_inputs
from dpplanner.model.examples import example_path
from dpplanner.model.requests import CurveView, evaluation_request
from engine_jobs import helper_ran, helper_up


class _Side:
    """A stand-in helper: records what is sent, collected and abandoned; runs a job when it is
    collected."""

    def __init__(self, events: list) -> None:
        self.events, self.jobs = events, {}

    def claim(self):
        return True

    def start_claimed(self, fn, request):
        self.jobs[len(self.jobs) + 1] = (fn, request)
        self.events.append(f"sent {fn.__name__} {len(self.jobs)}")
        return len(self.jobs)

    def take_part(self, job, part=0):
        return True

    def finish_claimed(self, job, token, progress):
        fn, request = self.jobs[job]
        self.events.append(f"collected {job}")
        return fn(request, token, progress)

    def abandon(self, job):
        self.events.append(f"abandoned {job}")


@pytest.fixture
def edited():
    """An edit of the 100-query example: one statistic's epsilon typed (pinned)."""
    plan = files.load_plan(example_path("synthetic-100"))
    stats = list(plan.statistics)
    stats[3] = stats[3].replace(epsilon=stats[3].epsilon * 1.05, held=True)
    return jobs.AllocateRequest(plan.budget, tuple(stats), CurveView())


@pytest.fixture
def side(monkeypatch):
    events: list = []
    side = _Side(events)
    monkeypatch.setattr(helper_process, "helper", lambda start=True: side)
    allocate_module = importlib.import_module("dpplanner.engine.allocate")   # (engine.allocate: the function)
    real = allocate_module.compose

    def verified(*args, **kwargs):      # the allocation's forward composition of the scale found
        events.append("verified")
        return real(*args, **kwargs)

    monkeypatch.setattr(allocate_module, "compose", verified)
    return side


def _allocated(request, events):
    with early.to(lambda shares: events.append("early")):
        return jobs.allocate(request, engine.CancelToken(), lambda f: None)


def _halves(events) -> list[str]:
    """The job ids of the helper's halves sent (the allocation's search hands the helper upper
    and lower ends before them: engine/offload.py)."""
    return [e.rsplit(" ", 1)[1] for e in events if e.startswith("sent _helper_half")]


def _same_as_one_process(result, request):
    alone = jobs._evaluate(evaluation_request(composition_inputs(request.budget, result.statistics),
                                              request.view), None, lambda f: None)
    got = result.evaluation
    assert got.request == alone.request
    assert {n: repr(c.epsilon) for n, c in got.totals.items()} == {n: repr(c.epsilon) for n, c in alone.totals.items()}
    for name in alone.curve.upper:
        np.testing.assert_array_equal(got.curve.upper[name], alone.curve.upper[name])


def test_the_helpers_half_leaves_before_the_epsilons_are_verified(side, edited):
    """Sent once, while the allocation composes the total that verifies the epsilons it found
    (the window gets them only after that), and collected once."""
    result = _allocated(edited, side.events)
    [half] = _halves(side.events)
    sent = side.events.index(f"sent _helper_half {half}")
    assert sent < side.events.index("verified") < side.events.index("early")
    assert side.events.count(f"collected {half}") == 1
    assert not [e for e in side.events if e.startswith("abandoned")]
    _same_as_one_process(result, edited)


def test_a_half_sent_for_epsilons_the_verification_moved_is_dropped(side, edited, monkeypatch):
    """The evaluation is of the epsilons the allocation answers: a half sent for others (here the
    search is told of epsilons a little off) is abandoned uncollected and a new one sent."""
    real = jobs.rebalanced

    def told_other_epsilons(budget, stats, *, found, **kwargs):
        return real(budget, stats, found=lambda eps: found(np.asarray(eps) * (1 + 1e-6)), **kwargs)

    monkeypatch.setattr(jobs, "rebalanced", told_other_epsilons)
    result = _allocated(edited, side.events)
    first, second = _halves(side.events)
    assert f"abandoned {first}" in side.events and f"collected {first}" not in side.events
    assert side.events.count(f"collected {second}") == 1
    _same_as_one_process(result, edited)


def test_a_cancelled_allocation_drops_the_half_it_sent_at_once(side, edited, monkeypatch):
    """Cancelled after its search: the half sent is abandoned as the job ends (the helper is free
    for the next one), not when the failed job's frames are collected."""
    real = jobs.rebalanced

    def cancelled(budget, stats, *, found, **kwargs):
        real(budget, stats, found=found, **kwargs)
        raise engine.Cancelled("computation cancelled")

    monkeypatch.setattr(jobs, "rebalanced", cancelled)
    with pytest.raises(engine.Cancelled) as raised:
        _allocated(edited, side.events)
    assert raised.traceback      # (its frames are alive here)
    [half] = _halves(side.events)
    assert f"abandoned {half}" in side.events and f"collected {half}" not in side.events


@pytest.mark.slow
@pytest.mark.skipif(helper_process.usable_cpus() < 2, reason="needs two usable cores")
def test_through_the_engine_process_one_half_goes_to_the_helper_with_the_same_numbers(edited):
    process = engine_process.EngineProcess()
    try:
        helper_up(process)
        before = helper_ran(process, jobs._helper_half)
        got = process.run(jobs.allocate, edited, engine.CancelToken(), lambda f: None)
        assert helper_ran(process, jobs._helper_half) == before + 1
        _same_as_one_process(got, edited)
    finally:
        process.close()
