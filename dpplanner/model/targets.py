"""Target errors: an error the user asked for is a requirement of the plan, met after every edit.

A statistic with a ``target_error`` is pinned (``held``) and its ε_i is whatever that error needs
under the plan as it is now: the confidence, the bounds, n, the mechanism, the neighbouring
relation, the δ share of a Gaussian (which changes when another Gaussian is added), amplification.
``meet_targets`` recomputes those ε_i after every change (``Plan`` calls it on every state it
takes), so the target is met whatever was edited; redistribution then moves only the free
statistics. An edit after which a target cannot be met (the error would need ε_i above the largest
allowed, or the statistic became a custom one, which has no error formula) is refused with a
PlanError at that statistic's error: the plan keeps its previous state.

The target is stored exactly as typed; ε_i is derived from it (rounded up, so the error shown never
exceeds the target). Typing an ε_i, or unpinning, ends the target (``ended_targets``).
"""

from __future__ import annotations

from typing import Any, Mapping, Optional, Sequence

import math

from . import accuracy as acc
from . import display
from .privacy import epsilon_for_error_search
from .statistic import Budget, Kind, Noise, Statistic
from .validation import FIELD_RULES, PlanError, amplification_ratio, statistic_deltas

#: Smallest epsilon the inverse accuracy returns (the epsilon field rule excludes 0).
EPSILON_FLOOR = 1e-9


def epsilon_for_target(budget: Budget, stats: Sequence[Statistic], i: int, error: float,
                       deltas: Optional[Sequence[float]] = None) -> float:
    """The ε_i statistic i needs for ``error`` at the plan's confidence; PlanError (at the
    statistic's error) when there is none within the allowed range."""
    s = stats[i]
    where = f"statistic {i + 1} ({s.name!r})"
    if s.kind is Kind.CUSTOM:
        raise PlanError(f"{where} is custom: type its epsilon directly; custom statistics have no "
                        "accuracy formula, so no target error", index=i, field="error")
    error = FIELD_RULES["error"].check(error, where, i)
    if deltas is None:
        deltas = statistic_deltas(budget, stats)
    try:
        if s.noise is Noise.OPENDP or (s.group_by and s.select_groups):
            # the error of the noise OpenDP adds, or of the values once the groups are selected
            # (privacy.py): no closed-form inverse
            eps = epsilon_for_error_search(budget, s, error, deltas[i], EPSILON_FLOOR)
        else:
            eps = acc.epsilon_for_error(s, error, deltas[i], confidence=budget.confidence,
                                        neighbouring=budget.neighbouring,
                                        dataset_size=budget.dataset_size,
                                        amplification=amplification_ratio(budget),
                                        minimum=EPSILON_FLOOR,
                                        contributions=budget.contributions)
    except ValueError as exc:
        raise PlanError(f"{where}: {exc}", index=i, field="error") from None
    top = FIELD_RULES["epsilon"].maximum
    if eps == math.inf:
        raise PlanError(f"{where}: an error of {display.exact(error)} cannot be reached with "
                        f"epsilon up to the largest allowed {top:g}; ask for a larger error",
                        index=i, field="error")
    if eps > top:
        raise PlanError(f"{where}: an error of {display.exact(error)} would need epsilon "
                        f"{display.upper(eps)}, above the largest allowed {top:g}; ask for a larger "
                        "error", index=i, field="error")
    return eps


def meet_targets(budget: Budget, stats: Sequence[Statistic]) -> tuple[Statistic, ...]:
    """``stats`` with every targeted statistic's ε_i recomputed for its target under ``budget``
    (the others as they are). Raises PlanError naming the first target that cannot be met."""
    stats = tuple(stats)
    targeted = [i for i, s in enumerate(stats) if s.target_error is not None]
    if not targeted:
        return stats
    deltas = statistic_deltas(budget, stats)
    out = list(stats)
    for i in targeted:
        s = stats[i]
        try:
            eps = epsilon_for_target(budget, stats, i, s.target_error, deltas)
        except PlanError as exc:
            raise PlanError(f"{exc}; this statistic is pinned at a target error of ± "
                            f"{display.exact(s.target_error)}: change the target or unpin it first",
                            index=i, field="error") from None
        if eps != s.epsilon:
            out[i] = s.replace(epsilon=eps)
    return tuple(out)


def typed_fields(typed: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a statistic that values the user typed set (``error``: a target error): a
    typed ε_i or target error is the user's decision and pins the statistic (``held``), which
    redistribution then leaves (the one pin rule of the plan, the window's editors and fields)."""
    fields = {("target_error" if key == "error" else key): value for key, value in typed.items()}
    if "epsilon" in fields or "target_error" in fields:
        fields["held"] = True
    return fields


def ended_targets(before: Statistic, after: Statistic) -> Statistic:
    """An edit of one statistic as the user meant it: an ε_i typed over a targeted statistic ends
    its target (the typed ε_i is the new pin); a kind change that changes what the error is
    measured in (records to income, say) is refused, as the target would silently mean another
    error."""
    if before.target_error is None or after.target_error != before.target_error:
        return after
    if after.epsilon != before.epsilon:
        return after.replace(target_error=None)
    if after.kind is not before.kind and _units(before) != _units(after):
        raise PlanError(f"{after.name!r} is pinned at a target error of ± "
                        f"{display.exact(before.target_error)} {_units(before)}; as a "
                        f"{after.kind.label.lower()} its error is in other units: unpin it (or "
                        "type a new target) first", field="kind")
    return after


def _units(stat: Statistic) -> str:
    """What a statistic's error is measured in, for comparing two kinds."""
    if stat.kind in (Kind.COUNT, Kind.HISTOGRAM, Kind.QUANTILE):
        return "records"
    if stat.kind is Kind.PROPORTION:
        return "proportion"
    if stat.kind is Kind.CUSTOM:
        return "no units"
    return f"units of {stat.variable}" if stat.variable else "data units"
