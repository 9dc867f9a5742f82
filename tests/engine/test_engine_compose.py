"""compose / compose_all / best: dispatch, infeasible targets, not-applicable theorems, timings."""

from __future__ import annotations

import math

import pytest

from dpplanner.engine import THEOREMS, CancelToken, Cancelled, NotApplicable, best, compose, compose_all
from dpplanner.engine.types import Composition


def test_theorem_names():
    assert THEOREMS == ("basic", "advanced", "kov", "optimal", "concurrent", "filter", "pld", "zcdp")


@pytest.mark.parametrize("theorem", ["basic", "advanced", "filter", "optimal", "concurrent", "kov"])
def test_infeasible_delta_gives_inf_with_reason(theorem):
    r = compose([0.1] * 3, [1e-6] * 3, 1e-6, theorem)
    assert r.epsilon == math.inf and not r.feasible
    assert r.reason and "delta" in r.reason


def test_delta_g_zero_gives_pure_sum():
    for theorem in ("basic", "advanced", "optimal", "filter"):
        r = compose([0.1, 0.25], [0.0, 0.0], 0.0, theorem)
        assert r.epsilon == pytest.approx(0.35, rel=1e-12) and r.epsilon >= 0.35, theorem


def test_kov_not_applicable_on_unequal_queries():
    with pytest.raises(NotApplicable, match=r"kov applies only when all queries are equal: query 2 .* but query 1 "):
        compose([0.1, 0.2], [0.0, 0.0], 1e-6, "kov")
    with pytest.raises(NotApplicable, match=r"query 2 is \(eps=0.1, delta=1e-07\)"):
        compose([0.1, 0.1], [0.0, 1e-7], 1e-6, "kov")


def test_compose_all_never_raises_for_kov_and_fills_seconds():
    results = compose_all([0.1, 0.2, 0.3], [0.0, 0.0, 1e-8], 1e-6, eta=1e-2)
    assert tuple(results) == THEOREMS
    kov = results["kov"]
    assert not kov.applicable and math.isnan(kov.epsilon) and "all queries are equal" in kov.reason
    for name, r in results.items():
        assert r.theorem == name
        assert r.seconds > 0
    assert best(results) == "optimal"
    assert results[best(results)].epsilon == min(r.epsilon for r in results.values() if r.applicable)


def test_compose_all_subset_and_progress():
    seen = []
    results = compose_all([0.1] * 4, [0.0] * 4, 1e-6, theorems=("basic", "advanced"), progress=seen.append)
    assert tuple(results) == ("basic", "advanced")
    assert seen and seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)
    assert seen == sorted(seen)


def test_compose_all_honours_cancel():
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled, match="cancelled"):
        compose_all([0.1] * 4, [0.0] * 4, 1e-6, cancel=token)


def test_best_prefers_smaller_and_ignores_not_applicable():
    res = {
        "basic": Composition("basic", 3.0, 0.0),
        "kov": Composition("kov", math.nan, 0.0, applicable=False),
        "advanced": Composition("advanced", 2.0, 1e-6),
        "filter": Composition("filter", math.inf, 1e-6, reason="x"),
    }
    assert best(res) == "advanced"
    with pytest.raises(ValueError, match="no applicable result"):
        best({"kov": res["kov"]})


def test_concurrent_reports_both_results():
    eps, delta = [1, 0.5, 0.1], [1e-6, 1e-5, 1e-4]
    r = compose(eps, delta, 1e-3, "concurrent", eta=1e-2)
    assert r.extra["Vadhan-Wang order"] == [2, 1, 0]
    assert r.extra["Vadhan-Wang delta"] == pytest.approx(1.128738280e-4, rel=1e-8)
    assert r.extra["Vadhan-Wang 2021"] >= 1.6
    assert r.detail.startswith("Lyu22/VZ23")
    assert r.epsilon == compose(eps, delta, 1e-3, "optimal", eta=1e-2).epsilon


def test_concurrent_pure_dp_equals_optimal_vector():
    r = compose([0.1] * 5 + [0.5] * 5, [0.0] * 10, 1e-5, "concurrent", eta=1e-3)
    assert r.epsilon >= 2.997312688 * (1 - 1e-9)
    assert r.epsilon <= 2.997312688 + 1e-3
