"""An evaluation's optimal curve is computed once, by whichever of the engine process and its
helper gets to it first, with the same numbers as computing everything in one process."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from dpplanner import engine
from dpplanner.compute import engine_process, jobs, split
from dpplanner.compute.engine_process import in_engine_process
from engine_jobs import synthetic_100_request


@in_engine_process
def takes_its_part(request, cancel, progress):
    return engine_process.take_part()


@pytest.mark.slow
def test_a_part_goes_to_whichever_takes_it_first():
    """A job in the child and the process that sent it settle through shared memory which of
    them computes a part both could: the first to ask."""
    process = engine_process.EngineProcess()
    try:
        assert process.run(takes_its_part, None, engine.CancelToken(), lambda f: None) is True
        assert not process.take_part(process._ids)       # the job took it: its sender does not
        assert process.take_part(process._ids, 1)        # (another part of the same job is free)
        assert process.take_part(process._ids + 1)       # the sender of the next job asks first
        assert process.run(takes_its_part, None, engine.CancelToken(), lambda f: None) is False
    finally:
        process.close()


class _Racing:
    """A stand-in helper sharing a part with its sender as the engine process's does. ``eager``:
    its job runs as soon as it is sent (it gets to the part first), else when it is collected."""

    def __init__(self, eager: bool) -> None:
        self.eager, self.parts, self.job, self.value = eager, {}, None, None

    def claim(self):
        return True

    def start_claimed(self, fn, request):
        self.job = (fn, pickle.loads(pickle.dumps(request)))     # (as through the pipe)
        if self.eager:
            self.value = self._run()
        return 1

    def _run(self):
        fn, request = self.job
        return fn(request, engine.CancelToken(), lambda f: None)

    def take_part(self, job, part=0):           # the sender's side
        if self.parts.get(part) == "helper":
            return False
        self.parts[part] = "sender"
        return True

    def helper_takes_part(self, part=0):        # the job's side (engine_process.take_part in the helper)
        if self.parts.get(part) == "sender":
            return False
        self.parts[part] = "helper"
        return True

    def finish_claimed(self, job, token, progress):
        return self.value if self.eager else self._run()


@pytest.mark.parametrize("eager, taker", [(True, "helper"), (False, "sender")])
def test_the_optimal_curve_is_computed_once_where_it_is_taken_first(monkeypatch, eager, taker):
    """So are the "either" rows' curves (basic, advanced, kov, filter: none needs the optimal
    curve) and, after an allocation under pld, their totals, after it: the helper takes them when
    its totals are done first."""
    from dpplanner.engine import optimal

    calls, rows, totals = [], [], []
    real, real_curve, real_totals = optimal.optimal_prefix_curve, jobs._curve, jobs._totals

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    def curve_of(request, theorems, *args, **kwargs):
        rows.extend(theorems)
        return real_curve(request, theorems, *args, **kwargs)

    def totals_of(request, *args, **kwargs):
        totals.extend(request.theorems)
        return real_totals(request, *args, **kwargs)

    request = synthetic_100_request()
    alone = jobs._evaluate(request, None, lambda f: None)
    side = _Racing(eager)
    monkeypatch.setattr(engine_process, "take_part", side.helper_takes_part)
    monkeypatch.setattr(optimal, "optimal_prefix_curve", counted)
    monkeypatch.setattr(jobs, "_curve", curve_of)
    monkeypatch.setattr(jobs, "_totals", totals_of)
    here, there = split.halves(request.theorems, total_known=True)
    got = jobs._evaluate_beside(side, request, here, there, engine.CancelToken(), lambda f: None)
    assert side.parts == {0: taker, 1: taker, 2: taker} and len(calls) == 1
    assert [rows.count(t) for t in ("basic", "advanced", "kov", "filter")] == [1, 1, 1, 1]
    # every total once, the spare ones where they were taken (never again by the sender)
    assert sorted(totals) == sorted(request.theorems)
    assert list(got.totals) == list(alone.totals) and got.best == alone.best and not got.problems
    for name, total in alone.totals.items():
        assert repr(got.totals[name].epsilon) == repr(total.epsilon)
    assert list(got.curve.upper) == list(alone.curve.upper) == list(request.theorems)
    for name in alone.curve.upper:
        np.testing.assert_array_equal(got.curve.upper[name], alone.curve.upper[name])
        assert got.curve.lower[name] is None and got.curve.notes[name] == alone.curve.notes[name]


@pytest.mark.parametrize("eager", [True, False])
def test_the_plan_is_validated_once_for_the_totals_and_the_curves(monkeypatch, eager):
    """Whichever parts each process takes (the helper all it can, or the sender all but the
    helper's own totals), they share one validated plan for their totals and their curves (the
    curves' inputs built from the totals'), built by the sender and sent with the helper's half
    (the helper builds none), with the numbers of one process."""
    import importlib

    compose, curve = (importlib.import_module(f"dpplanner.engine.{m}") for m in ("compose", "curve"))
    request = synthetic_100_request()
    alone = jobs._evaluate(request, None, lambda f: None)
    counts = {"totals": 0, "curve": 0}
    for module, name in ((compose, "totals"), (curve, "curve")):
        real = module.validate_plan
        monkeypatch.setattr(module, "validate_plan", lambda *a, real=real, name=name:
                            counts.__setitem__(name, counts[name] + 1) or real(*a))
    side = _Racing(eager)
    monkeypatch.setattr(engine_process, "take_part", side.helper_takes_part)
    got = jobs._evaluate_beside(side, request, *split.halves(request.theorems, total_known=True),
                                engine.CancelToken(), lambda f: None)
    assert counts == {"totals": 1, "curve": 0}
    assert ({n: repr(c.epsilon) for n, c in got.totals.items()}
            == {n: repr(c.epsilon) for n, c in alone.totals.items()})
    for name in alone.curve.upper:
        np.testing.assert_array_equal(got.curve.upper[name], alone.curve.upper[name])


def test_a_repeated_querys_optimal_curve_stays_with_kovs(monkeypatch):
    """In "repeat" mode the optimal curve is the homogeneous roots kov's curve computes in this
    process anyway: the helper leaves it (and takes only the spare totals it gets to first), and
    the numbers are those of one process."""
    from dataclasses import replace

    request = replace(synthetic_100_request(), curve_mode="repeat", curve_k_max=300)
    alone = jobs._evaluate(request, None, lambda f: None)
    side = _Racing(eager=True)
    monkeypatch.setattr(engine_process, "take_part", side.helper_takes_part)
    here, there = split.halves(request.theorems, total_known=True)
    got = jobs._evaluate_beside(side, request, here, there, engine.CancelToken(), lambda f: None)
    assert side.parts == {2: "helper"} and not got.problems
    assert ({n: repr(c.epsilon) for n, c in got.totals.items()}
            == {n: repr(c.epsilon) for n, c in alone.totals.items()})
    for name in alone.curve.upper:
        np.testing.assert_array_equal(got.curve.upper[name], alone.curve.upper[name])


class _OnItsOptimalCurve(_Racing):
    """A helper that has taken the optimal curve, and not yet the "either" rows, when its sender
    asks for it (its job runs on when collected)."""

    def __init__(self, events: list) -> None:
        super().__init__(eager=False)
        self.events = events

    def start_claimed(self, fn, request):
        self.parts[0] = "helper"
        return super().start_claimed(fn, request)

    def finish_claimed(self, job, token, progress):
        self.events.append("collected")
        return super().finish_claimed(job, token, progress)


def test_the_sender_computes_the_either_rows_while_the_helper_has_the_optimal_curve(monkeypatch):
    """Rather than wait for the helper's optimal curve and then for the spare totals and the
    "either" rows' curves after it, the sender takes those first and computes them meanwhile; the
    numbers are those of one process."""
    events = []
    real_curve = jobs._curve

    def curve_of(request, theorems, *args, **kwargs):
        if "basic" in theorems:
            events.append("either rows")
        return real_curve(request, theorems, *args, **kwargs)

    request = synthetic_100_request()
    alone = jobs._evaluate(request, None, lambda f: None)
    side = _OnItsOptimalCurve(events)
    monkeypatch.setattr(engine_process, "take_part", side.helper_takes_part)
    monkeypatch.setattr(jobs, "_curve", curve_of)
    got = jobs._evaluate_beside(side, request, *split.halves(request.theorems, total_known=True),
                                engine.CancelToken(), lambda f: None)
    assert side.parts == {0: "helper", 1: "sender", 2: "sender"}
    assert events == ["either rows", "collected"]
    assert ({n: repr(c.epsilon) for n, c in got.totals.items()}
            == {n: repr(c.epsilon) for n, c in alone.totals.items()})
    for name in alone.curve.upper:
        np.testing.assert_array_equal(got.curve.upper[name], alone.curve.upper[name])


def test_the_senders_curves_that_need_nothing_of_the_helper_come_before_it_waits(monkeypatch):
    """pld's curve waits, at its end, for the optimal curve the helper has taken: this process
    computes the zcdp row's curve (which needs nothing of the helper) before it, so that after
    the wait only the rows made of the optimal curve are left; the numbers are those of one
    process."""
    import dataclasses
    import importlib

    engine_curve = importlib.import_module("dpplanner.engine.curve")
    events = []
    real_entry = engine_curve.registry_entry

    def entry(name):
        t = real_entry(name)
        return dataclasses.replace(t, curve=lambda c, t=t: events.append(t.name) or t.curve(c))

    request = synthetic_100_request()
    alone = jobs._evaluate(request, None, lambda f: None)
    side = _OnItsOptimalCurve(events)
    monkeypatch.setattr(engine_process, "take_part", side.helper_takes_part)
    monkeypatch.setattr(engine_curve, "registry_entry", entry)
    got = jobs._evaluate_beside(side, request, *split.halves(request.theorems, total_known=True),
                                engine.CancelToken(), lambda f: None)
    assert events.index("zcdp") < events.index("pld") < events.index("collected")
    # (the stand-in helper computes its optimal curve when collected, in this process)
    assert set(events[events.index("collected") + 1:]) == {"optimal", "concurrent"}
    for name in alone.curve.upper:
        np.testing.assert_array_equal(got.curve.upper[name], alone.curve.upper[name])
