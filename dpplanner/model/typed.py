"""Numbers as people type them: read exactly by a field's rule, or refused with the reason.

The window's number fields and the command line read text with ``parse_text`` and show stored
values with ``format_value``, so a field holds exactly what was typed or says why it cannot.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation, Overflow
from typing import Optional

from .validation import FieldRule, Number, PlanError, ok_range, too_close_to_zero

#: Digits grouped by spaces, as many write thousands ("1 000", "2 500 000.5").
_GROUPED = re.compile(r"[-+]?\d{1,3}([ \u00a0\u202f]\d{3})+(\.\d*)?")     # (and no-break spaces)


def parse_text(rule: FieldRule, text: str, where: str = "",
               index: Optional[int] = None) -> Optional[Number]:
    """The value typed as ``text``, exactly (the nearest double to the decimal typed), or a
    PlanError saying why it cannot be stored. Nothing is dropped, rounded or clamped: "150" for a
    field that allows up to 100 is refused, never read as 15. Percent rules read "50" or "50 %"
    as 0.5. An empty text is None for optional fields. ``where`` starts the message ("statistic 2
    ('b')"); without it a message names the field once ("epsilon = 150 is not allowed ...")."""
    at = f"{where}: " if where else ""      # (a message that names the field needs no more)
    raw = text.strip()
    if rule.percent and raw.endswith("%"):
        raw = raw[:-1].strip()
    if not raw:
        if rule.optional:
            return None
        raise PlanError(f"{at}{rule.label} is required; it must be {rule.describe()}",
                        index=index, field=rule.name)
    try:
        number = Decimal(raw)
    except InvalidOperation:
        hint = " (write decimals with a point, e.g. 0.5)" if "," in raw else \
            f" (write it without spaces: {''.join(raw.split())})" if _GROUPED.fullmatch(raw) else ""
        raise PlanError(f"{where or rule.title}: {text.strip()!r} is not a number{hint}; it must be "
                        f"{rule.describe()}", index=index, field=rule.name) from None
    shown = f"{raw} %" if rule.percent else raw
    if not number.is_finite():
        raise PlanError(f"{at}{rule.label} = {shown} is not allowed; it must be "
                        f"{rule.describe()}", index=index, field=rule.name)
    if rule.percent:
        try:
            number = number / 100       # exact in decimal: "33.3" becomes 0.333, not 0.33299..
        except Overflow:                # (beyond decimal's exponent range: beyond any percentage)
            raise PlanError(f"{at}{rule.label} = {shown} is not allowed; it must be "
                            f"{rule.describe()}", index=index, field=rule.name) from None
    if rule.integer and number == number.to_integral_value() and ok_range(rule, float(number)):
        return rule.check(int(number), where, index, shown)
    if rule.integer and number != number.to_integral_value():     # ("0.99999999999999999": its double is 1)
        reason = "is not a whole number" if ok_range(rule, float(number)) else "is not allowed"
        raise PlanError(f"{at}{rule.label} = {shown} {reason}; it must be {rule.describe()}",
                        index=index, field=rule.name)
    value = float(number) + 0.0     # (+ 0.0: "-0" is stored as 0)
    if number and not value:     # ("1e-400" would be 0; "3e-324", 4.94e-324, is rule.check's)
        raise PlanError(f"{at}{too_close_to_zero(rule.label, shown, rule.percent)}; it must be "
                        f"{rule.describe()}", index=index, field=rule.name)
    return rule.check(value, where, index, shown)


def format_value(rule: FieldRule, value: Optional[Number]) -> str:
    """The text a field shows for a stored value; ``parse_text`` reads it back to that value."""
    if value is None:
        return ""
    if rule.integer:
        return str(int(value))
    if rule.percent:
        percent = Decimal(repr(float(value))) * 100     # (exact: repr has at most 17 digits)
        if percent and not -7 < percent.adjusted() < 16:    # "1e-300", not 300 digits of zeros
            return f"{percent.normalize():e}"
        text = f"{percent:f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))              # "1", not "1.0"; reads back as the same float
    text = repr(value)                      # the shortest text that reads back exactly
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if e else text     # "1e-7", not "1e-07"
