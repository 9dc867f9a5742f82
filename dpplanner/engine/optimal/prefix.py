"""The optimal bracket for every prefix of a plan, computed incrementally.

Running lattice pmfs are extended by one query at a time (``prefix_sides``): a 2- or 3-atom
kernel, i.e. a few shifted adds of the running array (no FFT, so only relative rounding errors,
gamma_3 per step). Roots are read only at the requested prefix lengths, the upper ones a group at
a time (``prefix_reads``), then each lower one from its prefix's snapshot.

* Typed decimals (one small common lattice): exact kernels above and below, no discretisation.
* Otherwise: connect-the-dots above; below, the same running pmf minus a certified second-order
  error bound. One lattice step serves the whole curve, calibrated so that the full plan's bracket
  is well inside ``width``.
"""

from __future__ import annotations

import math

import numpy as np

from .atoms import U
from .bracket import FAST_MAX_SUM, merge_groups
from .exact import homogeneous_bracket
from .pld import STEP_MAX, common_lattice, lattice_points
from .prefix_reads import GroupedUpperReads
from .prefix_sides import PREFIX_MAX_POINTS, _LatticeLower, _NoLower, _SecondOrderLower
from .prefix_window import window_prefix_curve
from .split import model_step
from ..numerics import widen_down, widen_up


#: A common lattice read at most this many (points x lattice points) gives the exact curve (the
#: psi-survey example's 4 points of 8 queries; not the bench's 100 points of 3-decimal epsilons).
EXACT_READS = 1 << 16


def _curve_step(e, m, width: float) -> float:
    """The lattice step for the whole curve: the split bracket's step model aimed well inside
    the width (at 0.37 width: the curve's blocks follow the query order, not the error sizes, so
    its bound is looser than the split bracket's that the model was measured on)."""
    step = model_step(e, m, 0.37 * width)
    while lattice_points(e, m, step) > PREFIX_MAX_POINTS and step < STEP_MAX:
        step *= 2
    return step


def _beyond_lattices(eps, delta_bars, hi_bars, ks):
    """Sum of eps above FAST_MAX_SUM: the plain sum above, the largest query alone below (see
    bracket._beyond_lattices)."""
    sums_up = _sums_up(eps)
    biggest = np.maximum.accumulate(eps)
    upper, lower = np.zeros(ks.size), np.zeros(ks.size)
    for j, k in enumerate(ks.tolist()):
        db, hi = float(delta_bars[j]), float(hi_bars[j])
        upper[j] = math.inf if db < 0 else (0.0 if db >= 1 else float(sums_up[k - 1]))
        lower[j] = math.inf if hi < 0 else homogeneous_bracket(float(biggest[k - 1]), 1, max(db, 0.0), hi).lower
    return upper, lower


