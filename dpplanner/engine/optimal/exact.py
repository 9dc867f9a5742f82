"""Exact optimal composition where it is cheap: homogeneous, few groups, or a common lattice.

"Exact" means the bracket comes only from floating-point error bounds (widths ~1e-12 or less),
not from any discretisation of the epsilons.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

import numpy as np

from .atoms import TINY, Atoms, U, sup_root
from .binomial import binomial_logpmf_each, binomial_window, log_rr, underflow_loss
from .result import Bracket
from ..exact import exact_total
from ..numerics import widen_down, widen_up

#: Largest number of joint outcomes (prod of m_g + 1) enumerated by the grouped exact path.
GROUPED_MAX_OUTCOMES = 200_000


def homogeneous_atoms(eps: float, k: int, upper: bool, delta_bar: float = 0.0) -> Atoms:
    """The exact loss distribution of k copies of RR(eps): atoms (2j - k) eps, j >= k / 2 (losses
    below 0 never count: every read-out is at x >= 0), over the binomial's window of non-negligible
    mass (``binomial_window``). The mass outside it counts in full above (as mass at +infinity)
    and not at all below (dropping mass only lowers delta). ``delta_bar``: the level it is read at
    (tighter error bounds there), or 0 for any level."""
    j0, p, rel, err, tail = binomial_window(k, eps, delta_bar)
    first = max(0, (k + 1) // 2 - j0)      # the first atom with loss >= 0
    p = p[first:]
    j = (j0 + first) + np.arange(p.size, dtype=float)
    with np.errstate(over="ignore"):
        l = eps * (2.0 * j - k)            # integer times eps: one rounding each
    lam = 2 * U * k * eps
    return Atoms(l, p, upper, rel=rel, err=err, inf_mass=tail if upper else 0.0, lam=lam)


def homogeneous_bracket(eps: float, k: int, delta_bar: float, delta_bar_hi: Optional[float] = None,
                        lower: bool = True) -> Bracket:
    """Exact KOV / MV Thm 1.4 continuous root for k copies of pure eps (no bisection).

    The upper bound is read at ``delta_bar`` (rounded down), the lower at ``delta_bar_hi`` >= it
    (rounded up; default: the same value). ``lower=False``: the upper end alone (0 below)."""
    hi = delta_bar if delta_bar_hi is None else delta_bar_hi
    if eps == 0 or k == 0:
        return Bracket(0.0, 0.0, "exact (no privacy loss)")
    e, m = np.array([eps]), np.array([k])
    return _read(lambda upper, db: sup_root(homogeneous_atoms(eps, k, upper, db), db), e, m, delta_bar, hi,
                 "exact (homogeneous)", lower)


def _read(root, e: np.ndarray, m: np.ndarray, delta_bar: float, delta_bar_hi: float, method: str,
          lower: bool = True) -> Bracket:
    """Both read-outs (``lower=False``: the upper one, 0 below), with the edge cases of each side:
    delta_bar <= 0 (infeasible or the plain sum, tight for pure DP) and delta_bar >= 1 (0)."""
    out = []
    for upper, db in ((True, delta_bar), (False, delta_bar_hi))[:2 if lower else 1]:
        if db < 0:
            out.append(math.inf)
        elif db == 0:
            total = _pure_sum(e, m, 0.0)        # (an exact sum: only where it is the answer)
            out.append(total.upper if upper else total.lower)
        elif db >= 1:
            out.append(0.0)
        else:
            out.append(root(upper, db))
    up, lo = out if lower else (out[0], 0.0)
    return Bracket(widen_up(up), widen_down(lo), method)


def grouped_outcomes(eps: np.ndarray, mult: np.ndarray) -> int:
    """prod (m_g + 1), the number of joint outcomes: exact up to GROUPED_MAX_OUTCOMES, beyond it
    some number above that (what the callers compare it with; the whole product for 10^5 groups
    is a 10^5-bit integer and cost a third of a second)."""
    total = 1
    for m in mult.tolist():
        total *= int(m) + 1
        if total > GROUPED_MAX_OUTCOMES:
            break
    return total


def grouped_atoms(eps: np.ndarray, mult: np.ndarray, upper: bool) -> Atoms:
    """All joint outcomes (j_1..j_G) of G binomial groups, sorted by loss sum (2 j_g - m_g) eps_g."""
    l = np.zeros(1)
    logw = np.zeros(1)
    log_err = np.zeros(1)      # a bound on each outcome's absolute error in logw
    mag = 0.0
    for e, m in zip(eps.tolist(), mult.tolist()):
        m = int(m)
        lg, lg_err = binomial_logpmf_each(m, e)  # exact logs: nothing has underflowed yet
        lg_err = lg_err + 2 * U * (np.abs(lg) + 1)
        le = e * (2.0 * np.arange(m + 1) - m)
        # kept sorted group by group: the new outcomes are m + 1 sorted runs, which a stable
        # (merging) sort joins in a third of the time one sort of the whole product took
        l = (le[:, None] + l[None, :]).ravel()
        logw = (lg[:, None] + logw[None, :]).ravel()
        log_err = (lg_err[:, None] + log_err[None, :]).ravel()
        order = np.argsort(l, kind="stable")
        l, logw, log_err = l[order], logw[order], log_err[order]
        mag += m * e
    with np.errstate(under="ignore"):
        p = np.exp(logw)
    log_err += (len(eps) + 2) * 4 * U * (np.abs(logw) + 1)
    # The relative bound is needed for the outcomes in the normal range only (their logs are
    # > -709, and so are their errors' few ulps): below it underflow_loss bounds each absolutely.
    # Outcomes of a huge epsilon's other side (logs ~ -1e300, errors ~ 1e285) stay out of it.
    normal = p >= TINY
    rel_total = math.expm1(float(np.max(log_err[normal]))) if normal.any() else 0.0
    lam = 4 * U * (len(eps) + 1) * mag
    return Atoms(l, p, upper, rel=rel_total, err=underflow_loss(logw, p, log_err), lam=lam)


def grouped_bracket(eps: np.ndarray, mult: np.ndarray, delta_bar: float,
                    delta_bar_hi: Optional[float] = None) -> Bracket:
    hi = delta_bar if delta_bar_hi is None else delta_bar_hi
    return _read(lambda upper, db: sup_root(grouped_atoms(eps, mult, upper), db), eps, mult, delta_bar, hi,
                 "exact (grouped)")


def exact_sum(eps: np.ndarray, mult: np.ndarray) -> Fraction:
    """sum m_i eps_i exactly (every double is a whole multiple of 2^-1074: ``exact_total``)."""
    return Fraction(exact_total(eps, mult), 1 << 1074)


def _pure_sum(eps: np.ndarray, mult: np.ndarray, delta_bar: float) -> Bracket:
    """delta_bar == 0: OptComp is the plain sum (basic composition is tight for pure DP)."""
    s = exact_sum(eps, mult)
    try:
        hi = lo = float(s)
    except OverflowError:  # beyond the largest double
        return Bracket(math.inf if delta_bar >= 0 else math.inf, 1.7976931348623157e308, "exact (sum)")
    if Fraction(hi) < s:
        hi = math.nextafter(hi, math.inf)
    if Fraction(lo) > s:
        lo = math.nextafter(lo, 0.0)
    if delta_bar < 0:
        return Bracket(math.inf, math.inf, "infeasible")
    return Bracket(hi, lo, "exact (sum)")


__all__ = ["homogeneous_bracket", "grouped_bracket", "grouped_outcomes", "GROUPED_MAX_OUTCOMES",
           "homogeneous_atoms", "grouped_atoms", "log_rr"]
