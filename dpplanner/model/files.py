"""The .dpplan file format: versioned JSON, step-by-step migrations, atomic saves, hostile input.

Layout of format_version 1 (documented in the README, section "plan"):

    {"format_version": 1, "app": "dpplanner", "title": str, "description": str,
     "budget": {"epsilon", "delta", "delta_split", "confidence", "eta", "theorem", "redistribute",
                "neighbouring", "dataset_size", "population", "reserve"},
     "statistics": [{"name", "variable", "kind", "mechanism", "epsilon", "delta", "weight", "held",
                     "repetitions", "lower", "upper", "bins", "granularity", "n", "description"}]}

Unknown fields at any of the three levels are kept (``extra``) and written back. Version 0 is the
earlier PSI-style layout (flat global_epsilon/global_delta/delta_fraction, statistics with
"type", "hold" and a nested "metadata"); ``MIGRATIONS[0]`` turns it into version 1.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any, Callable

from .plan import Plan
from .statistic import Budget, Kind, Mechanism, Neighbouring, Statistic, parse_enum
from .validation import MAX_STATISTICS, PlanError

FORMAT_VERSION = 1
SUFFIX = ".dpplan"
#: Hostile-file limits: checked before or while parsing so a bad file fails fast.
MAX_FILE_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 32
MAX_INT_DIGITS = 30


class PlanFileError(ValueError):
    """A plan file cannot be read or written; the message says why (and where, if known)."""


# --- migrations --------------------------------------------------------------------------------

def _migrate_0_to_1(doc: dict) -> dict:
    """Version 0 (PSI-style): flat budget keys, "type" for kind, "hold", nested "metadata"."""
    out: dict[str, Any] = {k: v for k, v in doc.items()
                           if k not in ("format_version", "global_epsilon", "global_delta",
                                        "delta_fraction", "statistics", "neighbouring")}
    out["format_version"] = 1
    budget: dict[str, Any] = {}
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


#: MIGRATIONS[v] turns a version-v document into version v + 1.
MIGRATIONS: dict[int, Callable[[dict], dict]] = {0: _migrate_0_to_1}


def migrate(doc: dict) -> dict:
    version = doc.get("format_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise PlanFileError(f"not a dpplanner plan: 'format_version' must be a whole number, got "
                            f"{version!r}")
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


# --- parsing -----------------------------------------------------------------------------------

def _reject_constant(name: str):
    raise PlanFileError(f"the file contains {name}, which is not a valid number here")


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise PlanFileError(f"the number {text[:40]} is too large")
    return value


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise PlanFileError(f"a whole number with {len(text)} digits is too large")
    return int(text)


def _check_depth(value: Any) -> None:
    """Iteratively bound the nesting (unknown fields may hold anything)."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise PlanFileError(f"the file is nested more than {MAX_DEPTH} levels deep")
        if isinstance(v, dict):
            stack.extend((x, depth + 1) for x in v.values())
        elif isinstance(v, list):
            stack.extend((x, depth + 1) for x in v)


