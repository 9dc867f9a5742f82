"""Every rule a plan must satisfy, in one place: fields, statistics, the budget, whole plans.

The Plan's mutating methods, the file loader, the CSV importer and the command line all call
these functions; ``typed.py`` reads what a person typed into a field by these rules.
Errors are ``PlanError`` (a ValueError) naming the statistic, the field and what is allowed.
The rules of single numeric fields and the hard limits are in ``field_rules.py``, a grouped
statistic's in ``grouping_rules.py``, the pinned statistics' before a redistribution in
``pin_rules.py``; all are imported here, the entry point.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

from dpplanner.engine.theorems import ALLOCATION_THEOREMS

from .accuracy import sensitivity
from .display import upper
# (all of field_rules: callers import every rule from this module)
from .field_rules import (BUDGET_RULES, FIELD_RULES, MAX_CONTRIBUTIONS, MAX_GROUPS, MAX_KEYS_TEXT,
                          MAX_NAME_LENGTH, MAX_QUANTILE_BINS, MAX_QUERIES, MAX_STATISTICS, MIN_NORMAL,
                          FieldRule,
                          Number, PlanError, ok_range, read_as_another, stored_inexactly,
                          too_close_to_zero)
from .grouping_rules import check_grouping
# (all of pin_rules: the redistribution and the window import the pins' rules from this module)
from .pin_rules import NAMED_PINS, check_holds, release_clause
from .statistic import (KIND_FIELDS, WHOLE_NUMBER_KINDS, Budget, Kind, Mechanism, Neighbouring, Noise,
                        Statistic, field_names, preview)

#: Above this global epsilon the GUI asks for confirmation (a warning, not an error).
EPSILON_WARNING = 1.0


def _name(stat: Statistic, index: Optional[int]) -> str:
    where = f"statistic {index + 1}" if index is not None else "statistic"
    return f"{where} ({preview(stat.name)})" if isinstance(stat.name, str) and stat.name else where


#: The numeric fields of a Statistic, each checked by its rule (declaration order: the first bad
#: one is reported).
_NUMBER_FIELDS = tuple(name for name in field_names(Statistic) if name in FIELD_RULES)


def validate_statistic(stat: Statistic, index: Optional[int] = None,
                       budget: Optional[Budget] = None) -> Statistic:
    """Check every field of ``stat``; return it with numbers normalised (ints, floats)."""
    where = _name(stat, index)
    if not isinstance(stat.name, str) or not stat.name.strip():
        raise PlanError(f"{where}: the name must be a non-empty text", index=index, field="name")
    if len(stat.name) > MAX_NAME_LENGTH:
        raise PlanError(f"{where}: the name has {len(stat.name)} characters; at most "
                        f"{MAX_NAME_LENGTH} are allowed", index=index, field="name")
    for text_field in ("variable", "description", "group_by", "group_keys"):
        if not isinstance(getattr(stat, text_field), str):
            raise PlanError(f"{where}: {text_field} must be text", index=index, field=text_field)
    for text_field in ("name", "variable", "description", "group_by", "group_keys"):
        _check_unicode(getattr(stat, text_field), where, text_field, index)
    if not isinstance(stat.kind, Kind):
        raise PlanError(f"{where}: kind = {preview(stat.kind)} is not allowed; use one of: "
                        f"{', '.join(k.value for k in Kind)}", index=index, field="kind")
    if not isinstance(stat.mechanism, Mechanism):
        raise PlanError(f"{where}: mechanism = {preview(stat.mechanism)} is not allowed; use one of: "
                        f"{', '.join(m.value for m in Mechanism)}", index=index, field="mechanism")
    if not isinstance(stat.noise, Noise):
        raise PlanError(f"{where}: noise = {preview(stat.noise)} is not allowed; use one of: "
                        f"{', '.join(m.value for m in Noise)}", index=index, field="noise")
    for flag in ("held", "integer", "one_group_each", "select_groups"):
        if not isinstance(getattr(stat, flag), bool):
            raise PlanError(f"{where}: {flag} must be true or false", index=index, field=flag)
    values = {}
    for name in _NUMBER_FIELDS:
        values[name] = FIELD_RULES[name].check(getattr(stat, name), where, index)
    for name in KIND_FIELDS[stat.kind]:
        if name == "n" and budget is not None and budget.dataset_size is not None:
            continue
        if values.get(name) is None:
            raise PlanError(f"{where}: a {stat.kind.value} statistic needs {FIELD_RULES[name].label}"
                            f" ({FIELD_RULES[name].describe()})", index=index, field=name)
    if values["target_error"] is not None and not stat.held:
        values["target_error"] = None   # a target pins its statistic: unpinned, there is none
    if values["target_error"] is not None and stat.kind is Kind.CUSTOM:
        raise PlanError(f"{where}: a custom statistic has no error formula, so it cannot have a "
                        "target error; unpin it first", index=index, field="error")
    if stat.kind is not Kind.CUSTOM and values["delta"] != 0.0:
        # only custom statistics carry their own delta; Gaussian ones get it from the split
        values["delta"] = 0.0
    if values["lower"] is not None and values["upper"] is not None:
        if not values["lower"] < values["upper"]:
            raise PlanError(f"{where}: the lower bound {values['lower']:g} must be below the upper "
                            f"bound {values['upper']:g}", index=index, field="upper")
    if stat.integer and stat.kind in WHOLE_NUMBER_KINDS:
        for bound in ("lower", "upper"):
            v = values[bound]
            if v is not None and v != math.floor(v):
                raise PlanError(f"{where}: the values are whole numbers, so the {FIELD_RULES[bound].label} "
                                f"must be one too (got {v:g}); round it outwards or untick "
                                "\"values are whole numbers\"", index=index, field=bound)
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
    check_grouping(stat, values, where, index, budget)
    checked = stat.replace(**values)
    _check_sensitivity(checked, where, index, budget)
    return checked


def validate_metadata(title: str, description: str) -> tuple[str, str]:
    """The plan's title and description as text a plan file can hold."""
    title, description = str(title), str(description)
    for field, text in (("title", title), ("description", description)):
        _check_unicode(text, "the plan", field, None)
    return title, description


