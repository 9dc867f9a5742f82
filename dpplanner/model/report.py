"""A self-contained HTML report of a plan: summary, per-statistic budgets and errors, totals under
every theorem, the cost-against-k plot (inline SVG), how each error is computed and the formulas
used with their sources (``report_sections``: generated from the code that computes them)."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from typing import Optional, Sequence

from dpplanner import engine

from . import display
from .curve_totals import meet_totals
from .explanations import composition_note
from .files import PlanFileError, atomic_write_text
from .implementation import implementation
from .plan import Plan
from .privacy import TimeLimit
from .report_sections import derivations, formulas, left_out, statistics_tables
from .safe_text import markup
from .spending import total_note
from .svgplot import line_plot

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.9em;width:100%}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.scroll{overflow-x:auto}td.name{min-width:9em}td.text{min-width:16em}
svg{max-width:100%;height:auto}
tr.best td{background:#eef7ee;font-weight:bold}.muted{color:#777}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:bold}
"""


def _num(x: Optional[float], digits: int = 6) -> str:
    return "—" if x is None else display.value(x, digits)


def plan_totals(plan: Plan, theorems: Optional[Sequence[str]] = None, *, progress=None,
                time_limit: Optional[float] = None):
    """engine.compose_all over the plan and the name of the best valid total (``progress`` and
    ``time_limit`` as engine.compose_all takes them)."""
    inp = plan.composition_inputs()
    results = engine.compose_all(list(inp.epsilons), list(inp.deltas), inp.delta_g, eta=inp.eta,
                                 multiplicities=list(inp.multiplicities), mechanisms=list(inp.mechanisms),
                                 theorems=tuple(theorems or engine.THEOREMS), progress=progress,
                                 time_limit=time_limit)
    try:
        best = engine.best(results)
    except ValueError:
        best = None
    return results, best


#: Above this many queries the curve uses a coarser engine accuracy (it is many compositions).
CURVE_FINE_K = 200
CURVE_COARSE_ETA = 1e-2


def curve_eta(plan: Plan) -> float:
    """The plan's eta for small plans; at least 1e-2 for large ones (every point is sound)."""
    eta = plan.budget.eta
    return eta if plan.k <= CURVE_FINE_K else max(eta, CURVE_COARSE_ETA)


def plan_curve(plan: Plan, theorems: Optional[Sequence[str]] = None, points: int = 60,
               eta: Optional[float] = None, *, progress=None, time_limit: Optional[float] = None):
    """engine.curve over the plan's prefixes (plan order, repetitions expanded). Where every query
    is the same release (one statistic repeated, or identical ones), the first k queries are that
    release k times: the engine's "repeat" mode, exact roots per point instead of composing the
    queries one by one."""
    inp = plan.composition_inputs()
    same = len(set(zip(inp.epsilons, inp.deltas, inp.mechanisms))) == 1
    rows = 1 if same else len(inp.epsilons)
    return engine.curve(list(inp.epsilons[:rows]), list(inp.deltas[:rows]), inp.delta_g,
                        mode="repeat" if same else "prefix", k_max=plan.k if same else None,
                        points=points, theorems=tuple(theorems or engine.THEOREMS),
                        eta=eta if eta is not None else curve_eta(plan),
                        multiplicities=None if same else list(inp.multiplicities),
                        mechanisms=list(inp.mechanisms[:rows]), progress=progress, time_limit=time_limit)


