"""Numbers for people, rounded in the safe direction (used by the window, the CLI and the report).

A displayed upper bound is rounded UP and a displayed lower bound DOWN, so what the window, the
CLI or a report shows is still a valid bound after rounding (0.250004 must never read "0.2500").
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Decimal


def _round(value: float, digits: int, mode: str) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value == 0:
        return "0"
    exponent = math.floor(math.log10(abs(value)))
    if -4 <= exponent < 5:
        # Fixed notation: `digits` decimals from 0.1 up to 10 (so a column of totals lines up),
        # `digits` significant digits below 0.1, fewer decimals for large values.
        decimals = max(digits - max(exponent, 0), 0) if exponent >= -1 else digits - 1 - exponent
        quantum = Decimal(1).scaleb(-decimals)
        return str(Decimal(repr(value)).quantize(quantum, rounding=mode))
    mantissa = Decimal(repr(value)).scaleb(-exponent)
    mantissa = mantissa.quantize(Decimal(1).scaleb(-(digits - 1)), rounding=mode)
    if abs(mantissa) >= 10:     # rounding carried into the next power of ten
        mantissa /= 10
        exponent += 1
    return f"{mantissa}e{exponent:+03d}"


def upper(value: float, digits: int = 4) -> str:
    """Text for an upper bound: never smaller than ``value``."""
    return _round(value, digits, ROUND_CEILING)


def lower(value: float, digits: int = 4) -> str:
    """Text for a lower bound: never larger than ``value``."""
    return _round(value, digits, ROUND_FLOOR)
