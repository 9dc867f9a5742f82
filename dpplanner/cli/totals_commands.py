"""compose, curve, report, validate: what a plan costs in total, as text, JSON, CSV or HTML."""

from __future__ import annotations

import csv
import io
import sys

from dpplanner import engine
from dpplanner.cli import terminal
from dpplanner.cli.output import (UserError, finite, header, implementations, load, ms, print_json, size,
                                  table)
from dpplanner.model import display
from dpplanner.model.curve_totals import meet_totals
from dpplanner.model.explanations import composition_note
from dpplanner.model.report import plan_curve, plan_totals, save_report
from dpplanner.model.spending import total_note


def cmd_compose(args) -> int:
    plan = load(args.plan)
    names = tuple(args.theorem or engine.THEOREMS)
    work = args.work
    totals, best = plan_totals(plan, names, progress=work.theorems(names),
                               time_limit=work.seconds_left())
    stopped = work.totals(totals)
    if args.json:
        print_json({"plan": plan.title, "statistics": len(plan), "k": plan.k,
                    "epsilon_g": plan.budget.epsilon, "delta_g": plan.budget.delta, "best": best,
                    "spendable_epsilon": plan.budget.spendable_epsilon,
                    "over_budget": plan.balance(totals[best].epsilon).over if best else None,
                    **work.fields(),
                    "totals": {n: {"epsilon": finite(c.epsilon), "delta": finite(c.delta),
                                   "epsilon_lower": finite(c.epsilon_lower),
                                   "applicable": c.applicable, "feasible": c.feasible,
                                   "detail": c.detail, "reason": c.reason,
                                   "stopped_by_time_limit": n in stopped,
                                   "seconds": c.seconds} for n, c in totals.items()},
                    "implementations": implementations(plan)})
        return 0
    rows = [["theorem", "total eps", "total delta", "certified bracket", "time", "detail"]]
    for name, c in totals.items():
        bracket = (f"[{display.lower(c.epsilon_lower, 6)}, {display.upper(c.epsilon, 6)}]" if c.epsilon_lower is not None
                   and c.applicable else "")
        rows.append([name + (" *" if name == best else ""), display.upper(c.epsilon, 6), display.upper(c.delta, 3), bracket,
                     ms(c.seconds), composition_note(plan, name, c)])   # (the JSON keeps the engine's)
    print(header(plan))
    print(table(rows, right=(1, 2)))
    if best:
        print(f"* best valid total: {best}, epsilon = {display.upper(totals[best].epsilon, 6)}: "
              f"{plan.balance(totals[best].epsilon).describe()}")
    theorem = plan.budget.theorem
    if theorem in totals and totals[theorem].applicable:
        print(f"note: {total_note(theorem, totals, plan.budget.spendable_epsilon)}")
    work.say()
    return 0


def cmd_curve(args) -> int:
    plan = load(args.plan)
    names = tuple(args.theorem or engine.THEOREMS)
    work = args.work
    totals, _ = plan_totals(plan, names, progress=work.theorems(names, "totals"),
                            time_limit=work.seconds_left())
    curve = plan_curve(plan, names, points=args.points, eta=args.eta,
                       progress=work.theorems(names, f"{args.points} points"),
                       time_limit=work.seconds_left())
    curve = meet_totals(curve, totals, plan.k)      # as the window's plot and the report are
    names = list(curve.upper)
    work.curve(curve)
    if args.json:
        print_json({"k": [int(k) for k in curve.ks],
                    "upper": {n: [finite(v) for v in curve.upper[n]] for n in names},
                    "lower": {n: None if curve.lower.get(n) is None else
                              [finite(v) for v in curve.lower[n]] for n in names},
                    **work.fields()})
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
        work.say()
    else:
        sys.stdout.write(buf.getvalue())
        work.say(sys.stderr)        # the CSV on stdout stays CSV: the note goes to stderr
    return 0


def cmd_report(args) -> int:
    plan = load(args.plan)
    work = args.work
    names = tuple(engine.THEOREMS)
    totals, best, curve = {}, None, None
    if len(plan):       # computed here (as render_report would) to report progress and the limit
        totals, best = plan_totals(plan, names, progress=work.theorems(names, "totals"),
                                   time_limit=work.seconds_left())
        work.totals(totals)
        try:
            curve = plan_curve(plan, names, progress=work.theorems(names, "curve"),
                               time_limit=work.seconds_left())
        except ValueError:
            curve = None
        if curve is not None:
            work.curve(curve, " (curve)")
    terminal.report("the per-statistic tables")
    note = save_report(plan, args.output, totals=totals, best=best, curve=curve, limit=work)
    if args.json:
        print_json({"report": args.output, "statistics": len(plan), "k": plan.k, **work.fields()})
    else:
        print(f"wrote {args.output} ({size(plan)})"
              + (f" (note: {note})" if note else ""))
        work.say()
    return 0


def cmd_validate(args) -> int:
    plan = load(args.plan)
    work = args.work
    warnings = list(plan.notes) + plan.warnings()
    privacy = plan.privacy_all(work)
    warnings += [f"statistic {i + 1} ({s.name}): {p.problem}"
                 for i, (s, p) in enumerate(zip(plan.statistics, privacy)) if p.problem]
    if len(privacy) < len(plan):
        work.cut_short([f"the statistics' checks (statistics {len(privacy) + 1} to {len(plan)})"],
                       "not checked for problems; run without --time-limit to check them")
    total = plan.total(time_limit=work.seconds_left()) if len(plan) else None
    if total is not None:
        work.totals({plan.budget.theorem: total})
    balance = plan.balance(total.epsilon) if total is not None else None
    if balance is not None and (balance.over or not total.feasible):
        warnings.append(f"under the {plan.budget.theorem} theorem the plan is "
                        f"{balance.describe()}" + (f"; to fit: dpplanner-cli allocate {args.plan} -o OUT"
                                                   if balance.over and total.feasible else ""))
    if args.json:
        print_json({"valid": True, "statistics": len(plan), "k": plan.k,
                    "theorem": plan.budget.theorem,
                    "total_epsilon": finite(total.epsilon) if total else None,
                    "over_budget": balance.over if balance else None,
                    "notes": [f"not in the file, default used: {d}" for d in plan.defaults],
                    "warnings": warnings, **work.fields()})
    else:
        print(f"{args.plan}: valid: {size(plan)}")
        if balance is not None:
            print(f"total under {plan.budget.theorem}: epsilon = {display.upper(total.epsilon, 6)}: "
                  f"{balance.describe()}")
        for d in plan.defaults:
            print(f"note: not in the file, default used: {d}")
        for w in warnings:
            print(f"warning: {w}")
        work.say()
    return 0
