"""The analytic Gaussian mechanism (Balle & Wang 2018, Thm 8) in log space, with directed rounding.

N(0, sigma^2) noise on a query of L2 sensitivity D has noise multiplier m = sigma / D; write
mu = 1/m. Its privacy loss is N(mu^2/2, mu^2) and, for every real eps,

    delta(eps) = Phi(mu/2 - eps/mu) - e^eps Phi(-mu/2 - eps/mu)        (formulas.md §8)

k Gaussians compose exactly into one with mu^2 = sum mu_i^2 (formulas.md §7, pitfalls).

Rounding: log delta = L1 + log(-expm1(L2 - L1)) with L1 = log Phi(x1), L2 = eps + log Phi(x2).
We assume scipy's log_ndtr is accurate to LOG_NDTR_ULPS ulps of (|result| + 1) and charge the
rounding of the arguments x through d log Phi / dx = phi/Phi <= |x| + 1. The error e_d of
d = L2 - L1 is amplified by 1/(e^-d - 1) in log(-expm1(d)); where it would swamp d (massive
cancellation, e.g. eps ~ 1e-310) the bound falls back to delta <= Phi(x1), still valid.
Every search loop below has a fixed iteration cap.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..memo import Memo

U = 2.0 ** -53
SUB = 2.0 ** -1074  # the smallest positive double
#: Assumed accuracy of scipy.special.log_ndtr (cephes ndtr / erfc based), in ulps of |result| + 1.
LOG_NDTR_ULPS = 16


def log_delta_bound(mu, eps, upper: bool):
    """An upper (or lower) bound on log delta(eps) of a Gaussian with mu = 1/m (broadcasts)."""
    mu = np.asarray(mu, dtype=float)
    eps = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        half, ratio = mu / 2.0, eps / mu
        x1, x2 = half - ratio, -half - ratio
        dx = 4 * U * (np.abs(half) + np.abs(ratio))          # two roundings of each argument
        l1 = log_ndtr(x1)
        l2 = eps + log_ndtr(x2)
        e1 = LOG_NDTR_ULPS * U * (np.abs(l1) + 1) + (np.abs(x1) + 1) * dx
        e2 = LOG_NDTR_ULPS * U * (np.abs(l2) + np.abs(eps) + 1) + (np.abs(x2) + 1) * dx
        d = l2 - l1
        ed = e1 + e2 + 2 * U * np.abs(d)
        rel = 8 * U  # expm1, log and the final sum, a few ulps each
        # -expm1 is decreasing: d - ed gives the larger value (upper), d + ed the smaller (lower)
        if upper:
            tail = np.log(-np.expm1(np.minimum(d - ed, 0.0)))
            out = l1 + e1 + np.where(np.isfinite(tail), tail + rel * (np.abs(tail) + 1), 0.0)
            out = out + 4 * U * np.abs(out)
            out = np.where(np.isnan(out), 0.0, np.minimum(out, 0.0))  # delta <= 1 always
        else:
            tail = np.where(d + ed < 0, np.log(-np.expm1(d + ed)), -np.inf)
            out = l1 - e1 + tail - rel * (np.abs(tail) + 1)
            out = np.where(np.isfinite(out), out - 4 * U * np.abs(out), -np.inf)
            out = np.where(np.isnan(out), -np.inf, np.minimum(out, 0.0))
    return float(out) if out.ndim == 0 else out


def log_delta_bounds(mu, eps):
    """(lower, upper) bounds on log delta(eps) of a Gaussian with mu = 1/m (broadcasts)."""
    return log_delta_bound(mu, eps, False), log_delta_bound(mu, eps, True)


def check_multiplier(m) -> float:
    m = float(m)
    if not (m > 0 and math.isfinite(m)):
        raise ValueError(f"noise multiplier m = {m!r} is not allowed; it must be a finite number > 0")
    return m


def check_delta(delta) -> float:
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta = {delta!r} is not allowed; the Gaussian mechanism needs 0 < delta < 1")
    return delta


def gaussian_delta(m: float, eps: float) -> float:
    """delta of N(0, (m D)^2) noise on a query of L2 sensitivity D at eps, rounded up (never 0:
    ``delta_upper``)."""
    m = check_multiplier(m)
    eps = float(eps)
    if math.isnan(eps):
        raise ValueError("epsilon is nan; give a number")
    return float(delta_upper(1.0 / m, eps))


def _reported_delta(m: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """The calibrations' reading of delta at m (log_delta_bound's own: gaussian_delta is the same
    bits wherever delta is above 2^-1020 (~8.9e-308); below, it adds the smallest double)."""
    with np.errstate(over="ignore", divide="ignore", under="ignore"):
        return np.minimum(1.0, np.exp(log_delta_bound(1.0 / m, eps, True)) * (1 + 4 * U))


def delta_upper(mu, eps):
    """An upper bound on delta(eps) of a Gaussian with mu = 1/m > 0 (broadcasts), for a privacy
    profile. Never 0: no Gaussian's delta is, and where exp underflows (eps >= ~40 mu^2) the
    smallest double bounds it; nor 1 where log Phi(x1) overflows (eps >= ~1e154 mu): there
    delta <= Phi(x1) is below every double. (The calibrations keep log_delta_bound's own reading.)"""
    mu, eps = np.asarray(mu, dtype=float), np.asarray(eps, dtype=float)
    with np.errstate(over="ignore", divide="ignore", under="ignore", invalid="ignore"):
        log_up = log_delta_bound(mu, eps, True)
        log_up = np.where(log_ndtr(mu / 2.0 - eps / mu) == -np.inf, -np.inf, log_up)
        return np.minimum(1.0, np.exp(log_up) * (1 + 4 * U) + SUB)


def _fits(mu: np.ndarray, eps: np.ndarray, log_target: np.ndarray) -> np.ndarray:
    return log_delta_bound(mu, eps, True) <= log_target


#: Calibrations already made, (eps, delta) -> multiplier. The window recomputes every statistic's
#: accuracy after each edit and one scalar bisection costs ~10 ms, while most pairs repeat from one
#: edit to the next; a batch (``gaussian_multipliers``) reads and leaves its answers here too.
_KNOWN = Memo(1 << 16)


def gaussian_multipliers(eps, delta) -> np.ndarray:
    """The least noise multipliers m = sigma / D (to ~1e-14 relative, rounded up; where the
    rounded-up bound itself is coarse, e.g. eps 1e-6 with delta 1e-116, up to ~2e-7 above the
    least: always one that fits) whose Gaussians are (eps_i, delta_i)-DP, for arrays of eps and delta (one vectorised bisection; each entry is
    bit for bit what gaussian_multiplier returns for it). ValueError names the first bad entry."""
    eps, delta = (np.array(a, dtype=float) for a in np.broadcast_arrays(eps, delta))
    keys = list(zip(eps.ravel().tolist(), delta.ravel().tolist()))
    for e, d in keys:
        if not (0.0 < d < 1.0):
            raise ValueError(f"delta = {d!r} is not allowed; the Gaussian mechanism needs 0 < delta < 1")
        if not (e > 0 and math.isfinite(e)):
            raise ValueError(f"epsilon = {e!r} is not allowed; the Gaussian mechanism needs a finite "
                             "epsilon > 0")
    m = np.array([math.nan if (v := _KNOWN.get(key)) is None else v for key in keys], dtype=float)
    new = np.isnan(m)
    if new.any():       # (each entry's bisection is independent: a subset gives the same bits)
        m[new] = _calibrate(eps.ravel()[new], delta.ravel()[new])
    return m.reshape(eps.shape)


#: Newton steps of _estimate at most (~6 reach 1e-15); where _calibrate reads the bound around it.
_ESTIMATE_STEPS = 16
_AROUND = np.array([-1e-5, -1e-7, -1e-9, -1e-10, -1e-11, -1e-12, 1e-12, 1e-10, 1e-8])


def _estimate(eps: np.ndarray, delta: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Where the plain log delta (the formula without the bound's margins) meets ``target``:
    Newton's method on log(-log delta) against log mu, nearly a line (log delta ~ -eps^2 / (2 mu^2)
    where delta is small), from the classic calibration's mu. An entry stops one step after a
    step below 1e-7 (quadratic: it is then as close as the formula's rounding lets it, 1e-15 to
    1e-11), so its answer does not depend on the others. Only a guess: _calibrate checks that
    the bound brackets the crossing around it (nan: no guess)."""
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        s = np.log(eps / (1.0 + np.sqrt(2.0 * np.log(1.25 / delta))))
        goal = np.log(-target)
        todo, last = np.isfinite(s), np.zeros(s.size, dtype=bool)
        for _ in range(_ESTIMATE_STEPS):
            # (every entry's own steps, whichever are still going: each the same operations on
            # the same values; while all are, without gathering them, ~1/3 of a few entries' time)
            i = slice(None) if todo.all() else np.flatnonzero(todo)
            e, mu = eps[i], np.exp(s[i])
            if not mu.size:
                break
            ratio = e / mu
            x1, x2 = mu / 2.0 - ratio, -mu / 2.0 - ratio
            l1 = log_ndtr(x1)
            log_d = l1 + np.log(-np.expm1(e + log_ndtr(x2) - l1))
            # d log delta / d log mu = mu phi(x1) / delta (Balle & Wang's d delta / d mu = phi(x1))
            slope = mu * np.exp(-0.5 * x1 * x1 - 0.5 * math.log(2.0 * math.pi) - log_d)
            step = np.minimum(np.maximum((np.log(-log_d) - goal[i]) * log_d / slope, -2.0), 2.0)
            s[i] -= step
            todo[i] = ~last[i] & np.isfinite(step)
            last[i] = np.abs(step) < 1e-7
    return np.where(np.isfinite(s) & last, np.exp(s), math.nan)


def _around(eps: np.ndarray, delta: np.ndarray, target: np.ndarray):
    """(lo, hi, g_lo, g_hi): lo fitting, hi not (inf: no bracket), and the bound minus the target
    there, from one read of the bound around _estimate's root: the bound's crossing is 1e-15 to
    ~1e-9 (small eps: its margins) from the formula's."""
    guess = _estimate(eps, delta, target)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        pts = guess[None, :] * (1.0 + _AROUND[:, None])
        g_pts = log_delta_bound(pts, eps[None, :], True) - target[None, :]
    fits = g_pts <= 0
    lo = np.where(fits, pts, -np.inf).max(axis=0)
    hi = np.where(~fits & (pts > lo), pts, np.inf).min(axis=0)
    return (lo, hi, np.where(pts == lo, g_pts, -np.inf).max(axis=0),
            np.where(pts == hi, g_pts, np.inf).min(axis=0))


def fitting_multipliers(eps, delta) -> np.ndarray:
    """Noise multipliers whose Gaussians are (eps_i, delta_i)-DP, for valid flat arrays (each entry
    its own): 1/m the largest point of _around's read that fits, within ~1e-9 of the least, else
    gaussian_multipliers'. For a discrete Gaussian's twin, whose sigma carries a slack of ~1e-7
    anyway (remembered there): no narrowing to 1e-14, a third of a calibration's reads."""
    eps, delta = np.asarray(eps, dtype=float), np.asarray(delta, dtype=float)
    lo, hi, _, _ = _around(eps, delta, np.log(delta))
    with np.errstate(divide="ignore", over="ignore"):
        m = np.nextafter(1.0 / lo, np.inf)        # 1/m <= lo: delta(1/m) <= delta(lo) <= delta_i
    miss = ~((lo > 0) & (hi < np.inf) & np.isfinite(m))
    if miss.any():
        m[miss] = gaussian_multipliers(eps[miss], delta[miss])
    return m


def _calibrate(eps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """gaussian_multipliers of valid flat arrays, computed (and remembered)."""
    target = np.log(delta)
    lo, hi, g_lo, g_hi = _around(eps, delta, target)
    miss = np.flatnonzero(~((lo > 0) & (hi < np.inf)))
    if miss.size:   # (rare: halving and doubling from the classic calibration's mu, or mu = 2 delta,
        # which always fits: delta(eps) <= delta(0) = 2 Phi(mu/2) - 1 <= mu phi(0) < 0.4 mu)
        with np.errstate(over="ignore"):    # a subnormal delta: 1.25/delta is inf, and lo = 2 delta
            e, d = eps[miss], delta[miss]
            start = np.maximum(e / (1.0 + np.sqrt(2.0 * np.log(1.25 / d))), 2.0 * d)
        lo[miss], hi[miss] = _bracket_rest(start, e, d, target[miss])
        g_lo[miss] = g_hi[miss] = np.nan
    _narrow(lo, hi, eps, target, g_lo, g_hi)
    with np.errstate(divide="ignore", over="ignore"):
        m = np.nextafter(1.0 / lo, np.inf)  # 1/m <= lo exactly, so delta(1/m) <= delta(lo) <= delta_i
    if not np.all(np.isfinite(m)):
        i = int(np.flatnonzero(~np.isfinite(m))[0])
        raise ValueError(f"epsilon = {float(eps.flat[i])!r} is too small for the Gaussian mechanism: the noise "
                         "multiplier would exceed the floating-point range")
    # 1/m <= lo, but the bound's rounding noise (~1e-13 of mu) can put gaussian_delta(m) a hair
    # over delta_i: nudge m up until what the window reports for it is within delta_i too
    over = ~(_reported_delta(m, eps) <= delta)
    for k in range(64):
        if not over.any():
            break
        m[over] *= 1.0 + 1e-14 * 2.0 ** k
        over[over] = ~(_reported_delta(m[over], eps[over]) <= delta[over])
    _KNOWN.put_all(zip(zip(eps.ravel().tolist(), delta.ravel().tolist()), m.ravel().tolist()))
    return m


#: Passes of _narrow that may use Newton's estimate before it only halves (it needs ~5).
_NEWTON_PASSES = 40
#: Where a pass of _narrow looks besides its estimate x (relative offsets; index 0 is x itself).
_SPREAD = np.concatenate([[0.0], 0.6e-14 * 4.0 ** np.arange(4), -0.6e-14 * 4.0 ** np.arange(4)])
_EVEN = np.arange(1, _SPREAD.size + 1) / (_SPREAD.size + 1)


def _narrow(lo: np.ndarray, hi: np.ndarray, eps: np.ndarray, target: np.ndarray, g_lo: np.ndarray,
            g_hi: np.ndarray) -> None:
    """Shrink [lo, hi] in place until hi - lo <= 1e-14 hi, keeping lo fitting and hi not.

    Halving took ~47 passes, a third of a composition's time after an edit (the free Gaussians'
    epsilons are new each time). A pass here judges, in one vectorised call, Newton's estimate x
    of the crossing (d delta / d mu = phi(mu/2 - eps/mu) exactly, Balle & Wang's identity) from
    the end nearer to it, and points 0.6e-14 x to 4e-13 x either side of x: once x is that close
    the bracket closes in the same pass. Inside the bound's own rounding noise (a bracket under
    1e-11 of mu) Newton stalls, and the points split the bracket evenly instead (from the second
    pass: a first bracket that narrow comes from _around, and the secant's estimate, used under
    1e-9 of mu, often closes it at once). An estimate outside the bracket is replaced by its
    midpoint. Every point is judged by _fits's test, so the answer has the bisection's guarantee;
    only the speed differs."""
    unknown = np.isnan(g_lo) | np.isnan(g_hi)       # (nan: not known yet)
    if unknown.any():
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            both = log_delta_bound(np.concatenate([lo[unknown], hi[unknown]]), np.tile(eps[unknown], 2), True)
        g_lo[unknown] = both[:unknown.sum()] - target[unknown]         # <= 0: lo fits
        g_hi[unknown] = both[unknown.sum():] - target[unknown]         # > 0
    todo = hi - lo > 1e-14 * hi
    for it in range(_NEWTON_PASSES + 200):
        if not todo.any():
            return
        i = np.flatnonzero(todo)
        l, h, gl, gh, e, t = lo[i], hi[i], g_lo[i], g_hi[i], eps[i], target[i]
        tol = 0.25e-14 * h
        with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
            p, g = np.where(-gl < gh, l, h), np.where(-gl < gh, gl, gh)
            x1 = p / 2.0 - e / p
            # log delta(p) - log phi(x1): the Newton step on log delta is g delta / phi
            x = p - g * np.exp(g + t + 0.5 * x1 * x1 + 0.5 * math.log(2.0 * math.pi))
            # under 1e-9 of mu the bound is a line to within its noise, its slope the formula's
            # and its margins': the secant's estimate
            x = np.where(h - l < 1e-9 * h, l - gl * (h - l) / (gh - gl), x)
            inside = (x > l) & (x < h) & (it < _NEWTON_PASSES)
            x = np.where(inside, np.minimum(np.maximum(x, l + tol), h - tol), 0.5 * (l + h))
            ys = np.minimum(np.maximum(x[None, :] * (1 + _SPREAD[:, None]), l + tol), h - tol)
            # inside the noise (a bracket under 1e-11 of mu) the same points split it evenly
            even = l[None, :] + (h - l)[None, :] * _EVEN[:, None]
            ys = np.where((h - l < 1e-11 * h)[None, :] & (it > 0), even, ys)
            gy = log_delta_bound(ys, e[None, :], True) - t[None, :]
        # the new bracket: the largest fitting point, and the least failing one above it
        pts = np.concatenate([l[None], ys, h[None]])
        gs = np.concatenate([gl[None], gy, gh[None]])
        fits = np.concatenate([np.ones((1, l.size), bool), gy <= 0, np.zeros((1, l.size), bool)])
        new_l = np.where(fits, pts, -np.inf).max(axis=0)
        new_h = np.where(~fits & (pts > new_l), pts, np.inf).min(axis=0)
        g_lo[i] = np.where(pts == new_l, gs, -np.inf).max(axis=0)
        g_hi[i] = np.where(pts == new_h, gs, np.inf).min(axis=0)
        lo[i], hi[i] = new_l, new_h
        todo[i] = hi[i] - lo[i] > 1e-14 * hi[i]


def _bracket_rest(lo: np.ndarray, eps: np.ndarray, delta: np.ndarray, target: np.ndarray):
    """(lo, hi) with lo fitting and hi not, by halving and doubling from lo (what _around missed);
    ValueError if no positive lo fits."""
    hi = lo.copy()
    todo = ~_fits(lo, eps, target)
    for _ in range(2200):  # halving covers the whole double range
        if not todo.any():
            break
        hi[todo], lo[todo] = lo[todo], lo[todo] / 2.0
        todo[todo] = ~_fits(lo[todo], eps[todo], target[todo]) & (lo[todo] > 0)
    todo = _fits(hi, eps, target) & (hi <= 1e300)
    for _ in range(2200):
        if not todo.any():
            break
        lo[todo], hi[todo] = hi[todo], hi[todo] * 2.0
        todo[todo] = _fits(hi[todo], eps[todo], target[todo]) & (hi[todo] <= 1e300)
    if not (np.all(lo > 0) and np.all(_fits(lo, eps, target))):
        i = int(np.flatnonzero(~((lo > 0) & _fits(lo, eps, target)))[0])
        raise ValueError(f"epsilon = {float(eps.flat[i])!r} with delta = {float(delta.flat[i])!r} cannot be calibrated: "
                         "the Gaussian noise would be too large for floating point")
    return lo, hi


def gaussian_multiplier(eps: float, delta: float) -> float:
    """The least noise multiplier m = sigma / D (to ~1e-14 relative, rounded up; see
    gaussian_multipliers for extreme pairs) whose Gaussian is (eps, delta)-DP. ValueError if eps or delta is outside what floating point can calibrate."""
    key = (_real(eps, "epsilon"), _real(delta, "delta"))
    known = _KNOWN.get(key)
    if known is not None:
        return known
    return float(gaussian_multipliers(np.array([key[0]]), np.array([key[1]]))[0])


def _real(x, what: str) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        raise ValueError(f"{what} = {x!r} is not a number") from None
