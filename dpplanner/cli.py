"""dpplanner-cli: the plan tools without a window.

Every command reads a .dpplan file (or the name of a shipped example, e.g. "census"), goes
through the same validation as the window, and prints plain text or, with --json, one JSON
document. Exit status: 0 on success, 2 on bad input (the message goes to stderr, no traceback).
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import math
import os
import sys
from pathlib import Path
from typing import Optional, Sequence

import dpplanner
from dpplanner.cli_release import add_commands
from dpplanner.cli_terminal import on_terminal, plain
from dpplanner.model import display
from dpplanner.model.implementation import implementation
from dpplanner.model.examples import example_paths
from dpplanner.model.files import PlanFileError, load_plan, save_plan
from dpplanner.model.plan import Plan
from dpplanner.model.redistribution import rebalance, rebalanced_edit
from dpplanner.model.safe_text import terminal
from dpplanner.model.report import plan_curve, plan_totals, save_report
from dpplanner.engine.theorems import ALLOCATION_THEOREMS, THEOREMS
from dpplanner.model.typed import parse_text
from dpplanner.model.spending import total_note
from dpplanner.model.validation import BUDGET_RULES, FIELD_RULES, PlanError

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
  dpplanner-cli validate my.dpplan --json
  dpplanner-cli export-opendp census -o release.py   OpenDP release script
  dpplanner-cli check-opendp release.py census       does it still match the plan?
"""


class UserError(Exception):
    """Bad input from the user: printed on stderr, exit status 2."""


def _finite(x) -> Optional[float]:
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def _load(spec: str) -> Plan:
    path = Path(spec)
    if not os.path.lexists(spec):       # False also for a name the system refuses (too long)
        examples = example_paths()
        stem = spec[:-len(".dpplan")] if spec.endswith(".dpplan") else spec
        if stem in examples and path.parent == Path("."):
            path = examples[stem]
        else:
            raise UserError(f"{spec}: no such file (and not an example name; examples: "
                            f"{', '.join(examples) or 'none found'})")
    return load_plan(path)


def _print_json(doc) -> None:
    print(json.dumps(doc, indent=2, allow_nan=False))


