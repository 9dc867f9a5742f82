"""Randomized-response probabilities and binomial PMFs in log space, with error bounds.

RR(eps) has loss +eps with probability p = 1/(1 + e^-eps) and -eps with 1 - p. A group of m equal
queries has loss (2j - m) eps with probability Bin(m, p)(j). Computing C(m, j) p^j (1-p)^(m-j)
directly overflows for m in the thousands, so everything goes through gammaln and log1p, and the
relative error of the result is bounded from the magnitudes involved.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from .atoms import SUB, TINY, U


def log_rr(eps):
    """(log p, log(1 - p)) for RR(eps), each accurate to a few ulps of its magnitude (floats for a
    float, arrays for an array)."""
    lp = -np.log1p(np.exp(-np.asarray(eps, dtype=float)))
    if lp.ndim == 0:
        lp = float(lp)
    return lp, lp - eps


def binomial_logpmf(m: int, eps: float) -> tuple[np.ndarray, float]:
    """log Bin(m, p(eps))(j) for j = 0..m and a bound on its absolute error.

    The log-pmf is a sum of three gammaln values and two products, each with absolute error of a
    few ulps of its magnitude; scipy's gammaln is accurate to a few ulps, and we budget 8 ulps per
    term (a factor ~2 safety over the documented accuracy)."""
    logpmf, errors = binomial_logpmf_each(m, eps)
    lp, lq = log_rr(eps)
    mag = 3.0 * gammaln(m + 1.0) + m * (abs(lp) + abs(lq)) + 4.0
    return logpmf, 8 * U * mag + 8 * U


def binomial_logpmf_each(m: int, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """binomial_logpmf with a bound on each entry's absolute error: the same budget term by term,
    entry j's products being j log p and (m - j) log(1 - p). With a huge eps the entries far from
    j = m have huge logs (and errors), which say nothing about the others'."""
    j = np.arange(m + 1, dtype=float)
    lp, lq = log_rr(eps)
    g = gammaln(m + 1.0)
    logpmf = g - gammaln(j + 1.0) - gammaln(m - j + 1.0) + j * lp + (m - j) * lq
    mag = 3.0 * g + j * abs(lp) + (m - j) * abs(lq) + 4.0
    return logpmf, 8 * U * mag + 8 * U


def binomial_pmf(m: int, eps: float) -> tuple[np.ndarray, float, float]:
    """Bin(m, p(eps)) as a linear array over j = 0..m, its relative error bound and lost mass.

    exp() of the log-pmf adds 1 ulp. Entries below the normal range (subnormal or zero) have only
    absolute accuracy: their exact sum (from the log-pmf) plus half a subnormal ulp each is
    returned as the absolute error.
    """
    logpmf, logerr = binomial_logpmf(m, eps)
    rel = float(np.expm1(logerr)) + 2 * U
    with np.errstate(under="ignore"):
        p = np.exp(logpmf)
    return p, rel, underflow_loss(logpmf, p, logerr)


def underflow_loss(logw: np.ndarray, w: np.ndarray, logerr) -> float:
    """l1 bound on the error of the entries exp(logw) that fell below the normal range (``logerr``:
    a bound on the absolute error of every logw, or an array of each one's)."""
    under = w < TINY
    if not under.any():
        return 0.0
    if np.ndim(logerr):
        # each entry's own bound, and 4 ulps of its magnitude for forming it and logsumexp's
        # differences (all <= its magnitude: every log here is below the normal range's, < 0)
        logw_up = logw[under] + logerr[under] + 4 * U * (np.abs(logw[under]) + 1)
        top = float(logsumexp(logw_up))
        exact = math.exp(top + 4 * U * (abs(top) + 1)) * (1 + (logw_up.size + 4) * U)
        return exact * (1 + 4 * U) + int(under.sum()) * SUB
    with np.errstate(under="ignore"):
        exact = float(np.exp(logsumexp(logw[under]) + logerr + 4 * U * (np.max(np.abs(logw[under])) + 1)))
    return exact * (1 + 4 * U) + int(under.sum()) * SUB


#: The binomial window keeps j where P(j) >= e^-WINDOW_LOG P(mode): beyond it every mass is far
#: below the smallest double, and a geometric bound on the rest is charged instead.
WINDOW_LOG = 785.0
#: A read-out at delta_bar gives the relative error bound to the masses within
#: e^-CORE_MARGIN delta_bar of the mode's (the core), and charges the rest (whose log-ratio sums
#: are longer and larger) their absolute errors, far below delta_bar.
CORE_MARGIN = 60.0


