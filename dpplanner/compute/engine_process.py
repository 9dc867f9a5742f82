"""Run engine jobs in a child process, so their numpy/FFT work never competes with the GUI thread
for the interpreter lock.

The compute controller's worker thread stays the single place jobs run from; for job functions
marked with ``@in_engine_process`` it hands the (picklable, immutable) request to one shared child
process and waits on a pipe, which releases the lock. Progress and early answers (compute/early.py)
come back over the pipe; cancellation goes the other way through a shared integer the child's
token polls. If the child dies it is started again and the job fails with a message. Frozen apps
(PyInstaller) keep the thread: spawning children of a frozen executable needs launcher support
this app does not have.
"""

from __future__ import annotations

import atexit
import dataclasses
import importlib
import multiprocessing as mp
import sys
import threading
import time
from collections import Counter
from typing import Any, Callable, Optional

from dpplanner.compute import early
from dpplanner.engine.types import CancelToken, Cancelled

#: Seconds between two progress messages of one job (the pipe is cheap, the GUI is not).
PROGRESS_INTERVAL_S = 0.05


def in_engine_process(fn: Callable) -> Callable:
    """Mark a top-level job function as safe to run in the engine process."""
    fn.in_engine_process = True
    return fn


def available() -> bool:
    return not getattr(sys, "frozen", False)


class JobFailed(Exception):
    """A job raised in the child; ``value_error`` keeps ValueError's "bad input" meaning."""

    def __init__(self, message: str, value_error: bool) -> None:
        super().__init__(message)
        self.value_error = value_error


class _SharedCancel(CancelToken):
    """The child's view of the GUI's token: cancelled when the parent writes this job's id."""

    def __init__(self, flag, job_id: int) -> None:
        super().__init__()
        self._flag = flag
        self._job_id = job_id

    @property
    def cancelled(self) -> bool:
        return self._flag.value == self._job_id

    def check(self) -> None:
        if self.cancelled:
            raise Cancelled("computation cancelled")


class _Echo:
    """Travels in place of a result's ``request`` that is the job's own request: the sender has
    it already (a redistribution's holds every statistic: ~4 ms of pickling each way at 1000)."""


def _unechoed(result: Any, request: Any) -> Any:
    if dataclasses.is_dataclass(result) and getattr(result, "request", None) is request:
        return dataclasses.replace(result, request=_Echo())
    return result


#: Jobs this process has started, by job function; read with ``runs``.
_runs: Counter = Counter()


@in_engine_process
def runs(request: Any, cancel: CancelToken, progress: Callable[[float], None]) -> dict[Callable, int]:
    """How many jobs of each function this engine process has started (this query included): how
    a caller learns that work was done there - or was not, when it was cancelled before it began."""
    return dict(_runs)


#: How many parts of one job its sender may compute instead (``take_part``).
PARTS = 3
#: In a child: the shared words through which a job and the process that sent it settle which of
#: them computes a part both could (``take_part``), and the id of the job running.
_parts = None
_job_id = 0


def take_part(part: int = 0) -> bool:
    """In a job running in a child: take part ``part`` (< PARTS) of it, one its sender may compute
    instead (an evaluation's optimal curve, see jobs.evaluate): True unless the sender took it
    first (``EngineProcess.take_part``); then False, and the job leaves it out. True outside a
    child."""
    if _parts is None:
        return True
    with _parts.get_lock():
        if _parts[part] == -_job_id:
            return False
        _parts[part] = _job_id
        return True


