"""The command line's commands and options (argparse), each bound to its function."""

from __future__ import annotations

import argparse

import dpplanner
from dpplanner.cli.budget_commands import cmd_allocate, cmd_target
from dpplanner.cli.long_work import add_time_limit
from dpplanner.cli.output import UserError, load, print_json
from dpplanner.cli.release_commands import add_commands
from dpplanner.cli.totals_commands import cmd_compose, cmd_curve, cmd_report, cmd_validate
from dpplanner.engine.theorems import ALLOCATION_THEOREMS, THEOREMS
from dpplanner.model.examples import example_paths
from dpplanner.model.validation import BUDGET_RULES, FIELD_RULES

DESCRIPTION = """\
Plan differential-privacy budgets from the command line.

A plan (.dpplan file) lists the statistics you want to release from one dataset and a global
budget (epsilon_g, delta_g). These commands show what the plan costs in total under every
composition theorem, redistribute the budget, and export curves and reports.
PLAN is a path to a .dpplan file or the name of a shipped example (%s).
"""

EPILOG = """\
examples:
  dpplanner-cli compose census                 totals under every theorem
  dpplanner-cli allocate my.dpplan -o new.dpplan   rebalance and save
  dpplanner-cli target my.dpplan "mean age" 0.5 -o my.dpplan   pin an error, rebalance, save
  dpplanner-cli curve census --theorem optimal -o curve.csv
  dpplanner-cli report census -o report.html
  dpplanner-cli report big.dpplan -o report.html --time-limit 20   sound bounds within ~20 s
  dpplanner-cli validate my.dpplan --json
  dpplanner-cli export-opendp census -o release.py   OpenDP release script
  dpplanner-cli check-opendp release.py census       does it still match the plan?
"""


def build_parser() -> argparse.ArgumentParser:
    names = ", ".join(example_paths()) or "none found"
    parser = argparse.ArgumentParser(prog="dpplanner-cli", description=DESCRIPTION % names,
                                     epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"dpplanner-cli {dpplanner.__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    def add(name, help_text, func):
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("plan", metavar="PLAN", help=".dpplan file or example name")
        p.add_argument("--json", action="store_true", help="print one JSON document instead of text")
        p.set_defaults(func=func)
        return p

    p = add("compose", "total epsilon and delta of the plan under every composition theorem "
            "(certified bracket and time; the best valid one marked *)", cmd_compose)
    p.add_argument("--theorem", action="append", choices=THEOREMS,
                   help="only this theorem (repeatable; default: all)")
    add_time_limit(p)
    p = add("allocate", "redistribute the global budget over the free statistics (held ones keep "
            "their epsilon) and print each statistic's epsilon, delta and error", cmd_allocate)
    p.add_argument("-o", "--output", metavar="OUT", help="save the rebalanced plan to OUT")
    p.add_argument("--theorem", choices=ALLOCATION_THEOREMS,
                   help="theorem to spend the budget under (default: the plan's)")
    add_time_limit(p)
    p = add("target", "pin a statistic at a target error: it gets the epsilon that error needs, "
            "now and after every later change of the plan; the free statistics are redistributed",
            cmd_target)
    p.add_argument("statistic", metavar="STATISTIC", help="its number (from 1) or its name")
    p.add_argument("error", metavar="ERROR", help="the target error, in the statistic's own units "
                   f"({FIELD_RULES['error'].describe()})")
    p.add_argument("-o", "--output", metavar="OUT", help="save the plan with the target to OUT")
    add_time_limit(p)
    p = add("curve", "total epsilon of the first k queries (plan order) for k = 1..K, as CSV",
            cmd_curve)
    p.add_argument("--theorem", action="append", choices=THEOREMS,
                   help="only this theorem (repeatable; default: all)")
    p.add_argument("-o", "--output", metavar="CSV", help="write the CSV here instead of stdout")
    p.add_argument("--points", type=int, default=100,
                   help="evaluate at about this many k values (default 100)")
    p.add_argument("--eta", default=None,
                   help=f"engine accuracy for the optimal curve, {BUDGET_RULES['eta'].describe()} "
                        "(default: the plan's eta, at least 0.01 above 200 queries)")
    add_time_limit(p)
    p = add("report", "write a self-contained HTML report (budgets, errors, totals, plot)", cmd_report)
    p.add_argument("-o", "--output", metavar="HTML", required=True, help="where to write the report")
    add_time_limit(p)
    p = add("validate", "check a plan file; print warnings, and a note for each default a missing "
            "optional field took", cmd_validate)
    add_time_limit(p)
    add_commands(sub, load, print_json, UserError)
    return parser