def optimal_prefix_curve(eps, delta_bars, ks, width: float, *, cancel=None, progress=None, delta_bars_hi=None,
                         want_lower: bool = True):
    """(upper, lower) arrays bracketing OptComp(eps[:k], delta_bar_j) for each k = ks[j] (ascending),
    for any delta_bars[j] <= delta_bar_j <= delta_bars_hi[j] (default: equal). want_lower=False:
    the same upper bounds, and 0 below (the lower side's lattices and error bounds are skipped
    where the upper ends do not need them)."""
    eps = np.asarray(eps, dtype=float)
    delta_bars = np.asarray(delta_bars, dtype=float)
    hi_bars = delta_bars if delta_bars_hi is None else np.maximum(np.asarray(delta_bars_hi, dtype=float), delta_bars)
    ks = np.asarray(ks, dtype=np.int64)
    K = int(ks[-1]) if ks.size else 0
    upper = np.zeros(ks.size)
    lower = np.zeros(ks.size)
    if K == 0:
        return upper, lower
    eps = eps[:K]
    if math.fsum(eps.tolist()) > FAST_MAX_SUM:
        return _beyond_lattices(eps, delta_bars, hi_bars, ks)
    e, m = merge_groups(eps, np.ones(K, dtype=np.int64))
    pos = delta_bars[delta_bars > 0]
    dmin = float(pos.min()) if pos.size else 1e-12
    tail = 1e-6 * dmin / K
    # all epsilons on one small lattice (typed decimals): exact kernels, no discretisation, where
    # few points are read off it (each read costs some thirty numpy calls: see prefix_reads). A
    # lattice step divides every epsilon, so it has at least sum / min points: no lattice is
    # looked for where that many are already too many to read at every point
    lat, points = None, math.inf
    if e.size and ks.size * math.fsum(eps.tolist()) / float(e[0]) <= EXACT_READS:
        lat = common_lattice(e)
        points = lattice_points(e, m, 2 * lat[1]) if lat is not None else math.inf
        if ks.size * points <= EXACT_READS:
            return _one_pass(_LatticeLower(lat, e, want_lower), eps, delta_bars, hi_bars, ks, tail, cancel,
                             progress)
    # else a small plan: the loss window's two sides, every prefix at once (typed decimals too, as
    # compose() brackets them: width <= eta at a fraction of the exact lattice's cost)
    window = _window_curve(eps, delta_bars, hi_bars, ks, width, cancel, progress)
    if window is None:
        if lat is None and e.size:
            lat = common_lattice(e)
            points = lattice_points(e, m, 2 * lat[1]) if lat is not None else math.inf
        if points <= PREFIX_MAX_POINTS:
            return _one_pass(_LatticeLower(lat, e, want_lower), eps, delta_bars, hi_bars, ks, tail, cancel,
                             progress)
        return _lattice_curve(e, m, eps, delta_bars, hi_bars, ks, width, dmin, tail, cancel, progress, want_lower)
    upper, lower = window
    # the prefixes the window's caps left wider than asked for: the running lattices' bracket too
    miss = np.flatnonzero((upper - lower > width) & np.isfinite(upper))
    if miss.size:
        k_miss = int(ks[miss[-1]])
        e_m, m_m = merge_groups(eps[:k_miss], np.ones(k_miss, dtype=np.int64))
        up, lo = _lattice_curve(e_m, m_m, eps[:k_miss], delta_bars[miss], hi_bars[miss], ks[miss], width, dmin,
                                tail, cancel, None, True)
        upper[miss] = np.minimum(upper[miss], up)
        lower[miss] = np.maximum(lower[miss], lo)
    if progress is not None:
        progress(1.0)
    return upper, (lower if want_lower else np.zeros(ks.size))


def _lattice_curve(e, m, eps, delta_bars, hi_bars, ks, width, dmin, tail, cancel, progress, want_lower):
    """The running connect-the-dots lattice with the second-order lower reads (``prefix_sides``)."""
    step = _curve_step(e, m, width) if e.size > 1 else 2.0 ** -10
    if not want_lower:
        return _one_pass(_NoLower(eps, step), eps, delta_bars, hi_bars, ks, tail, cancel, progress)
    upper, lower = _one_pass(_SecondOrderLower(eps, step, width, dmin, tail), eps, delta_bars, hi_bars, ks, tail,
                             cancel, progress)
    # the prefixes whose bracket is wider than asked for, once more on a lattice twice as fine
    # (both ends' errors are second order in the step: about a quarter); their blocks follow the
    # query order, not the error sizes, so one step does not fit every prefix's bracket alike
    miss = np.flatnonzero((upper - lower > width) & np.isfinite(upper))
    if miss.size and lattice_points(e, m, step / 2) <= PREFIX_MAX_POINTS:
        k_miss = int(ks[miss[-1]])
        side = _SecondOrderLower(eps[:k_miss], step / 2, width, dmin, tail)
        up, lo = _one_pass(side, eps[:k_miss], delta_bars[miss], hi_bars[miss], ks[miss], tail, cancel, None)
        upper[miss] = np.minimum(upper[miss], up)
        lower[miss] = np.maximum(lower[miss], lo)
    return upper, lower


