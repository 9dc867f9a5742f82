"""Shared timing helper for the benchmark scripts."""

from __future__ import annotations

import statistics
import time


def timed(fn, repeat: int = 3) -> float:
    """Median wall time of ``repeat`` calls, in milliseconds."""
    from dpplanner.engine.mechanisms import forget

    times = []
    for _ in range(repeat):
        forget()  # cold each time: no bracket or calibration remembered from the run before
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1000