def _child_main(conn, flag, parts, imports: tuple[str, ...] = ()) -> None:
    global _in_child, _parts, _job_id
    _in_child = True
    _parts = parts
    import dpplanner.model  # noqa: F401
    from dpplanner.engine import theorems

    # Warm up: the first job should not pay for imports (the registry imports each theorem's
    # mathematics at its first call, the model only the noise calibrations it is asked for).
    theorems.import_mathematics()
    for name in imports:
        importlib.import_module(name)

    try:
        conn.send(("ready", 0, None))
    except OSError:         # the window closed while this process was starting
        return
    while True:
        try:
            job_id, fn, request = conn.recv()
        except (EOFError, OSError):
            return
        _job_id = job_id
        token = _SharedCancel(flag, job_id)
        if token.cancelled:     # cancelled while it was on its way: no work starts
            conn.send(("cancelled", job_id, None))
            continue
        _runs[fn] += 1
        last = [0.0]

        def progress(fraction: float) -> None:
            now = time.monotonic()
            if now - last[0] >= PROGRESS_INTERVAL_S:
                last[0] = now
                conn.send(("progress", job_id, float(fraction)))
            token.check()

        try:
            with early.to(lambda value: conn.send(("early", job_id, _unechoed(value, request)))):
                result = fn(request, token, progress)
        except Cancelled:
            conn.send(("cancelled", job_id, None))
        except Exception as exc:  # noqa: BLE001 - sent to the window as a message
            text = str(exc) or type(exc).__name__
            if not isinstance(exc, ValueError):
                tb = exc.__traceback__
                while tb is not None and tb.tb_next is not None:
                    tb = tb.tb_next
                where = f" ({tb.tb_frame.f_code.co_name}, line {tb.tb_lineno})" if tb else ""
                text = f"{type(exc).__name__}: {text}{where}"
            conn.send(("error", job_id, (text, isinstance(exc, ValueError))))
        else:
            if token.cancelled:
                conn.send(("cancelled", job_id, None))
            else:
                conn.send(("result", job_id, _unechoed(result, request)))