def _window_curve(eps, delta_bars, hi_bars, ks, width: float, cancel, progress):
    """The curve from the loss window's two sides (``prefix_window``), with ``_one_pass``'s edges,
    floors and clamps; None where that path does not take the plan."""
    regular = np.flatnonzero((delta_bars > 0) & (hi_bars < 1))
    if not regular.size:
        return None
    got = window_prefix_curve(eps, delta_bars[regular], hi_bars[regular], ks[regular], width, cancel, progress)
    if got is None:
        return None
    raw_up, raw_lo = np.full(ks.size, math.nan), np.full(ks.size, math.nan)
    raw_up[regular], raw_lo[regular] = got
    upper, lower = np.zeros(ks.size), np.zeros(ks.size)
    sums_up = _sums_up(eps)
    prev = (0.0, math.inf)    # the last certified lower bound and its delta_bar
    for j, k in enumerate(ks.tolist()):
        db, db_hi = float(delta_bars[j]), float(hi_bars[j])
        if not (db > 0 and db_hi < 1):
            upper[j], lower[j] = _edge(eps[:k], db, db_hi, float(sums_up[k - 1]))
            continue
        lo = max(float(raw_lo[j]), prev[0]) if db <= prev[1] else float(raw_lo[j])   # (see _one_pass)
        upper[j], lower[j] = widen_up(float(raw_up[j])), widen_down(lo)
        prev = (lower[j], db)
        upper[j], lower[j] = _at_most_sum(upper[j], lower[j], float(sums_up[k - 1]))
    return upper, lower


def _sums_up(eps: np.ndarray) -> np.ndarray:
    """Running sums of the (non-negative) epsilons, widened by the recursive-summation bound (i + 2) u."""
    return np.cumsum(eps) * (1 + 2.02 * (np.arange(eps.size) + 2) * U) + 1e-300


def _at_most_sum(upper: float, lower: float, s_up: float) -> tuple[float, float]:
    """OptComp <= the plain sum: a coarse lattice must not report more than that."""
    return (s_up, min(lower, s_up)) if upper > s_up else (upper, lower)


def _edge(eps: np.ndarray, db: float, db_hi: float, s_up: float) -> tuple[float, float]:
    """A prefix at an edge: no certified finite upper bound / the plain sum (tight for pure DP) /
    0 above; 0 (a certified lower bound, if a weak one), infinity or the plain sum below."""
    upper = math.inf if db < 0 else (s_up if db == 0 else 0.0)
    if db_hi >= 1 or db_hi > 0 >= db:
        return upper, 0.0
    if db_hi < 0:
        return upper, math.inf
    return upper, max(0.0, math.fsum(eps.tolist()) * (1 - 2 * U * eps.size))


def _one_pass(side, eps, delta_bars, hi_bars, ks, tail: float, cancel, progress):
    """(upper, lower) at each k = ks[j] from one side's running pmfs, extended over eps[:ks[-1]]."""
    K = int(ks[-1])
    upper = np.zeros(ks.size)
    lower = np.zeros(ks.size)
    sums_up = _sums_up(eps[:K])
    prev = [0.0, math.inf]    # the last certified lower bound and its delta_bar
    snaps: dict = {}          # what each pending prefix's lower read needs

    def finish(j: int, u: float) -> None:
        """Prefix j's bracket from its upper read-out u (prefixes finish in order)."""
        db = float(delta_bars[j])
        # OptComp grows with k and as delta_bar shrinks (the exact delta_bar shrinks with k), so
        # the previous certified lower bound is a valid floor for this one
        floor = prev[0] if db <= prev[1] else 0.0
        u, lo = side.bracket(int(ks[j]), db, float(hi_bars[j]), floor, u, snaps.pop(j))
        upper[j] = widen_up(u)
        lower[j] = widen_down(lo)
        prev[:] = lower[j], db
        upper[j], lower[j] = _at_most_sum(upper[j], lower[j], float(sums_up[ks[j] - 1]))

    grouped = GroupedUpperReads(finish)
    j = 0
    for i in range(K):
        if cancel is not None and i % 16 == 0:
            cancel.check()
        trim = tail * 8 if i % 8 == 7 else 0.0  # truncating every 8th step is enough and cheaper
        side.extend(i, float(eps[i]), trim)
        while j < ks.size and ks[j] == i + 1:
            db, db_hi = float(delta_bars[j]), float(hi_bars[j])
            if db <= 0 or db_hi >= 1:
                grouped.flush()                 # (the prefixes before finish first, in order)
                upper[j], lower[j] = _edge(eps[: i + 1], db, db_hi, float(sums_up[i]))
            else:
                snaps[j] = side.snapshot()
                grouped.add(j, side.run_up, db)  # read with others, then finished in order
            j += 1
        if progress is not None and i % 64 == 0:
            progress((i + 1) / K)
    grouped.flush()
    if progress is not None:
        progress(1.0)
    return upper, lower
