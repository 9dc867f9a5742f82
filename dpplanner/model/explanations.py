"""The plain-language sentences of the window and the report: what a statistic's error bound
means, why a statistic's ε_i may be above the global ε, the plan's unit of privacy in a label, and
a total's method or reason in the window's and the plan's words."""

from __future__ import annotations

import math
import re
from typing import Optional

from dpplanner import engine
from dpplanner.engine.theorems import ADVANCED, KOV, OPTIMAL, PLD, REGISTRY

from . import display
from .statistic import Budget, Kind, Statistic


_WHAT = {
    Kind.COUNT: ("count", "true count"),
    Kind.SUM: ("sum", "true sum"),
    Kind.MEAN: ("mean", "true mean"),
    Kind.PROPORTION: ("proportion", "true proportion"),
}


def explain(stat: Statistic, error: float, confidence: float, sens, n: Optional[int] = None,
            cell_error: Optional[float] = None) -> str:
    """A plain-language sentence saying what the error bound means (``sens``: the statistic's
    accuracy.Sensitivity); for a quantile, a second one saying what a rank error of that many
    records means for the median, when n is known. A grouped statistic's sentence speaks of one
    group (``cell_error``) and of all of them at once (``error``)."""
    pct = f"{confidence * 100:.6g}%"
    if stat.group_by and cell_error is not None:
        return _grouped(stat, error, cell_error, pct, sens)
    e = display.error(error)     # an error bound: rounded up, like everywhere else
    if stat.kind in _WHAT:
        what, truth = _WHAT[stat.kind]
        unit = "" if stat.kind in (Kind.COUNT, Kind.PROPORTION) else f" ({sens.units})"
        if stat.kind is Kind.PROPORTION:
            unit = f" ({display.error(error * 100)} percentage points)"
        of = f" of {stat.variable}" if stat.variable else ""
        return (f"The released {what}{of} will differ from the {truth} by at most {e}{unit} "
                f"with probability {pct}.")
    if stat.kind is Kind.HISTOGRAM:
        return (f"Every one of the {sens.coordinates} released bin counts will be within {e} of its "
                f"true count, all at the same time, with probability {pct}.")
    step = display.exact(float(stat.granularity))
    cdf = (f"Every point of the released CDF ({sens.coordinates} grid points, step {step}) will be "
           f"within {e} records of the true cumulative count, all at the same time, with "
           f"probability {pct}.")
    if n is None:
        return (f"{cdf} So a quantile read off it, the median say, is at most {e} records away in "
                f"rank from the true one, to one grid step ({step}).")
    # rank error r out of n records: the median is a value between the true (50 - 100 r/n)th and
    # (50 + 100 r/n)th percentiles (widened outwards to one decimal, so the range is never narrower)
    spread = min(100.0 * error / n, 50.0)      # (an infinite error: anywhere, 0th to 100th)
    low, high = max(0.0, math.floor((50.0 - spread) * 10) / 10), min(100.0, math.ceil((50.0 + spread) * 10) / 10)
    return (f"{cdf} So a quantile read off it is at most {e} records away in rank from the true one: "
            f"of the {display.count(n)} records, the released median is a value between the true "
            f"{_ordinal(low)} and {_ordinal(high)} percentiles, to one grid step ({step}).")


def _ordinal(x: float) -> str:
    """24.3 -> "24.3rd", 75.7 -> "75.7th", 11 -> "11th"."""
    text = f"{x:g}"
    digits = text.replace(".", "")
    last, tens = digits[-1], digits[-2:-1]
    suffix = "th" if tens == "1" and "." not in text else {"1": "st", "2": "nd", "3": "rd"}.get(last, "th")
    return text + suffix


def _grouped(stat: Statistic, error: float, cell_error: float, pct: str, sens) -> str:
    g = sens.moves.groups if sens.moves is not None else None
    by = stat.group_by.strip()
    one, every = display.error(cell_error), display.error(error)
    unit = "" if stat.kind in (Kind.COUNT, Kind.PROPORTION, Kind.HISTOGRAM, Kind.QUANTILE) \
        else f" ({sens.units})"
    what = {Kind.COUNT: "count", Kind.SUM: "sum", Kind.MEAN: "mean", Kind.PROPORTION: "proportion",
            Kind.HISTOGRAM: f"{sens.coordinates} bin counts", Kind.QUANTILE: "CDF points"}[stat.kind]
    of = f" of {stat.variable}" if stat.variable and stat.kind not in (Kind.HISTOGRAM,) else ""
    groups = f"all {g} groups" if g else "every released group"
    smallest = " (for a group of the smallest size n; larger groups are closer)" \
        if stat.kind in (Kind.MEAN, Kind.PROPORTION) else ""
    return (f"In any one group by {by}, the released {what}{of} will be within {one}{unit} of the truth "
            f"with probability {pct}; in {groups} at once, within {every}{unit}{smallest}.")


#: The most characters of the unit of privacy a one-line label shows (a unit may be 200 long).
UNIT_SHOWN = 24


