"""allocate(): the largest scale that fits the budget, verified, wasting < 1e-6 of it."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine import BudgetError, allocate, compose


def test_basic_allocation_is_exact_share():
    a = allocate([0.5, 0.0, 0.0], [0.0] * 3, [True, False, False], [1.0, 1.0, 2.0], 2.0, 1e-6, theorem="basic")
    assert a.scale == pytest.approx(0.5, rel=1e-9)
    assert a.epsilons.tolist() == pytest.approx([0.5, 0.5, 1.0], rel=1e-9)
    assert a.epsilons[0] == 0.5  # held stays exactly as given
    assert a.composition.epsilon <= 2.0 and a.waste < 1e-6


@pytest.mark.parametrize("theorem", ["basic", "advanced", "filter", "concurrent", "optimal"])
def test_allocation_fits_and_wastes_little(theorem):
    eps = [0.05, 0.1, 0.1, 0.2]
    deltas = [1e-8, 0.0, 0.0, 1e-9]
    a = allocate(eps, deltas, [True, False, False, False], [1, 1, 3, 0.5], 1.0, 1e-6, theorem=theorem,
                 eta=1e-3, multiplicities=[2, 10, 5, 3])
    forward = compose(a.epsilons.tolist(), deltas, 1e-6, theorem, eta=1e-3, multiplicities=[2, 10, 5, 3])
    assert forward.epsilon <= 1.0
    assert a.composition.epsilon == forward.epsilon
    assert a.waste == pytest.approx((1.0 - forward.epsilon) / 1.0)
    assert 0 <= a.waste < 1e-6
    free = a.epsilons[1:] / np.array([1, 3, 0.5])
    assert np.allclose(free, a.scale, rtol=1e-12)


def test_kov_allocation_when_everything_is_free():
    a = allocate([0.1] * 4, [0.0] * 4, [False] * 4, [1] * 4, 1.0, 1e-6, theorem="kov", multiplicities=[25] * 4)
    assert a.composition.epsilon <= 1.0 and a.waste < 1e-6
    assert a.scale > 0.01  # kov beats basic's 1/100


def test_held_alone_exceeding_budget_names_them():
    with pytest.raises(BudgetError, match=r"held queries \[1, 3\] \(counted from 1\) alone need epsilon = 1.2.*release some") as err:
        allocate([0.6, 0.1, 0.6], [0.0] * 3, [True, False, True], [1, 1, 1], 1.0, 1e-6, theorem="basic")
    assert err.value.held_indices == (0, 2)


@pytest.mark.parametrize("theorem", ["basic", "kov"])
def test_a_refusal_with_nothing_held_names_what_is_there(theorem):
    # Free discrete releases are given at least 2^-64 each: at a budget below what that costs, the
    # refusal names them (it named "the held queries []" alone).
    with pytest.raises(BudgetError) as err:
        allocate([0.1, 0.1], [0.0] * 2, [False, False], [1, 1], 1e-19, 1e-6, theorem=theorem,
                 mechanisms=["discrete-laplace"] * 2)
    assert "[]" not in str(err.value) and err.value.held_indices == ()
    assert "free discrete (OpenDP) queries [1, 2] (counted from 1), the discrete ones at the least epsilon" \
        in str(err.value)
    with pytest.raises(BudgetError, match=r"queries \[1, 2, 3, 4, 5\] and 3 more \(counted from 1\)") as err:
        allocate([0.1] * 8, [0.0] * 8, [False] * 8, [1] * 8, 1e-19, 1e-6, theorem="basic",
                 mechanisms=["discrete-laplace"] * 8)
    assert sorted(err.value.floored) == list(range(8)) and err.value.needed > 1e-19
    with pytest.raises(BudgetError, match=r"queries \[2\] and the held queries \[1\] \(counted from 1\)"):
        allocate([1e-19, 0.1], [0.0] * 2, [True, False], [1, 1], 1e-19, 1e-6, theorem="basic",
                 mechanisms=["laplace", "discrete-laplace"])


def test_a_discrete_gaussian_is_never_given_less_than_its_sigma_allows():
    # Shift 1.5e12 lattice steps at delta 2.5e-7: below eps ~1.67e-5 its sigma would pass 2^57.
    # At epsilon_g 1e-15 a probe of the search failed with the calibration's ValueError.
    from dpplanner.engine import discrete_gaussian_sigma
    from dpplanner.engine.validation import least_epsilon

    tag = "discrete-gaussian:1511828488214"
    least = least_epsilon(tag, 2.5e-7)
    assert discrete_gaussian_sigma(least, 2.5e-7, 1511828488214) <= 2.0 ** 57
    with pytest.raises(ValueError, match="sigma above"):
        discrete_gaussian_sigma(least / 1.01, 2.5e-7, 1511828488214)
    with pytest.raises(BudgetError, match=r"up to 1.67e-05: below it query 1's discrete Gaussian noise would "
                                          r"need a sigma above 2\^57 lattice units.*raise the budget"):
        allocate([0.1, 0.1], [2.5e-7, 0.0], [False, False], [1, 1], 1e-15, 1e-6, theorem="pld",
                 mechanisms=[tag, "discrete-laplace"])
    a = allocate([0.1, 0.1], [2.5e-7, 0.0], [False, False], [1, 1], 3.3e-5, 1e-6, theorem="pld",
                 mechanisms=[tag, "discrete-laplace"])
    assert a.epsilons[0] >= least and a.composition.epsilon <= 3.3e-5


def test_a_refusal_with_nothing_held_or_floored_names_neither(monkeypatch):
    """A theorem whose total at epsilon 0 were above the budget (none is known: a bound's slack)."""
    import importlib
    from dataclasses import replace

    module = importlib.import_module("dpplanner.engine.allocate")
    real = module.compose_one
    monkeypatch.setattr(module, "compose_one", lambda *args: replace(real(*args), epsilon=1.0))
    with pytest.raises(BudgetError, match=r"^with every query at epsilon 0 the releases still need epsilon = 1 "):
        allocate([0.1, 0.1], [0.0] * 2, [False, False], [1, 1], 0.5, 1e-6, theorem="basic")


def test_no_free_query():
    with pytest.raises(BudgetError, match="no query is free"):
        allocate([0.1, 0.1], [0.0] * 2, [True, True], [1, 1], 1.0, 1e-6, theorem="basic")


def test_infeasible_deltas_are_a_budget_error():
    with pytest.raises(BudgetError, match="no allocation is possible: delta_g"):
        allocate([0.1, 0.1], [1e-5, 0.0], [True, False], [1, 1], 1.0, 1e-6, theorem="advanced")


def test_allocation_reports_progress_and_can_be_cancelled():
    from dpplanner.engine import CancelToken, Cancelled

    seen = []
    allocate([0.1, 0.1], [0.0, 0.0], [True, False], [1, 1], 1.0, 1e-6, theorem="advanced", progress=seen.append)
    assert seen and seen[-1] == 1.0 and seen == sorted(seen)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled, match="cancelled"):
        allocate([0.1, 0.1], [0.0, 0.0], [True, False], [1, 1], 1.0, 1e-6, theorem="optimal", cancel=token)


