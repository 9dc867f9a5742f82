"""The window's curve and its Results table agree at the plan's own k: the plotted point there is
met with the plan's total (both sound upper bounds of the same total, to the plot's eta and to
the plan's), so hovering over it never reads above the table."""

from __future__ import annotations

import math

import numpy as np

from dpplanner import engine
from dpplanner.compute import jobs
from dpplanner.model.requests import EvaluateRequest


def _request(mode: str = "prefix") -> EvaluateRequest:
    # 254 small releases: the plot's curve (eta 1e-2) reads the optimal total ~1e-3 above the
    # total's own bracket (eta 1e-3)
    rng = np.random.default_rng(2)
    k = int(rng.integers(20, 300))
    rng.uniform(0.01, 0.3, k)
    eps = tuple(float(e) for e in rng.uniform(0.0005, 0.02, k))
    return EvaluateRequest(eps, (0.0,) * k, (1,) * k, delta_g=float(10.0 ** rng.uniform(-9, -4)), eta=1e-3,
                           curve_mode=mode)


def test_the_plotted_point_at_the_plans_k_is_met_with_its_total():
    request = _request()
    result = jobs.evaluate(request, engine.CancelToken(), lambda _f: None)
    raw = engine.curve(list(request.epsilons), list(request.deltas), request.delta_g, mode="prefix",
                       points=request.curve_points, lower=False)
    assert raw.upper["optimal"][-1] > result.totals["optimal"].epsilon      # the case this is about
    assert int(result.curve.ks[-1]) == request.k
    for name, total in result.totals.items():
        plotted, alone = result.curve.upper[name], raw.upper[name]
        assert np.array_equal(plotted[:-1], alone[:-1], equal_nan=True)    # only the plan's own k
        if total.applicable and not math.isnan(total.epsilon):
            assert plotted[-1] == min(alone[-1], total.epsilon)
        else:
            assert plotted[-1] == alone[-1] or (math.isnan(plotted[-1]) and math.isnan(alone[-1]))


def test_a_repeated_querys_curve_is_not_met_with_the_plans_totals():
    request = _request("repeat")
    result = jobs.evaluate(request, engine.CancelToken(), lambda _f: None)
    raw = engine.curve([request.epsilons[0]], [0.0], request.delta_g, mode="repeat", k_max=request.k,
                       points=request.curve_points, lower=False)
    for name in result.totals:
        assert np.array_equal(result.curve.upper[name], raw.upper[name], equal_nan=True)
