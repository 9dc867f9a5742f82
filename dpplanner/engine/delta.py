"""Moving the per-query deltas into the target and back (formulas.md §4.1).

OptComp((eps_i, delta_i), delta_g) = OptComp((eps_i, 0), delta_bar) with
delta_bar = 1 - (1 - delta_g) / prod(1 - delta_i), for the binary doubles given. Everything is done
in log space so that k = 1e5 queries of delta_i = 1e-9 neither underflow nor cancel. OptComp only
grows as its target shrinks, so the UPPER bound on epsilon is computed at delta_bar rounded DOWN
and the certified LOWER bound at delta_bar rounded UP (``delta_bar_bounds``). When the queries'
own deltas use up almost all of delta_g the float difference cancels; the bounds are then
recomputed in high-precision decimal arithmetic. The way back to a total delta is rounded UP.
"""

from __future__ import annotations

import decimal
import math
from decimal import Decimal
from fractions import Fraction

import numpy as np

from .exact import exact_total, fits

# log1p and products are correctly rounded to within an ulp or two; 1e-15 is ~4.5 ulps.
_LOG_MARGIN = 1e-15


def log_survival(deltas: np.ndarray, mult: np.ndarray) -> float:
    """L = sum_i m_i log(1 - delta_i) <= 0 (exact up to a couple of ulps of |L|)."""
    return math.fsum((np.asarray(mult, dtype=float) * np.log1p(-np.asarray(deltas, dtype=float))).tolist())


def log_survival_prefix(deltas: np.ndarray) -> np.ndarray:
    """Running L_k = sum_{j<=k} log(1 - delta_j) for an expanded sequence, each rounded DOWN."""
    terms = np.log1p(-np.asarray(deltas, dtype=float))
    s = np.cumsum(terms)
    n = np.arange(1, s.size + 1, dtype=float)
    return s * (1.0 + 2.0 * (n + 2.0) * 2.0 ** -53)  # s <= 0: widening makes it more negative


def delta_bar_from_log(delta_g: float | np.ndarray, log_surv: float | np.ndarray):
    """delta_bar rounded down; negative means the per-query deltas alone exceed delta_g."""
    a = np.log1p(-np.asarray(delta_g, dtype=float))
    ls = np.asarray(log_surv, dtype=float)
    x = a - ls
    x_up = x + (np.abs(a) + np.abs(ls)) * _LOG_MARGIN + 2 * np.spacing(np.abs(x))
    exact_zero = (a == 0) & (ls == 0)
    x_up = np.where(exact_zero, 0.0, x_up)
    out = -np.expm1(x_up)
    out = np.where(out > 0, out * (1 - _LOG_MARGIN), out)
    return float(out) if np.ndim(out) == 0 else out


def delta_bar_up_from_log(delta_g: float | np.ndarray, log_surv: float | np.ndarray):
    """delta_bar rounded UP (for lower bounds on epsilon); ``log_surv`` must be within the same
    margin of the exact sum as for ``delta_bar_from_log``."""
    a = np.log1p(-np.asarray(delta_g, dtype=float))
    ls = np.asarray(log_surv, dtype=float)
    x = a - ls
    x_down = x - (np.abs(a) + np.abs(ls)) * _LOG_MARGIN - 2 * np.spacing(np.abs(x))
    x_down = np.where((a == 0) & (ls == 0), 0.0, x_down)
    out = -np.expm1(x_down)
    out = np.where(out > 0, out * (1 + _LOG_MARGIN), out * (1 - _LOG_MARGIN))
    out = np.where(out == 0, 0.0, out)
    return float(out) if np.ndim(out) == 0 else out


def delta_bar(delta_g: float, deltas: np.ndarray, mult: np.ndarray) -> float:
    """delta_bar = 1 - (1 - delta_g)/prod(1 - delta_i)^m_i, rounded down (< 0: infeasible)."""
    return delta_bar_bounds(delta_g, deltas, mult)[0]


def sum_fits(deltas: np.ndarray, mult: np.ndarray, delta_g: float) -> bool:
    """sum m_i delta_i <= delta_g exactly, for the binary doubles."""
    return bool(fits([exact_total(np.asarray(deltas, dtype=float), np.asarray(mult))], delta_g)[0])


#: The float bounds are used as they are while their relative width is below this.
_FLOAT_WIDTH = 1e-10
#: Most distinct delta values refined in decimal arithmetic (each costs ~0.1 ms).
_DECIMAL_MAX_VALUES = 20_000


