"""Privacy filters: composition when each query's budget may be chosen adaptively (formulas.md §6).

A filter with parameters (eps_g, delta_g) runs query t only if the history including t passes
its test; the whole interaction is then (eps_g, delta_g)-DP. Three filters:

* ``basic`` (RRUV16): sum eps <= eps_g and sum delta <= delta_g;
* ``rruv``  (RRUV16 Thm 5.1, advanced): K <= eps_g and sum delta <= delta_g/2, with
  H = eps_g^2/(28.04 ln(1/delta_g)) (the Sherpa.ai/tutorial choice, formulas.md §10.3) and
  delta_g < 1/e;
* ``wrrw``  (Whitehouse–Ramdas–Rogers–Wu 2023): sqrt(2 ln(1/delta') sum eps^2) + sum eps^2 / 2
  <= eps_g and sum delta <= delta'', where delta_g = delta' + delta''.

``filter_epsilon`` answers the planning question "which eps_g must a filter be given so that it
admits the whole plan", ``filter_admits`` the converse "how many queries does it run".
"""

from __future__ import annotations

import math

import numpy as np

from .advanced import steinke_epsilon
from .numerics import round_down, round_up
from .stats import Sums, prefix_sums
from .types import Composition
from .validation import validate_delta_g, validate_epsilon_g, validate_expandable, validate_filter, validate_plan

NAME = "filter"
RRUV_H_CONSTANT = 28.04
_DOUBLINGS = 2.0 ** np.arange(0, 15)  # lo .. 16384 lo


def _log_over(a: float, delta_g: float) -> float:
    """ln(a / delta_g); in two logs where a / delta_g overflows (delta_g below ~1e-308), else as one
    (the bits of every ordinary total kept; either way within round_up's margin)."""
    return math.log(a / delta_g) if delta_g > 1e-300 else math.log(a) - math.log(delta_g)


def rruv_statistic(sum_kl, sum_sq, epsilon_g, delta_g):
    """RRUV K = sum eps(e^eps - 1)/2 + sqrt(2 (V + H)(1 + ln(V/H + 1)/2) ln(2/delta_g)), rounded up.

    ``sum_kl`` is sum eps (e^eps - 1); V = sum eps^2; H = eps_g^2 / (28.04 ln(1/delta_g)).
    """
    sum_kl, sum_sq, eg = (np.asarray(a, dtype=float) for a in (sum_kl, sum_sq, epsilon_g))
    h = eg * eg / (RRUV_H_CONSTANT * _log_over(1.0, delta_g))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_term = np.where(sum_sq > 0, np.log1p(sum_sq / h), 0.0)
        root = np.sqrt(2 * (sum_sq + h) * (1 + 0.5 * log_term) * _log_over(2.0, delta_g))
    return round_up(sum_kl / 2 + root)


def wrrw_statistic(sum_sq, delta_prime):
    """WRRW: sqrt(2 ln(1/delta') sum eps^2) + sum eps^2 / 2 (rounded up)."""
    return steinke_epsilon(sum_sq, delta_prime)


def _rruv_floor(kl, v, delta_g: float):
    """A lower bound on K(x) for every x > 0 (H >= 0 and its log term >= 0), computed so that the
    computed K(x) is never below it either: the same operations on smaller operands (rounding is
    monotone), then rounded down where K is rounded up."""
    return round_down(kl / 2 + np.sqrt(2 * v * _log_over(2.0, delta_g)))


def _rruv_needed(sum_kl: np.ndarray, sum_sq: np.ndarray, delta_g: float, cap=None) -> np.ndarray:
    """Least (up to bisection width) eps_g with K(eps_g) <= eps_g; the reported end satisfies it.
    ``cap`` (for callers that take the least with it): inf where the floor is already >= cap (the
    reported end, K(end) <= end, is never below the floor), without searching."""
    sum_kl, sum_sq = np.atleast_1d(sum_kl).astype(float), np.atleast_1d(sum_sq).astype(float)
    out = np.full(sum_sq.shape, np.inf)
    zero = sum_sq == 0
    out[zero] = 0.0  # no privacy loss at all: any eps_g > 0 admits everything
    idx = np.flatnonzero(~zero & np.isfinite(sum_kl))
    if cap is not None:
        idx = idx[_rruv_floor(sum_kl[idx], sum_sq[idx], delta_g) < np.atleast_1d(cap)[idx]]
    for start in range(0, idx.size, 2048):  # chunks keep the scan grid small in memory
        part = idx[start:start + 2048]
        out[part] = _rruv_least_root(sum_kl[part], sum_sq[part], delta_g)
    return out


