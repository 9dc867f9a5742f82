"""A command's long computation: its optional time limit, what the limit cut short, and what its
progress line says.

``--time-limit SECONDS`` is one limit for the whole command, handed to each engine call it makes
as the seconds still left (the engine's ``time_limit=``; the engine reads the clock only then, so
without the option every result depends on the plan alone). Whatever the limit cut short is
recorded here (``cut_short``) and stated in one way by every command: the JSON fields
``time_limit``, ``time_limit_reached`` and ``stopped_by_time_limit`` (``fields``), and the text
lines beginning "time limit:" (``say``). The progress callbacks turn the engine's fractions into
words for the line ``terminal`` draws on a terminal: which theorem of how many, how far into it,
or which composition of an allocation's search.
"""

from __future__ import annotations

import math
import sys
from typing import Callable, Iterable, Optional, Sequence

from dpplanner.cli import terminal
from dpplanner.engine.optimal import deadline


#: The words the engine's results begin their reason with when the time limit stopped them.
_STOPPED = deadline.Deadline(None, 1.0).reason().split(" of ")[0]
#: What a total or curve cut short by the limit shows instead of its own result.
BOUND = ("each shows a sound upper bound found by then (a cheaper theorem's, or its best bracket so "
         "far; see its detail), not its own result; run without --time-limit for that")


class LongWork:
    """One command's work and its time limit (None: no limit), from the moment it is made."""

    def __init__(self, time_limit: Optional[float] = None) -> None:
        self.time_limit = time_limit
        self.started = deadline.now() if time_limit is not None else None   # no limit: no clock
        self._cut: dict[str, str] = {}      # what the limit cut short -> what it shows instead

    def seconds_left(self) -> Optional[float]:
        """The engine's ``time_limit`` for the next call: None without a limit; once the limit is
        past, a sliver, so that the call gives its cheapest sound answer at once."""
        if self.time_limit is None:
            return None
        return max(self.time_limit - (deadline.now() - self.started), 1e-6)

    def past(self) -> bool:
        """Whether the limit is reached (never without one: the clock is not read then)."""
        return self.time_limit is not None and deadline.now() - self.started >= self.time_limit

    def reason(self) -> str:
        """The words the engine's results use when the limit stopped them."""
        return deadline.Deadline(None, self.time_limit).reason() if self.time_limit is not None else ""

    def stopped(self, text: Optional[str]) -> bool:
        """Whether ``text`` (a result's detail or note) says the time limit stopped it (the engine
        names the seconds that were left for its call)."""
        return self.time_limit is not None and bool(text) and _STOPPED in text

    def cut_short(self, names: Iterable[str], instead: str = BOUND) -> None:
        """Record that the limit cut ``names`` short; ``instead``: what the output shows for them."""
        for name in names:
            self._cut[name] = instead

    def totals(self, totals: dict, suffix: str = "") -> list[str]:
        """Record (and return) the theorems of ``totals`` (name -> Composition) the limit stopped."""
        names = [n for n, c in totals.items() if c.extra.get("time_limited") or self.stopped(c.detail)]
        self.cut_short(n + suffix for n in names)
        return names

    def curve(self, curve, suffix: str = "") -> list[str]:
        """Record (and return) the theorems of an engine Curve the limit stopped at some point."""
        names = [n for n in curve.upper if any(self.stopped(note) for note in curve.notes.get(n, ()))]
        self.cut_short(n + suffix for n in names)
        return names

    @property
    def reached(self) -> bool:
        return bool(self._cut)

    def fields(self) -> dict:
        """The JSON fields every long command prints."""
        return {"time_limit": self.time_limit, "time_limit_reached": self.reached,
                "stopped_by_time_limit": list(self._cut)}

    def lines(self) -> list[str]:
        """The text lines saying what the limit cut short (none when it was not reached)."""
        groups: dict[str, list[str]] = {}
        for name, instead in self._cut.items():
            groups.setdefault(instead, []).append(name)
        return [f"time limit: {self.reason()} for {', '.join(names)}: {instead}"
                for instead, names in groups.items()]

    def say(self, file=None) -> None:
        """Print ``lines`` (to stdout unless ``file``: a command whose stdout is data uses stderr)."""
        for line in self.lines():
            print(line, file=file or sys.stdout)

    def theorems(self, names: Sequence[str], stage: str = "") -> Callable[[float], None]:
        """A progress callback for engine.compose_all or engine.curve over ``names``: the fraction
        j + f of len(names) is theorem j + 1, f of the way."""
        names = list(names)
        head = f"{stage}: " if stage else ""

        def progress(fraction: float) -> None:
            if not names:
                return
            if not (fraction < 1.0):
                terminal.report(f"{head}{len(names)} of {len(names)} theorems done")
                return
            scaled = max(fraction, 0.0) * len(names)
            j = min(int(math.floor(scaled)), len(names) - 1)
            terminal.report(f"{head}theorem {j + 1} of {len(names)} ({names[j]}), {scaled - j:.0%}")

        return progress

    def search(self, theorem: str, statistics: int) -> Callable[[float], None]:
        """A progress callback for engine.allocate: it is called once per composition of the
        search (each composes the whole plan), and with 1.0 at the end."""
        count = [0]

        def progress(fraction: float) -> None:
            if fraction >= 1.0:
                terminal.report(f"search done after {count[0]} compositions")
                return
            count[0] += 1
            terminal.report(f"composition {count[0]} of the search (each of all {statistics} "
                            f"statistics under {theorem})")

        return progress

    def allocation(self, composition) -> None:
        """Record an allocation's search cut short (its certified total fits; more may be unspent)."""
        if composition is not None and composition.extra.get("time_limited"):
            why = composition.extra.get("waste_reason") or ""
            self.cut_short(["the allocation search"], why.split(": ", 1)[-1])


def add_time_limit(parser) -> None:
    """The ``--time-limit`` option of the long commands."""
    parser.add_argument("--time-limit", metavar="SECONDS", type=float, default=None,
                        help="stop refining after about this many seconds and report the sound "
                             "bound found by then (a cheaper theorem's bound, or the best bracket "
                             "so far), saying so; default: no limit (the same result on any machine)")


def checked_time_limit(value: Optional[float]) -> Optional[float]:
    """The option's value, or ValueError with the reason (a number of seconds > 0)."""
    if value is None:
        return None
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"--time-limit {value:g} is not allowed; give a number of seconds > 0")
    return float(value)