def delta_bar_bounds(delta_g: float, deltas: np.ndarray, mult: np.ndarray) -> tuple[float, float]:
    """(lo, hi) with lo <= delta_bar <= hi exactly; lo < 0 means delta_g cannot be certified feasible.

    The float computation carries an absolute error of a few ulps of |log(1 - delta_g)| + |L| in
    x = log(1 - delta_g) - L; that is large relative to delta_bar = -expm1(x) when the sum of the
    delta_i is close to delta_g, and then the decimal computation (``_decimal_bounds``) takes over.
    """
    deltas = np.asarray(deltas, dtype=float)
    mult = np.asarray(mult)
    ls = log_survival(deltas, mult)
    lo = float(delta_bar_from_log(delta_g, ls))
    hi = float(delta_bar_up_from_log(delta_g, ls))
    if hi - lo > _FLOAT_WIDTH * max(abs(lo), abs(hi)):
        values, inverse = np.unique(deltas, return_inverse=True)
        if values.size <= _DECIMAL_MAX_VALUES:
            counts = np.bincount(inverse, weights=mult.astype(float)).astype(np.int64)
            lo, hi = _decimal_bounds(delta_g, values, counts)
    if lo < 0 <= hi:
        if sum_fits(deltas, mult, delta_g):
            # prod(1 - delta_i) >= 1 - sum delta_i >= 1 - delta_g, so delta_bar >= 0 exactly (e.g.
            # one query with delta_i == delta_g, where delta_bar is exactly 0)
            lo = 0.0
        elif int(np.sum(mult[deltas > 0])) <= 64:  # few factors: decide the sign exactly
            prod = Fraction(1)
            for d, m in zip(deltas.tolist(), mult.tolist()):
                prod *= (1 - Fraction(d)) ** int(m)
            sign = prod - (1 - Fraction(delta_g))  # delta_bar = sign / prod
            lo = 0.0 if sign >= 0 else lo
            hi = 0.0 if sign == 0 else hi
    return lo, hi


#: Most prefixes of a curve whose delta_bar bounds are refined in decimal arithmetic.
_PREFIX_REFINE = 64