def _rruv_least_root(kl: np.ndarray, v: np.ndarray, delta_g: float) -> np.ndarray:
    """The least eps_g (to 1e-14 relative) with K(eps_g) <= eps_g, per row; the reported end passes.

    K(x)/x is decreasing in x (each of its terms is), so the passing eps_g form [x*, inf): double
    up from a lower bound to the first passing x, then narrow [failing, passing] by two points a
    step: the false-position point and the midpoint (at least a halving), or, once the
    false-position point is within 1e-9 of an end, two points 5e-15 apart around it, which
    straddle the root (K is noisy at that scale, and false position alone creeps up on it from
    one side). ~6 evaluations where the old 4.4 % scan cell took ~42 halvings."""
    if kl.size == 1:
        return np.array([_rruv_least_root_one(kl[0], v[0], delta_g)])
    lo = _rruv_floor(kl, v, delta_g)
    grid = lo[:, None] * _DOUBLINGS[None, :]
    ok = rruv_statistic(kl[:, None], v[:, None], grid, delta_g) <= grid
    found = ok.any(axis=1)
    first = np.argmax(ok, axis=1)
    rows = np.arange(kl.size)
    hi = grid[rows, first]
    low = np.where(first > 0, grid[rows, np.maximum(first - 1, 0)], hi)
    f_hi = rruv_statistic(kl, v, hi, delta_g) - hi          # <= 0: hi always passes
    f_lo = rruv_statistic(kl, v, low, delta_g) - low        # > 0 where low < hi
    for _ in range(60):
        if not np.any(hi - low > 1e-14 * hi):
            break
        with np.errstate(invalid="ignore", divide="ignore"):
            x = hi - f_hi * (hi - low) / (f_hi - f_lo)
        x = np.where((low <= x) & (x <= hi), x, 0.5 * (low + hi))
        near = np.minimum(hi - x, x - low) <= 1e-9 * hi
        pts = np.stack([np.where(near, x * (1 - 2.5e-15), x),
                        np.where(near, x * (1 + 2.5e-15), 0.5 * (low + hi))], axis=1)
        f = rruv_statistic(kl[:, None], v[:, None], pts, delta_g) - pts
        for c in range(2):      # a point inside the interval replaces the end on its side
            inside = (low < pts[:, c]) & (pts[:, c] < hi)
            good, bad = inside & (f[:, c] <= 0), inside & (f[:, c] > 0)
            hi, f_hi = np.where(good, pts[:, c], hi), np.where(good, f[:, c], f_hi)
            low, f_lo = np.where(bad, pts[:, c], low), np.where(bad, f[:, c], f_lo)
    return np.where(found, hi, np.inf)


def _rruv_least_root_one(kl: np.float64, v: np.float64, delta_g: float) -> float:
    """_rruv_least_root of one row, by the same operations on numpy's scalars (the same bits;
    a plan's filter total, where the arrays of one row cost ~0.5 ms): the grid read up to its
    first passing point, each step's two points in turn."""
    def f(x):
        return np.float64(rruv_statistic(kl, v, x, delta_g)) - x

    lo = _rruv_floor(kl, v, delta_g)
    hi = low = None
    for d in _DOUBLINGS.tolist():
        x = lo * d
        if rruv_statistic(kl, v, x, delta_g) <= x:
            hi = x
            break
        low = x
    if hi is None:
        return math.inf
    hi, low = np.float64(hi), np.float64(hi if low is None else low)
    f_hi, f_lo = f(hi), f(low)
    with np.errstate(invalid="ignore", divide="ignore"):
        for _ in range(60):
            if not hi - low > 1e-14 * hi:
                break
            x = hi - f_hi * (hi - low) / (f_hi - f_lo)
            x = x if low <= x <= hi else 0.5 * (low + hi)
            if np.minimum(hi - x, x - low) <= 1e-9 * hi:
                pts = (x * (1 - 2.5e-15), x * (1 + 2.5e-15))
            else:
                pts = (x, 0.5 * (low + hi))
            fs = [f(p) for p in pts]
            for p, fp in zip(pts, fs):      # a point inside the interval replaces the end on its side
                if low < p < hi:
                    if fp <= 0:
                        hi, f_hi = p, fp
                    elif fp > 0:
                        low, f_lo = p, fp
    return float(hi)


