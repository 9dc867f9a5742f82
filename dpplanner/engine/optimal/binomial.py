"""Randomized-response probabilities and binomial PMFs in log space, with error bounds.

RR(eps) has loss +eps with probability p = 1/(1 + e^-eps) and -eps with 1 - p. A group of m equal
queries has loss (2j - m) eps with probability Bin(m, p)(j). Computing C(m, j) p^j (1-p)^(m-j)
directly overflows for m in the thousands, so everything goes through gammaln and log1p, and the
relative error of the result is bounded from the magnitudes involved.
"""

from __future__ import annotations

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
    j = np.arange(m + 1, dtype=float)
    lp, lq = log_rr(eps)
    g = gammaln(m + 1.0)
    logpmf = g - gammaln(j + 1.0) - gammaln(m - j + 1.0) + j * lp + (m - j) * lq
    mag = 3.0 * g + m * (abs(lp) + abs(lq)) + 4.0
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


def underflow_loss(logw: np.ndarray, w: np.ndarray, logerr: float) -> float:
    """l1 bound on the error of the entries exp(logw) that fell below the normal range."""
    under = w < TINY
    if not under.any():
        return 0.0
    with np.errstate(under="ignore"):
        exact = float(np.exp(logsumexp(logw[under]) + logerr + 4 * U * (np.max(np.abs(logw[under])) + 1)))
    return exact * (1 + 4 * U) + int(under.sum()) * SUB
