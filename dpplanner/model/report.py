"""A self-contained HTML report of a plan: summary, per-statistic budgets and errors, totals under
every theorem, the cost-against-k plot (inline SVG) and the formulas used with their sources."""

from __future__ import annotations

import os
from datetime import datetime, timezone
from html import escape
from typing import Optional, Sequence

from . import display
from .files import PlanFileError, atomic_write_text
from .plan import Plan
from .svgplot import line_plot

THEOREM_LABELS = {
    "basic": "Basic composition (Dwork et al. 2006)",
    "advanced": "Advanced composition (DRV10 / KOV15 Thm 3.5)",
    "kov": "Optimal homogeneous (KOV15 Thm 3.3)",
    "optimal": "Optimal heterogeneous (Murtagh–Vadhan 2016)",
    "concurrent": "Concurrent composition (Vadhan–Wang 2021; VZ23)",
    "filter": "Privacy filter (WRRW23)",
}

SOURCES = [
    ("Laplace error", "|noise| ≤ (Δ₁/ε)·ln(m/β) with probability ≥ 1−β over m coordinates "
     "(Dwork &amp; Roth 2014, Fact 3.7 and Thm 3.8)."),
    ("Gaussian calibration", "σ is the smallest value with Φ(Δ₂/2σ − εσ/Δ₂) − e^ε·Φ(−Δ₂/2σ − εσ/Δ₂) ≤ δ "
     "(Balle &amp; Wang 2018, Thm 8, the analytic Gaussian mechanism); the classic formula is not used."),
    ("Gaussian error", "|noise| ≤ σ·Φ⁻¹(1 − β/(2m)) with probability ≥ 1−β over m coordinates."),
    ("Sensitivities", "count 1; sum max(|a|,|b|) (add/remove) or b−a (replace-one); mean: the "
     "clamped sum over the public n, so the sum's sensitivity / n; proportion 1/n; histogram Δ₁ = 1 or 2, Δ₂ = 1 or √2; quantile/CDF: noisy CDF over "
     "m = ⌈(b−a)/granularity⌉ grid points, Δ₁ = m, Δ₂ = √m."),
    ("Amplification by sampling", "functioning ε′ = ln(1 + (N/n)(e^ε − 1)), δ′ = (N/n)·δ "
     "(secrecy of the sample; Balle, Barthe &amp; Gaboardi 2018, as used by the PSI tool)."),
    ("Composition", "basic: Σε, Σδ; advanced: min of KOV15 Thm 3.5 and DRV10; optimal: "
     "Murtagh–Vadhan 2016 Thm 1.5/1.7 with ε rounded up (sound upper bound, certified bracket)."),
]

