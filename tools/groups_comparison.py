"""Write the census-tables comparison (grouping and the unit of privacy) into the README and the
groups guide, from the command line's own output.

    .venv/bin/python tools/groups_comparison.py          # rewrite both blocks
    .venv/bin/python tools/groups_comparison.py --check  # exit 1 if a block is not what it would write

The shipped example ``census-tables`` (resources/examples/generate.py) is compared with the same
tables entered as one ungrouped statistic per group, and with one row per person (c = 1) instead
of households of up to 4. Every number is read from ``dpplanner-cli allocate --json`` or
``dpplanner-cli compose --json`` run on the example and on the variants written to a temporary
folder; tests/test_groups_example.py fails when the docs and these runs drift apart.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "resources" / "examples"))

from dpplanner.model import display  # noqa: E402
from dpplanner.model.files import save_plan  # noqa: E402
from generate import census_tables  # noqa: E402

EXAMPLE = "census-tables"
#: The rows of the guide's table: (what the row says, the statistic in the grouped plan, the
#: statistic in the separate plan: its first group).
ROWS = (("population, one age group × sex × region cell", "population by age group × sex × region",
         "population 1"),
        ("mean income, one region", "mean income by region", "mean income north"),
        ("median rent, one region", "median rent by region", "median rent north"),
        ("share owners, one region", "share owners by region", "share owners north"),
        ("total persons", "total persons", "total persons"),
        ("national mean income", "national mean income", "national mean income"))
BLOCKS = {"readme": ROOT / "README.md", "guide": ROOT / "docs" / "guide" / "groups.md"}


def cli(*args: str) -> dict:
    """The JSON a ``dpplanner-cli`` command prints."""
    done = subprocess.run([sys.executable, "-m", "dpplanner.cli", *args, "--json"], cwd=ROOT,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def runs() -> dict:
    """What the command line says of the example and its variants."""
    with tempfile.TemporaryDirectory() as folder:
        separate, persons = Path(folder) / "separate.dpplan", Path(folder) / "persons.dpplan"
        shipped = cli("allocate", EXAMPLE)
        eps = {s["name"]: s["epsilon"] for s in shipped["statistics"]}
        plan = census_tables(grouped=False)
        # each group's statistic keeps the example's eps_i of its table: the same noise
        plan.replace_all([s.replace(epsilon=eps[_table_of(s.name, eps)]) for s in plan.statistics],
                         plan.budget.replace(redistribute=False))
        save_plan(plan, separate)
        save_plan(census_tables(contributions=1), persons)
        return {"shipped": shipped, "same_noise": cli("compose", str(separate)),
                "separate": cli("allocate", str(separate)), "persons": cli("allocate", str(persons))}


def _table_of(name: str, eps: dict) -> str:
    """The example's statistic a separate statistic comes from ("mean income north" -> "mean
    income by region")."""
    return next(t for t in eps if t == name or (" by " in t and name.startswith(t.split(" by ")[0] + " ")))


def _errors(result: dict) -> dict:
    return {s["name"]: (s["error_one_group"], s["units"]) for s in result["statistics"]}


def _cell(result: dict, name: str, words: bool = False) -> str:
    """One group's error as the command line prints it ("± 4,920"; with ``words``, "± 4,920
    income")."""
    value, units = _errors(result)[name]
    if words or units == "proportion":
        return display.error_with_units(value, units)
    return "± " + display.error_parts(value, units)[0]


def _k(result: dict) -> int:
    return len(result["statistics"])


def blocks(r: dict) -> dict[str, str]:
    """The Markdown of each block: a short table for the README, the whole comparison for the guide."""
    shipped, separate, persons = r["shipped"], r["separate"], r["persons"]
    spent = r["same_noise"]["totals"][r["same_noise"]["best"]]["epsilon"]
    budget = display.value(shipped["epsilon_g"])
    heading = "| the tables entered as | statistics | population, one cell | mean income, one region |"
    readme = "\n".join([
        heading, "|---|---|---|---|",
        f"| one statistic per table, households (c = 4): the example | {_k(shipped)} | "
        f"{_cell(shipped, ROWS[0][1])} | {_cell(shipped, ROWS[1][1])} |",
        f"| one statistic per group, households (c = 4) | {_k(separate)} | "
        f"{_cell(separate, ROWS[0][2])} | {_cell(separate, ROWS[1][2])} |",
        f"| one statistic per table, one row per person (c = 1) | {_k(persons)} | "
        f"{_cell(persons, ROWS[0][1])} | {_cell(persons, ROWS[1][1])} |",
        ""] + textwrap.wrap(
        f"Each plan spends ε = {budget}. Entered one statistic per group, the example's own noise "
        f"would be charged ε = {display.upper(spent, 3)}. With c = 1 the errors are smaller, but "
        "they protect one person, not a household.", 100))
    guide = ["| error (95 %) of | the example: grouped, households (c = 4) | one statistic per group, "
             "households (c = 4) | grouped, one row per person (c = 1) |", "|---|---|---|---|"]
    guide += [f"| {what} | {_cell(shipped, grouped, True)} | {_cell(separate, single, True)} | "
              f"{_cell(persons, grouped, True)} |" for what, grouped, single in ROWS]
    guide += [f"| statistics in the plan | {_k(shipped)} | {_k(separate)} | {_k(persons)} |",
              f"| total ε under pld | {display.upper(shipped['spent_epsilon'], 3)} | "
              f"{display.upper(separate['spent_epsilon'], 3)} | {display.upper(persons['spent_epsilon'], 3)} |",
              ""] + textwrap.wrap(
        f"With the example's own ε_i (the same noise), the {_k(separate)} separate statistics are "
        f"charged ε = {display.upper(spent, 3)} under {r['same_noise']['best']}, "
        f"{spent / shipped['spent_epsilon']:.1f} times the example's total.", 100)
    return {"readme": readme, "guide": "\n".join(guide)}


def markers(name: str) -> tuple[str, str]:
    return (f"<!-- census-tables comparison: written by tools/groups_comparison.py ({name}) -->",
            f"<!-- end of the census-tables comparison ({name}) -->")


def replaced(text: str, name: str, block: str) -> str:
    """``text`` with the block between its markers replaced by ``block``."""
    begin, end = markers(name)
    head, found, rest = text.partition(begin)
    if not found or end not in rest:
        raise SystemExit(f"{BLOCKS[name]}: no '{begin}' ... '{end}' block")
    return head + begin + "\n" + block + "\n" + end + rest.split(end, 1)[1]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a block differs")
    args = parser.parse_args(argv)
    stale = []
    for name, block in blocks(runs()).items():
        path = BLOCKS[name]
        old = path.read_text(encoding="utf-8")
        new = replaced(old, name, block)
        if new != old:
            stale.append(str(path.relative_to(ROOT)))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if stale and args.check:
        print("stale: " + ", ".join(stale) + " (run tools/groups_comparison.py)")
        return 1
    print(("rewrote " + ", ".join(stale)) if stale else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