def _table(rows: Sequence[Sequence[str]], right: Sequence[int] = ()) -> str:
    rows = [[terminal(cell) for cell in row] for row in rows]   # widths of what is printed
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [r[c].rjust(widths[c]) if c in right else r[c].ljust(widths[c]) for c in range(len(r))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def _g(x, digits: int = 4) -> str:
    """A per-statistic epsilon or delta: rounded up, as the window's table shows it."""
    return "-" if x is None else display.upper(float(x), digits)


def _ms(seconds: float) -> str:
    return "<1 ms" if seconds < 1e-3 else f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _header(plan: Plan) -> str:
    b = plan.budget
    return (f"plan: {plan.title or '(untitled)'}: {len(plan)} statistics, k = {plan.k} queries\n"
            f"global budget: epsilon = {display.exact(b.epsilon)}, delta = {display.exact(b.delta)}"
            + (f" (reserve {b.reserve:.0%}: spend {display.value(b.spendable_epsilon)})" if b.reserve else ""))


# --- commands ----------------------------------------------------------------------------------

def _implementation(plan: Plan, stat, privacy) -> Optional[dict]:
    impl = implementation(plan.budget, stat, privacy)
    return None if impl is None else impl.as_dict()


def _implementations(plan: Plan) -> list[dict]:
    """What implementing each statistic needs (noise, scale, sensitivities, delta_i, rho_i)."""
    return [{"name": s.name, "kind": s.kind.value, "implementation": _implementation(plan, s, p)}
            for s, p in zip(plan.statistics, plan.privacy_all())]


def cmd_compose(args) -> int:
    plan = _load(args.plan)
    totals, best = plan_totals(plan, args.theorem or None)
    if args.json:
        _print_json({"plan": plan.title, "statistics": len(plan), "k": plan.k,
                     "epsilon_g": plan.budget.epsilon, "delta_g": plan.budget.delta, "best": best,
                     "spendable_epsilon": plan.budget.spendable_epsilon,
                     "over_budget": plan.balance(totals[best].epsilon).over if best else None,
                     "totals": {n: {"epsilon": _finite(c.epsilon), "delta": _finite(c.delta),
                                    "epsilon_lower": _finite(c.epsilon_lower),
                                    "applicable": c.applicable, "feasible": c.feasible,
                                    "detail": c.detail, "reason": c.reason,
                                    "seconds": c.seconds} for n, c in totals.items()},
                     "implementations": _implementations(plan)})
        return 0
    rows = [["theorem", "total eps", "total delta", "certified bracket", "time", "detail"]]
    for name, c in totals.items():
        bracket = (f"[{display.lower(c.epsilon_lower, 6)}, {display.upper(c.epsilon, 6)}]" if c.epsilon_lower is not None
                   and c.applicable else "")
        note = c.reason if (c.reason or not c.applicable) else c.detail
        rows.append([name + (" *" if name == best else ""), display.upper(c.epsilon, 6), display.upper(c.delta, 3), bracket,
                     _ms(c.seconds), note or ""])
    print(_header(plan))
    print(_table(rows, right=(1, 2)))
    if best:
        print(f"* best valid total: {best}, epsilon = {display.upper(totals[best].epsilon, 6)}: "
              f"{plan.balance(totals[best].epsilon).describe()}")
    theorem = plan.budget.theorem
    if theorem in totals and totals[theorem].applicable:
        print(f"note: {total_note(theorem, totals, plan.budget.spendable_epsilon)}")
    return 0


def cmd_allocate(args) -> int:
    plan = _load(args.plan)
    if args.theorem:
        plan.set_budget(theorem=args.theorem)
    rebalance(plan)
    note = save_plan(plan, args.output) if args.output else None
    privacy = plan.privacy_all()
    if args.json:
        _print_json({"plan": plan.title, "theorem": plan.budget.theorem,
                     "epsilon_g": plan.budget.epsilon, "delta_g": plan.budget.delta,
                     "spent_epsilon": _finite(plan.total().epsilon), "saved_to": args.output,
                     "statistics": [{"name": s.name, "kind": s.kind.value,
                                     "mechanism": s.mechanism.value, "held": s.held,
                                     "target_error": s.target_error,
                                     "repetitions": s.repetitions, "epsilon": p.epsilon,
                                     "delta": p.delta,
                                     "functioning_epsilon": p.functioning_epsilon,
                                     "functioning_delta": p.functioning_delta,
                                     "error": _finite(p.error), "units": p.units,
                                     "group_by": s.group_by,
                                     "error_one_group": _finite(_group_error(s, p)),
                                     "cells_moved": p.moves.cells if p.moves is not None else None,
                                     "explanation": p.explanation or p.problem,
                                     "implementation": _implementation(plan, s, p)}
                                    for s, p in zip(plan.statistics, privacy)]})
        return 0
    print(_header(plan))
    amplified = plan.amplification() != 1.0
    rows = [["#", "name", "kind", "mech", "epsilon", "delta"]
            + (["functioning eps"] if amplified else []) + ["reps", "held", "error", "units"]]
    for i, (s, p) in enumerate(zip(plan.statistics, privacy)):
        rows.append([str(i + 1), s.name, s.kind.value, s.mechanism.value[:3], _g(p.epsilon),
                     _g(p.delta, 3)] + ([_g(p.functioning_epsilon)] if amplified else [])
                    + [str(s.repetitions), _pin(s)]
                    + _error_cells(s, p))
    shift = 1 if amplified else 0
    print(_table(rows, right=(0, 4, 5, 6, 6 + shift, 8 + shift)))
    if any(s.target_error is not None for s in plan):
        print("held: H pinned at its epsilon, T pinned at its target error (its epsilon follows it)")
    if amplified:
        print(f"amplification by sampling: N/n = {display.value(plan.amplification())}; the noise is calibrated "
              "to the functioning epsilon and delta")
    total = plan.total()
    print(f"spent under {plan.budget.theorem}: epsilon = {display.upper(total.epsilon, 10)} of "
          f"{display.value(plan.budget.spendable_epsilon)}")
    if args.output:
        print(f"saved to {args.output}" + (f" (note: {note})" if note else ""))
    return 0


def _error_cells(s, p) -> list[str]:
    """The error and its units as the window shows them (a proportion's in % points; a grouped
    statistic's for one group)."""
    if p.error is None:
        return ["-", p.units]
    number, words = display.error_parts(_group_error(s, p), p.units)
    return [number, (words if p.units == "proportion" else p.units) + (" per group" if s.group_by else "")]


def _group_error(s, p):
    """The error the window shows: a grouped statistic's is one group's (its target is too)."""
    return p.cell_error if s.group_by and p.cell_error is not None else p.error


def _pin(s) -> str:
    return "T" if s.target_error is not None else "H" if s.held else ""


def _statistic_index(plan: Plan, spec: str) -> int:
    """A statistic by its number (from 1, as every listing shows) or its exact name."""
    names = [s.name for s in plan]
    if spec in names:
        return names.index(spec)
    if spec.isdigit() and 1 <= int(spec) <= len(plan):
        return int(spec) - 1
    raise UserError(f"no statistic {spec!r}: give its number (1 to {len(plan)}) or its exact name")


def cmd_target(args) -> int:
    plan = _load(args.plan)
    i = _statistic_index(plan, args.statistic)
    error = parse_text(FIELD_RULES["error"], args.error, "ERROR")
    if plan.budget.redistribute:
        rebalanced_edit(plan, lambda p: p.set_target_error(i, error))
    else:
        plan.set_target_error(i, error)
    if args.output:
        save_plan(plan, args.output)
    s, p = plan[i], plan.privacy(i)
    if args.json:
        _print_json({"statistic": s.name, "target_error": s.target_error, "epsilon": s.epsilon,
                     "error": _finite(p.error), "units": p.units,
                     "redistributed": plan.budget.redistribute, "saved_to": args.output})
        return 0
    print(f"{s.name}: target error {display.exact(error)} {display.unit_words(p.units)}".rstrip()
          + f"; epsilon {display.upper(s.epsilon, 6)} (error {display.error(_group_error(s, p))}"
          + (" per group" if s.group_by else "") + "), pinned")
    if plan.budget.redistribute:
        print("the free statistics were redistributed under the plan's theorem "
              f"({plan.budget.theorem})")
    if args.output:
        print(f"saved to {args.output}")
    return 0


def cmd_curve(args) -> int:
    plan = _load(args.plan)
    curve = plan_curve(plan, args.theorem or None, points=args.points, eta=args.eta)
    names = list(curve.upper)
    if args.json:
        _print_json({"k": [int(k) for k in curve.ks],
                     "upper": {n: [_finite(v) for v in curve.upper[n]] for n in names},
                     "lower": {n: None if curve.lower.get(n) is None else
                               [_finite(v) for v in curve.lower[n]] for n in names}})
        return 0
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["k"] + names)
    for j, k in enumerate(curve.ks):
        writer.writerow([int(k)] + [repr(float(curve.upper[n][j])) for n in names])
    if args.output:
        from dpplanner.model.files import atomic_write_text
        try:
            note = atomic_write_text(args.output, buf.getvalue())
        except OSError as exc:
            raise UserError(f"{args.output}: cannot write: {exc.strerror or exc}") from None
        print(f"wrote {len(curve.ks)} rows x {len(names)} theorems to {args.output}"
              + (f" (note: {note})" if note else ""))
    else:
        sys.stdout.write(buf.getvalue())
    return 0


