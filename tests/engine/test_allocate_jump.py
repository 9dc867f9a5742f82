"""An allocation's scale search stops once its bracket straddles a jump of the total that
bisection cannot close (pld's whole total stopping on the first lattice at one scale and on a finer
one, ~2e-4 of the budget lower, at the next): on the fitting side, within the budget, the same
scale on every run, in a bounded number of compositions."""

from __future__ import annotations

import importlib
from types import SimpleNamespace

import pytest

from dpplanner import engine
from dpplanner.engine.memo import forget


def _jumping_search(slope):
    """A search of a total 0.5 t that jumps by 2e-4 at t = 1.9999, where it crosses the budget 1
    (5e-5 of it left below the jump); the scales it composed."""
    from dpplanner.engine.scale_search import ScaleSearch

    asked = []

    def composed(t, at, last=False):
        asked.append(t)
        return SimpleNamespace(epsilon=0.5 * t + (2e-4 if t >= 1.9999 else 0.0), extra=None)

    t = ScaleSearch(composed, 1.0, 1.0, "pld", ()).scale(1e-3, 1.99, slope)
    return t, asked


def test_a_bracket_over_a_jump_ends_on_its_fitting_side_in_few_compositions():
    t, asked = _jumping_search(0.5)
    assert t < 1.9999 and 0.5 * t <= 1.0
    # it leaves the jump's share below the budget and at most 1 / JUMP of the rise more
    assert 1.0 - 0.5 * t <= 5e-5 + 2.5e-4 / 8
    assert len(set(asked)) <= 7     # (14 bisecting the jump to its end)
    assert _jumping_search(0.5) == (t, asked)


def test_without_a_known_slope_the_search_bisects_the_jump_as_before():
    """No slope near (the first search of an allocation): no jump is told from a steep stretch."""
    t, asked = _jumping_search(0.0)
    assert 0 <= 1.0 - 0.5 * t <= 5e-5 + 1e-6 and len(set(asked)) > 10


def _benchmark_plan(edits):
    """synthetic-100 after the benchmark's first ``edits`` window edits (statistic 7i pinned at
    1.05 / 0.95 of its epsilon, the rest allocated), with the next edit made and not allocated."""
    from dpplanner.model import files
    from dpplanner.model.examples import example_path
    from dpplanner.model.redistribution import allocated

    plan = files.load_plan(example_path("synthetic-100"))
    stats = list(plan.statistics)
    for i in range(edits + 1):
        row = 7 * i % len(stats)
        stats[row] = stats[row].replace(epsilon=stats[row].epsilon * (1.05 if i % 2 == 0 else 0.95), held=True)
        if i < edits:
            stats = list(allocated(plan.budget, stats)[0])
    return plan.budget, stats


@pytest.mark.parametrize("edit", [35, 38])
def test_the_benchmark_s_late_edits_stop_at_the_jump_within_the_budget(monkeypatch, edit):
    """Edits 35 and 38: the whole total at the scale the upper ends found stops on the first
    lattice, over the budget, and one a hair below on the finer one: 20 and 22 compositions
    when the search bisected the jump to its end, 13 now; the certified total fits the budget."""
    from dpplanner.model.engine_inputs import allocation_request

    budget, stats = _benchmark_plan(edit)
    module = importlib.import_module("dpplanner.engine.allocate")
    request = allocation_request(budget, stats)
    runs = []
    for _ in range(2):
        forget()
        calls = []
        real_one, real_compose = module.compose_one, module.compose
        monkeypatch.setattr(module, "compose_one", lambda *a: calls.append(1) or real_one(*a))
        monkeypatch.setattr(module, "compose", lambda *a, **k: calls.append(1) or real_compose(*a, **k))
        result = request.run()
        monkeypatch.undo()
        runs.append(result.epsilons.tobytes())
        assert len(calls) <= 14
        assert result.waste >= 1e-6 and "jumps" in result.composition.extra["waste_reason"]
        forget()
        total = engine.compose(result.epsilons.tolist(), list(request.deltas), request.delta_g, request.theorem,
                               request.eta, list(request.multiplicities), mechanisms=list(request.mechanisms))
        assert total.epsilon == result.composition.epsilon <= request.epsilon_g
        assert result.waste < 2e-4
    assert runs[0] == runs[1]