def unit_label(unit: str) -> str:
    """The plan's unit of privacy ("household") for a one-line label: cut to UNIT_SHOWN characters
    with an ellipsis, so a long one never widens the window (it is read in full in its field)."""
    unit = " ".join(unit.split()) or "individual"
    return unit if len(unit) <= UNIT_SHOWN else unit[:UNIT_SHOWN - 1].rstrip() + "…"


def _budget_words(budget: Budget) -> str:
    """"the global ε (1)", or with a reserve "the spendable ε (0.9, after the reserve)"."""
    if budget.reserve:
        return f"the spendable ε ({display.value(budget.spendable_epsilon, 4)}, after the reserve)"
    return f"the global ε ({display.value(budget.epsilon, 4)})"


def _delta_covers(budget: Budget) -> str:
    return (f"the global δ (the small probability, {display.exact(budget.delta)}, that the ε "
            "guarantee may fail) cover the difference")


def above_global(budget: Budget, largest: float) -> str:
    """Beneath the Spent bar of a plan within its budget whose largest ε_i (``largest``) is above
    the spendable ε: a sound allocation (a theorem that spends δ_g certifies ε_g for a statistic
    at a slightly larger ε_i), which reads as one statistic spending more than the whole budget."""
    return (f"Why an ε_i ({display.upper(largest)}) can be above {_budget_words(budget)}: "
            f"{engine.theorem(budget.theorem).label} composition judges the plan as a whole and "
            f"lets {_delta_covers(budget)}, so the plan still spends no more than its budget.")


def above_global_tip(budget: Budget) -> str:
    """The tooltip of an ε_i cell above the spendable ε. Whether the plan is within its budget
    (under basic composition, which adds the ε_i up, it is not) the Spent bar says."""
    return (f"This ε_i is above {_budget_words(budget)}. That is not in itself an overspend (the "
            "Spent bar says whether the plan is within its budget): a theorem that judges the plan "
            f"as a whole can let {_delta_covers(budget)}.")


#: The engine's words for what the plan calls ε, δ, ρ and η (and its queries, the plan's releases),
#: and its theorems' names where the window shows another label ("zcdp" is "zCDP (as OpenDP /
#: Tumult)"); the longer words first.
_WORDS = [(re.compile(rf"\b{re.escape(PLD)} lattice\b"),
           f"{engine.theorem(PLD).label}: privacy losses on a lattice of step"),
          *((re.compile(rf"\b{re.escape(t.name)}\b"), t.label) for t in REGISTRY if t.label != t.name),
          *((re.compile(rf"\b{word}\b"), sign) for word, sign in
            (("query deltas", "releases' δ_i"), ("queries", "releases"), ("query", "release"),
             ("deltas", "δ_i"), ("delta_g", "δ_g"), ("delta_i", "δ_i"), ("epsilon_g", "ε_g"),
             ("eps_i", "ε_i"),
             ("epsilon", "ε"), ("eps", "ε"), ("delta", "δ"), ("rho", "ρ"), ("eta", "η")))]


def composition_note(plan, name: str, comp, inputs=None) -> str:
    """What the window's Totals table, the report and dpplanner-cli compose say beside a theorem's
    total (its method, or why it does not apply or is not feasible) with the theorems named as the
    window names them and the releases as the plan's statistics, not in the engine's words ("pld
    lattice 0.002", "query 2 is (eps=0.2, delta=0)"). ``plan``: the plan, or its statistics with
    ``inputs`` (their composition inputs: the window's evaluated snapshot); None: the releases
    stay numbered as the engine numbers them (a table shown without its plan)."""
    if name == KOV and not comp.applicable and plan is not None:
        unequal = _kov_unequal(plan, inputs or plan.composition_inputs())
        if unequal:
            return unequal
    note = comp.detail if comp.applicable and comp.reason is None else (comp.reason or comp.detail)
    note = note or ""
    if name == ADVANCED and comp.applicable and comp.reason is None:
        # (advanced composition's detail names the least of its bounds: "basic" alone read as if
        # basic composition had been used instead of it)
        note = f"the least of its bounds here, {note}"
    for pattern, words in _WORDS:
        note = pattern.sub(words, note)
    return note


def _kov_unequal(statistics, inputs) -> str:
    """Why KOV does not apply, naming the first statistic whose (ε_i, δ_i) differs from the first
    one's (the engine composes one row per statistic, in plan order), or "" if none does."""
    pairs = list(zip(inputs.epsilons, inputs.deltas))
    other = next((i for i, pair in enumerate(pairs) if pair != pairs[0]), None)
    if other is None:
        return ""

    def gets(i: int) -> str:
        return (f"statistic {i + 1} ({statistics[i].name!r}) gets ε_i = {pairs[i][0]:.6g}, "
                f"δ_i = {pairs[i][1]:.6g}")
    return (f"{engine.theorem(KOV).label} applies only when every statistic gets the same ε_i and "
            f"δ_i: {gets(other)}, but {gets(0)}; {engine.theorem(OPTIMAL).label} takes unequal "
            "statistics")