def cmd_report(args) -> int:
    plan = _load(args.plan)
    note = save_report(plan, args.output)
    if args.json:
        _print_json({"report": args.output, "statistics": len(plan), "k": plan.k})
    else:
        print(f"wrote {args.output} ({len(plan)} statistics, k = {plan.k})"
              + (f" (note: {note})" if note else ""))
    return 0


def cmd_validate(args) -> int:
    plan = _load(args.plan)
    warnings = list(plan.notes) + plan.warnings()
    warnings += [f"statistic {i + 1} ({s.name}): {p.problem}"
                 for i, (s, p) in enumerate(zip(plan.statistics, plan.privacy_all())) if p.problem]
    total = plan.total() if len(plan) else None
    balance = plan.balance(total.epsilon) if total is not None else None
    if balance is not None and (balance.over or not total.feasible):
        warnings.append(f"under the {plan.budget.theorem} theorem the plan is "
                        f"{balance.describe()}")
    if args.json:
        _print_json({"valid": True, "statistics": len(plan), "k": plan.k,
                     "theorem": plan.budget.theorem,
                     "total_epsilon": _finite(total.epsilon) if total else None,
                     "over_budget": balance.over if balance else None,
                     "notes": [f"not in the file, default used: {d}" for d in plan.defaults],
                     "warnings": warnings})
    else:
        print(f"{args.plan}: valid: {len(plan)} statistics, k = {plan.k} queries")
        if balance is not None:
            print(f"total under {plan.budget.theorem}: epsilon = {display.upper(total.epsilon, 6)}: "
                  f"{balance.describe()}")
        for d in plan.defaults:
            print(f"note: not in the file, default used: {d}")
        for w in warnings:
            print(f"warning: {w}")
    return 0


