"""One compute controller, one worker thread: the latest request on each channel wins.

The GUI thread hands the controller an immutable request (a frozen dataclass with a
``request_id`` field), a plain function ``fn(request, cancel, progress) -> result`` and the
``Handlers`` that apply its outcome: whoever builds a request applies its result. The controller
stamps a fresh id on the request, cancels whatever is still running or queued on the same channel
(through the engine's ``CancelToken``), and runs the job on its single worker thread. Results whose
id is no longer the newest of their channel are dropped - ids alone decide staleness, so the order
in which jobs finish never matters. Exceptions in ``fn`` reach ``Handlers.failed``; the worker
keeps running. A job's early answer (compute/early.py) reaches ``Handlers.early``; the job may then
go on as another channel's (``hand_on``).

A job for the engine process that is submitted while the worker has nothing to do is sent to that
process at once, from the submitting thread; the worker only collects its answer. Handed to the
worker first, it waited for a thread switch: the worker needs the interpreter lock, which the GUI
thread holds while it goes on with the edit (up to the 5 ms switch interval, more on a busy
machine, where the worker thread must also be scheduled).
"""

from __future__ import annotations

import dataclasses
import itertools
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from dpplanner.compute import early
from dpplanner.engine.types import CancelToken, Cancelled
from dpplanner.compute.engine_process import EngineProcess, JobFailed

#: Minimum time between two progress signals of one job, so a tight engine loop cannot flood the
#: GUI thread's event queue.
PROGRESS_INTERVAL_S = 0.05

ComputeFn = Callable[[Any, CancelToken, Callable[[float], None]], Any]


def _ignore(*_args) -> None:
    pass


@dataclass(frozen=True)
class Handlers:
    """What to do with a current job's outcome (called on the GUI thread)."""

    result: Callable[[Any], None]
    failed: Callable[[str], None] = _ignore
    cancelled: Callable[[], None] = _ignore
    early: Callable[[Any], None] = _ignore


@dataclass(eq=False)
class Job:
    channel: str                    # (these two change when the job goes on as another channel's)
    request: Any
    fn: ComputeFn
    token: CancelToken
    handlers: Handlers
    sent: int | None = None         # the engine process's id of the job, when it was sent on submit
    collected: threading.Event = field(default_factory=threading.Event)    # (a sent one's answer)

    @property
    def request_id(self) -> int:
        return self.request.request_id


class _Worker(QObject):
    """Lives in the worker thread; runs one job at a time in the order they were queued."""

    started = Signal(object)               # Job
    finished = Signal(object, object)      # Job, result
    failed = Signal(object, str)           # Job, message
    cancelled = Signal(object)             # Job
    progressed = Signal(object, float)     # Job, fraction
    gave = Signal(object, object)          # Job, early answer

    def __init__(self, engine_process: EngineProcess | None = None) -> None:
        super().__init__()
        self.engine_process = engine_process

    @Slot(object)
    def run(self, job: Job) -> None:
        if job.token.cancelled and job.sent is None:      # superseded while it waited in the queue
            self.cancelled.emit(job)
            return
        self.started.emit(job)
        last = [0.0]

        def progress(fraction: float) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL_S or fraction >= 1.0:
                last[0] = now
                self.progressed.emit(job, float(fraction))
            job.token.check()

        def gave(value: Any) -> None:
            self.gave.emit(job, value)

        try:
            if job.sent is not None:        # (a cancelled one too: its answer ends the claim)
                try:
                    result = self.engine_process.finish_claimed(job.sent, job.token, progress, gave)
                finally:
                    job.collected.set()
            elif self.engine_process is not None and getattr(job.fn, "in_engine_process", False):
                result = self.engine_process.run(job.fn, job.request, job.token, progress, gave)
            else:
                with early.to(gave):
                    result = job.fn(job.request, job.token, progress)
        except Cancelled:
            self.cancelled.emit(job)
        except JobFailed as exc:            # already worded by the engine process
            self.failed.emit(job, str(exc))
        except Exception as exc:  # noqa: BLE001 - every engine failure must reach the window
            message = str(exc) or type(exc).__name__
            if not isinstance(exc, ValueError):
                # An unexpected failure: keep the last frame so a bug report can say where.
                frame = traceback.extract_tb(exc.__traceback__)[-1]
                message = f"{type(exc).__name__}: {message} ({frame.name}, line {frame.lineno})"
            self.failed.emit(job, message)
        else:
            if job.token.cancelled:
                self.cancelled.emit(job)
            else:
                self.finished.emit(job, result)


