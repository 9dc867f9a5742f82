"""The compute controller with a fake slow engine: latest request wins, cancel works, errors surface."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest

from PySide6.QtCore import Qt

from dpplanner.gui.compute import ComputeController, Handlers
from probe import Probe

#: Seconds a test waits for the worker thread to reach a point (it does at once on a quiet machine).
THREAD_WAIT_S = 120


@dataclass(frozen=True)
class FakeRequest:
    value: int
    request_id: int = 0


class SlowEngine:
    """Blocks each call until released (or cancelled), recording what it saw."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.calls: list[int] = []
        self.cancelled_ids: list[int] = []

    def __call__(self, request, cancel, progress):
        self.calls.append(request.value)
        self.entered.set()
        while not self.release.wait(0.005):
            if cancel.cancelled:
                self.cancelled_ids.append(request.request_id)
            progress(0.5)       # raises Cancelled once the token is set
        return ("result", request.value, request.request_id)


@pytest.fixture
def probe(qtbot):
    return Probe()


def drain(qtbot, controller) -> None:
    """Until every outcome the worker sent for the jobs submitted so far has been handled: a job
    on another channel runs after them on the one worker thread, and its result arrives after
    theirs. (What a test says did not arrive then never will.)"""
    barrier = Probe()
    with qtbot.waitSignal(barrier.result):
        controller.submit("drain", lambda r, c, p: None, FakeRequest(0), barrier.handlers)


@pytest.fixture
def controller(qtbot):
    ctl = ComputeController(debounce_ms=20)
    yield ctl
    ctl.shutdown()


def test_result_carries_the_stamped_request_id(qtbot, controller, probe):
    def fast(request, cancel, progress):
        return request.request_id, request.value * 2

    with qtbot.waitSignal(probe.result) as blocker:
        rid = controller.submit("evaluate", fast, FakeRequest(21), probe.handlers)
    assert blocker.args == [(rid, 42)]


def test_newer_request_cancels_the_running_one_and_stale_results_are_dropped(qtbot, controller, probe):
    engine = SlowEngine()
    results = []
    probe.result.connect(lambda result: results.append(result))
    controller.submit("evaluate", engine, FakeRequest(1), probe.handlers)
    assert engine.entered.wait(THREAD_WAIT_S)
    second = controller.submit("evaluate", engine, FakeRequest(2), probe.handlers)
    # The first job sees its token cancelled while it is still running ...
    qtbot.waitUntil(lambda: len(engine.cancelled_ids) > 0)
    assert second not in engine.cancelled_ids
    engine.release.set()
    qtbot.waitUntil(lambda: not controller.is_busy())
    # ... and only the second job's result reaches the window.
    assert results == [("result", 2, second)]


def test_stale_result_that_finishes_anyway_is_dropped(qtbot, controller, probe):
    """A job that ignores its token and returns late must not overwrite a newer answer."""
    gate = threading.Event()
    seen = []

    def stubborn(request, cancel, progress):
        if request.value == 1:
            gate.wait(THREAD_WAIT_S)   # never looks at the token
        return request.value

    probe.result.connect(lambda result: seen.append(result))
    controller.submit("evaluate", stubborn, FakeRequest(1), probe.handlers)
    controller.submit("evaluate", stubborn, FakeRequest(2), probe.handlers)
    gate.set()
    qtbot.waitUntil(lambda: not controller.is_busy())
    drain(qtbot, controller)
    # Job 1 returned a value, but its id was stale by then: only the newest job's answer arrives.
    assert seen == [2]


def test_cancel_stops_the_running_job_and_reports_it(qtbot, controller, probe):
    engine = SlowEngine()
    results = []
    probe.result.connect(lambda result: results.append(result))
    controller.submit("evaluate", engine, FakeRequest(7), probe.handlers)
    assert engine.entered.wait(THREAD_WAIT_S)
    with qtbot.waitSignal(probe.cancelled):
        controller.cancel("evaluate")
    qtbot.waitUntil(lambda: len(engine.cancelled_ids) > 0)
    engine.release.set()
    drain(qtbot, controller)
    assert results == []
    assert not controller.is_busy()


def test_engine_error_becomes_a_signal_and_the_worker_survives(qtbot, controller, probe):
    def broken(request, cancel, progress):
        raise ValueError(f"epsilons[{request.value}] = -1 is negative; allowed: eps >= 0")

    with qtbot.waitSignal(probe.failed) as blocker:
        controller.submit("evaluate", broken, FakeRequest(3), probe.handlers)
    assert "epsilons[3]" in blocker.args[0]

    with qtbot.waitSignal(probe.result) as blocker:
        controller.submit("evaluate", lambda r, c, p: "alive", FakeRequest(4), probe.handlers)
    assert blocker.args == ["alive"]


