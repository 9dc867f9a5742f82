"""Shared timing helpers for the benchmark scripts: every repeat is timed cold."""

from __future__ import annotations

import statistics
import time


def timed_result(fn, repeat: int = 3):
    """(the last result, median wall time in seconds) of ``repeat`` calls. The engine's memories
    are emptied before each call, so a repeat does not time a memory hit."""
    from dpplanner.engine.memo import forget

    times, out = [], None
    for _ in range(repeat):
        forget()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times)


def timed(fn, repeat: int = 3) -> float:
    """Median wall time of ``repeat`` cold calls, in milliseconds."""
    return timed_result(fn, repeat)[1] * 1000


def wall_and_cpu(fn, repeat: int = 3):
    """(the last result, median wall seconds, median CPU seconds) of ``repeat`` cold calls. The CPU
    time is this process's (all its threads, not child processes): on a loaded machine it stays
    near what a quiet machine would take while the wall time grows, so print both."""
    from dpplanner.engine.memo import forget

    walls, cpus, out = [], [], None
    for _ in range(repeat):
        forget()
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return out, statistics.median(walls), statistics.median(cpus)