def _check_unicode(text: str, where: str, field: str, index: Optional[int]) -> None:
    """A lone UTF-16 surrogate is not text a plan file (UTF-8) can hold: refused here, so that
    every valid plan can be saved."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise PlanError(f"{where}: {field} holds a lone UTF-16 surrogate "
                        f"({exc.object[exc.start]!r}), which is not valid text", index=index,
                        field=field) from None


#: Smallest sensitivity accepted. Far below any real data's resolution, it keeps the ratios the
#: calibrations divide by (target error / sensitivity <= 1e18 / 1e-100) inside double range, and
#: rules out a sensitivity that underflows to 0 (bounds 0 and 5e-324), which would divide by 0.
MIN_SENSITIVITY = 1e-100


def _check_sensitivity(stat: Statistic, where: str, index: Optional[int],
                       budget: Optional[Budget]) -> None:
    """Sums and means only: their sensitivity comes from the bounds (and n), and may be tiny.
    Checked under both neighbouring relations, so changing the relation never breaks a row."""
    if stat.kind not in (Kind.SUM, Kind.MEAN):
        return
    size = budget.dataset_size if budget is not None else None
    smallest = min(min(s.l1, s.l2) for s in (sensitivity(stat, rel, size) for rel in Neighbouring))
    if not smallest >= MIN_SENSITIVITY:
        over_n = ", divided by n" if stat.kind is Kind.MEAN else ""
        raise PlanError(f"{where}: the bounds [{stat.lower:g}, {stat.upper:g}] give a sensitivity "
                        f"(the larger of |lower| and |upper|, or upper - lower{over_n}) of "
                        f"{smallest:.3g}; it "
                        f"must be at least {MIN_SENSITIVITY:g}: widen the bounds or measure the "
                        "variable in smaller units", index=index, field="upper")


def validate_budget(budget: Budget) -> Budget:
    """Check the plan-wide settings; return them normalised."""
    values = {}
    for name, rule in BUDGET_RULES.items():
        values[name] = rule.check(getattr(budget, name), "budget", None)
    if budget.theorem not in ALLOCATION_THEOREMS:
        raise PlanError(f"budget: theorem = {preview(budget.theorem)} is not allowed for redistribution; "
                        f"use one of: {', '.join(ALLOCATION_THEOREMS)}", field="theorem")
    if not isinstance(budget.neighbouring, Neighbouring):
        raise PlanError(f"budget: neighbouring = {preview(budget.neighbouring)} is not allowed; use one "
                        f"of: {', '.join(n.value for n in Neighbouring)}", field="neighbouring")
    if not isinstance(budget.redistribute, bool):
        raise PlanError("budget: redistribute must be true or false", field="redistribute")
    if not isinstance(budget.truncate, bool):
        raise PlanError("budget: truncate must be true or false", field="truncate")
    if not isinstance(budget.unit, str) or not budget.unit.strip():
        raise PlanError("budget: the unit of privacy must be a non-empty text (what one protected "
                        "individual is, e.g. person or household)", field="unit")
    if len(budget.unit) > MAX_NAME_LENGTH:
        raise PlanError(f"budget: the unit of privacy has {len(budget.unit)} characters; at most "
                        f"{MAX_NAME_LENGTH} are allowed", field="unit")
    _check_unicode(budget.unit, "budget", "unit", None)
    normalised = budget.replace(**values)
    if not normalised.spendable_epsilon > 0.0:
        # e.g. epsilon = 2.2250738585072014e-308 with a reserve of 99.99999999999999 %: what
        # redistribution may spend underflows to 0
        raise PlanError(f"budget: global epsilon = {values['epsilon']!r} with a reserve of "
                        f"{values['reserve']:.4g} leaves no epsilon to spend (it underflows to 0); "
                        "raise the global epsilon or lower the reserve", field="reserve")
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
    return normalised


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


# --- whole plans -------------------------------------------------------------------------------

def uses_delta(s: Statistic) -> bool:
    """Whether a (non-custom) statistic's release needs a share of delta: Gaussian noise, or a
    private selection of its groups (selection.py)."""
    return s.kind is not Kind.CUSTOM and (s.mechanism is Mechanism.GAUSSIAN or
                                          bool(s.group_by and s.select_groups))


def statistic_deltas(budget: Budget, stats: Sequence[Statistic]) -> list[float]:
    """delta_i per release: the split spread evenly over the releases that use delta (Gaussian
    noise, a selection of groups), custom as typed."""
    users = sum(s.repetitions for s in stats if uses_delta(s))
    share = budget.delta_to_statistics / users if users else 0.0
    out = []
    for s in stats:
        if s.kind is Kind.CUSTOM:
            out.append(float(s.delta))
        elif uses_delta(s):
            out.append(share)
        else:
            out.append(0.0)
    return out


def validate_state(budget: Budget, stats: Sequence[Statistic],
                   known: Sequence[Statistic] = ()) -> tuple[Budget, tuple[Statistic, ...]]:
    """Validate a whole plan state; return it normalised. Raises PlanError.

    ``known``: statistics already validated and normalised under this same budget (a plan's
    current ones), taken as they are: an edit of one row of a thousand no longer checks the other
    999 field by field (~15 ms of the window's GUI thread per edit). The whole-plan rules below
    still see every statistic."""
    budget = validate_budget(budget)
    if len(stats) > MAX_STATISTICS:
        raise PlanError(f"the plan has {len(stats)} statistics; at most {MAX_STATISTICS} are allowed")
    valid = {id(s) for s in known}         # (alive in ``known`` while this runs: ids are theirs)
    checked = tuple(s if id(s) in valid else validate_statistic(s, i, budget) for i, s in enumerate(stats))
    total = sum(s.repetitions for s in checked)
    if total > MAX_QUERIES:
        raise PlanError(f"the plan releases {total} queries (repetitions counted); at most "
                        f"{MAX_QUERIES} are allowed")
    needing = [i for i, s in enumerate(checked) if uses_delta(s)]
    if needing and not budget.delta_to_statistics > 0:
        i = needing[0]
        if checked[i].mechanism is Mechanism.GAUSSIAN:
            raise PlanError(f"statistic {i + 1} ({checked[i].name!r}) uses the Gaussian mechanism, which "
                            "needs delta > 0: set a global delta > 0 and a delta split > 0, or use the "
                            "Laplace mechanism", index=i, field="mechanism")
        raise PlanError(f"statistic {i + 1} ({checked[i].name!r}) selects its groups privately, which "
                        "needs delta > 0: set a global delta > 0 and a delta split > 0, or list its "
                        "groups' keys", index=i, field="select_groups")
    custom_delta = sum(s.delta * s.repetitions for s in checked if s.kind is Kind.CUSTOM)
    if custom_delta > budget.delta_slack:
        raise PlanError(f"the custom statistics' deltas add up to {custom_delta:.3g}, more than the "
                        f"{budget.delta_slack:.3g} of the global delta left for composition (the part "
                        "not given as delta to statistics); lower them, or lower the delta to "
                        "statistics", field="delta")
    ratio = amplification_ratio(budget)
    if ratio != 1.0:
        for i, (s, d) in enumerate(zip(checked, statistic_deltas(budget, checked))):
            if d * ratio >= 1.0:
                raise PlanError(f"statistic {i + 1} ({s.name!r}): with amplification N/n = "
                                f"{ratio:.4g} its functioning delta {d * ratio:.3g} is >= 1; lower "
                                "the population size or the delta", index=i, field="delta")
    elif budget.redistribute:
        check_discrete_shares(budget, checked)
    return budget, checked


def check_discrete_shares(budget: Budget, stats: Sequence[Statistic]) -> None:
    """Where the free statistics are redistributed (the plan's redistribution on, or one
    redistribution asked for: redistribution.allocated), a free statistic's share by weight is
    an epsilon that could be typed, at least 2.2e-308 (what basic composition gives it), and a free statistic with OpenDP (discrete)
    noise gets at least its weight's share of the spendable epsilon the pins' plain sum leaves
    (what basic composition gives it; the plan's theorem, never worse than basic, gives no less).
    A share below DISCRETE_MIN_EPSILON is refused where it is typed (with redistribution off, when
    the one redistribution is asked for), not by the engine mid-redistribution: by the weight
    where raising it alone would do, else by the global epsilon, naming the least one that gives
    every such statistic its floor. (The allocation never gives
    one less: allocate.py.)"""
    pins = sum(s.epsilon * s.repetitions for s in stats if s.held)
    left = budget.spendable_epsilon - pins
    weights = sum(s.weight * s.repetitions for s in stats if not s.held)
    if not (left > 0 and weights > 0):
        return      # (the pins' check says what there is to say)
    discrete = [i for i, s in enumerate(stats) if not s.held and s.noise is Noise.OPENDP
                and s.kind is not Kind.CUSTOM and not (s.group_by and s.select_groups)]
    # a continuous one's share must be an epsilon that could be typed: one that underflows to 0 has
    # no noise calibrated for it, and one nearer 0 (global ε 1e-323 over three releases under basic:
    # 3.3e-324) left the search's probes below it at 0 (the redistribution failed naming an internal
    # release, "a Gaussian release needs epsilon > 0")
    noisy = set(discrete)
    tiny = [i for i, s in enumerate(stats) if not s.held and s.kind is not Kind.CUSTOM
            and i not in noisy and stored_inexactly(s.weight * (left / weights), True)]
    if tiny:
        s = stats[tiny[0]]
        share = s.weight * (left / weights)
        what = (f"its share of the spendable ε by weight (global ε {budget.epsilon!r}, weight "
                f"{s.weight!r} of {weights:.4g})")
        reason = f"{what} underflows to 0" if not share else too_close_to_zero(what, repr(share))
        raise PlanError(f"{_name(s, tiny[0])}: {reason}, and no noise is calibrated there; raise the "
                        "global ε or its weight", index=tiny[0], field="weight")
    if not discrete:
        return
    from dpplanner.engine.validation import DISCRETE_MIN_EPSILON  # here: its module imports numpy

    per_weight = left / weights
    i = min(discrete, key=lambda j: stats[j].weight)
    s = stats[i]
    share = s.weight * per_weight
    if share >= DISCRETE_MIN_EPSILON:
        return
    # raising w_i to x: x left / (weights - w_i r + x r) >= floor, the other weights kept
    others = [stats[j].weight for j in discrete if j != i]
    rest = (weights - s.weight * s.repetitions) / s.repetitions
    need = DISCRETE_MIN_EPSILON * rest / (left / s.repetitions - DISCRETE_MIN_EPSILON) * 1.01 \
        if left / s.repetitions > DISCRETE_MIN_EPSILON else math.inf
    if others and need <= min(others):      # (alone, its weight is the whole: raising it does nothing)
        raise PlanError(f"{_name(s, i)}: weight = {s.weight!r} leaves it too little ε for its OpenDP "
                        f"noise: its share of the spendable ε by weight is {share:.3g}, and discrete "
                        f"noise cannot be calibrated below ε = {DISCRETE_MIN_EPSILON:.3g}; raise its "
                        f"weight to at least {upper(need, 2)}", index=i, field="weight")
    least = (pins + DISCRETE_MIN_EPSILON / s.weight * weights) / (1.0 - budget.reserve) * 1.01
    raise PlanError(f"budget: global ε = {budget.epsilon!r} is too small for the statistics with OpenDP "
                    f"noise: {_name(s, i)} would get ε {share:.3g}, and discrete noise cannot be "
                    f"calibrated below ε = {DISCRETE_MIN_EPSILON:.3g}; the least global ε that works "
                    f"for these statistics and weights is {upper(least, 2)}", field="epsilon")


def floors_refusal(budget: Budget, stats: Sequence[Statistic], floored: dict, needed: float) -> str:
    """Why redistribution is refused where the free statistics with OpenDP noise at their least ε
    (``floored``: row -> ε) and the pinned ones need ``needed`` (engine.allocate's BudgetError)."""
    from dpplanner.engine import theorem
    from dpplanner.engine.validation import DISCRETE_MIN_EPSILON
    from .display import upper
    top = max(floored, key=lambda i: (floored[i], -i))
    pinned = ", with the pinned ones," if any(s.held for s in stats) else ""
    why = "" if floored[top] <= DISCRETE_MIN_EPSILON else \
        (f": {_name(stats[top], top)}'s discrete Gaussian noise cannot be calibrated below ε "
         f"{floored[top]:.3g} (its σ would pass 2^57 lattice steps)")
    return (f"the statistics with OpenDP noise{pinned} need ε {upper(needed)} under the "
            f"{theorem(budget.theorem).label} theorem even at the least ε each one's noise is calibrated "
            f"for, more than the spendable ε {budget.spendable_epsilon:g}{why}")