def prefix_delta_bar_bounds(delta_g: float, delta_seq: np.ndarray, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``delta_bar_bounds`` of the first ks[j] queries of an expanded sequence, for every j.

    Running sums of the logs carry (n + 1) u |L_n| of error (recursive summation of terms of one
    sign), so L is widened by 2 (n + 2) u |L| down for the lower end and up for the upper end; the
    prefixes where that leaves a relatively wide interval (the queries' deltas use up almost all
    of delta_g) are recomputed exactly, the last ``_PREFIX_REFINE`` of them (they matter most).
    """
    ks = np.asarray(ks, dtype=np.int64)
    delta_seq = np.asarray(delta_seq, dtype=float)
    s = np.cumsum(np.log1p(-delta_seq))[ks - 1]
    widen = 2.0 * (ks + 2.0) * 2.0 ** -53
    lo = np.atleast_1d(delta_bar_from_log(delta_g, s * (1.0 + widen))).astype(float)
    hi = np.atleast_1d(delta_bar_up_from_log(delta_g, s * (1.0 - widen))).astype(float)
    wide = np.flatnonzero(hi - lo > _FLOAT_WIDTH * np.maximum(np.abs(lo), np.abs(hi)))
    for j in wide[-_PREFIX_REFINE:].tolist():
        k = int(ks[j])
        lo[j], hi[j] = delta_bar_bounds(delta_g, delta_seq[:k], np.ones(k, dtype=np.int64))
    return lo, hi


def _ln1m(d: Decimal, prec: int) -> Decimal:
    """log(1 - d) for 0 <= d < 1 to ~10^(4-p) relative, in the current (local) context."""
    if d == 0:
        return Decimal(0)
    if d < Decimal("1e-3"):
        # -sum d^n / n: after the last term the tail is below 2 d 10^-(p+2) (ratio <= 1e-3)
        term, total, n = d, Decimal(0), 1
        stop = d.scaleb(-(prec + 2))
        while term > stop:
            total += term / n
            term *= d
            n += 1
        return -total
    # 1 - d is rounded by 1 ulp, which moves the log by <= 10^(1-p) absolutely, <= 10^(4-p) of |log|
    return (1 - d).ln()


def _expm1(x: Decimal, prec: int) -> Decimal:
    if abs(x) < Decimal("1e-3"):
        term, total, n = x, Decimal(0), 1
        stop = abs(x).scaleb(-(prec + 2))
        while abs(term) > stop:
            total += term
            n += 1
            term = term * x / n
        return total
    return x.exp() - 1


def _decimal_bounds(delta_g: float, values: np.ndarray, counts: np.ndarray) -> tuple[float, float]:
    """Certified (lo, hi) on delta_bar from the exact binary values, in decimal arithmetic.

    At precision p every operation is off by at most 10^(1-p) relative (correctly rounded) and
    each log by at most 10^(4-p) (see _ln1m), so with n values
        |err x| <= |A| 10^(5-p) + |L| (10^(5-p) + (n + 2) 10^(1-p)) + |x| 10^(1-p),
    A = log(1 - delta_g), L = sum m_g log(1 - delta_g'), x = A - L. delta_bar = -expm1(x) has
    relative condition |x e^x / expm1(x)| <= 1 for x < 0 (and <= e for 0 < x < 1, where only the
    sign matters), so its relative error is <= e |err x| / |x| + 10^(5-p). The precision is doubled
    until that is below 1e-25 (up to a cap; beyond it the bounds are just wider).
    """
    prec = 50
    with decimal.localcontext() as ctx:
        ctx.Emin, ctx.Emax, ctx.traps[decimal.Overflow] = -999999, 999999, True
        while True:
            ctx.prec = prec
            big, small = Decimal(1).scaleb(5 - prec), Decimal(1).scaleb(1 - prec)
            a = _ln1m(Decimal(float(delta_g)), prec)
            big_l = Decimal(0)
            for v, m in zip(values.tolist(), counts.tolist()):
                big_l += int(m) * _ln1m(Decimal(float(v)), prec)
            x = a - big_l
            err_x = abs(a) * big + abs(big_l) * (big + (values.size + 2) * small) + abs(x) * small
            if (x != 0 and err_x <= abs(x) * Decimal("1e-25")) or prec >= 1600:
                break
            prec *= 2
        if x == 0 or err_x >= abs(x) * Decimal("0.1"):
            # no relative accuracy: -expm1 over all of [x - 2 err, x + 2 err] (it is decreasing)
            lo_d, hi_d = -_expm1(x + 2 * err_x, prec), -_expm1(x - 2 * err_x, prec)
            return (math.nextafter(float(lo_d), -math.inf) - 1e-300,
                    math.nextafter(float(hi_d), math.inf) + 1e-300)
        db = -_expm1(x, prec)
        rel = 3 * err_x / abs(x) + big
        lo_d, hi_d = sorted((db * (1 - rel), db * (1 + rel)))
    # float() of a Decimal is correctly rounded; one more step outward makes it directed
    return math.nextafter(float(lo_d), -math.inf), math.nextafter(float(hi_d), math.inf)


def total_delta_up(delta_bar_value: float | np.ndarray, log_surv: float | np.ndarray):
    """Total delta 1 - (1 - delta_bar) prod(1 - delta_i), rounded UP."""
    db = np.asarray(delta_bar_value, dtype=float)
    ls = np.asarray(log_surv, dtype=float)
    with np.errstate(divide="ignore"):     # (delta_bar = 1: -inf)
        a = np.log1p(-np.clip(db, 0.0, 1.0))
    with np.errstate(invalid="ignore"):
        y = a + ls
        y_down = y - (np.abs(a) + np.abs(ls)) * _LOG_MARGIN - 2 * np.spacing(np.abs(y))
    y_down = np.where((a == 0) & (ls == 0), 0.0, y_down)
    y_down = np.where(a == -np.inf, -np.inf, y_down)     # delta_bar = 1: the total is 1 (nan before)
    out = -np.expm1(y_down) + 0.0                        # (+ 0.0: -expm1(0) is -0.0)
    out = np.minimum(out * (1 + _LOG_MARGIN), 1.0)
    return float(out) if np.ndim(out) == 0 else out


def total_delta_down(delta_bar_value: float | np.ndarray, log_surv: float | np.ndarray):
    """Total delta 1 - (1 - delta_bar) prod(1 - delta_i), rounded DOWN (for lower bounds)."""
    db = np.asarray(delta_bar_value, dtype=float)
    ls = np.asarray(log_surv, dtype=float)
    with np.errstate(divide="ignore"):     # (delta_bar = 1: -inf)
        a = np.log1p(-np.clip(db, 0.0, 1.0))
    with np.errstate(invalid="ignore"):
        y = a + ls
        y_up = y + (np.abs(a) + np.abs(ls)) * _LOG_MARGIN + 2 * np.spacing(np.abs(y))
    y_up = np.where(a == -np.inf, -np.inf, np.minimum(y_up, 0.0))     # delta_bar = 1: the total is 1
    out = np.maximum(-np.expm1(y_up) * (1 - _LOG_MARGIN), 0.0)
    return float(out) if np.ndim(out) == 0 else out


def infeasible_reason(delta_g: float, forced: float) -> str:
    """Why no finite epsilon exists: the per-query deltas alone already use up delta_g."""
    return (f"delta_g = {delta_g:.6g} is too small: the queries' own deltas already force a total "
            f"delta of {forced:.6g}; raise delta_g or lower some delta_i")
