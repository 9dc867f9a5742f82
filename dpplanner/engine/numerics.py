"""Directed rounding helpers: every reported upper bound is pushed up, every lower bound down.

Floating-point evaluation of a closed form is accurate to a few units in the last place; rather
than prove the exact error of each expression we widen results by a relative margin that is
comfortably larger than the accumulated rounding error of the short formulas used here.
"""

from __future__ import annotations

import math

import numpy as np

#: Relative margin for closed forms (a chain of < 20 correctly rounded operations).
CLOSED_FORM_MARGIN = 1e-13
_U = 2.0 ** -53
#: How far a bracket's ends are pushed out past its root finders' error: the roots of the optimal
#: engine are found to ~1e-13 relative (absolute 1e-16 near zero), so 1e-12 relative plus 1e-15
#: absolute covers them with room to spare.
BRACKET_MARGIN = 1e-12
BRACKET_FLOOR = 1e-15
#: The smallest normal double. Below it a result's rounding error is absolute (up to half of 2^-1074
#: per operation), so no relative margin covers it: a product of tiny numbers can round to 0.
TINY = 2.0 ** -1022
_STEP = 2.0 ** -1074


def tiny_up(x, positive):
    """``x``, the result of at most a few correctly rounded operations, with every value below TINY
    raised by four steps of 2^-1074 (exact there), which covers up to eight roundings of half a step;
    ``positive``: where the true value is > 0 (elsewhere an exact 0 stays 0). Above TINY the
    caller's relative margin covers the rounding as before."""
    if isinstance(x, float):    # (a float: ~30x faster than through numpy; rho_pure's hot path)
        return float(x) + 4 * _STEP if x < TINY and positive else float(x)
    x = np.asarray(x, dtype=float)
    out = np.where((x < TINY) & np.asarray(positive), x + 4 * _STEP, x)
    return float(out) if out.ndim == 0 else out


def tiny_down(x):
    """``x`` >= 0 as in ``tiny_up``, every value below TINY lowered by four steps of 2^-1074 (not
    below 0): a lower bound where the true value's rounding below TINY is absolute."""
    x = np.asarray(x, dtype=float)
    out = np.where(x < TINY, np.maximum(x - 4 * _STEP, 0.0), x)
    return float(out) if out.ndim == 0 else out


def inverse_square(x):
    """1/x^2 of x > 0 (two roundings), as 1/x/x above 1e154, where x * x overflows and 1/inf is 0."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        return np.where(x < 1e154, 1.0 / (x * x), 1.0 / x / x)


def round_up(x, rel: float = CLOSED_FORM_MARGIN):
    """x widened upwards by ``rel`` relative plus a few ulps (inf and nan pass through)."""
    if isinstance(x, float):    # (the same operations on Python's floats: ~10x faster than numpy's)
        x = float(x)
        return x + abs(x) * rel + 4 * _spacing(abs(x)) if math.isfinite(x) and x != 0 else x
    a = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        out = a + np.abs(a) * rel + 4 * np.spacing(np.abs(a))
    out = np.where(np.isfinite(a) & (a != 0), out, a)  # an exact zero stays zero
    return float(out) if np.ndim(out) == 0 else out


def _spacing(a: float) -> float:
    """np.spacing of a >= 0: the gap to the next double up (inf above the largest finite one)."""
    return math.nextafter(a, math.inf) - a


def widen_up(x: float) -> float:
    """A bracket's upper end pushed past its root finder's error (inf and nan pass through)."""
    return x * (1 + BRACKET_MARGIN) + BRACKET_FLOOR if math.isfinite(x) else x


def widen_down(x: float) -> float:
    """A bracket's lower end pushed below its root finder's error, never below 0. inf passes
    through (an infeasible target); nan, a failed read-out, certifies nothing: 0."""
    if math.isnan(x):
        return 0.0
    return max(0.0, x * (1 - BRACKET_MARGIN) - BRACKET_FLOOR) if math.isfinite(x) else x


def round_down(x, rel: float = CLOSED_FORM_MARGIN):
    """x widened downwards by ``rel`` relative plus a few ulps, never below zero for x >= 0."""
    if isinstance(x, float):    # (as in round_up)
        x = float(x)
        if not math.isfinite(x):
            return x
        out = x - abs(x) * rel - 4 * _spacing(abs(x))
        return max(out, 0.0) if x >= 0 else out
    a = np.asarray(x, dtype=float)
    with np.errstate(invalid="ignore", over="ignore"):
        out = a - np.abs(a) * rel - 4 * np.spacing(np.abs(a))
    out = np.where(a >= 0, np.maximum(out, 0.0), out)
    out = np.where(np.isfinite(a), out, a)
    return float(out) if np.ndim(out) == 0 else out


def cumsum_up(x: np.ndarray) -> np.ndarray:
    """Running sums of non-negative terms, each an upper bound on the exact running sum.

    Recursive summation of n non-negative terms has relative error at most (n-1)u/(1-(n-1)u),
    so widening the j-th prefix by 2(j+2)u covers it.
    """
    s = np.cumsum(np.asarray(x, dtype=float))
    n = np.arange(1, s.size + 1, dtype=float)
    return np.where(s > 0, s * (1.0 + 2.0 * (n + 2.0) * _U) + 4 * np.spacing(s), s)


def log_expm1(x: np.ndarray | float):
    """log(e^x - 1) for x > 0 without overflow (x + log(1 - e^-x) for large x)."""
    a = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        out = a + np.log(-np.expm1(-a))
    return float(out) if np.ndim(out) == 0 else out


def illinois_step(x: float, g_x: float, lo: float, g_lo: float, hi: float, g_hi: float,
                  kept: int) -> tuple[float, float, float, float, int]:
    """One step of a false-position root search on a bracket [lo, hi] with g(lo) > 0 >= g(hi):
    the point x (where g is g_x) replaces the end on its side, and the end kept a second time in a
    row has its g halved (Illinois), so the next estimate moves off it. ``kept``: which end stayed
    last time (-1 lo, +1 hi, 0 neither). Returns (lo, g_lo, hi, g_hi, kept)."""
    if g_x <= 0:
        return lo, g_lo / 2 if kept == -1 else g_lo, x, g_x, -1
    return x, g_x, hi, g_hi / 2 if kept == 1 else g_hi, 1
