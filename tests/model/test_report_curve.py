"""The report's cost plot meets the plan's totals at the plan's own k, as the window's plot and
``dpplanner-cli curve`` do, also when the report computes the curve itself (no current result in
the window, or its plot showing one query repeated: the export then gives totals only)."""

from __future__ import annotations

import math

import pytest

from dpplanner import engine
from dpplanner.model import report
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan
from dpplanner.model.report import plan_curve, plan_totals, render_report


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


@pytest.fixture
def plotted(monkeypatch):
    seen = {}
    real = report.line_plot

    def capture(xs, series, **kwargs):
        seen.update(xs=list(xs), series=dict(series))
        return real(xs, series, **kwargs)

    monkeypatch.setattr(report, "line_plot", capture)
    return seen


@pytest.mark.parametrize("given", ["nothing", "totals"])
def test_the_reports_own_curve_is_met_with_the_totals_at_the_plans_k(plotted, given):
    plan = load_plan(example_path("census"))
    totals, best = plan_totals(plan)
    unmet = plan_curve(plan)
    assert unmet.upper["optimal"][-1] > totals["optimal"].epsilon       # the case this is about
    render_report(plan, **({"totals": totals, "best": best} if given == "totals" else {}))
    assert plotted["xs"][-1] == plan.k
    for name, total in totals.items():
        points, alone = plotted["series"][engine.theorem(name).label], unmet.upper[name]
        assert all(_same(p, float(a)) for p, a in zip(points[:-1], alone[:-1])), name
        met = min(float(alone[-1]), total.epsilon) if total.applicable else float(alone[-1])
        assert _same(points[-1], met), name
    assert plotted["series"][engine.theorem("optimal").label][-1] == totals["optimal"].epsilon
