"""Numbers for people, rounded in the safe direction: the one formatter of the window (table,
totals, plot hovers), the CLI and the report, so each shows the same digits.

A displayed upper bound is rounded UP and a displayed lower bound DOWN, so what is shown is still a
valid bound after rounding (0.250004 must never read "0.2500"). Error bounds are upper bounds;
from 1,000 up they are whole numbers with grouped digits ("9,582,876"). Values the user typed are
shown in full (``exact``), never rounded.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal

#: Below this an error keeps decimals; from here on it is a whole, grouped number.
_WHOLE_FROM = 1_000.0
#: Above this even a whole number is written in powers of ten (grouping 16 digits helps nobody).
_WHOLE_UP_TO = 1e15


def _special(value: float) -> str | None:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "∞" if value > 0 else "-∞"
    if value == 0:
        return "0"
    return None


def _round(value: float, digits: int, mode: str) -> str:
    value = float(value)        # numpy scalars' repr is "np.float64(...)"
    special = _special(value)
    return special if special is not None else _round_decimal(Decimal(repr(value)), digits, mode)


def _round_decimal(value: Decimal, digits: int, mode: str) -> str:
    if value.is_zero():
        return "0"
    exponent = value.adjusted()
    if -4 <= exponent < 5:
        # Fixed notation: `digits` decimals from 0.1 up to 10 (so a column of totals lines up),
        # `digits` significant digits below 0.1, fewer decimals for large values.
        decimals = max(digits - max(exponent, 0), 0) if exponent >= -1 else digits - 1 - exponent
        quantum = Decimal(1).scaleb(-decimals)
        return str(value.quantize(quantum, rounding=mode))
    mantissa = value.scaleb(-exponent)
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


def excess(spent: float, allowed: float, digits: int = 4) -> str:
    """Text for how far ``spent`` is above ``allowed``, rounded up: lowering the spend by the
    amount shown always fits."""
    return _difference(spent, allowed, digits, ROUND_CEILING)


def room(allowed: float, spent: float, digits: int = 4) -> str:
    """Text for how far ``spent`` is below ``allowed``, rounded down: raising the spend by the
    amount shown never overspends."""
    return _difference(allowed, spent, digits, ROUND_FLOOR)


def _difference(a: float, b: float, digits: int, mode: str) -> str:
    """``a - b`` rounded in ``mode``. The doubles' exact values are subtracted in decimal (1,100
    digits hold any difference of two doubles exactly), since ``a - b`` in doubles can round the
    wrong way and two shortest decimals can differ by less than their doubles do."""
    a, b = float(a), float(b)
    special = _special(a - b)
    if special is not None:
        return special
    exact = Context(prec=1100, rounding=mode).subtract(Decimal(a), Decimal(b))
    return _round_decimal(exact, digits, mode)


def error(value: float, digits: int = 4) -> str:
    """Text for an error bound (an upper bound): "0.01079", "38.35", "9,582,876"; a whole number
    (discrete noise's errors are whole numbers of records) without decimals: "20", never "20.000",
    which claims digits a count has not and reads as twenty thousand where "." groups digits."""
    if math.isfinite(value) and 0 < value < _WHOLE_UP_TO and value.is_integer():
        return f"{int(value):,}"
    text = upper(value, digits)
    if math.isfinite(value) and value < _WHOLE_UP_TO and float(text) >= _WHOLE_FROM:
        # ceil of a double is exact (math.ceil returns the integer, no rounding).
        return f"{math.ceil(value):,}"
    return text


def error_field(value: float, digits: int = 4) -> str:
    """``error`` for a field the user may type over: without the thousands commas, which a typed
    number may not have ("3,500" is 3500 to some readers and 3.5 to others: refused as ambiguous),
    so that editing the digits shown gives a number the field takes."""
    return error(value, digits).replace(",", "")


def unit_words(units: str) -> str:
    """The model's unit names as a reader says them after a number ("units of income" -> "income");
    a proportion or unnamed data has none."""
    if units.startswith("units of "):
        return units[len("units of "):]
    return "" if units in ("proportion", "data units") else units


def error_parts(value: float, units: str = "") -> tuple[str, str]:
    """An error bound and its unit words, as every view shows them: ("9,582,876", "records"); a
    proportion's in percentage points, ("1.2300", "% points") for 0.0123 (a bare 0.0123 read as
    1.23 % or as 0.0123 %)."""
    if units == "proportion" and math.isfinite(value):
        return error(value * 100), "% points"
    return error(value), unit_words(units)


def error_with_units(value: float, units: str = "") -> str:
    """"± 9,582,876 records": an error bound as it reads in a table cell or a report."""
    number, words = error_parts(value, units)
    return f"± {number}" + (f" {words}" if words else "")


def exact(value: float) -> str:
    """The full value, as stored (for tooltips and typed values): the shortest decimal that reads
    back as the same double, with grouped digits for large numbers."""
    value = float(value)
    special = _special(value)
    if special is not None:
        return special
    if value.is_integer() and abs(value) < _WHOLE_UP_TO:
        return f"{int(value):,}"
    text = repr(value)
    if "e" in text or abs(value) < 10_000:
        return text
    whole, fraction = text.split(".")
    return f"{int(whole):,}.{fraction}"


def percent_of(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole`` (both positive and finite), rounded up: "12.4%".

    Divided in decimal arithmetic rounded up, so a spend just over its budget never reads
    "100.0%" and no ratio overflows to infinity (1e300 of 1e-300 is "1e+602%")."""
    # Decimal(x) is exact, and so is 100 x at 1100 digits (a double has at most 767): only the
    # division rounds, up, so a total equal to its budget reads "100.0%", never "100.1%".
    hundred = Context(prec=1100).multiply(Decimal(part), 100)
    ratio = Context(prec=30, rounding=ROUND_CEILING).divide(hundred, Decimal(whole))
    if ratio < 10_000:
        return f"{ratio.quantize(Decimal('0.1'), rounding=ROUND_CEILING)}%"
    exponent = ratio.adjusted()
    mantissa = ratio.scaleb(-exponent).quantize(Decimal("0.001"), rounding=ROUND_CEILING)
    if mantissa >= 10:          # rounding carried into the next power of ten
        mantissa, exponent = mantissa / 10, exponent + 1
    return f"{mantissa}e{exponent:+03d}%"


def count(value: int) -> str:
    """A whole number of things with grouped digits: "100,000"."""
    return f"{int(value):,}"


def counted(value: int, noun: str, plural: str | None = None) -> str:
    """A count with its noun in the right number: "1 statistic", "2,000 statistics"."""
    return f"{count(value)} {noun if int(value) == 1 else (plural or noun + 's')}"


def value(x: float, digits: int = 6) -> str:
    """A derived quantity that is neither a bound nor typed (a noise scale, a ratio, a spendable
    budget): ``digits`` significant digits, rounded to nearest."""
    special = _special(x)
    return special if special is not None else f"{x:.{digits}g}"


#: The word for the idealised continuous noise, which no library adds exactly, wherever it is
#: named: the table's noise column, the Statistic tab's "Noise implemented by", the report.
IDEAL = "ideal"


def noise(gaussian: bool, ideal: bool) -> str:
    """A statistic's noise in a word or two, as the table's noise column and the report's table
    name it: "Laplace" or "Gaussian" for OpenDP's noise (what a release script adds), "Laplace
    (ideal)" for the idealised continuous noise (short: the column fits the table at 1280 x 800)."""
    name = "Gaussian" if gaussian else "Laplace"
    return f"{name} ({IDEAL})" if ideal else name
