#!/usr/bin/env python3
# @@HEADER@@
"""Release the statistics of a dpplanner plan with OpenDP, after checking them against the plan.

Needs OpenDP 0.16 (pip install "opendp==0.16.*"); nothing else outside Python's standard library.

    python release.py DATA.csv [--column STATISTIC=COLUMN ...] [--categories STATISTIC=a,b,c ...]
                      [--out FOLDER] [--check-only]

(a statistic by group reads its group from the column --column "STATISTIC (group)=COLUMN" names)

In order, it: reads the CSV (first row: column names); builds every statistic's OpenDP measurement
from ONE input domain (the dataset's records) at the plan's noise scale; checks, before releasing
anything, each measurement's privacy map against the plan, the domain's size and clamping bounds,
and that the measurements reproduce the per-release parameters the plan's total was certified for
(a statistic by group: one measurement per group, each group's records only, at the plan's bounds
of groups and rows per individual; one whose groups are selected privately: that selection too);
then releases each statistic once and writes the values with their error at the plan's confidence
to FOLDER/release.csv, FOLDER/release.json and a short record FOLDER/release-record.txt.
If any check fails it releases nothing and says which check failed and why.

Edit only the DATA block (or use the options) and the CUSTOM block. The PLAN block is what the plan
certified; `dpplanner-cli check-opendp release.py PLAN` tells whether this script still matches it.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import math
import sys
import warnings
from importlib.metadata import version as installed_version
from pathlib import Path

# ==== DATA: which file and columns hold the data (the command-line options override these) ====
# @@DATA@@
# ==== end of DATA ===============================================================================

# ==== CUSTOM: statistics dpplanner does not model; write each one before running ================
# @@CUSTOM@@
# ==== end of CUSTOM =============================================================================

# ==== PLAN: written by dpplanner from the plan; do not edit (the checks compare against it) ======
# @@PLAN@@
# ==== end of PLAN ===============================================================================

SEPARATOR = "\x1f"                   # joins a record's fields into one string (never in CSV text)
OUTSIDE = "\x1e"                     # a group field that matches no group (a row over the bounds)
EACH_GROUP = "(each selected group)"  # the cell checked for every group a selection may keep
TRUE_WORDS = {"1", "true", "yes", "y", "t"}
SCALE_RAISE_LIMIT = 1e-9             # OpenDP's own rounding may raise a scale by at most this


class Refused(Exception):
    """A check failed: nothing is released."""


def digest(plan: dict) -> str:
    return hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()


# --- reading ----------------------------------------------------------------------------------

def read_records(path: str, columns: list[str], id_column=None) -> tuple[list[str], list]:
    """The CSV's rows as records (the needed columns' texts joined by SEPARATOR) and each row's
    individual (the ID column's text; None for every row when there is no ID column)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.reader(handle)
        header = [name.strip() for name in next(reader, [])]
        missing = [c for c in columns + ([id_column] if id_column else []) if c not in header]
        if missing:
            raise Refused(f"{path}: no column named {', '.join(map(repr, missing))} (the file has: "
                          f"{', '.join(header) or 'no header row'}); set COLUMNS, GROUP_COLUMNS, ID_COLUMN "
                          f"or the options (--column, --id-column)")
        where = [header.index(c) for c in columns]
        at = header.index(id_column) if id_column else None
        records, ids = [], []
        for row in reader:
            fields = [row[i] if i < len(row) else "" for i in where]
            if any(SEPARATOR in f for f in fields):
                raise Refused(f"{path}, line {reader.line_num}: a value holds the control character "
                              "U+001F, which this script uses to join fields")
            records.append(SEPARATOR.join(fields))
            ids.append(None if at is None else (row[at].strip() if at < len(row) else ""))
    return records, ids


def bound_rows(plan: dict, records: list[str], ids: list) -> tuple[list[str], list]:
    """Each individual's rows bounded by the plan's c: the first c rows of each individual kept
    (in file order) when the plan truncates; otherwise the data must already hold at most c rows
    per individual, which is checked when an ID column is given. Every check after this one, and
    every statistic, sees the bounded records (d_in of the plan: c rows per individual)."""
    c, unit = plan["contributions"], plan["unit"]
    if ids and ids[0] is None:
        if plan["truncate"]:
            raise Refused(f"the plan keeps at most {c} row(s) per {unit}: set ID_COLUMN (or --id-column) "
                          f"to the column that identifies each {unit}")
        return records, ids
    seen, kept, kept_ids = {}, [], []
    for record, who in zip(records, ids):
        seen[who] = seen.get(who, 0) + 1
        if seen[who] <= c:
            kept.append(record)
            kept_ids.append(who)
        elif not plan["truncate"]:
            raise Refused(f"the {unit} {who!r} has more than {c} row(s), the most the plan allows "
                          f"(the data were to guarantee it); fix the data or let the plan truncate")
    return kept, kept_ids


def bound_groups(plan: dict, stat: dict, records: list[str], ids: list, position: int) -> list[str]:
    """A statistic by group sees each individual in at most L0 groups ("max_groups") with at most
    L_inf rows ("max_rows") in any one: with an ID column, rows beyond (in file order) are moved
    out of every group when the plan truncates, refused otherwise; without one the data must
    guarantee it, as for c. The records keep their number (a sized domain keeps its size)."""
    if not ids or ids[0] is None:
        return records
    groups, rows, out = {}, {}, []
    for record, who in zip(records, ids):
        fields = record.split(SEPARATOR)
        key = fields[position]
        mine = groups.setdefault(who, [])
        if key not in mine and len(mine) < stat["max_groups"]:
            mine.append(key)
        rows[who, key] = rows.get((who, key), 0) + 1
        if key not in mine or rows[who, key] > stat["max_rows"]:
            if not plan["truncate"]:
                raise Refused(f"statistic {stat['name']!r}: the {plan['unit']} {who!r} has rows in more "
                              f"than {stat['max_groups']} group(s) or more than {stat['max_rows']} row(s) "
                              f"in group {key!r}, beyond the plan's bounds (the data were to guarantee it)")
            fields[position] = OUTSIDE
        out.append(SEPARATOR.join(fields))
    return out


# --- building the measurements ----------------------------------------------------------------

def dataset_space(dp, plan: dict):
    """The one input domain every measurement starts from: the records, of the plan's known size
    under replace-one (a sized domain), with the symmetric distance."""
    domain = dp.vector_domain(dp.atom_domain(T=str), size=plan["size"])
    return domain, dp.symmetric_distance()


def select(dp, space, position, indicator: bool):
    """Each record's field at ``position`` (a 0/1 indicator for counts and proportions; every
    record counts when ``position`` is None). A record-by-record map: 1-stable."""
    def pick(records):
        values = ["1" for _ in records] if position is None else [r.split(SEPARATOR)[position] for r in records]
        if indicator:
            values = ["1" if v.strip().lower() in TRUE_WORDS else "0" for v in values]
        return values
    return dp.t.make_user_transformation(space[0], space[1], space[0], space[1], function=pick,
                                         stability_map=lambda d_in: d_in)


def in_group(dp, space, position: int, key: str):
    """The records of one group (its field at ``position`` is ``key``): a filter, 1-stable; its
    output has no fixed size (a group's size is not public)."""
    inner = dp.vector_domain(dp.atom_domain(T=str))
    return dp.t.make_user_transformation(
        space[0], space[1], inner, space[1], stability_map=lambda d_in: d_in,
        function=lambda records: [r for r in records if r.split(SEPARATOR)[position] == key])


def query(dp, plan: dict, stat: dict, space, position, categories, start=None):
    """The transformation whose output OpenDP noises (see the plan's sensitivity table); after
    ``start`` (a group's filter) when given."""
    kind, bounds = stat["kind"], stat.get("bounds")
    chosen = select(dp, space if start is None else (start.output_domain, start.output_metric),
                    position, kind in ("count", "proportion"))
    chosen = chosen if start is None else start >> chosen
    if kind in ("count", "proportion"):
        return chosen >> dp.t.then_cast_default(TOA=dp.i64) >> dp.t.then_clamp(bounds=(0, 1)) >> dp.t.then_sum()
    if kind == "histogram":
        metric = dp.L2Distance[int] if stat["noise"] == "gaussian" else dp.L1Distance[int]
        return chosen >> dp.t.then_count_by_categories(categories=categories, null_category=False, MO=metric)
    if stat["integer"]:
        lo, hi = int(bounds[0]), int(bounds[1])
        values = (chosen >> dp.t.then_cast(TOA=dp.i64) >> dp.t.then_impute_constant(int(stat["missing"]))
                  >> dp.t.then_clamp(bounds=(lo, hi)))
    else:
        lo, hi = float(bounds[0]), float(bounds[1])
        values = (chosen >> dp.t.then_cast(TOA=float) >> dp.t.then_impute_constant(float(stat["missing"]))
                  >> dp.t.then_clamp(bounds=(lo, hi)))
    if kind == "quantile":
        cells = values >> dp.t.then_find_bin(edges=stat["edges"])
        metric = dp.L2Distance[int] if stat["noise"] == "gaussian" else dp.L1Distance[int]
        return cells >> dp.t.then_count_by_categories(categories=list(range(stat["cells"])),
                                                      null_category=False, MO=metric)
    if (plan["size"] is None or start is not None) and not stat["integer"]:
        limit = stat.get("size_limit") or plan["size_limit"]     # (a group's: its own, unsized)
        return values >> dp.t.make_bounded_float_checked_sum(limit, (lo, hi))
    return values >> dp.t.then_sum()


def noise(dp, stat: dict, space, scale: float):
    """The noise alone, on the query's output space: discrete Laplace or Gaussian, on the
    integers or (real values) on the plan's lattice of spacing 2^k."""
    make = dp.m.make_gaussian if stat["noise"] == "gaussian" else dp.m.make_laplace
    return make(space[0], space[1], scale=scale, **({} if stat["k"] is None else {"k": stat["k"]}))


def noised(dp, stat: dict, transformation, d_in: int):
    """The measurement at the plan's scale, raised only as far as OpenDP's rounding needs for its
    map at the cell's d_in to stay within the plan's bound (an epsilon for Laplace noise, a rho
    for Gaussian noise)."""
    bound = stat["map_bound"]
    output = (transformation.output_domain, transformation.output_metric)
    scale = stat["scale"]
    for _ in range(64):
        measurement = transformation >> noise(dp, stat, output, scale)
        if measurement.map(d_in) <= bound:
            break
        scale = math.nextafter(scale, math.inf)
    return measurement, scale


def build(dp, plan: dict, columns: dict, categories: dict, groups=None):
    """Every statistic's cells, from one input domain: [(group key or None, transformation,
    measurement, scale used)], one per group of a statistic by group. A statistic whose groups
    are selected privately has its selection first (key None, no transformation) and one cell
    for EACH_GROUP, checked for all: the selected groups' cells are built alike once selected."""
    space = dataset_space(dp, plan)
    built = {}
    for stat in plan["statistics"]:
        if "selection" in stat:
            first, keys = [(None, None, *selector(dp, stat))], [EACH_GROUP]
        else:
            first, keys = [], (groups or {}).get(stat["name"], []) if "group_by" in stat else [None]
        built[stat["name"]] = first + [cell(dp, plan, stat, space, columns, categories, key)
                                       for key in keys]
    return space, built


def cell(dp, plan: dict, stat: dict, space, columns: dict, categories: dict, key):
    """(key, transformation, measurement, scale used) of one cell: the statistic's query on the
    group's records (all records when ``key`` is None), noised at the plan's scale."""
    order = needed_columns(plan, columns)
    column = columns.get(stat["name"], stat["column"])
    position = order.index(column) if column else None
    start = None if key is None else in_group(dp, space, order.index(group_column(stat, columns)), key)
    transformation = query(dp, plan, stat, space, position, categories.get(stat["name"]), start)
    return (key, transformation, *noised(dp, stat, transformation, stat["d_in"]))


def group_column(stat: dict, columns: dict) -> str:
    return columns.get(stat["name"] + " (group)", stat.get("group_by", ""))


def needed_columns(plan: dict, columns: dict) -> list[str]:
    names = [columns.get(s["name"], s["column"]) for s in plan["statistics"]]
    names += [group_column(s, columns) for s in plan["statistics"] if "group_by" in s]
    return sorted({n for n in names if n})


# @@CHECKS@@


# @@SELECTION@@


# @@RELEASING@@


# --- command line -----------------------------------------------------------------------------

def pairs(texts, what: str) -> dict:
    out = {}
    for text in texts or []:
        name, sep, value = text.partition("=")
        if not sep:
            raise SystemExit(f"--{what} {text!r}: write STATISTIC=VALUE")
        out[name.strip()] = value
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", default=DATA_FILE, help="the CSV file (default: DATA_FILE)")
    parser.add_argument("--column", action="append", metavar="STATISTIC=COLUMN")
    parser.add_argument("--id-column", default=ID_COLUMN, metavar="COLUMN",
                        help="the column identifying each protected individual (default: ID_COLUMN)")
    parser.add_argument("--categories", action="append", metavar="STATISTIC=a,b,c")
    parser.add_argument("--groups", action="append", metavar="STATISTIC=a,b,c",
                        help="a statistic by group's group keys (default: GROUPS)")
    parser.add_argument("--out", default=OUT_DIR, help=f"output folder (default {OUT_DIR})")
    parser.add_argument("--check-only", action="store_true", help="run every check, release nothing")
    args = parser.parse_args(argv)
    if not args.data:
        parser.error("give the data file (or set DATA_FILE in the DATA block)")
    try:
        import opendp.prelude as dp
    except ImportError:
        print('refused: OpenDP is not installed: pip install "opendp==0.16.*"', file=sys.stderr)
        return 2
    dp.enable_features("contrib", "honest-but-curious")   # the field selector is a user transformation
    warnings.simplefilter("ignore", DeprecationWarning)
    # (the options after the DATA block: a group column given as --column "X (group)=C" is read)
    columns = {**COLUMNS, **{f"{k} (group)": v for k, v in GROUP_COLUMNS.items()},
               **pairs(args.column, "column")}
    categories = dict(CATEGORIES, **{k: v.split(",") for k, v in pairs(args.categories, "categories").items()})
    groups = dict(GROUPS, **{k: v.split(",") for k, v in pairs(args.groups, "groups").items()})
    try:
        order = needed_columns(PLAN, columns)
        records, ids = read_records(args.data, order, args.id_column)
        records, ids = bound_rows(PLAN, records, ids)
        bounded = {s["name"]: bound_groups(PLAN, s, records, ids, order.index(group_column(s, columns)))
                   for s in PLAN["statistics"] if "group_by" in s}
        space, built = build(dp, PLAN, columns, categories, groups)
        customs = {item["name"]: CUSTOM_BUILDERS[item["name"]](dp, space) for item in PLAN["custom"]}
        failures = check_all(dp, PLAN, PLAN_DIGEST, records, space, built, categories, customs, groups)
        if failures:
            raise Refused("\n".join(f"  - {f}" for f in failures))
    except (Refused, OSError) as exc:
        print(f"refused: nothing was released:\n{exc}", file=sys.stderr)
        return 1
    print(f"all checks passed: {len(PLAN['statistics'])} statistics match the plan "
          f"{PLAN['title']!r}")
    if args.check_only:
        return 0
    try:        # the selections run only now, every check passed; nothing is written if one refuses
        for stat in (s for s in PLAN["statistics"] if "selection" in s):
            position = order.index(group_column(stat, columns))
            counts = distinct_counts(stat, bounded[stat["name"]], ids, position)
            built[stat["name"]] = select_groups(dp, PLAN, stat, built[stat["name"]], counts, space,
                                                columns, categories)
    except Refused as exc:
        print(f"refused: nothing was released:\n{exc}", file=sys.stderr)
        return 1
    rows = release(PLAN, built, categories, records, {k: v for k, v in customs.items()}, bounded)
    write_outputs(Path(args.out), PLAN, rows)
    print(f"released {len(rows)} values to {args.out}/release.csv, release.json and release-record.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
