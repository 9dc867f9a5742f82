"""The rules of single numeric fields (range, whole numbers, percent), the plan's hard limits and
``PlanError``, which every rule raises. Part of ``validation``, the one home of the plan's rules:
import these names from there.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from decimal import Decimal
from typing import Optional, Sequence, Union

from .statistic import preview

Number = Union[int, float]

#: Hard limits that keep files and the engine in a sane range.
MAX_STATISTICS = 20_000
MAX_QUERIES = 100_000          # sum of repetitions: what the engine composes
MAX_NAME_LENGTH = 200
#: Most rows one individual may contribute (c), and so most groups and rows per group.
MAX_CONTRIBUTIONS = 1_000_000
#: Most groups of one grouped statistic, and most characters of its listed keys.
MAX_GROUPS = 10_000_000
MAX_KEYS_TEXT = 1_000_000

#: Largest number of grid points of a quantile statistic.
MAX_QUANTILE_BINS = 1_000_000


class PlanError(ValueError):
    """A plan rule was broken; the message says what, where and what is allowed.

    ``index`` is the statistic's row (None for budget problems), ``field`` the field name, and
    ``held_indices`` the held statistics to release when the held ones alone exceed the budget.
    """

    def __init__(self, message: str, *, index: Optional[int] = None, field: Optional[str] = None,
                 held_indices: Sequence[int] = ()):
        super().__init__(message)
        self.index = index
        self.field = field
        self.held_indices = tuple(held_indices)


@dataclass(frozen=True)
class FieldRule:
    """Allowed range of one numeric field. ``integer`` fields take whole numbers only; ``percent``
    fields hold a fraction that people type and read in percent (0.5 is "50")."""

    name: str
    label: str
    minimum: float
    maximum: float
    min_inclusive: bool = True
    max_inclusive: bool = True
    integer: bool = False
    optional: bool = False
    percent: bool = False

    @property
    def title(self) -> str:
        """The label at the start of a sentence: "Groups per individual L0" (its first letter
        upper-cased, the others kept: capitalize() lowers "L0" and "L∞")."""
        return self.label[:1].upper() + self.label[1:]

    def describe(self) -> str:
        lo = "[" if self.min_inclusive else "("
        hi = "]" if self.max_inclusive else ")"
        if self.percent:
            return f"a percentage in {lo}{_fmt(self.minimum * 100)} %, {_fmt(self.maximum * 100)} %{hi}"
        kind = "a whole number" if self.integer else "a number"
        return f"{kind} in {lo}{_fmt(self.minimum)}, {_fmt(self.maximum)}{hi}"

    def check(self, value, where: str, index: Optional[int] = None, shown: Optional[str] = None):
        """Return the value as float/int, or raise PlanError saying what is allowed (``shown`` is
        the value as the user typed it, for the message; ``where`` "" for a field that names
        itself: "epsilon = 3e-324 is ...", not "Epsilon: epsilon = 3e-324 is ...")."""
        at = f"{where}: " if where else ""
        if value is None:
            if self.optional:
                return None
            raise PlanError(f"{at}{self.label} is required; it must be {self.describe()}",
                            index=index, field=self.name)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise PlanError(f"{at}{self.label} = {preview(value)} is not a number; it must be "
                            f"{self.describe()}", index=index, field=self.name)
        v = float(value)
        ok = math.isfinite(v)
        ok = ok and (v >= self.minimum if self.min_inclusive else v > self.minimum)
        ok = ok and (v <= self.maximum if self.max_inclusive else v < self.maximum)
        if ok and self.integer and v != math.floor(v):
            ok = False
        if ok and stored_inexactly(v, bool(v)):
            # one rule for typed fields, plan files and CSV: a plan holds no subnormal, so every
            # value it shows reads back as itself when committed again
            ok = None
        if not ok:
            if shown is None:
                shown = f"{_fmt(v * 100)} %" if self.percent and math.isfinite(v) else repr(value)
            if ok is None:
                raise PlanError(f"{at}{too_close_to_zero(self.label, shown, self.percent)}; it "
                                f"must be {self.describe()}", index=index, field=self.name)
            reason = (" is not a whole number" if ok_range(self, v) and self.integer
                      else " is not allowed")
            raise PlanError(f"{at}{self.label} = {shown}{reason}; it must be "
                            f"{self.describe()}", index=index, field=self.name)
        return int(v) if self.integer else v


#: The smallest positive normal double. Nearer 0 a double keeps fewer digits ("3e-324" would be
#: stored as 4.94e-324, 65 % off): a non-zero number typed or read there is refused, not stored
#: (FieldRule.check), so no field holds one.
MIN_NORMAL = 2.2250738585072014e-308


def stored_inexactly(value: float, nonzero: bool) -> bool:
    """Whether a number (non-zero as written, ``value`` its nearest double) is too close to 0 to store
    exactly: its double is 0 ("1e-400") or subnormal ("3e-324")."""
    return nonzero and not abs(value) >= MIN_NORMAL


def read_as_another(literal: str, value: float) -> bool:
    """Whether a number read from a file as ``value`` would be stored as another number: nearer 0
    than MIN_NORMAL, and not the shortest text of its double ("3e-324", "1e-400" written by hand;
    "1e-310" reads back as the same number, which a field's rule then refuses as it refuses it
    typed: FieldRule.check)."""
    if not abs(value) < MIN_NORMAL:
        return False
    exact = Decimal(literal)
    return bool(exact) and exact != Decimal(repr(value))


def too_close_to_zero(label: str, shown: str, percent: bool = False) -> str:
    """Why such a number is refused (``shown``: as it was written)."""
    least = "2.2250738585072014e-306 %" if percent else "2.2250738585072014e-308"
    return (f"{label} = {shown} is too close to 0 to store exactly (numbers nearer 0 than about "
            f"{least} are not kept)")


def ok_range(rule: FieldRule, v: float) -> bool:
    """Whether ``v`` lies in the rule's range (ignoring whole-number-ness)."""
    return (math.isfinite(v) and (v >= rule.minimum if rule.min_inclusive else v > rule.minimum)
            and (v <= rule.maximum if rule.max_inclusive else v < rule.maximum))


