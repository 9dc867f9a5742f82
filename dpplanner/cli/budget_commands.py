"""allocate and target: spend the global budget over the statistics, or pin one at an error."""

from __future__ import annotations

from dpplanner.cli.output import (UserError, finite, g, header, load, print_json, statistic_implementation,
                                  table)
from dpplanner.model import display
from dpplanner.model.files import save_plan
from dpplanner.model.plan import Plan
from dpplanner.model.redistribution import rebalance, rebalanced_edit, unspent_reason
from dpplanner.model.statistic import Kind, noise_words
from dpplanner.model.typed import parse_text
from dpplanner.model.validation import FIELD_RULES


def _allocated_total(plan: Plan, allocation):
    """The plan's total after ``rebalance``: the allocation's verified composition of exactly
    these epsilons (no second composition), else (nothing allocated) composed now."""
    if allocation is not None and tuple(plan.composition_inputs().epsilons) == \
            tuple(float(e) for e in allocation.epsilons):
        return allocation.composition
    return plan.total()


def cmd_allocate(args) -> int:
    plan = load(args.plan)
    if args.theorem:
        plan.set_budget(theorem=args.theorem)
    work = args.work
    allocation = rebalance(plan, progress=work.search(plan.budget.theorem, len(plan)),
                           time_limit=work.seconds_left())
    total = _allocated_total(plan, allocation)
    work.allocation(total)
    note = save_plan(plan, args.output) if args.output else None
    privacy = plan.privacy_all()
    if args.json:
        print_json({"plan": plan.title, "theorem": plan.budget.theorem,
                    "epsilon_g": plan.budget.epsilon, "delta_g": plan.budget.delta,
                    "spent_epsilon": finite(total.epsilon), "saved_to": args.output,
                    **work.fields(), "unspent_reason": unspent_reason(total),
                    "statistics": [{"name": s.name, "kind": s.kind.value,
                                    "mechanism": s.mechanism.value, "held": s.held,
                                    "target_error": s.target_error,
                                    "repetitions": s.repetitions, "epsilon": p.epsilon,
                                    "delta": p.delta,
                                    "functioning_epsilon": p.functioning_epsilon,
                                    "functioning_delta": p.functioning_delta,
                                    "error": finite(p.error), "units": p.units,
                                    "group_by": s.group_by,
                                    "error_one_group": finite(_group_error(s, p)),
                                    "cells_moved": p.moves.cells if p.moves is not None else None,
                                    "explanation": p.explanation or p.problem,
                                    "implementation": statistic_implementation(plan, s, p)}
                                   for s, p in zip(plan.statistics, privacy)]})
        return 0
    print(header(plan))
    amplified = plan.amplification() != 1.0
    rows = [["#", "name", "kind", "noise", "epsilon", "delta"]
            + (["functioning eps"] if amplified else []) + ["reps", "held", "error", "units"]]
    for i, (s, p) in enumerate(zip(plan.statistics, privacy)):
        # (the noise in the window's words: "Laplace", "Gaussian (ideal)"; a custom one has none)
        rows.append([str(i + 1), s.name, s.kind.value, "-" if s.kind is Kind.CUSTOM else noise_words(s),
                     g(p.epsilon),
                     g(p.delta, 3)] + ([g(p.functioning_epsilon)] if amplified else [])
                    + [str(s.repetitions), _pin(s)]
                    + _error_cells(s, p))
    shift = 1 if amplified else 0
    print(table(rows, right=(0, 4, 5, 6, 6 + shift, 8 + shift)))
    if any(s.target_error is not None for s in plan):
        print("held: H pinned at its epsilon, T pinned at its target error (its epsilon follows it)")
    if amplified:
        print(f"amplification by sampling: N/n = {display.value(plan.amplification())}; the noise is calibrated "
              "to the functioning epsilon and delta")
    print(f"spent under {plan.budget.theorem}: epsilon = {display.upper(total.epsilon, 10)} of "
          f"{display.value(plan.budget.spendable_epsilon)}")
    _say_unspent(total)
    work.say()
    if args.output:
        print(f"saved to {args.output}" + (f" (note: {note})" if note else ""))
    return 0


def _say_unspent(total) -> None:
    """The text's ``note:`` line with ``unspent_reason`` (the JSON's unspent_reason); not when
    the time limit stopped the search: the time limit's own line says it then."""
    reason = unspent_reason(total)
    if reason and not total.extra.get("time_limited"):
        print(f"note: {reason}")


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
    plan = load(args.plan)
    i = _statistic_index(plan, args.statistic)
    error = parse_text(FIELD_RULES["error"], args.error)     # (its message names the field)
    work = args.work
    total = None        # the redistribution's certified total (None: nothing redistributed)
    if plan.budget.redistribute:
        allocation = rebalanced_edit(plan, lambda p: p.set_target_error(i, error),
                                     progress=work.search(plan.budget.theorem, len(plan)),
                                     time_limit=work.seconds_left())
        total = allocation.composition if allocation is not None else None
        work.allocation(total)
    else:
        plan.set_target_error(i, error)
    if args.output:
        save_plan(plan, args.output)
    s, p = plan[i], plan.privacy(i)
    if args.json:
        print_json({"statistic": s.name, "target_error": s.target_error, "epsilon": s.epsilon,
                    "error": finite(p.error), "units": p.units,
                    "redistributed": plan.budget.redistribute, "saved_to": args.output,
                    **work.fields(), "unspent_reason": unspent_reason(total)})
        return 0
    print(f"{s.name}: target error {display.exact(error)} {display.unit_words(p.units)}".rstrip()
          + f"; epsilon {display.upper(s.epsilon, 6)} (error {display.error(_group_error(s, p))}"
          + (" per group" if s.group_by else "") + "), pinned")
    if plan.budget.redistribute:
        print("the free statistics were redistributed under the plan's theorem "
              f"({plan.budget.theorem})")
    _say_unspent(total)
    work.say()
    if args.output:
        print(f"saved to {args.output}")
    return 0