def render_report(plan: Plan, *, totals=None, best=None, curve=None,
                  limit: Optional[TimeLimit] = None) -> str:
    """The HTML text. ``totals``/``curve`` are computed here when not given (``curve``: the plan's
    prefix curve, met with the totals at the plan's k); ``limit``: a caller's time limit over the
    per-statistic sections (``report_sections``)."""
    if totals is None:
        totals, best = plan_totals(plan) if len(plan) else ({}, None)
    if curve is None and len(plan):
        try:
            curve = plan_curve(plan)
        except ValueError:
            curve = None
    curve = meet_totals(curve, totals, plan.k)     # (given or computed here, as the window's plot is)
    b = plan.budget
    title = plan.title or "Privacy budget plan"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{markup(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{markup(title)}</h1>"]
    if plan.description:
        out.append(f"<p>{markup(plan.description)}</p>")
    out.append(f'<p class="muted">Generated by dpplanner on '
               f'{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}.</p>')
    out.append("<h2>Budget</h2><dl>")
    rows = [("global ε", display.exact(b.epsilon)), ("global δ", display.exact(b.delta)),
            ("δ to Gaussian statistics", f"{_num(b.delta_to_statistics)} ({b.delta_split:.0%})"),
            ("δ slack for composition", _num(b.delta_slack)),
            ("reserved for later", f"{b.reserve:.0%} of ε (spendable ε = {_num(b.spendable_epsilon)})"),
            ("confidence", f"{display.exact(b.confidence)} (β = {_num(b.beta, 3)})"),
            ("neighbouring relation", b.neighbouring.of(b.unit, b.contributions)),
            ("unit of privacy", f"one {b.unit}, at most c = {b.contributions} row"
             f"{'s' if b.contributions != 1 else ''} each "
             f"({'the release keeps at most c rows each' if b.truncate else 'the data guarantee it'})"),
            ("dataset size n", display.count(b.dataset_size) if b.dataset_size else "not given"),
            ("population N", f"{display.count(b.population)} (amplification N/n = {_num(plan.amplification(), 4)})"
             if b.population else "no amplification"),
            ("redistribution", f"{'automatic' if b.redistribute else 'manual'}, "
                               f"under {engine.theorem(b.theorem).label}"),     # (the window's name)
            ("engine accuracy η", display.exact(b.eta)),
            ("queries composed k", str(plan.k))]
    out += [f"<dt>{markup(k)}</dt><dd>{markup(v)}</dd>" for k, v in rows]
    out.append("</dl>")
    for w in plan.warnings():
        out.append(f"<p><strong>Warning:</strong> {markup(w)}</p>")

    if not len(plan):
        out.append("<p>The plan has no statistics yet, so there is nothing to compose.</p>")
    out.append("<h2>Totals under every theorem</h2><table><tr><th>theorem</th><th>total ε</th>"
               "<th>total δ</th><th>certified lower bound</th><th>detail</th></tr>")
    for name, c in totals.items():
        cls = ' class="best"' if name == best else ""
        mark = " ★" if name == best else ""
        note = composition_note(plan, name, c)
        out.append(f"<tr{cls}><td>{markup(engine.theorem(name).title)}{mark}</td>"
                   f'<td class="num">{display.upper(c.epsilon, 6)}</td><td class="num">{display.upper(c.delta, 3)}</td>'
                   f'<td class="num">{"—" if c.epsilon_lower is None else display.lower(c.epsilon_lower, 6)}</td>'
                   f"<td>{markup(note)}</td></tr>")
    out.append("</table>")
    # what each row assumes, from the registry (the noise-aware rows assume more than the rest)
    out.append("<dl>" + "".join(f"<dt>{markup(engine.theorem(n).label)}</dt><dd>{markup(engine.theorem(n).summary)}</dd>"
                                for n in totals) + "</dl>")
    if best:
        spend = totals[best].epsilon
        out.append(f"<p>Best valid total: <strong>ε = {display.upper(spend, 6)}</strong> "
                   f"({markup(engine.theorem(best).label)}), "
                   f"{display.percent_of(spend, b.epsilon)} of the global ε.</p>")
    spent = totals.get(b.theorem)
    if spent is not None and spent.applicable:
        out.append(f"<p>The plan is spent under {markup(engine.theorem(b.theorem).label)}. "
                   f"{markup(total_note(b.theorem, totals, b.spendable_epsilon))}</p>")

    if curve is not None:
        # Labels, colours and dashes from the theorem registry: the window draws the same curves.
        entries = [engine.theorem(name) for name in curve.upper]
        series = {t.label: [float(v) for v in curve.upper[t.name]] for t in entries}
        styles = {t.label: (t.colours[0], t.dash) for t in entries}
        out.append("<h2>Cost against the number of queries</h2>")
        out.append(line_plot([int(k) for k in curve.ks], series, title="total ε of the first k queries",
                             x_label="k (queries, in plan order)", y_label="total ε",
                             hline=b.epsilon, hline_label="global ε", vline=plan.k, styles=styles))

    privacy = plan.privacy_all(limit)       # once, for both tables
    if len(plan):
        out.append(statistics_tables(plan, privacy, limit))
    out += implementation_table(plan, privacy, limit)
    if len(plan):
        out.append(derivations(plan, limit))
    out.append(formulas(plan, totals))
    out.append("</body></html>")
    return "\n".join(out)


def implementation_table(plan: Plan, privacy: list, limit: Optional[TimeLimit] = None) -> list[str]:
    """What implementing each statistic needs (the numbers an exported release script uses), for
    the statistics ``privacy`` covers."""
    out = ['<h2 id="implementation">How each statistic is implemented</h2>',
           "<p>Sensitivities and noise scales are those of the query that gets the noise (for a mean "
           "or a proportion, the sum, divided by n after the noise).</p>",
           '<div class="scroll"><table><tr><th>#</th><th>name</th><th>noise implemented by</th>'
           "<th>data type</th><th>clamped to</th><th>sensitivity</th><th>noise</th><th>δ_i</th>"
           "<th>ρ_i</th></tr>"]
    for i, (s, p) in enumerate(zip(plan.statistics, privacy)):
        impl = implementation(plan.budget, s, p)
        if impl is None:
            out.append(f"<tr><td>{i + 1}</td><td>{markup(s.name)}</td>"
                       f'<td colspan="7">{markup(p.problem or "custom: released by code the user writes")}</td></tr>')
            continue
        cells = dict(impl.rows())
        out.append(f"<tr><td>{i + 1}</td><td>{markup(s.name)}</td>" + "".join(
            f"<td>{markup(cells.get(k, '—'))}</td>" for k in (
                "Noise implemented by", "Data type", "Clamped to", "Sensitivity", "Noise", "δ_i",
                "ρ_i (zCDP)")) + "</tr>")
    out.append("</table></div>")
    out.append(left_out("implementation table", len(privacy), len(plan), limit))
    return out


def save_report(plan: Plan, path: str | os.PathLike, **kwargs) -> Optional[str]:
    """Write the report; a note for the user (the old file's other hard links), or None."""
    try:
        return atomic_write_text(path, render_report(plan, **kwargs))
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot write the report: {exc.strerror or exc}") from None


__all__ = ["render_report", "save_report", "plan_totals", "plan_curve", "curve_eta"]