# --- parser ------------------------------------------------------------------------------------

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
    p = add("allocate", "redistribute the global budget over the free statistics (held ones keep "
            "their epsilon) and print each statistic's epsilon, delta and error", cmd_allocate)
    p.add_argument("-o", "--output", metavar="OUT", help="save the rebalanced plan to OUT")
    p.add_argument("--theorem", choices=ALLOCATION_THEOREMS,
                   help="theorem to spend the budget under (default: the plan's)")
    p = add("target", "pin a statistic at a target error: it gets the epsilon that error needs, "
            "now and after every later change of the plan; the free statistics are redistributed",
            cmd_target)
    p.add_argument("statistic", metavar="STATISTIC", help="its number (from 1) or its name")
    p.add_argument("error", metavar="ERROR", help="the target error, in the statistic's own units "
                   f"({FIELD_RULES['error'].describe()})")
    p.add_argument("-o", "--output", metavar="OUT", help="save the plan with the target to OUT")
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
    p = add("report", "write a self-contained HTML report (budgets, errors, totals, plot)", cmd_report)
    p.add_argument("-o", "--output", metavar="HTML", required=True, help="where to write the report")
    add("validate", "check a plan file; print warnings, and a note for each default a missing "
        "optional field took", cmd_validate)
    add_commands(sub, _load, _print_json, UserError)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run one command; what it prints is safe for a terminal (``cli_terminal``)."""
    command = next((a for a in (argv if argv is not None else sys.argv[1:]) if not a.startswith("-")), "")
    return on_terminal(lambda: _run(argv), f"dpplanner-cli {command}".rstrip())


def _run(argv: Optional[Sequence[str]]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage/help
        return int(exc.code or 0)
    if getattr(args, "points", None) is not None and args.points < 2:
        print("dpplanner-cli: error: --points must be at least 2", file=sys.stderr)
        return 2
    if getattr(args, "eta", None) is not None:
        try:        # the plan's own rule for eta: one source of ranges and messages
            args.eta = parse_text(BUDGET_RULES["eta"], args.eta, "--eta")
        except PlanError as exc:
            print(f"dpplanner-cli: error: {exc}", file=sys.stderr)
            return 2
    try:
        return args.func(args)
    except (UserError, PlanFileError, PlanError, ValueError) as exc:  # ValueError: engine checks
        print(f"dpplanner-cli: error: {plain(str(exc))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