def test_unexpected_exception_message_names_the_place(qtbot, controller, probe):
    def buggy(request, cancel, progress):
        return 1 / 0

    with qtbot.waitSignal(probe.failed) as blocker:
        controller.submit("evaluate", buggy, FakeRequest(0), probe.handlers)
    assert "ZeroDivisionError" in blocker.args[0]
    assert "buggy" in blocker.args[0]


def test_schedule_debounces_a_burst_into_one_run(qtbot, controller, probe):
    calls = []

    def record(request, cancel, progress):
        calls.append(request.value)
        return request.value

    results = []
    probe.result.connect(lambda result: results.append(result))
    for value in range(10):
        controller.schedule("evaluate", record, FakeRequest(value), probe.handlers)
    qtbot.waitUntil(lambda: results == [9] and not controller.is_busy())
    drain(qtbot, controller)
    # The first request may start at once (leading edge) but is superseded; the burst in
    # between never runs.
    assert calls[-1] == 9 and set(calls) <= {0, 9}
    assert results == [9]


def test_a_job_superseded_after_it_finished_never_delivers(qtbot, controller, probe):
    """Job 0 finishes on the worker before the burst cancels it, but its result is still queued
    for the GUI thread when the burst arrives: it is stale and must be dropped."""
    done = threading.Event()
    results = []

    def quick(request, cancel, progress):
        if request.value == 0:
            done.set()
        return request.value

    probe.result.connect(lambda result: results.append(result))
    finished = threading.Event()        # set on the worker thread, as it sends job 0's result
    controller._worker.finished.connect(lambda job, result: finished.set(),
                                        Qt.ConnectionType.DirectConnection)
    controller.schedule("evaluate", quick, FakeRequest(0), probe.handlers)
    assert done.wait(THREAD_WAIT_S)
    # No event processing meanwhile: the worker's "finished" for job 0 waits in the queue.
    assert finished.wait(THREAD_WAIT_S)
    for value in range(1, 4):
        controller.schedule("evaluate", quick, FakeRequest(value), probe.handlers)
    qtbot.waitUntil(lambda: results == [3] and not controller.is_busy())
    drain(qtbot, controller)
    assert results == [3]


def test_an_isolated_request_starts_without_waiting_for_the_debounce(qtbot, probe):
    controller = ComputeController(debounce_ms=60_000)
    try:
        with qtbot.waitSignal(probe.result) as blocker:
            controller.schedule("evaluate", lambda r, c, p: r.value, FakeRequest(5), probe.handlers)
        assert blocker.args == [5]
    finally:
        controller.shutdown()


def test_scheduling_the_same_request_again_is_a_no_op(qtbot, controller, probe):
    engine = SlowEngine()
    controller.schedule("evaluate", engine, FakeRequest(1), probe.handlers)
    assert engine.entered.wait(THREAD_WAIT_S)
    controller.schedule("evaluate", engine, FakeRequest(1), probe.handlers)
    engine.release.set()
    qtbot.waitUntil(lambda: not controller.is_busy())
    assert engine.calls == [1]
    assert engine.cancelled_ids == []


def test_channels_are_independent_and_each_result_goes_to_its_requester(qtbot, controller):
    got = {}
    for channel, value in (("allocate", "alloc"), ("evaluate", "eval")):
        handlers = Handlers(lambda result, channel=channel: got.__setitem__(channel, result))
        controller.submit(channel, lambda r, c, p, value=value: value, FakeRequest(1), handlers)
    qtbot.waitUntil(lambda: len(got) == 2)
    assert got == {"allocate": "alloc", "evaluate": "eval"}


def test_discard_stops_a_job_without_calling_its_handlers(qtbot, controller, probe):
    engine = SlowEngine()
    heard = []
    probe.cancelled.connect(lambda: heard.append("cancelled"))
    probe.result.connect(heard.append)
    controller.submit("evaluate", engine, FakeRequest(1), probe.handlers)
    assert engine.entered.wait(THREAD_WAIT_S)
    controller.discard("evaluate")
    qtbot.waitUntil(lambda: len(engine.cancelled_ids) > 0)
    engine.release.set()
    qtbot.waitUntil(lambda: not controller.is_busy())
    drain(qtbot, controller)
    assert heard == []


def test_progress_reaches_the_gui_thread(qtbot, controller, probe):
    def steps(request, cancel, progress):
        progress(1.0)
        return None

    with qtbot.waitSignal(controller.progressChanged) as blocker:
        controller.submit("evaluate", steps, FakeRequest(0), probe.handlers)
    assert blocker.args == ["evaluate", 1.0]


class InlineProcess:
    """An engine process stand-in that runs each job in the thread that sends it, recording which
    thread sent it and which collected its answer."""

    def __init__(self) -> None:
        self.sent_from: list[threading.Thread] = []
        self.collected_in: list[threading.Thread] = []
        self._answers: dict[int, object] = {}

    def claim(self) -> bool:
        return True

    def start_claimed(self, fn, request) -> int:
        self.sent_from.append(threading.current_thread())
        self._answers[len(self._answers)] = fn(request, None, lambda f: None)
        return len(self._answers) - 1

    def finish_claimed(self, job_id, token, progress, gave):
        self.collected_in.append(threading.current_thread())
        return self._answers.pop(job_id)

    def run(self, fn, request, token, progress, gave):
        self.collected_in.append(threading.current_thread())
        return fn(request, token, progress)