@pytest.mark.parametrize("theorem, per_query", [
    ("basic", 0.01),
    ("advanced", 0.01984700011),   # KOV Thm 3.5 wins among the advanced forms
    ("kov", 0.02401108040),
    ("optimal", 0.02401108040),
])
def test_inverse_vector_per_query_epsilon(theorem, per_query):
    # formulas.md §9 "inverse": per-query eps for (eps_g, delta_g) = (1, 1e-6), k = 100, delta_i = 0
    a = allocate([0.0], [0.0], [False], [1.0], 1.0, 1e-6, theorem=theorem, multiplicities=[100])
    assert a.epsilons[0] == pytest.approx(per_query, rel=1e-6)
    assert a.composition.epsilon <= 1.0 and a.waste < 1e-6


def _counting(monkeypatch):
    """How many compositions the search runs (the final forward check is not counted)."""
    import importlib

    module = importlib.import_module("dpplanner.engine.allocate")  # (the package exports the function)
    calls = []
    real = module.compose_one
    monkeypatch.setattr(module, "compose_one", lambda *args: calls.append(args) or real(*args))
    return calls


MIXED = dict(deltas=[1e-9, 0.0, 1e-8, 0.0, 0.0], multiplicities=[3, 10, 4, 7, 2],
             mechanisms=["gaussian", "laplace", "gaussian", "laplace", "eps-delta"])