class EngineProcess:
    """One child process; ``run`` is called from worker threads, one job at a time.

    ``start=False``: the child is started by ``start()`` (the window's, once its table has been
    painted: its imports would take turns with the window's own on a busy machine); jobs wait
    for it. ``imports``: modules the child imports before it is ready, besides the engine and the
    model (those its jobs would otherwise import on first use)."""

    def __init__(self, start: bool = True, imports: tuple[str, ...] = ()) -> None:
        self._imports = tuple(imports)
        self._lock = threading.Lock()
        self._ids = 0
        self._request: Any = None
        self._ready = False
        self._proc: Optional[mp.process.BaseProcess] = None
        self._conn = None
        self._started = threading.Event()
        if start:
            self.start()

    def start(self) -> None:
        """Start the child (once; later calls do nothing)."""
        if not self._started.is_set():
            self._start()
            self._started.set()

    def ready(self) -> bool:
        """Whether the child has finished its imports (its first job would not wait for them) and
        is not running a job now."""
        if not self.claim():
            return False
        self._lock.release()
        return True

    def claim(self) -> bool:
        """Take the child for one job if it is ready and idle now, without waiting; the job then
        goes to ``start_claimed`` and ``finish_claimed``. A check with ready() and then run() could
        lose the child to another thread in between and wait for that one's whole job."""
        if not self._started.is_set() or not self._lock.acquire(blocking=False):
            return False
        try:
            while not self._ready and self._conn.poll(0):
                self._ready = self._conn.recv()[0] == "ready"
        except (EOFError, OSError):
            self._ready = False
        if not self._ready:
            self._lock.release()
        return self._ready

    def start_claimed(self, fn: Callable, request: Any) -> int:
        """Send a job to the claimed child from this thread, so that it starts at once (a thread
        that sends it must first get the interpreter lock from the one computing here, up to the
        5 ms switch interval); ``finish_claimed`` collects the answer and ends the claim. If
        sending fails, the claim is ended and the error raised."""
        try:
            return self._send(fn, request)
        except BaseException:
            self._lock.release()
            raise

    def take_part(self, job_id: int, part: int = 0) -> bool:
        """The sender's side of ``take_part``: True if job ``job_id`` had not taken its part
        ``part`` (the job then leaves it out, and the caller computes it), False if it had."""
        with self._parts.get_lock():
            if self._parts[part] == job_id:
                return False
            self._parts[part] = -job_id
            return True

    def finish_claimed(self, job_id: int, token: CancelToken, progress: Callable[[float], None],
                       gave: Optional[Callable[[Any], None]] = None) -> Any:
        try:
            return self._receive(job_id, token, progress, gave)
        finally:
            self._lock.release()

    def abandon(self, job_id: int) -> None:
        """End the claim of a sent job whose answer nobody will collect, without waiting for it:
        the job is cancelled in the child, and its late messages are skipped by the next job's
        wait (which comes after it in the pipe). From any thread."""
        self._flag.value = job_id
        self._lock.release()

    def _start(self) -> None:
        ctx = mp.get_context("spawn")
        self._flag = ctx.Value("q", 0, lock=False)
        self._parts = ctx.Array("q", PARTS)
        self._conn, child = ctx.Pipe()
        self._proc = ctx.Process(target=_child_main, args=(child, self._flag, self._parts, self._imports),
                                 daemon=True, name="dpplanner-engine")
        self._proc.start()
        child.close()

    def run(self, fn: Callable, request: Any, token: CancelToken, progress: Callable[[float], None],
            gave: Optional[Callable[[Any], None]] = None) -> Any:
        """``fn(request)`` in the child; Cancelled if ``token`` is cancelled before the answer is
        collected (a job whose token is cancelled before it is sent is never sent). Its early
        answers (compute/early.py) go to ``gave`` (None: dropped)."""
        while not self._started.wait(timeout=0.01):
            token.check()           # not started yet; the job may be cancelled meanwhile
        while not self._lock.acquire(timeout=0.01):
            token.check()           # another window's job is running; ours may be cancelled first
        try:
            token.check()
            return self._receive(self._send(fn, request), token, progress, gave)
        finally:
            self._lock.release()

    def _send(self, fn, request) -> int:
        self._ids += 1
        self._request = request         # what an _Echo in its result stands for
        try:
            self._conn.send((self._ids, fn, request))
        except (OSError, ValueError):       # (a closed pipe: the child died)
            self._restart()
            raise JobFailed("the engine process stopped unexpectedly; it was restarted", False) from None
        return self._ids

    def _receive(self, job_id, token, progress, gave):
        cancel_sent = False
        while True:
            if token.cancelled and not cancel_sent:     # first: the child checks before it starts
                self._flag.value = job_id
                cancel_sent = True
            if self._conn.poll(0.01):
                try:
                    kind, got, payload = self._conn.recv()
                except (EOFError, OSError):
                    self._restart()
                    raise JobFailed("the engine process stopped unexpectedly; it was restarted",
                                    False) from None
                if kind == "ready":
                    self._ready = True
                    continue
                if got != job_id:
                    continue            # a late message of an earlier job
                if kind == "progress":
                    try:
                        progress(payload)
                    except Cancelled:
                        pass            # the next pass tells the child; its answer ends the job
                    continue
                if kind == "early":
                    if gave is not None and not token.cancelled:
                        gave(self._echoed(payload))
                    continue
                if kind == "cancelled" or (kind == "result" and token.cancelled):
                    raise Cancelled("computation cancelled")
                if kind == "result":
                    return self._echoed(payload)
                text, value_error = payload
                raise JobFailed(text, value_error)
            if not self._proc.is_alive():
                self._restart()
                raise JobFailed("the engine process stopped unexpectedly; it was restarted", False)

    def _echoed(self, payload: Any) -> Any:
        if isinstance(getattr(payload, "request", None), _Echo):
            return dataclasses.replace(payload, request=self._request)
        return payload

    def _restart(self) -> None:
        self.close()
        self._ready = False
        self._start()

    def close(self) -> None:
        try:
            if self._conn is not None:
                self._conn.close()
        except OSError:
            pass
        if self._proc is not None:
            self._proc.join(timeout=1.0)
            if self._proc.is_alive():
                self._proc.terminate()
                self._proc.join(timeout=1.0)


_shared: Optional[EngineProcess] = None
_shared_lock = threading.Lock()
_in_child = False                 # set in the engine process itself


def shared(start: bool = True) -> EngineProcess:
    """The application's engine process, made on first use; ``start``: started now (else by its
    ``start()``; a later call does not start one made so)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = EngineProcess(start)
            atexit.register(_shared.close)
        return _shared
