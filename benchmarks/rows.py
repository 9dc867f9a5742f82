"""The rows of the benchmark page: what a bench declares, and what `make bench` writes to
docs/performance.md.

A bench file declares each figure it wants on the page with one call, beside its own printing:

    from rows import row, target

    target("k=50, width <= 1e-4 in <= 50 ms", f"width {w:.1e} in {ms:.0f} ms", w <= 1e-4 and ms <= 50,
           peer=f"dp_accounting d=1e-4: gap {gap:.1e} in {peer_ms:.0f} ms")
    row("compose_all, 100 distinct eps", f"{ms:.1f} ms")        # a figure without a target

``what`` names the measurement and, for a target, the target itself; ``measured`` is our figure
as text (say what it is: wall or CPU time, median of how many); ``met`` says whether the target is
met in this run; ``peer`` is the peer's figure measured in the same run (never one copied from
elsewhere). The rows go to the section of the bench file that declared them (its docstring's
first line is the heading). Nothing here is asserted: a target not met is printed as "NOT met".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Row:
    section: str
    what: str
    measured: str
    met: Optional[bool] = None          # None: a figure without a target
    peer: str = ""


ROWS: list[Row] = []
#: Set by run.py to the bench file being run.
SECTION = "benchmarks"


def _clean(text: str) -> str:
    """One line of table text: no newlines, no column separators."""
    return " ".join(str(text).split()).replace("|", "/")


def target(what: str, measured: str, met: bool, *, peer: str = "") -> Row:
    """Declare a figure with a target: ``what`` says the target, ``met`` whether this run met it."""
    r = Row(SECTION, _clean(what), _clean(measured), bool(met), _clean(peer))
    ROWS.append(r)
    return r


def row(what: str, measured: str, *, peer: str = "") -> Row:
    """Declare a figure without a target (shown for information)."""
    r = Row(SECTION, _clean(what), _clean(measured), None, _clean(peer))
    ROWS.append(r)
    return r


def verdict(r: Row) -> str:
    return "" if r.met is None else ("met" if r.met else "**NOT met**")