@pytest.mark.parametrize("theorem", ["basic", "optimal", "pld"])
def test_the_search_starts_from_the_scale_the_free_queries_have(theorem, monkeypatch):
    """After an edit the plan was balanced a moment ago: the search starts there and ends in a few
    compositions (up from t = 0 it takes about ten), spending the budget as closely as before.
    An allocation's own result is kept to the bit (pld composes a scale a hair below it first,
    scale_search.OFF, then the own scale)."""
    held, weights = [False, False, True, False, False], [1, 2, 1, 1, 3]
    first = allocate([0.01] * 5, MIXED["deltas"], held, weights, 1.0, 1e-6, theorem=theorem,
                     multiplicities=MIXED["multiplicities"], mechanisms=MIXED["mechanisms"])
    calls = _counting(monkeypatch)
    again = allocate(first.epsilons.tolist(), MIXED["deltas"], held, weights, 1.0, 1e-6, theorem=theorem,
                     multiplicities=MIXED["multiplicities"], mechanisms=MIXED["mechanisms"])
    assert len(calls) == (2 if theorem == "pld" else 1) and again.epsilons.tolist() == first.epsilons.tolist()

    edited = first.epsilons.copy()
    edited[2] *= 1.05                       # the held query was retyped
    calls.clear()
    after = allocate(edited.tolist(), MIXED["deltas"], held, weights, 1.0, 1e-6, theorem=theorem,
                     multiplicities=MIXED["multiplicities"], mechanisms=MIXED["mechanisms"])
    assert len(calls) <= 5
    assert after.epsilons[2] == edited[2] and after.scale < first.scale
    assert after.composition.epsilon <= 1.0 and after.waste < 1e-6


@pytest.mark.parametrize("start", [1e-12, 1e3])
def test_a_far_or_useless_starting_scale_still_allocates(start):
    held, weights = [False, False, True, False, False], [1, 2, 1, 1, 3]
    eps = [start * w for w in weights]
    eps[2] = 0.05
    a = allocate(eps, MIXED["deltas"], held, weights, 1.0, 1e-6, theorem="pld",
                 multiplicities=MIXED["multiplicities"], mechanisms=MIXED["mechanisms"])
    forward = compose(a.epsilons.tolist(), MIXED["deltas"], 1e-6, "pld", multiplicities=MIXED["multiplicities"],
                      mechanisms=MIXED["mechanisms"])
    assert forward.epsilon == a.composition.epsilon <= 1.0 and a.waste < 1e-6


def test_held_queries_over_the_budget_are_named_whatever_the_starting_scale():
    with pytest.raises(BudgetError, match=r"held queries \[1, 3\] \(counted from 1\) alone need") as err:
        allocate([0.6, 0.3, 0.6], [0.0] * 3, [True, False, True], [1, 1, 1], 1.0, 1e-6, theorem="optimal")
    assert err.value.held_indices == (0, 2)


def test_a_flat_stretch_of_the_total_hands_the_bracket_to_brent(monkeypatch):
    """A total that is flat between two secant points (a step function of t) stops the secant;
    with both sides of the crossing known, Brent continues there instead of restarting from 0."""
    import importlib
    import math

    from dpplanner.engine.types import Composition

    module = importlib.import_module("dpplanner.engine.allocate")
    scales = []

    def stepped(theorem, inputs):
        scales.append(float(inputs.plan.eps[1]))
        return Composition("basic", 0.1 + math.ceil(float(inputs.plan.eps[1]) * 8) / 8, 1e-6)

    monkeypatch.setattr(module, "compose_one", stepped)
    monkeypatch.setattr(module, "compose", lambda eps, *a, **k: Composition(
        "basic", 0.1 + math.ceil(eps[1] * 8) / 8, 1e-6))
    a = allocate([0.1, 0.43], [0.0, 0.0], [True, False], [1, 1], 1.0, 1e-6, theorem="basic")
    assert 0.0 not in scales
    assert a.composition.epsilon <= 1.0 and 0.875 * (1 - 1e-9) <= a.scale <= 0.875
    assert "jumps" in a.composition.extra["waste_reason"]


