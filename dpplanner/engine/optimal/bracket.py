"""optimal_bracket: pick the cheapest path that is exact, else the adaptive PLD bracket."""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .deadline import OutOfTime, with_limit
from .exact import GROUPED_MAX_OUTCOMES, _pure_sum, grouped_bracket, grouped_outcomes, homogeneous_bracket
from .pld import TAIL_FRACTION, common_lattice, lattice_bracket, lattice_points, pld_bracket
from .result import Bracket
from .refine import split_bracket
from .split import model_step
from .two_sets import two_set_bracket
from .window import window_bracket

#: Largest sum of epsilons the lattice (fast) paths are asked to resolve.
FAST_MAX_SUM = 1e5
#: Largest composed lattice (points) for the exact common-lattice path.
LATTICE_MAX_POINTS = 1 << 20
#: Largest whole binomials (sum of a_g m_g points) the exact common-lattice path builds where
#: delta_bar lets their tails be dropped (UNTRUNCATED): three groups of 6 x 10^5 queries at delta_bar
#: 1e-6 are exact in ~2 s; below, LATTICE_MAX_POINTS (at 1e-14 no lattice's rounding fits delta_bar,
#: and 6 x 10^6 points took 20 s for the plain sum).
LATTICE_MAX_WHOLE = 1 << 22
#: Largest work of the fast path (``fast_work``, point-squarings): beyond it no lattice is composed
#: and the exact paths' bracket is returned, met with the cheaper theorems by the caller (the test
#: suite's and benchmarks' plans stay below 10^7; the app's 10^5 queries in a few groups, ~10^9).
FAST_MAX_WORK = float(1 << 31)
#: Below this share of delta_bar (pld.TAIL_FRACTION delta_bar, what truncation may drop) the FFT's
#: rounding keeps every tail, so the groups' whole span is composed: three groups of 10^6 queries
#: bracket in ~1 s at delta_bar 1e-9 (1e-15 to drop) and run for minutes at 3e-10 (3e-16).
UNTRUNCATED = 2.0 ** -50