def engine_doubles(request, cancel, progress):
    return request.value * 2


engine_doubles.in_engine_process = True


def test_an_engine_job_is_sent_before_submit_returns_when_the_worker_is_idle(qtbot, probe):
    """The GUI thread sends it (the worker would first need the interpreter lock the GUI thread
    holds while it goes on with the edit); the worker only collects the answer."""
    process = InlineProcess()
    ctl = ComputeController(debounce_ms=20, engine_process=process)
    try:
        with qtbot.waitSignal(probe.result) as blocker:
            ctl.submit("evaluate", engine_doubles, FakeRequest(21), probe.handlers)
            assert process.sent_from == [threading.current_thread()]
        assert blocker.args == [42]
        assert process.collected_in[0] is not threading.current_thread()
    finally:
        ctl.shutdown()


def test_a_job_submitted_after_shutdown_leaves_the_shared_engine_process_free(qtbot, probe):
    """A closing window may still submit a job (its document closing): nothing may claim the
    engine process for it, since the stopped worker would never collect it and every other
    window's jobs would wait for that claim for ever."""
    claims: list = []
    process = InlineProcess()
    process.claim = lambda: claims.append(1) or True
    closed = ComputeController(debounce_ms=20, engine_process=process)
    closed.shutdown()
    closed.submit("profile", engine_doubles, FakeRequest(1), Probe().handlers)
    assert claims == [] and process.sent_from == []
    other = ComputeController(debounce_ms=20, engine_process=process)
    try:
        with qtbot.waitSignal(probe.result) as blocker:
            other.submit("evaluate", engine_doubles, FakeRequest(21), probe.handlers)
        assert blocker.args == [42] and claims == [1]
    finally:
        other.shutdown()


def test_an_engine_job_submitted_while_the_worker_is_busy_waits_its_turn(qtbot, probe):
    process = InlineProcess()
    ctl = ComputeController(debounce_ms=20, engine_process=process)
    engine, first = SlowEngine(), Probe()
    try:
        ctl.submit("slow", engine, FakeRequest(1), first.handlers)
        assert engine.entered.wait(THREAD_WAIT_S)
        ctl.submit("evaluate", engine_doubles, FakeRequest(21), probe.handlers)
        assert process.sent_from == []          # sent by the worker, after the job before it
        with qtbot.waitSignal(probe.result) as blocker:
            engine.release.set()
        assert blocker.args == [42]
    finally:
        engine.release.set()
        ctl.shutdown()


def test_a_job_handed_on_after_its_early_answer_belongs_to_the_other_channel(qtbot, controller):
    """After its early answer a job goes on as another channel's: a new request on its own channel
    no longer supersedes it (it waits its turn), one on the other channel does, and its outcome goes
    to the other channel's handlers."""
    from dpplanner.compute import early

    heard: list = []

    def handed_on(value) -> None:
        heard.append(value)
        assert controller.hand_on("allocate", "evaluate", Handlers(
            lambda result: heard.append(("evaluate got", result)), cancelled=lambda: heard.append("cancelled")))

    release = threading.Event()

    def held(request, cancel, progress):
        early.give(("early", request.value))
        while not release.wait(0.005):
            progress(0.5)
        return ("whole", request.value)

    controller.submit("allocate", held, FakeRequest(1),
                      Handlers(lambda result: heard.append(("allocate got", result)), early=handed_on))
    qtbot.waitUntil(lambda: heard == [("early", 1)])
    assert controller.is_busy("evaluate") and not controller.is_busy("allocate")
    # a new allocation does not stop it: it runs after it
    controller.submit("allocate", lambda r, c, p: ("whole", r.value), FakeRequest(3),
                      Handlers(lambda result: heard.append(("allocate got", result))))
    release.set()
    qtbot.waitUntil(lambda: not controller.is_busy())
    assert heard == [("early", 1), ("evaluate got", ("whole", 1)), ("allocate got", ("whole", 3))]
    # a new request on the channel it went on as supersedes it
    heard.clear()
    release.clear()
    controller.submit("allocate", held, FakeRequest(4),
                      Handlers(lambda result: heard.append(("allocate got", result)), early=handed_on))
    qtbot.waitUntil(lambda: heard == [("early", 4)])
    controller.submit("evaluate", lambda r, c, p: ("fresh", r.value), FakeRequest(5),
                      Handlers(lambda result: heard.append(("evaluate got", result))))
    qtbot.waitUntil(lambda: not controller.is_busy())
    drain(qtbot, controller)
    assert heard == [("early", 4), ("evaluate got", ("fresh", 5))]
