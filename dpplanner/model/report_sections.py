"""The report's statistics, derivations and formulas sections (HTML fragments).

Three narrow tables instead of one of fourteen columns (which wrapped to one word per line in a
browser window): what each statistic is, what its budget buys, and how its error is computed,
step by step with the model's own numbers (``derivation``). The formulas section is generated
for the kinds, mechanisms and theorems the plan uses, from the same code.

Under a caller's time limit (``TimeLimit``, the command line's ``--time-limit``) the per-statistic
work stops at the first block of ``privacy.BLOCK`` statistics that starts after the limit: the tables then end
with a line naming the statistics left out, and the limit records them (what the command says).
"""

from __future__ import annotations

from typing import Mapping, Optional

from dpplanner import engine

from . import display
from .contributions import group_count
from .derivation import plan_derivation, sensitivity_rule, shown
from .plan import Plan
from .privacy import BLOCK, TimeLimit
from .safe_text import markup
from .statistic import Kind, Mechanism, Noise, Statistic, assumptions, field_names, noise_words


#: What a per-statistic section cut short by the limit shows instead of the statistics left out.
LEFT_OUT = "left out of the report (it names them); run without --time-limit for every statistic"


def left_out(section: str, shown: int, total: int, limit: Optional[TimeLimit]) -> str:
    """The line ending a section that shows only the first ``shown`` of ``total`` statistics (and
    the limit told so), or "" when it shows them all."""
    if shown >= total or limit is None:
        return ""
    limit.cut_short([f"report: {section} (statistics {shown + 1} to {total})"], LEFT_OUT)
    return (f'<p><strong>Time limit:</strong> statistics {shown + 1} to {total} are not in this '
            f"table ({markup(limit.reason())}); make the report without a time limit to see them.</p>")


def _table(head: list[str], rows: list[str], cls: str = "") -> str:
    cells = "".join(f"<th>{markup(h)}</th>" for h in head)
    return (f'<div class="scroll"><table{f" class={chr(34)}{cls}{chr(34)}" if cls else ""}>'
            f"<tr>{cells}</tr>" + "".join(rows) + "</table></div>")


def pinned(stat) -> str:
    if stat.target_error is not None:
        return f"at target error ± {display.exact(stat.target_error)}"
    return "at its ε" if stat.held else ""


def _meaning(p, unit: str) -> str:
    """What the error means, and which groups a private selection suppresses."""
    text = p.explanation or p.problem or ""
    return f"{text} {p.selection.sentence(unit)}" if p.selection is not None and not p.problem else text


def _assumed(stat, budget) -> str:
    """The statistic's assumptions, and its grouping."""
    words = assumptions(stat, budget.dataset_size) or ""
    if stat.group_by:
        g = group_count(stat)
        groups = f"{g} groups" if g else "groups selected privately"
        words = f"{words}; by {stat.group_by} ({groups})" if words else f"by {stat.group_by} ({groups})"
    return words or "—"


def statistics_tables(plan: Plan, privacy: list, limit: Optional[TimeLimit] = None) -> str:
    """What each statistic is and what its budget buys, for the statistics ``privacy`` covers."""
    b = plan.budget
    what = []
    for i, s in enumerate(plan.statistics[:len(privacy)]):
        what.append(f"<tr><td>{i + 1}</td><td class=\"name\">{markup(s.name)}</td>"
                    f"<td>{markup(s.variable)}</td><td>{markup(s.kind.label)}</td>"
                    f"<td>{'—' if s.kind is Kind.CUSTOM else markup(noise_words(s))}</td>"
                    f"<td class=\"text\">{markup(_assumed(s, b))}</td>"
                    f'<td class="num">{s.repetitions}</td><td>{markup(pinned(s))}</td></tr>')
    amplified = plan.amplification() != 1.0
    buys = []
    for i, (s, p) in enumerate(zip(plan.statistics, privacy)):
        functioning = (f'<td class="num">{display.upper(p.functioning_epsilon)}, '
                       f'{display.upper(p.functioning_delta, 3)}</td>' if amplified else "")
        error = display.error_with_units(p.error, p.units) if p.error is not None else "—"
        if s.group_by and p.cell_error is not None:     # one group's, as the window shows it
            error = f"{display.error_with_units(p.cell_error, p.units)} per group ({error} in all at once)"
        buys.append(f"<tr><td>{i + 1}</td><td class=\"name\">{markup(s.name)}</td>"
                    f'<td class="num">{display.upper(p.epsilon)}</td>'
                    f'<td class="num">{display.upper(p.delta, 3)}</td>{functioning}'
                    f'<td class="num">{"—" if p.scale is None else shown(p.scale)}</td>'
                    f'<td class="num">{markup(error)}</td>'
                    f'<td class="text">{markup(_meaning(p, b.unit))}</td></tr>')
    head = ["#", "name", "ε_i", "δ_i"] + (["functioning ε′, δ′"] if amplified else []) + \
        ["noise scale (b or σ)", "error", "what it means"]
    end = left_out("statistics tables", len(privacy), len(plan), limit)
    return ("<h2>Statistics</h2>"
            + _table(["#", "name", "variable", "kind", "noise", "assumptions", "releases", "pinned"], what)
            + end + "<h2>What each budget buys</h2>" + _table(head, buys) + end)


#: What a statistic's derivation reads: every stored field but its name (the text is keyed on
#: their reprs, so that values that compare equal but print apart, 0.0 and -0.0, are kept apart).
_DERIVED_FROM = tuple(name for name in field_names(Statistic) if name != "name")