def test_where_the_total_jumps_the_search_stops_once_the_scales_are_1e_9_apart(monkeypatch):
    """A total that jumps past the budget between two scales (pld's bracket stopping on another
    lattice) leaves the waste above 1e-6 however close they come; once they are 1e-9 apart the
    search stops (a continuous total moves ~1e-9 there) instead of bisecting to the last bit,
    23 compositions more here."""
    import importlib

    from dpplanner.engine.types import Composition

    module = importlib.import_module("dpplanner.engine.allocate")
    jump = 0.4321

    def total(t: float) -> float:        # continuous, but 1e-4 higher from t = jump on
        return 0.1 + t + (1e-4 if t >= jump else 0.0)

    asked = []
    monkeypatch.setattr(module, "compose_one", lambda theorem, inputs: asked.append(1) or Composition(
        "basic", total(float(inputs.plan.eps[1])), 1e-6))
    monkeypatch.setattr(module, "compose", lambda eps, *a, **k: Composition("basic", total(eps[1]), 1e-6))
    a = allocate([0.1, 0.43], [0.0, 0.0], [True, False], [1, 1], 0.1 + jump + 5e-5, 1e-6, theorem="basic")
    assert a.composition.epsilon <= 0.1 + jump + 5e-5 and jump * (1 - 2e-9) <= a.scale < jump
    assert len(asked) <= 25     # (45 bisecting to the last bit)


def test_the_warm_start_takes_a_scale_within_8e_7_below_the_budget():
    """A scale whose total is within 8e-7 below the budget ends the search: the waste allowed is
    1e-6, and the next secant step would buy at most that (a whole composition)."""
    from dpplanner.engine.scale_search import search_near

    totals = iter([1.0 + 1e-3, 1.0 + 1e-4, 1.0 - 7e-7, 1.0 - 1e-9])
    asked = []

    def excess(t, last=False):
        asked.append(t)
        return next(totals) - 1.0

    t_ok, t_over = search_near(0.5, excess, 1.0)
    assert len(asked) == 3 and t_ok == t_over == asked[-1]


def test_the_warm_start_aims_below_the_budget_within_the_window_it_accepts():
    """Each step aims below the budget, not at the budget itself: a total a hair above the budget
    (a quarter of the 100-query example's edits landed 1e-10 to 1e-7 above it) costs one more
    composition. A secant step aims 1e-7 below; a step along the model of the bend (the first
    one here: on a total linear in t it is exact) at the middle of the window, 4e-7 below."""
    from dpplanner.engine.scale_search import search_near

    asked = []

    def excess(t, last=False):          # total = 2 t: the proportional step is exact
        asked.append(t)
        return 2.0 * t - 1.0

    t_ok, _ = search_near(0.6, excess, 1.0)
    assert len(asked) == 2 and 2.0 * t_ok - 1.0 == pytest.approx(-4e-7, rel=5e-2)


def test_the_first_step_scales_only_the_free_queries_share_of_the_total(monkeypatch):
    """Pinned statistics hold their part of the total: under basic composition (the total is the
    plain sum) the first step lands 1e-7 below the budget at once. Counting the pins as scaling
    with t, as a proportional step does, under-stepped by their share (here 5x): more steps."""
    calls = _counting(monkeypatch)
    eps = [0.16] * 5 + [0.01] * 5         # five pins hold 0.8 of the budget of 1; the free 0.05
    a = allocate(eps, [0.0] * 10, [True] * 5 + [False] * 5, [1] * 10, 1.0, 1e-6, theorem="basic")
    assert len(calls) == 2 and 0 <= a.waste < 1e-6
    assert a.epsilons[:5].tolist() == eps[:5]


def test_a_fine_eta_is_searched_at_a_coarser_one_and_only_the_answer_composed_at_eta(monkeypatch):
    """eta far finer than the budget needs: the search composes at 2e-4 of epsilon_g and only its
    answer at eta (an upper end converges far faster than the lower one: 1 composition of ~40 s
    instead of 4 on 300 distinct pinned releases at 1e-6 of 0.25). The answer is certified at eta,
    fits the budget and wastes under 1e-6 of it."""
    calls = _counting(monkeypatch)
    n = 12
    eps = [1e-2 * (1 + i / 10) for i in range(n - 3)] + [0.05] * 3
    held, mechanisms = [True] * (n - 3) + [False] * 3, ["laplace"] * n
    a = allocate(eps, [0.0] * n, held, [1] * n, 1.0, 1e-6, theorem="pld", eta=5e-5, mechanisms=mechanisms)
    etas = [inputs.eta for _, inputs in calls]
    assert etas.count(5e-5) == 1 and set(etas) == {5e-5, 2e-4}
    forward = compose(a.epsilons.tolist(), [0.0] * n, 1e-6, "pld", eta=5e-5, mechanisms=mechanisms)
    assert forward.epsilon == a.composition.epsilon <= 1.0 and 0 <= a.waste < 1e-6
    assert a.epsilons[:n - 3].tolist() == eps[:n - 3]


