"""Exact sums of the user's decimals, for the comparisons "sum <= budget" of the basic rules.

Users type decimals: 100 queries of eps = 0.01 spend exactly 1.0, but the binary doubles nearest
to 0.01 sum to 1.0000000000000000208 and a rounded-up float sum would refuse the 100th query.
Following formulas.md §4.3 (step 2: work from the user's decimals), each double is read as the
shortest decimal that round-trips to it (``repr``), sums are exact decimals, and comparisons
against a budget are exact. Reported sums are the exact decimal rounded UP to a double.
"""

from __future__ import annotations

import decimal
import math
from typing import Optional

import numpy as np

_CTX = decimal.Context(prec=2000, traps=[])


_TINY = 2.2250738585072014e-308  # below this doubles are subnormal and repr drops precision


def dec(x: float) -> decimal.Decimal:
    """The shortest decimal that round-trips to the double x (its exact value if subnormal)."""
    x = float(x)
    return decimal.Decimal(repr(x)) if abs(x) >= _TINY or x == 0 else decimal.Decimal(x)


def to_float_up(d: decimal.Decimal) -> float:
    f = float(d)
    if decimal.Decimal(f) < d:
        f = math.nextafter(f, math.inf)
    return f


def exact_cumsum(values: np.ndarray, mult: Optional[np.ndarray] = None) -> Optional[list]:
    """Running exact sums sum_{j<=i} m_j dec(v_j), or None if 2000 digits were not enough."""
    ctx = _CTX.copy()
    total = decimal.Decimal(0)
    out = []
    if mult is None:
        for v in values.tolist():
            total = ctx.add(total, dec(v))
            out.append(total)
    else:
        for v, m in zip(values.tolist(), mult.tolist()):
            total = ctx.add(total, ctx.multiply(dec(v), decimal.Decimal(int(m))))
            out.append(total)
    return None if ctx.flags[decimal.Inexact] else out


def fits(sums_dec: Optional[np.ndarray], sums_up: np.ndarray, bound: float,
         scale: decimal.Decimal = decimal.Decimal(1)) -> np.ndarray:
    """Elementwise sum <= scale * bound, exact when the decimal sums are known."""
    if sums_dec is None:
        return sums_up <= float(scale) * bound
    b = _CTX.multiply(dec(bound), scale)
    return np.array([s <= b for s in sums_dec], dtype=bool)