def _fmt(x: float) -> str:
    return f"{x:g}"


FIELD_RULES: dict[str, FieldRule] = {r.name: r for r in (
    FieldRule("epsilon", "epsilon", 0.0, 100.0, min_inclusive=False),
    FieldRule("delta", "delta", 0.0, 1.0, max_inclusive=False),
    FieldRule("weight", "weight", 0.0, 1e6, min_inclusive=False),
    FieldRule("repetitions", "number of releases", 1, MAX_QUERIES, integer=True),
    FieldRule("lower", "lower bound", -1e15, 1e15, optional=True),
    FieldRule("upper", "upper bound", -1e15, 1e15, optional=True),
    FieldRule("bins", "number of bins", 1, 1_000_000, integer=True, optional=True),
    FieldRule("granularity", "granularity", 0.0, 1e15, min_inclusive=False, optional=True),
    FieldRule("n", "records n", 1, 1e12, integer=True, optional=True),      # (a statistic's own)
    FieldRule("groups", "number of groups g", 1, MAX_GROUPS, integer=True, optional=True),
    FieldRule("max_groups", "groups per individual L0", 1, MAX_CONTRIBUTIONS, integer=True, optional=True),
    FieldRule("max_rows", "rows per individual in one group L∞", 1, MAX_CONTRIBUTIONS, integer=True,
              optional=True),
    FieldRule("selection_share", "share of ε for selecting the groups", 0.0, 1.0, min_inclusive=False,
              max_inclusive=False, percent=True),
    FieldRule("error", "target error", 0.0, 1e18, min_inclusive=False),
    FieldRule("target_error", "target error", 0.0, 1e18, min_inclusive=False, optional=True),
)}

BUDGET_RULES: dict[str, FieldRule] = {r.name: r for r in (
    FieldRule("epsilon", "global epsilon", 0.0, 100.0, min_inclusive=False),
    FieldRule("delta", "global delta", 0.0, 1.0, max_inclusive=False),
    FieldRule("delta_split", "delta to statistics", 0.0, 1.0, max_inclusive=False, percent=True),
    FieldRule("confidence", "confidence level", 0.5, 1.0, max_inclusive=False, percent=True),
    FieldRule("eta", "engine accuracy eta", 1e-6, 1.0),
    FieldRule("dataset_size", "dataset size n", 1, 1e12, integer=True, optional=True),
    FieldRule("population", "population size N", 1, 1e13, integer=True, optional=True),
    FieldRule("reserve", "reserve", 0.0, 1.0, max_inclusive=False, percent=True),
    FieldRule("contributions", "rows per individual c", 1, MAX_CONTRIBUTIONS, integer=True),
)}
