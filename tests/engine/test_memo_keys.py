"""The engine's memories of a composition's pieces (grouped releases, starts, saddle points, upper
ends) are keyed by everything the piece depends on: plans that differ only in delta_g, eta, one
epsilon or one mechanism, composed one after another with the memories warm, give the bits each
gives composed cold. (A key that left one of those out would hand one plan another's total.)"""

from __future__ import annotations

import pytest

from dpplanner import engine
from dpplanner.engine.memo import forget

MECH = ["laplace", "gaussian", "discrete-laplace:1", "gaussian"] * 5
EPS = [0.1, 0.2, 0.05, 0.3] * 5


def _deltas(mech):
    return [1e-7 if m == "gaussian" else 0.0 for m in mech]


VARIANTS = [   # (epsilons, mechanisms, delta_g, eta)
    (EPS, MECH, 1e-5, 1e-3),
    (EPS, MECH, 1e-3, 1e-3),          # delta_g alone differs
    (EPS, MECH, 1e-3, 1e-5),          # eta alone differs (pld's bracket is narrower)
    (EPS[:-1] + [0.31], MECH, 1e-3, 1e-5),                # one epsilon
    (EPS, MECH[:-1] + ["laplace"], 1e-3, 1e-5),           # one mechanism (and its delta)
]


def _both_ends(eps, mech, delta_g, eta, theorem):
    r = engine.compose(eps, _deltas(mech), delta_g, theorem=theorem, eta=eta, mechanisms=mech)
    return r.epsilon, r.epsilon_lower


@pytest.mark.parametrize("theorem", ["pld", "zcdp"])
def test_compositions_in_a_row_equal_each_one_cold(theorem):
    cold = []
    for v in VARIANTS:
        forget()
        cold.append(_both_ends(*v, theorem))
    forget()
    warm = [_both_ends(*v, theorem) for v in VARIANTS]
    assert warm == cold
    if theorem == "pld":
        assert len(set(cold)) == len(cold)     # every variant's bracket is its own


def test_allocations_in_a_row_equal_each_one_cold():
    def run(delta_g, eta):
        held = [i == 0 for i in range(len(EPS))]
        result = engine.allocate(EPS, _deltas(MECH), held, [1.0] * len(EPS), 1.5, delta_g, theorem="pld",
                                 eta=eta, mechanisms=MECH)
        return tuple(result.epsilons), result.composition.epsilon, result.composition.epsilon_lower

    cases = [(1e-5, 1e-3), (1e-3, 1e-3), (1e-3, 1e-2)]
    cold = []
    for case in cases:
        forget()
        cold.append(run(*case))
    forget()
    assert [run(*case) for case in cases] == cold


def test_an_edit_s_allocation_is_the_same_whatever_edits_came_before():
    """synthetic-100's third benchmark edit (statistic 14 pinned at 1.05 of its epsilon): its plan
    allocated after the first two edits' allocations, after another plan's, and cold gives the
    same bits (the search starts from the plan's own scale, whatever the memories hold)."""
    from dpplanner.model import files
    from dpplanner.model.examples import example_path
    from dpplanner.model.redistribution import allocated

    plan = files.load_plan(example_path("synthetic-100"))

    def run(stats):
        done, allocation = allocated(plan.budget, stats)
        return [s.epsilon for s in done], allocation.composition.epsilon, allocation.composition.epsilon_lower

    def edited(stats, row, factor):
        changed = stats[row].replace(epsilon=stats[row].epsilon * factor, held=True)
        return stats[:row] + [changed] + stats[row + 1:]

    stats = list(plan.statistics)
    forget()
    for i in range(2):
        stats = [s.replace(epsilon=e) for s, e in zip(stats, run(edited(stats, 7 * i, (1.05, 0.95)[i]))[0])]
    third = edited(stats, 14, 1.05)
    after_edits = run(third)
    forget()
    run(edited(stats, 50, 0.95))
    after_another = run(third)
    forget()
    assert after_edits == after_another == run(third)
