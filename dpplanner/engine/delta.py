"""Moving the per-query deltas into the target and back (formulas.md §4.1).

OptComp((eps_i, delta_i), delta_g) = OptComp((eps_i, 0), delta_bar) with
delta_bar = 1 - (1 - delta_g) / prod(1 - delta_i). Everything is done in log space so that
k = 1e5 queries of delta_i = 1e-9 neither underflow nor cancel. delta_bar is rounded DOWN (a
smaller target can only increase the reported epsilon) and the way back to a total delta is
rounded UP.
"""

from __future__ import annotations

import math

import numpy as np

from .exact import exact_cumsum, fits

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


def delta_bar(delta_g: float, deltas: np.ndarray, mult: np.ndarray) -> float:
    """delta_bar = 1 - (1 - delta_g)/prod(1 - delta_i)^m_i, rounded down (< 0: infeasible)."""
    value = delta_bar_from_log(delta_g, log_survival(deltas, mult))
    if value < 0 and sum_fits(deltas, mult, delta_g):
        # prod(1 - delta_i) >= 1 - sum delta_i >= 1 - delta_g, so delta_bar >= 0 exactly; the log
        # margins only blurred the sign (e.g. one query with delta_i == delta_g).
        return 0.0
    return value


def sum_fits(deltas: np.ndarray, mult: np.ndarray, delta_g: float) -> bool:
    """sum m_i delta_i <= delta_g exactly, in the user's decimals."""
    sums = exact_cumsum(np.asarray(deltas, dtype=float), np.asarray(mult))
    if sums is None:
        return False
    return bool(fits(np.array(sums[-1:], dtype=object), np.zeros(1), delta_g)[0])


def total_delta_up(delta_bar_value: float | np.ndarray, log_surv: float | np.ndarray):
    """Total delta 1 - (1 - delta_bar) prod(1 - delta_i), rounded UP."""
    db = np.asarray(delta_bar_value, dtype=float)
    ls = np.asarray(log_surv, dtype=float)
    a = np.log1p(-np.clip(db, 0.0, 1.0))
    with np.errstate(invalid="ignore"):
        y = a + ls
        y_down = y - (np.abs(a) + np.abs(ls)) * _LOG_MARGIN - 2 * np.spacing(np.abs(y))
    y_down = np.where((a == 0) & (ls == 0), 0.0, y_down)
    out = -np.expm1(y_down)
    out = np.minimum(out * (1 + _LOG_MARGIN), 1.0)
    return float(out) if np.ndim(out) == 0 else out


def total_delta_down(delta_bar_value: float | np.ndarray, log_surv: float | np.ndarray):
    """Total delta 1 - (1 - delta_bar) prod(1 - delta_i), rounded DOWN (for lower bounds)."""
    db = np.asarray(delta_bar_value, dtype=float)
    ls = np.asarray(log_surv, dtype=float)
    a = np.log1p(-np.clip(db, 0.0, 1.0))
    with np.errstate(invalid="ignore"):
        y = a + ls
        y_up = y + (np.abs(a) + np.abs(ls)) * _LOG_MARGIN + 2 * np.spacing(np.abs(y))
    y_up = np.minimum(y_up, 0.0)
    out = np.maximum(-np.expm1(y_up) * (1 - _LOG_MARGIN), 0.0)
    return float(out) if np.ndim(out) == 0 else out


def infeasible_reason(delta_g: float, forced: float) -> str:
    """Why no finite epsilon exists: the per-query deltas alone already use up delta_g."""
    return (f"delta_g = {delta_g:.6g} is too small: the queries' own deltas already force a total "
            f"delta of {forced:.6g}; raise delta_g or lower some delta_i")