class ComputeController(QObject):
    """Owns the worker thread. Handlers and signals run on the GUI thread, only for current jobs."""

    progressChanged = Signal(str, float)   # channel, fraction
    busyChanged = Signal(bool)
    _dispatch = Signal(object)

    def __init__(self, parent: QObject | None = None, *, debounce_ms: int = 100,
                 engine_process: EngineProcess | None = None) -> None:
        super().__init__(parent)
        self._ids = itertools.count(1)
        self._latest: dict[str, int] = {}
        self._active: dict[str, Job] = {}          # newest submitted job per channel, not yet done
        self._pending: dict[str, tuple[Any, ComputeFn, Handlers]] = {}   # debounced, not yet run
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(debounce_ms)
        self._debounce.timeout.connect(self._flush_debounced)
        self._engine_process = engine_process
        self._queued = 0        # jobs handed to the worker whose outcome has not come back yet
        self._closed = False    # shut down: no job is sent from here any more (see _send_now)
        self._sent: list[Job] = []      # of those, the ones sent on submit
        self._thread = QThread()
        self._thread.setObjectName("dpplanner-compute")
        self._worker = _Worker(engine_process)
        self._worker.moveToThread(self._thread)
        self._dispatch.connect(self._worker.run)
        self._worker.finished.connect(self._on_finished)
        self._worker.failed.connect(self._on_failed)
        self._worker.cancelled.connect(self._on_cancelled)
        self._worker.progressed.connect(self._on_progress)
        self._worker.gave.connect(self._on_early)
        # No lower priority (nice) for the engine: on a busy machine it halves the engine's
        # share of the CPU (measured: allocation 0.9 s -> 1.8 s), while the GUI thread's stalls
        # come from the GIL, not from the scheduler.
        self._thread.start()
        self._busy = False

    # -- submitting -------------------------------------------------------------------------
    def submit(self, channel: str, fn: ComputeFn, request: Any, handlers: Handlers) -> int:
        """Run ``fn(request)`` now on the worker; returns the id stamped on the request."""
        self._pending.pop(channel, None)
        return self._start(channel, fn, request, handlers)

    def schedule(self, channel: str, fn: ComputeFn, request: Any, handlers: Handlers) -> None:
        """Like ``submit``, but a burst of requests runs once.

        Leading edge: when the channel is idle and quiet, the request starts at once (an isolated
        edit pays no debounce delay). Within ``debounce_ms`` of the previous request, or while
        the channel is still computing, only the newest request is kept and starts when the burst
        has been quiet for ``debounce_ms``. A request equal to the one already running or waiting
        (ignoring its id) is a no-op.
        """
        if self._same_as_queued(channel, request):
            return
        if channel not in self._active and not self._debounce.isActive():
            self._pending.pop(channel, None)
            self._start(channel, fn, request, handlers)
            self._debounce.start()          # opens the quiet period
            return
        self._pending[channel] = (request, fn, handlers)
        # The running job on this channel is already out of date: stop it now, not later.
        job = self._active.get(channel)
        if job is not None:
            job.token.cancel()
        self._debounce.start()
        self._update_busy()

    def _same_as_queued(self, channel: str, request: Any) -> bool:
        probe = dataclasses.replace(request, request_id=0)
        if channel in self._pending:
            return dataclasses.replace(self._pending[channel][0], request_id=0) == probe
        job = self._active.get(channel)
        return (job is not None and not job.token.cancelled
                and dataclasses.replace(job.request, request_id=0) == probe)

    def cancel(self, channel: str | None = None) -> None:
        """Stop the running and pending jobs of one channel (or of all channels); the running
        jobs' ``cancelled`` handlers are called."""
        self._stop(channel, notify=True)

    def discard(self, channel: str | None = None) -> None:
        """Like ``cancel``, silently: for a caller that no longer wants the answer."""
        self._stop(channel, notify=False)

    def _stop(self, channel: str | None, notify: bool) -> None:
        channels = [channel] if channel is not None else list(set(self._active) | set(self._pending))
        for name in channels:
            self._pending.pop(name, None)
            self._latest[name] = next(self._ids)   # anything still in flight is now stale
            job = self._active.pop(name, None)
            if job is not None:
                job.token.cancel()
                if notify:
                    job.handlers.cancelled()
        self._update_busy()

    def hand_on(self, channel: str, to: str, handlers: Handlers) -> bool:
        """The job running on ``channel`` (after its early answer) goes on as ``to``'s: a new
        request on ``channel`` no longer supersedes it, one on ``to`` does, and its outcome goes
        to ``handlers``; what ``to`` ran or had waiting is dropped. False if none runs."""
        job = self._active.get(channel)
        if job is None:
            return False
        # (``to`` stopped while the job still counts as active: busy does not flip off and on,
        # which reached the status bar and the Cancel action twice an edit)
        self._stop(to, notify=False)
        del self._active[channel]
        job.channel, job.handlers = to, handlers
        self._active[to] = job
        self._latest[to] = job.request_id
        self._update_busy()
        return True

    def is_busy(self, channel: str | None = None) -> bool:
        if channel is None:
            return bool(self._active or self._pending)
        return channel in self._active or channel in self._pending

    def shutdown(self) -> None:
        """Cancel everything and stop the worker thread (called when the window closes)."""
        self._closed = True
        self._debounce.stop()
        self._pending.clear()
        for job in self._active.values():
            job.token.cancel()
        self._active.clear()
        self._thread.quit()
        # Jobs poll their token, so the wait is bounded by one engine loop iteration.
        self._thread.wait()
        for job in self._sent:      # sent on submit, left in the queue by the stopped worker:
            if not job.collected.is_set():      # its claim would keep the process from others
                job.token.cancel()
                try:
                    self._engine_process.finish_claimed(job.sent, job.token, _ignore)
                except Exception:  # noqa: BLE001 - (Cancelled, or the process died): claim ended
                    pass

    # -- internals ---------------------------------------------------------------------------
    def _start(self, channel: str, fn: ComputeFn, request: Any, handlers: Handlers) -> int:
        request_id = next(self._ids)
        request = dataclasses.replace(request, request_id=request_id)
        previous = self._active.get(channel)
        if previous is not None:
            previous.token.cancel()
        job = Job(channel, request, fn, CancelToken(), handlers, self._send_now(fn, request))
        self._latest[channel] = request_id
        self._active[channel] = job
        self._update_busy()
        self._queued += 1
        if job.sent is not None:
            self._sent.append(job)
        self._dispatch.emit(job)
        return request_id

    def _send_now(self, fn: ComputeFn, request: Any) -> int | None:
        """Send an engine-process job from this thread when the worker is idle and the process is
        free (see the module doc): its id there, or None (the worker sends it, as any other job;
        it also reports a request that would not go). Only with an idle worker: a job queued
        before this one and waiting for the process would wait for this claim, which only the
        worker behind it ends. Never after ``shutdown``: the stopped worker would not collect it,
        and its claim would keep the shared process from every other window (a job submitted
        while the window closes, e.g. as its document closes)."""
        engine = self._engine_process
        if self._closed or self._queued or engine is None or not getattr(fn, "in_engine_process", False) or \
                not engine.claim():
            return None
        try:
            return engine.start_claimed(fn, request)
        except Exception:  # noqa: BLE001 - the claim is ended; the worker tries again and reports
            return None

    def _flush_debounced(self) -> None:
        pending, self._pending = self._pending, {}
        for channel, (request, fn, handlers) in pending.items():
            self._start(channel, fn, request, handlers)

    def _is_current(self, job: Job) -> bool:
        # A cancelled job was superseded (a newer request is running or waiting in the debounce),
        # even if it finished before noticing: its result is stale too.
        return self._latest.get(job.channel) == job.request_id and not job.token.cancelled

    def _done(self, job: Job) -> None:
        self._queued -= 1
        if job.sent is not None:
            self._sent.remove(job)
        if self._active.get(job.channel) is job:
            del self._active[job.channel]
        self._update_busy()

    @Slot(object, object)
    def _on_finished(self, job: Job, result: Any) -> None:
        current = self._is_current(job)
        self._done(job)
        if current:
            job.handlers.result(result)

    @Slot(object, str)
    def _on_failed(self, job: Job, message: str) -> None:
        current = self._is_current(job)
        self._done(job)
        if current:
            job.handlers.failed(message)

    @Slot(object)
    def _on_cancelled(self, job: Job) -> None:
        current = self._is_current(job)
        self._done(job)
        if current:
            job.handlers.cancelled()

    @Slot(object, object)
    def _on_early(self, job: Job, value: Any) -> None:
        if self._is_current(job):
            job.handlers.early(value)

    @Slot(object, float)
    def _on_progress(self, job: Job, fraction: float) -> None:
        if self._is_current(job):
            self.progressChanged.emit(job.channel, fraction)

    def _update_busy(self) -> None:
        busy = bool(self._active or self._pending)
        if busy != self._busy:
            self._busy = busy
            self.busyChanged.emit(busy)