def merge_groups(eps: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-zero epsilons (ascending) with summed multiplicities; RR(0) is the identity."""
    eps = np.asarray(eps, dtype=float)
    mult = np.asarray(mult, dtype=np.int64)
    keep = (eps > 0) & (mult > 0)
    u, inv = np.unique(eps[keep], return_inverse=True)
    m = np.zeros(u.size, dtype=np.int64)
    np.add.at(m, inv, mult[keep])
    return u, m


def optimal_bracket(eps, mult, delta_bar: float, eta: float, *, cancel=None, progress=None,
                    delta_bar_hi: Optional[float] = None, time_limit: Optional[float] = None) -> Bracket:
    """lower <= OptComp(eps, delta_bar_exact) <= upper with upper - lower <= eta where reachable.

    ``delta_bar`` <= delta_bar_exact <= ``delta_bar_hi`` (default: equal): OptComp only grows as its
    target shrinks, so the upper bound is read at delta_bar and the lower one at delta_bar_hi.
    Inputs are validated and the per-query deltas already moved into delta_bar (formulas.md §4.1).
    Since lower <= OptComp(delta_bar) <= OptComp(e^{-eta/2} delta_bar), a width <= eta also gives
    Thm 1.7's accuracy side upper <= OptComp(e^{-eta/2} delta_bar) + eta. Where the width stays
    above eta, ``method`` says why. ``time_limit`` (seconds, optional): stop there with the best
    certified bracket found so far (the method then says so); without it the result depends only
    on the arguments.
    """
    hi = delta_bar if delta_bar_hi is None else max(delta_bar_hi, delta_bar)
    token = with_limit(cancel, time_limit)
    try:
        out = _bracket(eps, mult, delta_bar, eta, hi, cancel=token, progress=progress, force_pld=False)
        if progress is not None:
            progress(1.0)   # (also where an early path answered)
        return out
    except OutOfTime:
        # reached in an exact path or before the fast path had a first lattice: nothing narrower
        # than the plain sum is certified yet (the caller meets it with the cheaper theorems)
        e, m = merge_groups(eps, mult)
        total = _pure_sum(e, m, 0.0)
        return Bracket(total.upper if delta_bar >= 0 else math.inf, 0.0, f"width > eta = {eta:.3g}: "
                       f"{token.reason()}")


def _bracket(eps, mult, delta_bar, eta, delta_bar_hi=None, *, cancel=None, progress=None,
             force_pld=False) -> Bracket:
    if delta_bar_hi is None:
        delta_bar_hi = delta_bar
    e, m = merge_groups(eps, mult)
    if e.size == 0:
        return Bracket(0.0, 0.0, "exact (no privacy loss)")
    if delta_bar_hi < 0:
        return Bracket(math.inf, math.inf, "infeasible")
    total = _pure_sum(e, m, 0.0)
    if not (0 < delta_bar and delta_bar_hi < 1):
        # an edge on one side: delta_bar < 0 (no certified finite upper bound), == 0 (the plain
        # sum, tight for pure DP), >= 1 (0); the other side, if it is not an edge too, alone
        edge = {True: _edge(delta_bar, total, True), False: _edge(delta_bar_hi, total, False)}
        if edge[True] is not None and edge[False] is not None:
            return Bracket(edge[True], edge[False], "exact (sum)" if delta_bar == 0 else "exact (edge)")
        db = delta_bar if edge[True] is None else delta_bar_hi
        b = _bracket(e, m, db, eta, db, cancel=cancel, progress=progress, force_pld=force_pld)
        return Bracket(b.upper if edge[True] is None else edge[True],
                       b.lower if edge[False] is None else edge[False], b.method)
    best = None
    if not force_pld:
        for path in _exact_paths(e, m, eta, delta_bar):
            best = _meet(best, _clamp(path(e, m, delta_bar, delta_bar_hi, cancel), total))
            if _done(best, eta):
                return best
    if e.size < 2 and best is not None:  # the homogeneous root is exact: no lattice does better
        return _with_reason(best, eta, "")
    if float(np.sum(m * e)) > FAST_MAX_SUM:
        cause = f"sum of epsilons above {FAST_MAX_SUM:g}, beyond the lattice engine"
        return _with_reason(_meet(best, _beyond_lattices(e, m, delta_bar_hi, total, cause)), eta,
                            f"; width > eta = {eta:.3g}: the sum of the epsilons is beyond every lattice")
    work = fast_work(e, m, eta, delta_bar)
    if work > FAST_MAX_WORK:
        cause = "the lattice engine's work bound"
        return _with_reason(_meet(best, _beyond_lattices(e, m, delta_bar_hi, total, cause)), eta,
                            f"; width > eta = {eta:.3g}: the lattice engine's work ({work:.3g} point-"
                            f"squarings) is beyond its bound of {FAST_MAX_WORK:.3g}")
    b = split_bracket(e, m, delta_bar, eta, cancel=cancel, progress=progress, delta_bar_hi=delta_bar_hi)
    if b is None:
        b = pld_bracket(e, m, delta_bar, eta, cancel=cancel, progress=progress, delta_bar_hi=delta_bar_hi)
    if progress is not None:
        progress(1.0)
    return _with_reason(_meet(best, _clamp(b, total)), eta, b.method)


def _with_reason(out: Bracket, eta: float, fast_method: str) -> Bracket:
    """Where the width stays above eta, the method says why (the fast path's reason if it has one)."""
    if out.width <= eta or "width > eta" in out.method:
        return out
    cut = fast_method.find("; width > eta")
    why = fast_method[cut:] if cut >= 0 else (f"; width > eta = {eta:.3g}: the floating-point error bounds "
                                              f"of the exact computation (delta_bar near the underflow range?)")
    return Bracket(out.upper, out.lower, out.method + why)


def lattices_skipped(eps, mult, eta: float, delta_bar: float) -> bool:
    """True where ``optimal_bracket`` composes no lattice on its fast path (the sum of the epsilons
    or the fast path's work beyond its bound): its total is then the exact paths' and the cheaper
    theorems', computed in a fraction of a second. Asked at a delta_bar above the plan's own (its
    delta_g), True still means skipped: the work only grows as delta_bar shrinks."""
    e, m = merge_groups(eps, mult)
    if e.size < 2:
        return False
    return float(np.sum(m * e)) > FAST_MAX_SUM or fast_work(e, m, eta, delta_bar) > FAST_MAX_WORK


def fast_work(e: np.ndarray, m: np.ndarray, eta: float, delta_bar: float) -> float:
    """The fast path's work bound, a function of the plan, eta and delta_bar alone: the lattice
    points its groups of repeated queries span on its first lattice (``model_step``) times the
    squarings that raise them to their powers. Where delta_bar is tiny the FFT rounding floor keeps
    every tail, so that span is what gets composed: three groups of 10^6 queries (epsilons 1e-3 ..
    3e-3, delta_bar 1e-14) span 7.9e8 points on 2^-16, 1.6e10 point-squarings, minutes per lattice,
    and no certified upper end on any. Single queries are batched by shifted adds and not counted.
    Where delta_bar lets truncation drop the tails (UNTRUNCATED), each lattice's size is capped
    (MAX_POINTS) and the work is not counted (0): three groups of 10^6 queries at delta_bar 1e-9
    are composed in about a second."""
    if TAIL_FRACTION * delta_bar >= UNTRUNCATED:
        return 0.0
    step = model_step(e, m, eta)
    big = m > 1
    squarings = np.array([int(x).bit_length() for x in m[big].tolist()], dtype=float)
    return float(np.sum(2.0 * m[big] * e[big] / step * squarings))


def _beyond_lattices(e, m, delta_bar_hi, total: Bracket, cause: str) -> Bracket:
    """No lattice is composed (``cause``): OptComp <= the plain sum, and OptComp of the whole plan
    >= that of its largest group alone (dropping queries is post-processing)."""
    g = int(np.argmax(m * e))
    lo = homogeneous_bracket(float(e[g]), int(m[g]), delta_bar_hi).lower
    return Bracket(total.upper, lo, f"{cause}: the plain sum above, the largest group alone below")


def _edge(db: float, total: Bracket, upper: bool) -> Optional[float]:
    if db < 0:
        return math.inf if upper else None
    if db == 0:
        return total.upper if upper else total.lower
    return 0.0 if db >= 1 else None


def _exact_paths(e: np.ndarray, m: np.ndarray, eta: float, delta_bar: float, clustered: bool = False):
    """The exact paths that apply, cheapest first (two small enumerated halves cost
    milliseconds; enumerating everything or a fine common lattice can cost seconds). Before the
    costly ones, the loss window of a plan of a few thousand queries (not exact, but within eta
    in milliseconds where it applies). ``clustered``: the few groups of a clustered plan (read
    exactly: neither the window nor clustering again, which at its infinite eta would lump
    every group into one, a bracket as wide as their spread, for two homogeneous reads)."""
    clusters = None if clustered else _clusters(e, m, eta)
    if clusters is not None:
        yield lambda e, m, db, hi, c: _clustered(e, m, clusters, db, hi, c)
    if e.size == 1:
        yield lambda e, m, db, hi, c: homogeneous_bracket(float(e[0]), int(m[0]), db, hi)
        return
    outcomes = grouped_outcomes(e, m)
    if outcomes <= 4096:
        yield lambda e, m, db, hi, c: grouped_bracket(e, m, db, hi)
        return
    yield lambda e, m, db, hi, c: two_set_bracket(e, m, db, c, hi)
    if not clustered:
        yield lambda e, m, db, hi, c: window_bracket(e, m, db, hi, eta, c)
    if outcomes <= GROUPED_MAX_OUTCOMES:
        yield lambda e, m, db, hi, c: grouped_bracket(e, m, db, hi)
    lat = common_lattice(e)
    # lattice_pmf builds each group's whole binomial (sum a_g m_g points) before truncating
    whole = LATTICE_MAX_WHOLE if TAIL_FRACTION * delta_bar >= UNTRUNCATED else LATTICE_MAX_POINTS
    if (lat is not None and lattice_points(e, m, 2 * lat[1]) <= LATTICE_MAX_POINTS
            and int(np.sum(lat[0] * m)) <= whole):
        yield lambda e, m, db, hi, c: lattice_bracket(e, m, db, lat, c, hi)


#: Most clusters the clustered path hands to the exact paths.
CLUSTERS_MAX = 6


def _clusters(e: np.ndarray, m: np.ndarray, eta: float) -> Optional[np.ndarray]:
    """Cluster ids of near-equal epsilons (ascending e), or None if clustering merges nothing.

    Each cluster spans at most eta / (8 k) (k = number of queries), so rounding every query to
    its cluster's end moves the sum of the epsilons by at most eta / 8."""
    if e.size < 2:
        return None
    tol = eta / (8.0 * float(np.sum(m)))
    ids = np.zeros(e.size, dtype=np.int64)
    lo = float(e[0])
    for i in range(1, e.size):
        if float(e[i]) - lo > tol:
            lo = float(e[i])
            ids[i] = ids[i - 1] + 1
            if ids[i] >= CLUSTERS_MAX:  # more clusters than the path takes (10^5 values: 0.1 s)
                return None
        else:
            ids[i] = ids[i - 1]
    n = int(ids[-1]) + 1
    return ids if n < e.size and n <= CLUSTERS_MAX else None


def _clustered(e, m, ids, db, hi, cancel) -> Optional[Bracket]:
    """OptComp is non-decreasing in every epsilon (class inclusion, formulas.md §4.1): the plan with
    each epsilon rounded UP to its cluster's largest bounds it from above, rounded DOWN to the
    smallest from below; each of those few groups is then computed exactly."""
    n = int(ids[-1]) + 1
    mc = np.bincount(ids, weights=m.astype(float), minlength=n).astype(np.int64)
    e_up = np.array([float(e[ids == c].max()) for c in range(n)])
    e_lo = np.array([float(e[ids == c].min()) for c in range(n)])
    up = lo = None
    for path in _exact_paths(e_up, mc, math.inf, db, clustered=True):
        up = _meet(up, path(e_up, mc, db, db, cancel))
        if up is not None and _done(up, 1e-9 * (1.0 + up.upper)):   # (a path may find nothing)
            break
    for path in _exact_paths(e_lo, mc, math.inf, hi, clustered=True):
        lo = _meet(lo, path(e_lo, mc, hi, hi, cancel))
        if lo is not None and _done(lo, 1e-9 * (1.0 + lo.upper)):
            break
    if up is None or lo is None:
        return None
    return Bracket(up.upper, lo.lower, f"{up.method}, {e.size} values in {n} clusters")


def _clamp(b: Optional[Bracket], total: Bracket) -> Optional[Bracket]:
    """OptComp <= the plain sum always (delta(sum eps) = 0): no path may report more (an inf from
    error bounds that swamp a tiny delta_bar near the top becomes the sum)."""
    if b is None or b.upper <= total.upper:
        return b
    return Bracket(total.upper, min(b.lower, total.upper), b.method)


def _meet(a: Optional[Bracket], b: Optional[Bracket]) -> Optional[Bracket]:
    """Both are certified brackets, so their intersection is one too."""
    if a is None or b is None:
        return b if a is None else a
    if b.width < a.width:
        a, b = b, a
    return Bracket(min(a.upper, b.upper), max(a.lower, b.lower), a.method)


def _done(b: Optional[Bracket], eta: float) -> bool:
    return b is not None and math.isfinite(b.upper) and b.width <= eta