_CSS = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ccc}
table{border-collapse:collapse;font-size:.9em;width:100%}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
tr.best td{background:#eef7ee;font-weight:bold}.muted{color:#777}
dl{display:grid;grid-template-columns:max-content auto;gap:2px 1em}dt{font-weight:bold}
"""


def _num(x: Optional[float], digits: int = 6) -> str:
    return "—" if x is None else display.value(x, digits)


def plan_totals(plan: Plan, theorems: Optional[Sequence[str]] = None):
    """engine.compose_all over the plan and the name of the best valid total."""
    from dpplanner import engine
    inp = plan.composition_inputs()
    results = engine.compose_all(list(inp.epsilons), list(inp.deltas), inp.delta_g, eta=inp.eta,
                                 multiplicities=list(inp.multiplicities),
                                 theorems=tuple(theorems or engine.THEOREMS))
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
               eta: Optional[float] = None):
    """engine.curve over the plan's prefixes (plan order, repetitions expanded)."""
    from dpplanner import engine
    inp = plan.composition_inputs()
    return engine.curve(list(inp.epsilons), list(inp.deltas), inp.delta_g, mode="prefix",
                        points=points, theorems=tuple(theorems or engine.THEOREMS),
                        eta=eta if eta is not None else curve_eta(plan),
                        multiplicities=list(inp.multiplicities))


def render_report(plan: Plan, *, totals=None, best=None, curve=None) -> str:
    """The HTML text. ``totals``/``curve`` are computed here when not given."""
    if totals is None:
        totals, best = plan_totals(plan) if len(plan) else ({}, None)
    if curve is None and len(plan):
        try:
            curve = plan_curve(plan)
        except ValueError:
            curve = None
    b = plan.budget
    title = plan.title or "Privacy budget plan"
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
           f"<h1>{escape(title)}</h1>"]
    if plan.description:
        out.append(f"<p>{escape(plan.description)}</p>")
    out.append(f'<p class="muted">Generated by dpplanner on '
               f'{datetime.now(timezone.utc):%Y-%m-%d %H:%M UTC}.</p>')
    out.append("<h2>Budget</h2><dl>")
    rows = [("global ε", display.exact(b.epsilon)), ("global δ", display.exact(b.delta)),
            ("δ to Gaussian statistics", f"{_num(b.delta_to_statistics)} ({b.delta_split:.0%})"),
            ("δ slack for composition", _num(b.delta_slack)),
            ("reserved for later", f"{b.reserve:.0%} of ε (spendable ε = {_num(b.spendable_epsilon)})"),
            ("confidence", f"{display.exact(b.confidence)} (β = {_num(b.beta, 3)})"),
            ("neighbouring relation", b.neighbouring.label),
            ("dataset size n", display.count(b.dataset_size) if b.dataset_size else "not given"),
            ("population N", f"{display.count(b.population)} (amplification N/n = {_num(plan.amplification(), 4)})"
             if b.population else "no amplification"),
            ("redistribution", f"{'automatic' if b.redistribute else 'manual'}, theorem {b.theorem}"),
            ("engine accuracy η", display.exact(b.eta)),
            ("queries composed k", str(plan.k))]
    out += [f"<dt>{escape(k)}</dt><dd>{escape(v)}</dd>" for k, v in rows]
    out.append("</dl>")
    for w in plan.warnings():
        out.append(f"<p><strong>Warning:</strong> {escape(w)}</p>")

    if not len(plan):
        out.append("<p>The plan has no statistics yet, so there is nothing to compose.</p>")
    out.append("<h2>Totals under every theorem</h2><table><tr><th>theorem</th><th>total ε</th>"
               "<th>total δ</th><th>certified lower bound</th><th>detail</th></tr>")
    for name, c in totals.items():
        cls = ' class="best"' if name == best else ""
        mark = " ★" if name == best else ""
        note = c.detail if c.applicable and c.reason is None else (c.reason or c.detail)
        out.append(f"<tr{cls}><td>{escape(THEOREM_LABELS.get(name, name))}{mark}</td>"
                   f'<td class="num">{display.upper(c.epsilon, 6)}</td><td class="num">{display.upper(c.delta, 3)}</td>'
                   f'<td class="num">{"—" if c.epsilon_lower is None else display.lower(c.epsilon_lower, 6)}</td><td>{escape(note or "")}</td></tr>')
    out.append("</table>")
    if best:
        spend = totals[best].epsilon
        out.append(f"<p>Best valid total: <strong>ε = {display.upper(spend, 6)}</strong> ({escape(best)}), "
                   f"{spend / b.epsilon:.1%} of the global ε.</p>")

    if curve is not None:
        series = {name: [float(v) for v in curve.upper[name]] for name in curve.upper}
        out.append("<h2>Cost against the number of queries</h2>")
        out.append(line_plot([int(k) for k in curve.ks], series, title="total ε of the first k queries",
                             x_label="k (queries, in plan order)", y_label="total ε",
                             hline=b.epsilon, hline_label="global ε", vline=plan.k))

    out.append("<h2>Statistics</h2><table><tr><th>#</th><th>name</th><th>variable</th><th>kind</th>"
               "<th>mechanism</th><th>ε</th><th>δ</th><th>functioning ε′, δ′</th><th>reps</th>"
               "<th>held</th><th>noise scale</th><th>error</th><th>what it means</th></tr>")
    for i, (s, p) in enumerate(zip(plan.statistics, plan.privacy_all())):
        functioning = (f"{display.upper(p.functioning_epsilon)}, {display.upper(p.functioning_delta, 3)}"
                       if plan.amplification() != 1.0 else "same")
        meaning = p.explanation or p.problem or ""
        out.append(f"<tr><td>{i + 1}</td><td>{escape(s.name)}</td><td>{escape(s.variable)}</td>"
                   f"<td>{escape(s.kind.label)}</td><td>{escape(s.mechanism.label)}</td>"
                   f'<td class="num">{display.upper(p.epsilon)}</td><td class="num">{display.upper(p.delta, 3)}</td>'
                   f'<td class="num">{functioning}</td><td class="num">{s.repetitions}</td><td>{"yes" if s.held else ""}</td>'
                   f'<td class="num">{_num(p.scale, 4)}</td>'
                   f'<td class="num">{display.error_with_units(p.error, p.units) if p.error is not None else "—"}</td>'
                   f"<td>{escape(meaning)}</td></tr>")
    out.append("</table>")
    out.append("<h2>Formulas and sources</h2><dl>")
    out += [f"<dt>{k}</dt><dd>{v}</dd>" for k, v in SOURCES]
    out.append("</dl></body></html>")
    return "\n".join(out)


def save_report(plan: Plan, path: str | os.PathLike, **kwargs) -> None:
    try:
        atomic_write_text(path, render_report(plan, **kwargs))
    except OSError as exc:
        raise PlanFileError(f"{path}: cannot write the report: {exc.strerror or exc}") from None


__all__ = ["render_report", "save_report", "plan_totals", "plan_curve", "curve_eta"]