def parse_document(text: str) -> dict:
    """JSON text -> the version-1 document dict (migrated). Raises PlanFileError."""
    if len(text) > MAX_FILE_BYTES:
        raise PlanFileError(f"the file is larger than {MAX_FILE_BYTES // (1024 * 1024)} MB")
    try:
        doc = json.loads(text, parse_constant=_reject_constant, parse_float=_parse_float,
                         parse_int=_parse_int)
    except PlanFileError:
        raise
    except RecursionError:
        raise PlanFileError(f"the file is nested more than {MAX_DEPTH} levels deep") from None
    except (json.JSONDecodeError, ValueError) as exc:
        raise PlanFileError(f"the file is not valid JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise PlanFileError("not a dpplanner plan: the file must hold a JSON object")
    stats = doc.get("statistics")
    if isinstance(stats, list) and len(stats) > MAX_STATISTICS:
        raise PlanFileError(f"the plan has {len(stats)} statistics; at most {MAX_STATISTICS} are "
                            "allowed")
    _check_depth(doc)
    return migrate(doc)


_BUDGET_FIELDS = ("epsilon", "delta", "delta_split", "confidence", "eta", "theorem", "redistribute",
                  "neighbouring", "dataset_size", "population", "reserve")
_STAT_FIELDS = ("name", "variable", "kind", "mechanism", "epsilon", "delta", "weight", "held",
                "repetitions", "lower", "upper", "bins", "granularity", "n", "description")
_TOP_FIELDS = ("format_version", "app", "title", "description", "budget", "statistics")


def budget_from_dict(d: Any) -> Budget:
    if not isinstance(d, dict):
        raise PlanFileError("'budget' must be an object")
    known = {k: d[k] for k in _BUDGET_FIELDS if k in d}
    if "neighbouring" in known:
        known["neighbouring"] = _enum(Neighbouring, known["neighbouring"], "budget: neighbouring")
    extra = {k: v for k, v in d.items() if k not in _BUDGET_FIELDS}
    return Budget(**known, extra=extra)


def statistic_from_dict(d: Any, index: int) -> Statistic:
    if not isinstance(d, dict):
        raise PlanFileError(f"statistic {index + 1} must be an object, got {type(d).__name__}")
    known = {k: d[k] for k in _STAT_FIELDS if k in d}
    if "name" not in known:
        raise PlanFileError(f"statistic {index + 1} has no 'name'")
    for key, cls in (("kind", Kind), ("mechanism", Mechanism)):
        if key in known:
            known[key] = _enum(cls, known[key], f"statistic {index + 1}: {key}")
    extra = {k: v for k, v in d.items() if k not in _STAT_FIELDS}
    return Statistic(**known, extra=extra)


def _enum(cls, value, where: str):
    try:
        return parse_enum(cls, value, where)
    except ValueError as exc:
        raise PlanFileError(str(exc)) from None


def plan_from_document(doc: dict) -> Plan:
    stats_raw = doc.get("statistics", [])
    if not isinstance(stats_raw, list):
        raise PlanFileError("'statistics' must be a list")
    for key in ("title", "description"):
        if not isinstance(doc.get(key, ""), str):
            raise PlanFileError(f"'{key}' must be text")
    budget = budget_from_dict(doc.get("budget", {}))
    stats = [statistic_from_dict(s, i) for i, s in enumerate(stats_raw)]
    extra = {k: v for k, v in doc.items() if k not in _TOP_FIELDS}
    try:
        return Plan(budget, stats, title=doc.get("title", ""),
                    description=doc.get("description", ""), extra=extra)
    except PlanError as exc:
        raise PlanFileError(str(exc)) from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise PlanFileError(f"the plan is not valid: {exc}") from None


def loads_plan(text: str) -> Plan:
    """Parse .dpplan text into a validated Plan. Raises PlanFileError (only)."""
    return plan_from_document(parse_document(text))


def load_plan(path: str | os.PathLike) -> Plan:
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise PlanFileError(f"{path}: the file is {size} bytes; at most {MAX_FILE_BYTES} are "
                                "allowed")
        with open(path, "rb") as fh:
            raw = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot read the file: {exc.strerror or exc}") from None
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
              "dataset_size": b.dataset_size, "population": b.population, "reserve": b.reserve}
    budget.update({k: v for k, v in b.extra.items() if k not in budget})
    stats = []
    for s in plan.statistics:
        d = {"name": s.name, "variable": s.variable, "kind": s.kind.value,
             "mechanism": s.mechanism.value, "epsilon": s.epsilon, "delta": s.delta,
             "weight": s.weight, "held": s.held, "repetitions": s.repetitions, "lower": s.lower,
             "upper": s.upper, "bins": s.bins, "granularity": s.granularity, "n": s.n,
             "description": s.description}
        d.update({k: v for k, v in s.extra.items() if k not in d})
        stats.append(d)
    doc = {"format_version": FORMAT_VERSION, "app": "dpplanner", "title": plan.title,
           "description": plan.description, "budget": budget, "statistics": stats}
    doc.update({k: v for k, v in plan.extra.items() if k not in doc})
    return doc


def dumps_plan(plan: Plan) -> str:
    return json.dumps(plan_to_document(plan), indent=1, ensure_ascii=False, allow_nan=False) + "\n"


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write via a temporary file in the same folder, flushed and fsynced, then os.replace.

    A failure at any point leaves the previous file untouched and removes the temporary file.
    """
    path = Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        # mkstemp makes the file private; keep the old file's mode, or the umask default
        os.chmod(tmp, path.stat().st_mode & 0o777 if path.exists() else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    try:  # make the rename itself durable (POSIX); harmless where unsupported
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def save_plan(plan: Plan, path: str | os.PathLike) -> None:
    """Save atomically; raises PlanFileError with the reason if the file cannot be written."""
    text = dumps_plan(plan)
    try:
        atomic_write_text(path, text)
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot save the plan: {exc.strerror or exc}") from None