def derivations(plan: Plan, limit: Optional[TimeLimit] = None) -> str:
    """Per statistic, each step with its symbol, formula and value; ``data-key`` and
    ``data-value`` (the exact value) let a program check them."""
    b = plan.budget
    rows = []
    deltas = plan.deltas()
    shown = len(plan)
    known: dict = {}        # the steps of statistics that differ only in name are the same text
    for i, s in enumerate(plan.statistics):
        if i and i % BLOCK == 0 and limit is not None and limit.past():
            shown = i
            break
        key = repr((deltas[i], [getattr(s, name) for name in _DERIVED_FROM])) if not s.extra else None
        parts = known.get(key)
        if parts is None:
            try:
                steps = plan_derivation(b, s, deltas[i])
            except ValueError as exc:       # (the message names the statistic: not shared)
                rows.append(f'<tr data-row="{i}"><td>{i + 1}</td><td>{markup(s.name)}</td>'
                            f"<td>cannot be released as set up: {markup(str(exc))}</td></tr>")
                continue
            parts = "; ".join(f'<span class="step" data-key="{st.key}" data-value="{st.value!r}">'
                              f"{markup(step_text(st))}</span>" for st in steps)
            if key is not None:
                known[key] = parts
        if not parts:
            continue
        rows.append(f'<tr data-row="{i}"><td>{i + 1}</td><td class="name">{markup(s.name)}</td>'
                    f'<td class="text">{parts}</td></tr>')
    if not rows and shown == len(plan):
        return ""
    beta = display.value(b.beta, 3)
    return (f"<h2>How each error is computed</h2><p>At confidence {display.exact(b.confidence)} "
            f"(β = {beta}), with the statistic's ε_i{' and δ_i' if any(deltas) else ''}:</p>"
            + _table(["#", "name", "steps"], rows, "derivations")
            + left_out("derivations", shown, len(plan), limit))


def step_text(step) -> str:
    """"b = Δ₁ / ε = 7.93443"; a constant shows once ("Δ₁ = 1"), a count with its meaning
    ("m = 9 (values released together)")."""
    value = shown(step.value)
    if step.formula == value:
        return f"{step.symbol} = {value}"
    if step.key in ("coordinates", "groups", "cells"):
        return f"{step.symbol} = {value} ({step.formula})"
    return f"{step.symbol} = {step.formula} = {value}"


def _rows_rule(plan: Plan) -> str:
    """What the unit of privacy changes in the one-row rules above (contributions.py)."""
    c = plan.budget.contributions
    if c == 1 and not any(s.group_by for s in plan):
        return ""
    return (f"; one {plan.budget.unit} contributes up to c = {c} row{'s' if c != 1 else ''}: an ungrouped "
            "statistic moves by c times the rule, a grouped one as its steps derive (C cells)")


def formulas(plan: Plan, totals: Mapping) -> str:
    """The rules the plan uses: the sensitivity of each kind in it (under the plan's
    neighbouring relation), the error of each mechanism, and every theorem of the totals."""
    b = plan.budget
    out = ["<h2>Formulas and sources</h2><dl>"]
    kinds = [k for k in Kind if any(s.kind is k for s in plan)]
    for kind in kinds:
        out.append(f'<dt>Sensitivity: {markup(kind.label)}</dt><dd data-kind="{kind.value}">'
                   f"{markup(sensitivity_rule(kind, b.neighbouring))} ({markup(b.neighbouring.label)}; "
                   "with OpenDP's noise, the sensitivity OpenDP certifies, in each statistic's steps)"
                   f"{markup(_rows_rule(plan))}</dd>")
    deltas = plan.deltas()
    for noise in Noise:
        for mechanism in Mechanism:
            i = next((i for i, s in enumerate(plan) if s.kind is not Kind.CUSTOM
                      and s.mechanism is mechanism and s.noise is noise), None)
            if i is None:
                continue
            try:
                steps = plan_derivation(b, plan[i], deltas[i])
            except ValueError:
                continue
            words = "; ".join(f"{st.symbol} = {st.formula}" for st in steps
                              if st.key not in ("coordinates", "l1", "l2"))
            out.append(f"<dt>{markup(mechanism.label)} error, {markup(noise.label)}</dt>"
                       f"<dd>{markup(words)}</dd>")
    out.append(f"<dt>Error sources</dt><dd>{_ERROR_SOURCES}</dd>")
    for name in totals:
        t = engine.theorem(name)
        out.append(f"<dt>{markup(t.label)}: {markup(t.title)}</dt><dd>{markup(t.summary)} "
                   f"The total {markup(t.assumption)}.</dd>")
    out.append("</dl>")
    return "\n".join(out)


_ERROR_SOURCES = (
    "Laplace: |Y| ≤ b·ln(1/β) with probability 1 − β for Y ~ Lap(b), and the union bound over m "
    "values (Dwork &amp; Roth 2014, Fact 3.7 and Thm 3.8). Gaussian: σ by the analytic Gaussian "
    "mechanism (Balle &amp; Wang 2018, Thm 8; the classic formula is not used), |N(0, σ²)| ≤ "
    "σ·Φ⁻¹(1 − β/2) with probability 1 − β, union bound over m values. Amplification by sampling: "
    "ε′ = ln(1 + (N/n)(e^ε − 1)), δ′ = (N/n)·δ (secrecy of the sample; Balle, Barthe &amp; "
    "Gaboardi 2018, as used by the PSI tool).")
