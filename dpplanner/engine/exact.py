"""Exact sums of the plan's binary doubles, for the comparisons "sum <= budget" of the rules.

The engine receives doubles and every bound it reports is certified for those binary values: a
typed 0.01 is the double 0.01000000000000000020816..., and 100 of them spend a little more than
1.0. (Decimals are for display only; issue 13 item 6.) Every finite double is an integer multiple
of 2^-1074, so sums of doubles times whole multiplicities are exact Python integers in that unit;
comparisons against a budget are then exact, and reported sums are rounded UP to a double.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Optional

import numpy as np

_BITS = 1074


def to_units(x: float) -> int:
    """The double x as an exact integer multiple of 2^-1074."""
    n, d = float(x).as_integer_ratio()
    return n << (_BITS + 1 - d.bit_length())     # d = 2^j, j <= 1074: n 2^(1074 - j), a shift


def units_to_float(s: int, upper: bool) -> float:
    """s * 2^-1074 rounded to a double UP (or DOWN): its top 53 bits, one more in their last
    place where a bit below them is set and the direction is away from zero (~3x faster than
    dividing by 2^1074 and checking the quotient)."""
    if s < 0:
        return -units_to_float(-s, not upper)
    drop = s.bit_length() - 53
    if drop <= 0:
        return math.ldexp(float(s), -_BITS)        # s < 2^53: exact (a subnormal too)
    top = s >> drop
    if upper and top << drop != s:
        top += 1                                    # (2^53 at most: still exact)
    try:
        return math.ldexp(float(top), drop - _BITS)  # >= 2^-1021: a normal double, exact
    except OverflowError:  # beyond the largest double: inf rounding up, the largest double down
        return math.inf if upper else 1.7976931348623157e308


def directed(exact: Fraction, upper: bool) -> float:
    """The double next to ``exact`` on the safe side (above for upper, below for lower)."""
    f = float(exact)
    if upper and Fraction(f) < exact:
        return math.nextafter(f, math.inf)
    if not upper and Fraction(f) > exact:
        return math.nextafter(f, -math.inf)
    return f


def exact_cumsum(values: np.ndarray, mult: Optional[np.ndarray] = None) -> list[int]:
    """Running exact sums sum_{j<=i} m_j v_j in units of 2^-1074 (equal values are converted once)."""
    cache: dict = {}
    total = 0
    out = []
    ms = [1] * len(values) if mult is None else np.asarray(mult).tolist()
    for v, m in zip(np.asarray(values, dtype=float).tolist(), ms):
        u = cache.get(v)
        if u is None:
            u = cache[v] = to_units(v)
        total += u * int(m)
        out.append(total)
    return out


def exact_total(values: np.ndarray, mult: Optional[np.ndarray] = None) -> int:
    """sum_i m_i v_i in units of 2^-1074, exactly: ``exact_cumsum(values, mult)[-1]`` in a few numpy
    passes (the running sums of a 10^5-query plan cost a fifth of a second, for the last one).

    Each finite double is M 2^(s - 1074) with M = frexp's fraction x 2^53, a whole number below
    2^53 (exact). M = hi 2^26 + lo with hi, lo < 2^27, so with m < 2^31 every product is below 2^58
    and a sum of 32 of them below 2^63: pieces of 32 values of one s are summed in int64, the
    pieces in Python integers (M 2^s is a whole number, so where s < 0, a subnormal, the shift
    down is exact)."""
    v = np.asarray(values, dtype=float)
    m = np.ones(v.size, dtype=np.int64) if mult is None else np.asarray(mult, dtype=np.int64)
    if v.size == 0 or int(m.max()) >= 1 << 31 or not np.isfinite(v).all():
        # (an infinite or NaN value has no exact sum: exact_cumsum raises for it, as it always
        # did; frexp would pass it on as a garbage int64 and the "total" could come out negative)
        return exact_cumsum(v, m)[-1] if v.size else 0
    frac, ex = np.frexp(v)
    mant = (frac * 2.0 ** 53).astype(np.int64)
    shift = ex.astype(np.int64) + (1074 - 53)
    order = np.argsort(shift, kind="stable")
    shift, mant, m = shift[order], mant[order], m[order]
    starts = np.flatnonzero(np.concatenate([[True], shift[1:] != shift[:-1]]))
    pos = np.arange(v.size) - np.repeat(starts, np.diff(np.append(starts, v.size)))
    cuts = np.flatnonzero(pos % 32 == 0)
    hi = np.add.reduceat((mant >> 26) * m, cuts).tolist()
    lo = np.add.reduceat((mant & ((1 << 26) - 1)) * m, cuts).tolist()
    total = 0
    for h, low, s in zip(hi, lo, shift[cuts].tolist()):
        piece = (h << 26) + low
        total += piece << s if s >= 0 else piece >> -s
    return total


def fits(sums: list[int], bound: float, half: bool = False) -> np.ndarray:
    """Elementwise sum <= bound (or <= bound / 2), exactly."""
    b = to_units(bound)
    return np.array([(2 * s if half else s) <= b for s in sums], dtype=bool)


def floats_up(sums: list[int]) -> np.ndarray:
    return np.array([units_to_float(s, True) for s in sums], dtype=float)


def room_down(bound: float, sums: list[int]) -> np.ndarray:
    """bound - sum, exactly, rounded DOWN to a double (<= 0: no room left)."""
    b = to_units(bound)
    return np.array([units_to_float(b - s, False) for s in sums], dtype=float)
