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
