"""Which process computes which rows of an evaluation when the engine process's helper shares it
(compute/jobs.py, ``evaluate``).

The registry says where each theorem's total is computed (Theorem.evaluated). After an allocation
under a theorem that remembers its total (pld), the "either" rows' totals are spare: whichever
process gets to them first computes them (the helper after its optimal curve on the 100-query
example, where this process's pld curve is the longer half; this process while it waits for the
helper's optimal total on the 1000-query one). The optimal prefix curve (which concurrent's
shares and pld's is never above) goes to whichever process gets to it first: the helper after its
totals, or this process once pld's own read-outs are done (where the helper's optimal total is
long, as on the 1000-query example); so do the "either" rows' curves. This process takes the spare
totals and those curves before it waits for the helper's optimal curve, rather than wait for them
too. The numbers are the same whichever process computes them.
"""

from __future__ import annotations

from dpplanner import engine

#: The parts either process computes, whichever gets to it first (engine_process.take_part): in
#: prefix mode the optimal curve and the "either" rows' curves (none of which needs the optimal
#: curve); the spare totals.
OPTIMAL_CURVE, EITHER_CURVES, SPARE_TOTALS = 0, 1, 2


def halves(theorems: tuple, total_known: bool = False) -> tuple[tuple, tuple]:
    """(computed here, computed in the helper), each in the request's order; with
    ``total_known`` the "either" rows are in neither (``spare``)."""
    here = tuple(t for t in theorems if engine.theorem(t).evaluated == "here")
    spared = ("either",) if total_known else ()
    return here, tuple(t for t in theorems if t not in here and engine.theorem(t).evaluated not in spared)


def spare(request, here: tuple, there: tuple) -> tuple[str, ...]:
    """The rows whose totals either process computes: those of neither half."""
    return tuple(t for t in request.theorems if t not in here and t not in there)


def curve_order(rows: tuple, there: tuple) -> tuple:
    """The order in which this process computes its rows' curves: those that need nothing of the
    helper first, then those met with the optimal curve, then the helper's theorems' own (by then
    the helper may have the optimal curve). Where this process waits for the helper's optimal
    curve (in pld's), nothing but the rows made of it is left after (the zcdp row's curve was:
    ~0.5 ms of CPU after the wait, on the 100-query example)."""
    from dpplanner.engine.curve import MEETS_OPTIMAL   # (here: the window imports this module early)

    def rank(t: str) -> int:
        return 2 if t in there else 1 if t in MEETS_OPTIMAL else 0

    return tuple(sorted(rows, key=rank))


def either(request) -> tuple[str, ...]:
    """The rows whose curves either process computes (none in repeat mode)."""
    return tuple(t for t in request.theorems if engine.theorem(t).evaluated == "either") \
        if request.curve_mode == "prefix" else ()
