"""Shared timing helpers for the benchmark scripts: every repeat is timed cold."""

from __future__ import annotations

import statistics
import time
from contextlib import contextmanager


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


@contextmanager
def pld_counts():
    """pld's work while the block runs, counted live in the dict yielded: "compositions" (whole
    totals or upper ends alone, memory hits not counted), "lattices" composed with both ends,
    "upper ends" composed alone."""
    import dpplanner.engine.mechanisms.spectral as spectral
    import dpplanner.engine.mechanisms.theorems as pld_theorems

    counts = {"compositions": 0, "lattices": 0, "upper ends": 0}

    def counted(fn, name):
        def call(*args, **kwargs):
            counts[name] += 1
            return fn(*args, **kwargs)
        return call

    real = pld_theorems._pld_composition, spectral.rung, spectral.upper_end
    pld_theorems._pld_composition = counted(real[0], "compositions")
    spectral.rung = counted(real[1], "lattices")
    spectral.upper_end = counted(real[2], "upper ends")
    try:
        yield counts
    finally:
        pld_theorems._pld_composition, spectral.rung, spectral.upper_end = real


def per_edit(counts: dict, edits: int) -> str:
    """pld_counts per edit, in words."""
    return (f"{counts['compositions'] / edits:.1f} pld compositions per edit: {counts['lattices'] / edits:.1f} "
            f"lattices with both ends, {counts['upper ends'] / edits:.1f} upper ends alone")