def test_a_time_limit_reached_at_eta_keeps_the_coarse_search_answer(monkeypatch):
    """The limit passes just as the coarse search's answer is composed at eta: that composition
    gives a cheaper bound, the coarse one of the same epsilons is kept (also certified), and the
    plan spends the budget as closely as without the limit instead of searching down on the
    cheaper bounds."""
    import importlib

    from dpplanner.engine.memo import forget
    from dpplanner.engine.optimal import deadline

    module = importlib.import_module("dpplanner.engine.allocate")
    n = 12
    eps = [1e-2 * (1 + i / 10) for i in range(n - 3)] + [0.05] * 3
    args = (eps, [0.0] * n, [True] * (n - 3) + [False] * 3, [1] * n, 1.0, 1e-6)
    kwargs = dict(theorem="pld", eta=5e-5, mechanisms=["laplace"] * n)
    free = allocate(*args, **kwargs)
    forget()
    clock = [0.0]
    real = module.compose_one

    def compose_one(theorem, inputs):
        if inputs.eta == 5e-5:
            clock[0] = 1e9          # the limit passes as the answer is composed at eta
        return real(theorem, inputs)

    monkeypatch.setattr(deadline, "now", lambda: clock[0])
    monkeypatch.setattr(module, "compose_one", compose_one)
    limited = allocate(*args, **kwargs, time_limit=100)
    assert limited.composition.extra["time_limited"] and "stopped at the time limit" in \
        limited.composition.extra["waste_reason"]
    assert limited.scale == free.scale and limited.composition.epsilon <= 1.0 and limited.waste < 1e-5


def test_an_allocation_is_never_returned_over_budget_even_when_no_step_down_fits(monkeypatch):
    # the forward composition that verifies the search's answer disagrees with it at every scale,
    # t = 0 included (the warm start never composes t = 0 itself): a refusal, not an overspending plan
    import dataclasses
    import sys
    allocate_module = sys.modules["dpplanner.engine.allocate"]      # (the package's name is the function)
    real = allocate_module.compose

    def over(*args, **kwargs):
        return dataclasses.replace(real(*args, **kwargs), epsilon=2.0)
    monkeypatch.setattr(allocate_module, "compose", over)
    with pytest.raises(BudgetError, match=r"held queries \[2\] \(counted from 1\) alone need epsilon = 2") as err:
        allocate([0.2, 0.3, 0.2], [0.0] * 3, [False, True, False], [1, 1, 1], 1.0, 1e-6, theorem="basic")
    assert err.value.held_indices == (1,)


def test_where_only_a_jump_is_left_the_search_stops_at_the_waste_allowed(monkeypatch):
    """The search at eta goes on from the coarse search's answer along its slope; there the total
    jumps past the budget (pld's bracket stopping on one lattice or the next by turns). Once twice
    that slope times the distance left between the best fitting and the least over-budget scale is
    below the waste allowed, closing in on the jump cannot raise the total by that much: the search
    stops there (5e-7 apart instead of 1e-9: 11 compositions at eta here instead of 20)."""
    import importlib

    from dpplanner.engine.types import Composition

    module = importlib.import_module("dpplanner.engine.allocate")
    jump = 0.9 - 5e-5
    asked = []

    def total(t: float, eta: float) -> float:     # at eta 1e-4 higher from t = jump on
        return 0.1 + t + (1e-4 if eta < 2e-4 and t >= jump else 0.0)

    def compose_one(theorem, inputs):
        asked.append(inputs.eta)
        return Composition("basic", total(float(inputs.plan.eps[1]), inputs.eta), 1e-6)

    monkeypatch.setattr(module, "compose_one", compose_one)
    monkeypatch.setattr(module, "compose", lambda eps, *a, **k: Composition("basic", total(eps[1], 1e-5), 1e-6))
    a = allocate([0.1, 0.85], [0.0, 0.0], [True, False], [1, 1], 1.0, 1e-6, theorem="basic", eta=1e-5)
    assert a.composition.epsilon <= 1.0 and jump - 5e-7 <= a.scale < jump
    assert "jumps" in a.composition.extra["waste_reason"]
    assert asked.count(1e-5) <= 12
