"""Jobs and questions for the engine process in tests: top-level and marked, so that the child
process can import and run them. What a test learns of the work done there it asks the process
(its count of jobs run), never the kernel's clock."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from dpplanner import engine
from dpplanner.compute import engine_process, helper_process
from dpplanner.compute.engine_process import in_engine_process
from dpplanner.model.requests import CurveView


@dataclass(frozen=True)
class Slow:
    seconds: float
    request_id: int = 0


@in_engine_process
def slow_job(request, cancel, progress):
    end = time.monotonic() + request.seconds
    while time.monotonic() < end:
        progress(0.5)               # raises Cancelled in the child once the GUI cancelled
        time.sleep(0.002)
    return os.getpid()


@in_engine_process
def helper_pid(request, cancel, progress):
    """The engine process's helper once it is up and free (None before: the first call starts it)."""
    side = helper_process.helper()
    return None if side is None else side._proc.pid


@in_engine_process
def in_helper(request, cancel, progress):
    """``fn(arg)`` run in the engine process's helper, for ``request = (fn, arg)`` (the helper must
    be up and free)."""
    side = helper_process.helper(start=False)
    if side is None:
        raise RuntimeError("the helper is not up and free")
    fn, arg = request
    return side.run(fn, arg, cancel, _ignore)


def _ignore(_fraction: float) -> None:
    pass


def runs(process) -> dict:
    """How many jobs of each function ``process`` has started."""
    return process.run(engine_process.runs, None, engine.CancelToken(), _ignore)


def helper_ran(process, fn) -> int:
    """How many ``fn`` jobs the helper of ``process`` has started."""
    return process.run(in_helper, (engine_process.runs, None), engine.CancelToken(), _ignore).get(fn, 0)


def helper_up(process, timeout_s: float = 120.0) -> int:
    """Waits (at most ``timeout_s``: its start takes seconds on a busy machine) until the helper
    of ``process`` is up and free; its pid."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        pid = process.run(helper_pid, None, engine.CancelToken(), _ignore)
        if pid is not None:
            return pid
        time.sleep(0.1)
    raise AssertionError("the engine process's helper did not start")


def synthetic_100_request():
    from dpplanner.model import files
    from dpplanner.model.examples import example_path

    return files.load_plan(example_path("synthetic-100")).evaluation_request(CurveView())


@in_engine_process
def loaded_modules(request, cancel, progress) -> set:
    """The names of the modules the engine process has imported."""
    import sys

    return set(sys.modules)
