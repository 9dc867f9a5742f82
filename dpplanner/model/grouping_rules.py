"""The grouping rules of a statistic (part of ``validation``: it calls them for every statistic).

What a grouped statistic's fields must satisfy together and against the plan's c rows per
individual (``contributions.py`` says what they mean). Errors are PlanErrors at the field.
"""

from __future__ import annotations

from typing import Optional

from .contributions import listed_keys
from .statistic import Budget, Kind, Statistic, preview
from .field_rules import FIELD_RULES, MAX_GROUPS, MAX_KEYS_TEXT, PlanError


def check_grouping(stat: Statistic, values: dict, where: str, index: Optional[int],
                   budget: Optional[Budget]) -> None:
    """The grouping fields of one statistic (``values``: its numbers, already checked by their
    rules) against each other and the plan's c rows per individual (contributions.py)."""
    c = budget.contributions if budget is not None else 1
    if not stat.group_by.strip():
        for name in ("groups", "max_groups", "max_rows"):
            if values[name] is not None:
                raise PlanError(f"{where}: {FIELD_RULES[name].label} = {values[name]} is given but the "
                                "statistic is not grouped: name what it is grouped by, or clear it",
                                index=index, field=name)
        for name, text in (("group_keys", "group keys are listed"),
                           ("one_group_each", "\"one group per individual\" is ticked"),
                           ("select_groups", "\"select the groups\" is ticked")):
            if getattr(stat, name):
                raise PlanError(f"{where}: {text} but the statistic is not grouped: name what it is "
                                "grouped by, or clear it", index=index, field=name)
        return
    if stat.kind is Kind.CUSTOM:
        raise PlanError(f"{where}: a custom statistic carries its own (ε, δ) and cannot be grouped",
                        index=index, field="group_by")
    if len(stat.group_keys) > MAX_KEYS_TEXT:
        raise PlanError(f"{where}: the listed group keys have {len(stat.group_keys)} characters; at most "
                        f"{MAX_KEYS_TEXT} are allowed", index=index, field="group_keys")
    keys = listed_keys(stat)
    if len(set(keys)) != len(keys):
        twice = sorted({k for k in keys if keys.count(k) > 1})
        raise PlanError(f"{where}: the group key {preview(twice[0])} is listed more than once",
                        index=index, field="group_keys")
    if keys and len(keys) > MAX_GROUPS:
        raise PlanError(f"{where}: {len(keys)} group keys are listed; at most {MAX_GROUPS} are allowed",
                        index=index, field="group_keys")
    g = values["groups"]
    if keys and g is not None and g != len(keys):
        raise PlanError(f"{where}: number of groups g = {g} but {len(keys)} keys are listed; give the "
                        "same number (or leave g empty)", index=index, field="groups")
    g = len(keys) if keys else g
    if g is None and not stat.select_groups:
        raise PlanError(f"{where}: a statistic by {preview(stat.group_by)} needs its number of groups g "
                        "(or its keys listed, or \"select the groups\" when they are not known in advance)",
                        index=index, field="groups")
    l0, linf = values["max_groups"], values["max_rows"]
    if l0 is not None:
        if l0 > c:
            raise PlanError(f"{where}: groups per individual L0 = {l0} is more than the c = {c} rows an "
                            "individual contributes (each group needs a row); lower L0 or raise c",
                            index=index, field="max_groups")
        if g is not None and l0 > g:
            raise PlanError(f"{where}: groups per individual L0 = {l0} is more than the g = {g} groups",
                            index=index, field="max_groups")
        if stat.one_group_each and l0 != 1:
            raise PlanError(f"{where}: groups per individual L0 = {l0}, but the grouping is a property of the "
                            "individual (one group each): L0 is 1; untick it or clear L0",
                            index=index, field="max_groups")
    if linf is not None and linf > c:
        raise PlanError(f"{where}: rows per individual in one group L∞ = {linf} is more than the c = {c} rows "
                        "an individual contributes; lower L∞ or raise c", index=index, field="max_rows")
    if stat.kind in (Kind.MEAN, Kind.PROPORTION) and values["n"] is None:
        raise PlanError(f"{where}: a {stat.kind.value} by {preview(stat.group_by)} divides each group's sum by "
                        "its public size: give the smallest group's size n", index=index, field="n")
