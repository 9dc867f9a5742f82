"""Every rule a plan must satisfy, in one place.

The Plan's mutating methods, the file loader, the CSV importer and the command line all call
these functions; the GUI takes its spin-box limits from ``FIELD_RULES`` and ``BUDGET_RULES``.
Errors are ``PlanError`` (a ValueError) naming the statistic, the field and what is allowed.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Optional, Sequence

from dpplanner.engine.theorems import ALLOCATION_THEOREMS

from .statistic import KIND_FIELDS, Budget, Kind, Mechanism, Neighbouring, Statistic


#: Hard limits that keep files and the engine in a sane range.
MAX_STATISTICS = 20_000
MAX_QUERIES = 100_000          # sum of repetitions: what the engine composes
MAX_NAME_LENGTH = 200


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
    """Allowed range of one numeric field. ``integer`` fields take whole numbers only."""

    name: str
    label: str
    minimum: float
    maximum: float
    min_inclusive: bool = True
    max_inclusive: bool = True
    integer: bool = False
    optional: bool = False
    decimals: int = 6

    def describe(self) -> str:
        lo = "[" if self.min_inclusive else "("
        hi = "]" if self.max_inclusive else ")"
        kind = "a whole number" if self.integer else "a number"
        return f"{kind} in {lo}{_fmt(self.minimum)}, {_fmt(self.maximum)}{hi}"

    def check(self, value, where: str, index: Optional[int] = None):
        """Return the value as float/int, or raise PlanError saying what is allowed."""
        if value is None:
            if self.optional:
                return None
            raise PlanError(f"{where}: {self.label} is required; it must be {self.describe()}",
                            index=index, field=self.name)
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise PlanError(f"{where}: {self.label} = {value!r} is not a number; it must be "
                            f"{self.describe()}", index=index, field=self.name)
        v = float(value)
        ok = math.isfinite(v)
        ok = ok and (v >= self.minimum if self.min_inclusive else v > self.minimum)
        ok = ok and (v <= self.maximum if self.max_inclusive else v < self.maximum)
        if ok and self.integer and v != math.floor(v):
            ok = False
        if not ok:
            raise PlanError(f"{where}: {self.label} = {value!r} is not allowed; it must be "
                            f"{self.describe()}", index=index, field=self.name)
        return int(v) if self.integer else v


def _fmt(x: float) -> str:
    return f"{x:g}"


FIELD_RULES: dict[str, FieldRule] = {r.name: r for r in (
    FieldRule("epsilon", "epsilon", 0.0, 100.0, min_inclusive=False, decimals=6),
    FieldRule("delta", "delta", 0.0, 1.0, max_inclusive=False, decimals=12),
    FieldRule("weight", "weight", 0.0, 1e6, min_inclusive=False, decimals=4),
    FieldRule("repetitions", "repetitions", 1, MAX_QUERIES, integer=True),
    FieldRule("lower", "lower bound", -1e15, 1e15, optional=True),
    FieldRule("upper", "upper bound", -1e15, 1e15, optional=True),
    FieldRule("bins", "number of bins", 1, 1_000_000, integer=True, optional=True),
    FieldRule("granularity", "granularity", 0.0, 1e15, min_inclusive=False, optional=True),
    FieldRule("n", "dataset size n", 1, 1e12, integer=True, optional=True),
    FieldRule("error", "target error", 0.0, 1e18, min_inclusive=False),
)}

BUDGET_RULES: dict[str, FieldRule] = {r.name: r for r in (
    FieldRule("epsilon", "global epsilon", 0.0, 100.0, min_inclusive=False),
    FieldRule("delta", "global delta", 0.0, 1.0, max_inclusive=False, decimals=12),
    FieldRule("delta_split", "delta split (fraction to statistics)", 0.0, 1.0, max_inclusive=False),
    FieldRule("confidence", "confidence level", 0.5, 1.0, max_inclusive=False),
    FieldRule("eta", "engine accuracy eta", 1e-6, 1.0),
    FieldRule("dataset_size", "dataset size n", 1, 1e12, integer=True, optional=True),
    FieldRule("population", "population size N", 1, 1e13, integer=True, optional=True),
    FieldRule("reserve", "reserved fraction", 0.0, 1.0, max_inclusive=False),
)}

#: Above this global epsilon the GUI asks for confirmation (a warning, not an error).
EPSILON_WARNING = 1.0
#: Largest number of grid points of a quantile statistic.
MAX_QUANTILE_BINS = 1_000_000


def _name(stat: Statistic, index: Optional[int]) -> str:
    where = f"statistic {index + 1}" if index is not None else "statistic"
    return f"{where} ({stat.name!r})" if isinstance(stat.name, str) and stat.name else where


def validate_statistic(stat: Statistic, index: Optional[int] = None,
                       budget: Optional[Budget] = None) -> Statistic:
    """Check every field of ``stat``; return it with numbers normalised (ints, floats)."""
    where = _name(stat, index)
    if not isinstance(stat.name, str) or not stat.name.strip():
        raise PlanError(f"{where}: the name must be a non-empty text", index=index, field="name")
    if len(stat.name) > MAX_NAME_LENGTH:
        raise PlanError(f"{where}: the name has {len(stat.name)} characters; at most "
                        f"{MAX_NAME_LENGTH} are allowed", index=index, field="name")
    for text_field in ("variable", "description"):
        if not isinstance(getattr(stat, text_field), str):
            raise PlanError(f"{where}: {text_field} must be text", index=index, field=text_field)
    if not isinstance(stat.kind, Kind):
        raise PlanError(f"{where}: kind = {stat.kind!r} is not allowed; use one of: "
                        f"{', '.join(k.value for k in Kind)}", index=index, field="kind")
    if not isinstance(stat.mechanism, Mechanism):
        raise PlanError(f"{where}: mechanism = {stat.mechanism!r} is not allowed; use one of: "
                        f"{', '.join(m.value for m in Mechanism)}", index=index, field="mechanism")
    if not isinstance(stat.held, bool):
        raise PlanError(f"{where}: held must be true or false", index=index, field="held")
    values = {}
    for name in ("epsilon", "delta", "weight", "repetitions", "lower", "upper", "bins",
                 "granularity", "n"):
        values[name] = FIELD_RULES[name].check(getattr(stat, name), where, index)
    for name in KIND_FIELDS[stat.kind]:
        if name == "n" and budget is not None and budget.dataset_size is not None:
            continue
        if values.get(name) is None:
            raise PlanError(f"{where}: a {stat.kind.value} statistic needs {FIELD_RULES[name].label}"
                            f" ({FIELD_RULES[name].describe()})", index=index, field=name)
    if stat.kind is not Kind.CUSTOM and values["delta"] != 0.0:
        # only custom statistics carry their own delta; Gaussian ones get it from the split
        values["delta"] = 0.0
    if values["lower"] is not None and values["upper"] is not None:
        if not values["lower"] < values["upper"]:
            raise PlanError(f"{where}: the lower bound {values['lower']:g} must be below the upper "
                            f"bound {values['upper']:g}", index=index, field="upper")
    if stat.kind is Kind.QUANTILE:
        span = (values["upper"] - values["lower"]) / values["granularity"]
        if span > MAX_QUANTILE_BINS:
            raise PlanError(f"{where}: (upper - lower) / granularity = {span:.4g} grid points; at "
                            f"most {MAX_QUANTILE_BINS} are allowed: use a coarser granularity",
                            index=index, field="granularity")
    if stat.kind is Kind.CUSTOM and stat.mechanism is Mechanism.GAUSSIAN:
        raise PlanError(f"{where}: a custom statistic carries its own (epsilon, delta); set its "
                        "mechanism to laplace (the mechanism is not used)", index=index,
                        field="mechanism")
    if budget is not None and stat.n is not None and budget.dataset_size is not None \
            and values["n"] > budget.dataset_size:
        raise PlanError(f"{where}: n = {values['n']} is larger than the dataset size "
                        f"{budget.dataset_size}", index=index, field="n")
    if not isinstance(stat.extra, dict):
        raise PlanError(f"{where}: extra must be a mapping", index=index, field="extra")
    return stat.replace(**values)


def validate_budget(budget: Budget) -> Budget:
    """Check the plan-wide settings; return them normalised."""
    values = {}
    for name, rule in BUDGET_RULES.items():
        values[name] = rule.check(getattr(budget, name), "budget", None)
    if budget.theorem not in ALLOCATION_THEOREMS:
        raise PlanError(f"budget: theorem = {budget.theorem!r} is not allowed for redistribution; "
                        f"use one of: {', '.join(ALLOCATION_THEOREMS)}", field="theorem")
    if not isinstance(budget.neighbouring, Neighbouring):
        raise PlanError(f"budget: neighbouring = {budget.neighbouring!r} is not allowed; use one "
                        f"of: {', '.join(n.value for n in Neighbouring)}", field="neighbouring")
    if not isinstance(budget.redistribute, bool):
        raise PlanError("budget: redistribute must be true or false", field="redistribute")
    n, big_n = values["dataset_size"], values["population"]
    if n is not None and values["delta"] >= 1.0 / n:
        raise PlanError(f"budget: global delta = {values['delta']:g} is not allowed for a dataset of "
                        f"n = {n} records; delta must be below 1/n = {1.0 / n:.3g} (otherwise "
                        "releasing one record at random would satisfy the definition)",
                        field="delta")
    if big_n is not None:
        if n is None:
            raise PlanError("budget: a population size N needs the dataset size n as well",
                            field="population")
        if big_n <= n:
            raise PlanError(f"budget: population N = {big_n} must be larger than the dataset size "
                            f"n = {n} (or left empty for no amplification)", field="population")
    return budget.replace(**values)


def budget_warnings(budget: Budget) -> list[str]:
    """Things worth a confirmation but not an error."""
    out = []
    if budget.epsilon > EPSILON_WARNING:
        out.append(f"global epsilon {budget.epsilon:g} is above {EPSILON_WARNING:g}: this is a weak "
                   "privacy guarantee; confirm it is intended")
    return out


def amplification_ratio(budget: Budget) -> float:
    """N/n when secrecy-of-the-sample amplification is on, else 1."""
    if budget.population is None or budget.dataset_size is None:
        return 1.0
    return budget.population / budget.dataset_size
