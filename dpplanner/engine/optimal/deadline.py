"""The only clock the optimal engine reads, and only for a caller's explicit time limit.

Without a time limit every stopping rule of the engine is a function of the plan and eta alone
(lattice sizes, rounds), so the same plan gives the same bracket, bit for bit, on any machine and
under any load. A caller that prefers an answer within a time (the command line) passes
``time_limit``: the engine then returns the best certified bracket it has when the limit is
reached, and its ``detail`` says so.
"""

from __future__ import annotations

import time
from typing import Optional


class OutOfTime(Exception):
    """The caller's time limit was reached in the middle of a computation."""


def now() -> float:
    """Seconds on a monotonic clock (tests replace this to simulate a slow or fast machine)."""
    return time.monotonic()


class Deadline:
    """A cancel token for the compositions: the caller's cancellation, plus the time limit."""

    def __init__(self, cancel, seconds: float):
        self.cancel, self.seconds = cancel, seconds
        self.end = now() + seconds

    def check(self) -> None:
        if self.cancel is not None:
            self.cancel.check()
        if now() > self.end:
            raise OutOfTime

    def reason(self) -> str:
        return f"stopped at the time limit of {self.seconds:g} s"


def with_limit(cancel, time_limit: Optional[float]):
    """``cancel`` itself when there is no time limit, else a Deadline wrapping it."""
    return cancel if time_limit is None else Deadline(cancel, time_limit)
