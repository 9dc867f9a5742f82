"""The engine's inputs are built from remembered per-statistic derivations (opendp_sensitivity's
certifications, opendp_noise's tags): whatever the memories hold, the inputs are bit for bit those
of the uncached path (every memory forgotten first), also after the budget fields they depend on
change."""

from dataclasses import replace

import pytest

from dpplanner.engine.memo import forget
from dpplanner.model import files
from dpplanner.model.engine_inputs import allocation_request, composition_inputs, with_epsilons
from dpplanner.model.examples import EXAMPLE_NAMES, example_path
from dpplanner.model.opendp_noise import opendp_tags
from dpplanner.model.opendp_sensitivity import certified
from dpplanner.model.statistic import Budget, Kind, Neighbouring, Statistic


def _cold(budget, stats):
    forget()
    return composition_inputs(budget, stats), allocation_request(budget, stats, 3)


def _warm(budget, stats):
    return composition_inputs(budget, stats), allocation_request(budget, stats, 3)


def _variants(budget: Budget) -> list[Budget]:
    """The budget fields a certification reads, each changed (and the epsilon, which it does not)."""
    n = budget.dataset_size or 1000
    return [replace(budget, contributions=2), replace(budget, dataset_size=n // 7 + 1),
            replace(budget, neighbouring=Neighbouring.REPLACE_ONE, dataset_size=n),
            replace(budget, epsilon=budget.epsilon / 2)]


@pytest.mark.parametrize("name", [n for n in EXAMPLE_NAMES if n != "synthetic-1000"])
def test_inputs_after_other_budgets_and_edits_are_the_uncached_ones(name):
    plan = files.load_plan(example_path(name))
    budget, stats = plan.budget, tuple(plan.statistics)
    for variant in _variants(budget):
        expected = _cold(variant, stats)
        forget()
        _warm(budget, stats)                # the memories now hold the plan's own budget's
        assert _warm(variant, stats) == expected
        assert _warm(variant, stats) == expected            # (and their own, remembered)
    # an edit: one statistic's epsilon, then a redistribution's new epsilons for every one
    _warm(budget, stats)
    edited = list(stats)
    edited[0] = edited[0].replace(epsilon=edited[0].epsilon * 0.95)
    moved = with_epsilons(edited, [s.epsilon * 1.0625 for s in edited])
    for state in (tuple(edited), moved):
        warm = _warm(budget, state)
        assert warm == _cold(budget, state)


def test_a_change_of_contributions_or_relation_changes_the_tags():
    """(So that the test above sees a stale memory: the tags it compares do move.)"""
    plan = files.load_plan(example_path("synthetic-100"))
    budget, stats = plan.budget, tuple(plan.statistics)
    base = _cold(budget, stats)[0].mechanisms
    for variant in _variants(budget)[:3]:
        assert _cold(variant, stats)[0].mechanisms != base


@pytest.mark.parametrize("field, value", [("dataset_size", 2000), ("contributions", 3),
                                          ("neighbouring", Neighbouring.REPLACE_ONE)])
def test_a_certification_follows_each_budget_field_it_reads(field, value):
    budget = Budget(dataset_size=1000)
    stats = [Statistic("p", kind=Kind.PROPORTION), Statistic("m", "x", Kind.MEAN, lower=0.0, upper=9.5),
             Statistic("h", "x", Kind.HISTOGRAM, bins=4)]
    changed = replace(budget, **{field: value})
    forget()
    expected = [certified(stat, changed) for stat in stats]
    forget()
    before = [certified(stat, budget) for stat in stats]
    assert before != expected                       # (the field does move some certification)
    assert [certified(stat, changed) for stat in stats] == expected


def test_a_tag_follows_its_epsilon_and_delta():
    cert = certified(Statistic("c", kind=Kind.COUNT), Budget())
    forget()
    assert opendp_tags([(cert, False, 0.1, 0.0)]) == ["discrete-laplace:1"]
    assert opendp_tags([(cert, False, 2000.0, 0.0)]) == ["eps-delta"]      # epsilon beyond 1024
    assert opendp_tags([(cert, True, 0.2, 1e-7)]) == ["discrete-gaussian:1"]
    assert opendp_tags([(cert, True, 0.2, 0.0)]) == ["eps-delta"]          # no delta
    assert opendp_tags([(cert, True, 0.2, 1e-7), (cert, False, 0.1, 0.0)]) == \
        ["discrete-gaussian:1", "discrete-laplace:1"]
