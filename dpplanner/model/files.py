"""The .dpplan file format: versioned JSON, step-by-step migrations, atomic saves, hostile input.

Layout of format_version 2 (documented in docs/reference/file-format.md):

    {"format_version": 2, "app": "dpplanner", "title": str, "description": str,
     "budget": {"epsilon", "delta", "delta_split", "confidence", "eta", "theorem", "redistribute",
                "neighbouring", "dataset_size", "population", "reserve", "unit", "contributions",
                "truncate"},
     "statistics": [{"name", "variable", "kind", "mechanism", "epsilon", "delta", "weight", "held",
                     "target_error", "repetitions", "lower", "upper", "bins", "granularity", "n",
                     "description", "noise", "integer", and for a grouped statistic "group_by",
                     "groups", "group_keys", "one_group_each", "max_groups", "max_rows",
                     "select_groups", "selection_share"}]}

Unknown fields at any of the three levels are kept (``extra``) and written back. Version 0 is the
earlier PSI-style layout (flat global_epsilon/global_delta/delta_fraction, statistics with
"type", "hold" and a nested "metadata"); ``MIGRATIONS[0]`` turns it into version 1. Version 1 had
no "noise" (how the noise is implemented) and no "integer" (values are whole numbers): its plans
were certified for continuous noise, so ``MIGRATIONS[1]`` marks every statistic "continuous" and
the loaded plan carries a note saying so (``Plan.notes``); nor a unit of privacy or grouping, which
the migration sets to what they were planned with (a person, c = 1, ungrouped). Fields added later
this version are optional with documented defaults ("noise": "opendp", "integer": false for a new
statistic; "target_error": null, no target; "unit": "person", "contributions": 1, "truncate":
false; "group_by": "" and the other grouping fields' defaults, which are not written for an
ungrouped statistic).
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Callable, Optional

from . import jsontext
from .fileio import (MAX_FILE_BYTES, PlanFileError, atomic_write, atomic_write_text, plan_leftovers,
                     read_regular_file, remove_stale_temporaries, resolve_target)
from .plan import Plan
from .statistic import (Budget, Kind, Mechanism, Neighbouring, Noise, Statistic, field_names, parse_enum,
                        preview)
from .validation import MAX_STATISTICS, PlanError
from dpplanner.engine.theorems import LEGACY_THEOREM

__all__ = ["FORMAT_VERSION", "SUFFIX", "MAX_FILE_BYTES", "PlanFileError", "atomic_write_text",
           "dumps_plan", "document_text", "plan_to_document", "loads_plan", "load_plan", "save_plan", "migrate", "migration_notes",
           "MIGRATIONS"]

FORMAT_VERSION = 2
SUFFIX = ".dpplan"


# --- migrations --------------------------------------------------------------------------------

def _migrate_0_to_1(doc: dict) -> dict:
    """Version 0 (PSI-style): flat budget keys, "type" for kind, "hold", nested "metadata"."""
    out: dict[str, Any] = {k: v for k, v in doc.items()
                           if k not in ("format_version", "global_epsilon", "global_delta",
                                        "delta_fraction", "statistics", "neighbouring", "budget")}
    out["format_version"] = 1
    # version 0 had no "budget"; a field of that name was an unknown one. Version 1 uses the name,
    # so the old value is kept as an unknown field of the new budget (and written back there).
    budget: dict[str, Any] = {"budget": doc["budget"]} if "budget" in doc else {}
    for old, new in (("global_epsilon", "epsilon"), ("global_delta", "delta"),
                     ("delta_fraction", "delta_split"), ("neighbouring", "neighbouring")):
        if old in doc:
            budget[new] = doc[old]
    out["budget"] = budget
    stats = doc.get("statistics", [])
    if not isinstance(stats, list):
        raise PlanFileError("version 0 file: 'statistics' must be a list")
    new_stats = []
    for i, s in enumerate(stats):
        if not isinstance(s, dict):
            raise PlanFileError(f"version 0 file: statistic {i + 1} must be an object")
        t = {k: v for k, v in s.items() if k not in ("type", "hold", "metadata")}
        if "type" in s:
            t["kind"] = s["type"]
        if "hold" in s:
            t["held"] = s["hold"]
        meta = s.get("metadata", {})
        if not isinstance(meta, dict):
            raise PlanFileError(f"version 0 file: statistic {i + 1}: 'metadata' must be an object")
        t.update(meta)
        new_stats.append(t)
    out["statistics"] = new_stats
    return out


def _migrate_1_to_2(doc: dict) -> dict:
    """Version 1 plans were certified for continuous noise: each statistic keeps that meaning. They
    had no target errors (a pin was an ε_i): "target_error" is null. They had no unit of privacy
    and no grouping: one row per individual (a person, c = 1, the data guarantee it) and every
    statistic ungrouped, which is what they were planned with."""
    out = dict(doc, format_version=2)
    stats = doc.get("statistics", [])
    if isinstance(stats, list):   # anything else is reported by the parser with its reason
        out["statistics"] = [dict(s, noise=s.get("noise", "continuous"),
                                  target_error=s.get("target_error"), group_by=s.get("group_by", ""))
                             if isinstance(s, dict) else s for s in stats]
    budget = doc.get("budget")
    if isinstance(budget, dict):
        out["budget"] = {"unit": "person", "contributions": 1, "truncate": False, **budget}
    return out


#: MIGRATIONS[v] turns a version-v document into version v + 1.
MIGRATIONS: dict[int, Callable[[dict], dict]] = {0: _migrate_0_to_1, 1: _migrate_1_to_2}

#: What a plan read from an older version is told (``Plan.notes``), by the version it was.
MIGRATION_NOTES = {
    1: ("this plan was written before statistics said how their noise is implemented: every "
        "statistic keeps the continuous noise it was planned with (choose OpenDP noise per "
        "statistic to plan exactly what an exported release script adds); it had no unit of "
        "privacy or grouping either: each person contributes one row (c = 1) and no statistic is "
        f"grouped, as it was planned; saving writes format_version {FORMAT_VERSION}"),
}


def migrate(doc: dict) -> dict:
    version = doc.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise PlanFileError(f"not a dpplanner plan: 'format_version' must be a whole number, got "
                            f"{preview(version)}")
    if version > FORMAT_VERSION:
        raise PlanFileError(f"this plan was written by a newer dpplanner (format_version {version}); "
                            f"this version reads format_version up to {FORMAT_VERSION}: please "
                            "upgrade dpplanner")
    if version < 0:
        raise PlanFileError(f"format_version {version} is not a valid version")
    while version < FORMAT_VERSION:
        doc = MIGRATIONS[version](doc)
        version += 1
    return doc


def migration_notes(version) -> tuple[str, ...]:
    """The notes for a plan read from ``version`` (the newest migration that applies first)."""
    if isinstance(version, bool) or not isinstance(version, int):
        return ()
    return tuple(MIGRATION_NOTES[v] for v in sorted(MIGRATION_NOTES) if v >= version)


# --- parsing -----------------------------------------------------------------------------------

def parse_document(text: str) -> dict:
    """JSON text -> the current-version document dict (migrated). Raises PlanFileError."""
    return read_document(text)[0]


def read_document(text: str) -> tuple[dict, object]:
    """JSON text -> (the migrated document, the format_version it was written with)."""
    if len(text) > MAX_FILE_BYTES:
        raise PlanFileError(f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    doc = jsontext.check_text(text)
    if not isinstance(doc, dict):
        raise PlanFileError("not a dpplanner plan: the file must hold a JSON object")
    stats = doc.get("statistics")
    if isinstance(stats, list) and len(stats) > MAX_STATISTICS:
        raise PlanFileError(f"the plan has {len(stats)} statistics; at most {MAX_STATISTICS} are "
                            "allowed")
    return migrate(doc), doc.get("format_version")


_BUDGET_FIELDS = field_names(Budget)
_STAT_FIELDS = field_names(Statistic)
_TOP_FIELDS = ("format_version", "app", "title", "description", "budget", "statistics")
#: A version-0 file's names of required fields, for the message when one is missing.
_VERSION_0_NAMES = {"epsilon": "global_epsilon", "delta": "global_delta", "kind": "type"}

# --- required fields and defaults ---------------------------------------------------------------
# A field the plan cannot do without is required: a file without it is refused, naming it (a
# missing budget epsilon once became 1 without a word). Every other field is optional, with the
# default below (docs/reference/file-format.md); ``defaults_used`` lists those a file relied on
# (``Plan.defaults``, which `dpplanner-cli validate` prints).
REQUIRED_TOP = ("format_version", "budget", "statistics")
REQUIRED_BUDGET = ("epsilon", "delta")
#: A statistic needs these, plus ``mechanism`` (the noise) unless it is custom, whose ``delta``
#: is required instead.
REQUIRED_STATISTIC = ("name", "kind", "epsilon")


def _defaults(cls, required: tuple[str, ...]) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(cls)
            if f.name != "extra" and f.name not in required}


#: A file that names no theorem was planned under the old default (new plans: DEFAULT_THEOREM).
BUDGET_DEFAULTS = {**_defaults(Budget, REQUIRED_BUDGET), "theorem": LEGACY_THEOREM}
STATISTIC_DEFAULTS = _defaults(Statistic, REQUIRED_STATISTIC)
TOP_DEFAULTS = {"title": "", "description": ""}


#: A statistic's grouping fields: written (and their defaults noted) only when it is grouped.
GROUPING_FIELDS = ("group_by", "groups", "group_keys", "one_group_each", "max_groups", "max_rows",
                   "select_groups", "selection_share")


def _required_of(stat: dict) -> tuple[str, ...]:
    custom = stat.get("kind") in (Kind.CUSTOM, Kind.CUSTOM.value)
    return REQUIRED_STATISTIC + (("delta",) if custom else ("mechanism",))


def _missing(where: str, key: str, version: object) -> PlanFileError:
    old = _VERSION_0_NAMES.get(key) if version == 0 else None
    also = f" ('{old}' in a format_version 0 file)" if old else ""
    return PlanFileError(f"{where} has no '{key}'{also}: the field is required")


def budget_from_dict(d: Any, version: object = FORMAT_VERSION) -> Budget:
    if not isinstance(d, dict):
        raise PlanFileError("'budget' must be an object")
    for key in REQUIRED_BUDGET:
        if key not in d:
            raise _missing("the budget", key, version)
    known = {k: d[k] for k in _BUDGET_FIELDS if k in d}
    known.setdefault("theorem", LEGACY_THEOREM)
    if "neighbouring" in known:
        known["neighbouring"] = _enum(Neighbouring, known["neighbouring"], "budget: neighbouring")
    extra = {k: v for k, v in d.items() if k not in _BUDGET_FIELDS}
    return Budget(**known, extra=extra)


def statistic_from_dict(d: Any, index: int, version: object = FORMAT_VERSION) -> Statistic:
    if not isinstance(d, dict):
        raise PlanFileError(f"statistic {index + 1} must be an object, got {type(d).__name__}")
    known = {k: d[k] for k in _STAT_FIELDS if k in d}
    if "name" not in known:
        raise _missing(f"statistic {index + 1}", "name", version)
    if "kind" in known:
        known["kind"] = _enum(Kind, known["kind"], f"statistic {index + 1}: kind")
    for key in _required_of(known):
        if key not in known:
            raise _missing(f"statistic {index + 1} ({preview(known['name'])})", key, version)
    for key, cls in (("mechanism", Mechanism), ("noise", Noise)):
        if key in known:
            known[key] = _enum(cls, known[key], f"statistic {index + 1}: {key}")
    extra = {k: v for k, v in d.items() if k not in _STAT_FIELDS}
    return Statistic(**known, extra=extra)


def defaults_used(doc: dict) -> list[str]:
    """The optional fields a (valid, migrated) document leaves out, each with the default the plan
    took: "budget reserve = 0.0", "statistics 1-3, 5: weight = 1.0" (a custom statistic's
    mechanism is not listed: it has none)."""
    notes = [f"{key} = {_shown(value)}" for key, value in TOP_DEFAULTS.items() if key not in doc]
    budget = doc.get("budget", {})
    notes += [f"budget {key} = {_shown(value)}" for key, value in BUDGET_DEFAULTS.items()
              if key not in budget]
    rows: dict[str, list[int]] = {}
    for i, stat in enumerate(doc.get("statistics", [])):
        required = _required_of(stat)
        # an ungrouped statistic's grouping fields are not written (plan_to_document): not a default
        # the file relied on
        skip = GROUPING_FIELDS if not stat.get("group_by") else ()
        for key in STATISTIC_DEFAULTS:
            if key not in stat and key not in required and key not in skip and \
                    not (key == "mechanism" and "delta" in required):
                rows.setdefault(key, []).append(i + 1)
    notes += [f"{_rows(numbers)}: {key} = {_shown(STATISTIC_DEFAULTS[key])}"
              for key, numbers in rows.items()]
    return notes


def _shown(value: Any) -> str:
    return "null" if value is None else json.dumps(value.value if hasattr(value, "value") else value)


def _rows(numbers: list[int]) -> str:
    """"statistic 4" or "statistics 1-3, 5" (at most 10 ranges, then "… (N in all)")."""
    if len(numbers) == 1:
        return f"statistic {numbers[0]}"
    ranges, start = [], numbers[0]
    for prev, n in zip(numbers, numbers[1:] + [None]):
        if n is None or n != prev + 1:          # a range ends at prev
            ranges.append(str(start) if start == prev else f"{start}-{prev}")
            start = n
    text = ", ".join(ranges[:10]) + (f", … ({len(numbers)} in all)" if len(ranges) > 10 else "")
    return f"statistics {text}"


def _enum(cls, value, where: str):
    try:
        return parse_enum(cls, value, where)
    except ValueError as exc:
        raise PlanFileError(str(exc)) from None


def plan_from_document(doc: dict, version: object = FORMAT_VERSION) -> Plan:
    """A migrated document's plan; ``version``: the format_version the file was written with
    (a missing required field is named by its old name too)."""
    for key in REQUIRED_TOP:
        if key not in doc:
            raise _missing("the plan", key, version)
    stats_raw = doc["statistics"]
    if not isinstance(stats_raw, list):
        raise PlanFileError("'statistics' must be a list")
    for key in ("title", "description"):
        if not isinstance(doc.get(key, ""), str):
            raise PlanFileError(f"'{key}' must be text")
    budget = budget_from_dict(doc["budget"], version)
    stats = [statistic_from_dict(s, i, version) for i, s in enumerate(stats_raw)]
    extra = {k: v for k, v in doc.items() if k not in _TOP_FIELDS}
    try:
        return Plan(budget, stats, title=doc.get("title", ""),
                    description=doc.get("description", ""), extra=extra)
    except PlanError as exc:
        raise PlanFileError(str(exc)) from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise PlanFileError(f"the plan is not valid: {exc}") from None


def loads_plan(text: str) -> Plan:
    """Parse .dpplan text into a validated Plan (with ``notes`` when it was migrated from an older
    format version, and ``defaults``: each default a missing optional field took, see
    ``defaults_used``). Raises PlanFileError (only)."""
    doc, version = read_document(text)
    plan = plan_from_document(doc, version)
    plan.notes = migration_notes(version)
    plan.defaults = tuple(defaults_used(doc))
    return plan


def load_plan(path: str | os.PathLike) -> Plan:
    """Read and validate a plan file; PlanFileError naming the path. Opening a file also removes
    its stale temporary files (what a crash during a save leaves, see ``fileio``)."""
    path = Path(path)
    raw = read_regular_file(path, MAX_FILE_BYTES)
    target = resolve_target(path)
    remove_stale_temporaries(target.parent, plan_leftovers(target))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise PlanFileError(f"{path}: the file is not UTF-8 text") from None
    try:
        return loads_plan(text)
    except PlanFileError as exc:
        raise PlanFileError(f"{path}: {exc}") from None


# --- writing -----------------------------------------------------------------------------------

def plan_to_document(plan: Plan) -> dict:
    b = plan.budget
    budget = {"epsilon": b.epsilon, "delta": b.delta, "delta_split": b.delta_split,
              "confidence": b.confidence, "eta": b.eta, "theorem": b.theorem,
              "redistribute": b.redistribute, "neighbouring": b.neighbouring.value,
              "dataset_size": b.dataset_size, "population": b.population, "reserve": b.reserve,
              "unit": b.unit, "contributions": b.contributions, "truncate": b.truncate}
    budget.update({k: v for k, v in b.extra.items() if k not in budget})
    stats = []
    for s in plan.statistics:
        d = {"name": s.name, "variable": s.variable, "kind": s.kind.value,
             "mechanism": s.mechanism.value, "epsilon": s.epsilon, "delta": s.delta,
             "weight": s.weight, "held": s.held, "target_error": s.target_error,
             "repetitions": s.repetitions, "lower": s.lower,
             "upper": s.upper, "bins": s.bins, "granularity": s.granularity, "n": s.n,
             "description": s.description, "noise": s.noise.value, "integer": s.integer}
        if s.group_by:      # (an ungrouped statistic has the defaults: not written)
            d.update({key: getattr(s, key) for key in GROUPING_FIELDS})
        d.update({k: v for k, v in s.extra.items() if k not in d})
        stats.append(d)
    doc = {"format_version": FORMAT_VERSION, "app": "dpplanner", "title": plan.title,
           "description": plan.description, "budget": budget, "statistics": stats}
    doc.update({k: v for k, v in plan.extra.items() if k not in doc})
    return doc


def dumps_plan(plan: Plan) -> str:
    """The text save_plan writes: indented JSON, or compact JSON when indentation would pass the
    reader's size limit; checked with the reader's own limits. Raises PlanFileError."""
    return document_text(plan_to_document(plan))


def document_text(doc: dict) -> str:
    """``dumps_plan`` of the plan ``doc`` is the document of (``plan_to_document``): the costly
    half, which needs no Plan (the window's autosave runs it off the GUI thread)."""
    return jsontext.encode(doc, MAX_FILE_BYTES).decode("utf-8")


def save_plan(plan: Plan, path: str | os.PathLike) -> Optional[str]:
    """Save atomically, through symbolic links; PlanFileError naming the path if the plan cannot
    be written (the old file is then untouched: also when it is read-only). Returns a note for the
    user when there is one (the old file's other hard links keep its old contents), else None."""
    try:
        data = jsontext.encode(plan_to_document(plan), MAX_FILE_BYTES)
    except PlanFileError as exc:
        raise PlanFileError(f"{path}: cannot save the plan: {exc}; the file was not changed"
                            ) from None
    try:
        return atomic_write(path, data)
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot save the plan: {exc.strerror or exc}") from None