def _log_ratios(m: int, eps: float, j: np.ndarray) -> np.ndarray:
    """log P(j + 1) / P(j) = log((m - j) / (j + 1)) + eps for Bin(m, p(eps)) (p / (1 - p) = e^eps)."""
    return np.log((m - j) / (j + 1.0)) + eps


def _side(m: int, eps: float, mode: int, up: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """Cumulative log P(j) / P(mode) going up (j = mode+1, ...) or down (j = mode-1, ...) until it
    falls below -WINDOW_LOG or the support ends; a bound on each one's absolute error; and a bound
    on the mass beyond, relative to P(mode) (every further ratio is smaller: the binomial is
    log-concave, and the mode is a true mode, so every step is <= 0)."""
    room = m - mode if up else mode
    n = min(room, 64)
    while True:
        j = mode + np.arange(n, dtype=float) if up else mode - 1 - np.arange(n, dtype=float)
        steps = _log_ratios(m, eps, j) if up else -_log_ratios(m, eps, j)
        c = np.cumsum(steps)
        below = np.flatnonzero(c < -WINDOW_LOG)
        if below.size or n == room:
            break
        n = min(room, 4 * n)
    cut = int(below[0]) if below.size else c.size   # entries from cut on are dropped
    tail = 0.0
    if below.size:
        last = c[cut] + 1e-6 * WINDOW_LOG    # (a generous margin for the cumulative sum's rounding)
        ratio = steps[cut + 1] if cut + 1 < steps.size else steps[cut]
        with np.errstate(under="ignore", over="ignore"):
            tail = max(float(np.exp(last) / -np.expm1(min(ratio, -1e-300))), SUB)
    c, steps = c[:cut], steps[:cut]
    # one step: the quotient (1 ulp), its log (1 ulp + 1 ulp of |log|) and the sum with eps (1 ulp
    # of the step): <= u (4 + 2 |log ratio| + |step|) with |log ratio| <= eps + |step|; the running
    # sum adds <= u |c| per step (recursive summation)
    step_err = U * (4.0 + 2.0 * min(eps, 1e300) + 3.0 * np.abs(steps)) + U * np.abs(c)
    return c, np.cumsum(step_err) * (1 + 1e-9), tail


def binomial_window(m: int, eps: float, delta_bar: float = 0.0) -> tuple[int, np.ndarray, float, float, float]:
    """Bin(m, p(eps)) on the j where it is not negligible, in O(sqrt(m)) for large m.

    ``delta_bar`` (optional): the level it will be read at; masses below e^-CORE_MARGIN delta_bar
    relative to the mode then get an absolute error bound instead of the relative one.

    Returns (j0, p, rel, err, tail): p[i] is the mass of j = j0 + i, within a factor (1 +- rel) of
    the exact one plus an l1 error ``err`` (the far entries' and the subnormal ones'); the exact
    mass outside the window is at most ``tail``. The masses are exp of cumulative log-ratios from
    the mode, normalised by their own sum W: P(j) = w_j P(mode) and P(mode) = (1 - outside) / W.
    """
    p_mode = float(np.exp(log_rr(eps)[0]))
    mode = min(m, int(np.floor((m + 1) * p_mode)))
    up, e_up, t_up = _side(m, eps, mode, True)
    down, e_down, t_down = _side(m, eps, mode, False)
    logw = np.concatenate([down[::-1], [0.0], up])
    log_err = np.concatenate([e_down[::-1], [0.0], e_up])
    n = logw.size
    with np.errstate(under="ignore"):
        w = np.exp(logw)
    core_log = WINDOW_LOG if not delta_bar > 0 else min(WINDOW_LOG, CORE_MARGIN - float(np.log(delta_bar)))
    core = logw >= -core_log
    e_core = float(np.max(log_err[core]))
    with np.errstate(over="ignore"):
        far = float(np.expm1(min(float(np.max(log_err)), 700.0)))
    # W = sum w within (1 +- rel_w): the core's error, the far entries' (each <= e^-CORE_LOG W)
    gam = 1.01 * (n + 8) * U
    rel_w = float(np.expm1(e_core)) + n * float(np.exp(-core_log)) * far + gam
    total = float(np.sum(w))             # >= 1 (the mode's own 1)
    with np.errstate(under="ignore"):
        p = w / total
    tail = (t_up + t_down) * (1 + 1e-9)
    rel = float(np.expm1(e_core)) + rel_w + 4 * U + tail
    err = float(np.sum(p[~core])) * (far + rel_w + 4 * U) * 1.01 + float(np.count_nonzero(p < TINY)) * SUB
    return mode - down.size, p, rel, err, tail