def filter_candidates(s: Sums, delta_g: float, least_only: bool = False) -> dict[str, np.ndarray]:
    """eps_g each filter needs to admit the queries summarised by ``s`` (inf: cannot).
    ``least_only``: only the least of them counts, and RRUV's is inf where it cannot be the least
    (its root is searched for only below the other two's least; see _rruv_needed)."""
    basic_eps = np.where(s.delta_fits(delta_g), s.sum_eps, np.inf)
    delta_prime = s.delta_room(delta_g)  # exact for the binary doubles, rounded down
    with np.errstate(invalid="ignore"):
        wrrw = np.where(delta_prime > 0, wrrw_statistic(s.sum_sq, np.where(delta_prime > 0, delta_prime, 1)),
                        np.inf)
    if 0 < delta_g < 1 / math.e:
        cap = np.minimum(basic_eps, wrrw) if least_only else None
        rruv = np.where(s.delta_fits(delta_g, half=True), _rruv_needed(s.sum_kl_drv, s.sum_sq, delta_g, cap),
                        np.inf)
    else:
        rruv = np.full(s.sum_eps.shape, np.inf)
    return {"basic filter": basic_eps, "RRUV advanced filter": rruv, "WRRW filter": wrrw}


def filter_epsilon(s: Sums, delta_g: float) -> np.ndarray:
    return np.min(np.stack(list(filter_candidates(s, delta_g, least_only=True).values())), axis=0)


def filter_composition(s: Sums, delta_g: float) -> Composition:
    values = {name: float(v[0]) for name, v in filter_candidates(s, delta_g).items()}
    winner = min(values, key=values.get)
    if values[winner] == np.inf:
        return Composition(NAME, np.inf, delta_g, detail="none valid", extra=values,
                           reason=f"the query deltas sum to {float(s.sum_delta[0]):.6g}, which leaves no "
                                  f"room in delta_g = {delta_g:.6g} for any filter")
    return Composition(NAME, values[winner], delta_g if winner != "basic filter" else float(s.sum_delta[0]),
                       detail=winner, extra=values)


def filter_admits(epsilons, deltas, epsilon_g, delta_g, *, filter="wrrw", multiplicities=None,
                  wrrw_delta_split=None) -> int:
    """How many of the queries, in order, the filter runs before it halts.

    ``wrrw_delta_split`` is the fraction of delta_g set aside as delta'' for the queries' own deltas
    (fixed before interaction); by default 0 when every delta_i is 0, else 1/2.
    """
    plan = validate_plan(epsilons, deltas, multiplicities)
    epsilon_g = validate_epsilon_g(epsilon_g)
    delta_g = validate_delta_g(delta_g)
    name = validate_filter(filter)
    validate_expandable(plan.k, "filter_admits")
    eps_seq, delta_seq = plan.expanded()
    s = prefix_sums(eps_seq, delta_seq, np.arange(1, eps_seq.size + 1))
    if name == "basic":
        ok = s.eps_fits(epsilon_g) & s.delta_fits(delta_g)
    elif name == "rruv":
        if not (0 < delta_g < 1 / math.e) or epsilon_g <= 0:
            raise ValueError(f"the RRUV filter needs 0 < delta_g < 1/e and epsilon_g > 0, got delta_g = "
                             f"{delta_g!r}, epsilon_g = {epsilon_g!r}")
        ok = (rruv_statistic(s.sum_kl_drv, s.sum_sq, epsilon_g, delta_g) <= epsilon_g) \
            & s.delta_fits(delta_g, half=True)
    else:
        split = (0.0 if not np.any(delta_seq > 0) else 0.5) if wrrw_delta_split is None else float(wrrw_delta_split)
        if not (0.0 <= split < 1.0):
            raise ValueError(f"wrrw_delta_split = {wrrw_delta_split!r} is not allowed; it must be in [0, 1)")
        delta_pp = delta_g * split
        delta_prime = round_down(delta_g - delta_pp)
        if delta_prime <= 0:
            raise ValueError(f"the WRRW filter needs delta' = delta_g - delta'' > 0, got delta_g = {delta_g!r}")
        ok = (wrrw_statistic(s.sum_sq, delta_prime) <= epsilon_g) & s.delta_fits(delta_pp)
    return int(ok.size if ok.all() else np.argmin(ok))
