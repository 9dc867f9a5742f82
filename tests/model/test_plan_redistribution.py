"""Redistribution of a plan's budget: weights, holds, pins and targets, and its refusals."""

from __future__ import annotations

import dataclasses

import pytest
from plan_fixtures import Recorder, assert_refused, sample_plan

from dpplanner import engine
from dpplanner.model import (AllocationRequest, Budget, Kind, Mechanism, Neighbouring, Plan, PlanError,
                             PlanEvent, Statistic)
from dpplanner.model.redistribution import rebalance, rebalanced_edit
from dpplanner.model.statistic import Noise
from dpplanner.model.validation import check_holds


# --- redistribution ---------------------------------------------------------------------------------

def _spent_basic(plan):
    return sum(s.epsilon * s.repetitions for s in plan)


def test_rebalance_spends_the_budget_with_weights_and_holds():
    plan = sample_plan()
    plan.update_statistic(0, plan[0].replace(held=True, epsilon=0.2))
    rebalance(plan)
    assert plan[0].epsilon == 0.2
    assert plan[2].epsilon == pytest.approx(2 * plan[1].epsilon, rel=1e-9)   # weight 2 vs 1
    assert _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    assert _spent_basic(plan) <= 1.0 + 1e-12


def test_reserve_keeps_part_of_the_budget():
    plan = sample_plan(reserve=0.25)
    rebalance(plan)
    assert _spent_basic(plan) == pytest.approx(0.75, rel=1e-6)


def test_rebalanced_edit_is_atomic_and_notifies_once():
    plan = sample_plan()
    rec = Recorder(plan)
    rebalanced_edit(plan, lambda p: p.append(Statistic("extra")))
    assert _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    assert rec.events == [PlanEvent("inserted", (3,), rebalanced=True)]


def test_two_chained_edits_whose_redistribution_moves_nothing_are_both_announced():
    """Two edits made on one trial (the window chains an edit typed while the first waits for
    its redistribution) and a redistribution that moved no epsilon: the second edit's row was
    dropped with the first's event taken for "an edit and its redistribution", and a table
    following the events never drew it."""
    plan = sample_plan()
    rec = Recorder(plan)
    trial = plan.trial()
    trial.update_statistic(0, trial[0].replace(held=True))
    trial.update_statistic(2, trial[2].replace(held=True))
    trial.apply_allocation([s.epsilon for s in trial])       # (moves nothing: no event)
    plan.adopt(trial)
    assert rec.events == [PlanEvent("reset")]
    assert plan[0].held and plan[2].held


def test_an_edit_and_its_redistribution_are_one_event():
    plan = sample_plan()
    rec = Recorder(plan)
    trial = plan.trial()
    trial.update_statistic(0, trial[0].replace(held=True, epsilon=0.2))
    trial.apply_allocation([0.2, 0.1, 0.2])
    plan.adopt(trial)
    assert rec.events == [PlanEvent("changed", (0,), rebalanced=True)]


def test_held_statistics_alone_over_budget_are_refused_by_name():
    plan = sample_plan()
    plan.update_statistic(0, plan[0].replace(held=True, epsilon=0.6))
    rec = Recorder(plan)
    too_much = plan[2].replace(held=True, epsilon=0.5)
    with pytest.raises(PlanError, match=r"unpin or lower some of: 1 \('count'\), 3 \('hist'\)") as info:
        rebalanced_edit(plan, lambda p: p.update_statistic(2, too_much))
    assert info.value.held_indices == (0, 2)
    assert rec.events == [] and plan[2].held is False
    assert_refused(plan, rec, lambda: rebalanced_edit(plan, lambda p: p.update_statistic(2, too_much)),
                    "the pinned statistics alone need ε 1.1000")


def test_a_redistribution_that_succeeds_composes_the_pins_only_inside_the_allocation(monkeypatch):
    """An allocation that fits the budget proves the pins leave room: their own total (one more
    composition, ~25 ms of an edit under pld) is computed only to explain a refusal."""
    import dpplanner.model.redistribution as redistribution

    checked = []
    real = redistribution.check_holds
    monkeypatch.setattr(redistribution, "check_holds", lambda *a: checked.append(1) or real(*a))
    plan = sample_plan()
    plan.update_statistic(0, plan[0].replace(held=True, epsilon=0.2))
    rebalanced_edit(plan, lambda p: p.update_statistic(2, p[2].replace(held=True, epsilon=0.1)))
    assert checked == [] and _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(PlanError, match="the pinned statistics alone need"):
        rebalanced_edit(plan, lambda p: p.update_statistic(2, p[2].replace(held=True, epsilon=0.9)))
    assert checked == [1]       # (their plain sum 1.1 is over 1: checked first, refused at once)


def test_at_least_one_statistic_stays_free():
    plan = sample_plan()
    rec = Recorder(plan)
    plan.update_statistics({0: plan[0].replace(held=True), 1: plan[1].replace(held=True)})
    rec.events.clear()
    assert_refused(plan, rec, lambda: rebalanced_edit(
        plan, lambda p: p.update_statistic(2, plan[2].replace(held=True))),
                    "every statistic is pinned: at least one must stay free")


def test_target_error_edit_pins_that_statistic():
    plan = sample_plan()
    rebalance(plan)
    target = plan.privacy(0).error / 2           # twice as accurate
    rebalanced_edit(plan, lambda p: p.set_target_error(0, target))
    assert plan.privacy(0).error <= target * (1 + 1e-12)
    assert plan.privacy(0).error == pytest.approx(target, rel=1e-9)
    assert plan[0].held is True                   # pinned until the user unpins it
    assert _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    rebalanced_edit(plan, lambda p: p.append(Statistic("later")))
    assert plan.privacy(0).error == pytest.approx(target, rel=1e-9)


def test_custom_statistic_has_no_target_error():
    plan = sample_plan()
    plan.append(Statistic("pre", kind=Kind.CUSTOM, epsilon=0.05))
    with pytest.raises(PlanError, match="is custom: type its epsilon directly"):
        plan.epsilon_for_error(3, 1.0)


def test_allocation_request_and_apply_for_a_worker_thread():
    plan = sample_plan()
    plan.update_statistic(0, plan[0].replace(held=True))
    req = plan.allocation_request()
    assert isinstance(req, AllocationRequest) and req.held == (True, False, False)
    assert req.epsilon_g == 1.0 and req.theorem == "basic" and req.revision == plan.revision
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign"):
        req.epsilon_g = 2.0  # type: ignore[misc]
    result = req.run()
    plan.apply_allocation(list(result.epsilons), held=req.held, revision=req.revision)
    assert plan[0].epsilon == 0.2 and _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    # a result computed for an older state is refused
    rec = Recorder(plan)
    assert_refused(plan, rec, lambda: plan.apply_allocation([0.1, 0.1, 0.1], revision=req.revision),
                    "computed for revision")


def test_check_holds_names_statistics():
    plan = sample_plan()
    plan.update_statistic(1, plan[1].replace(held=True, epsilon=1.5))
    with pytest.raises(PlanError, match=r"2 \('mean'\)"):
        check_holds(plan.budget, plan.statistics)
    plan.update_statistic(1, plan[1].replace(epsilon=0.5))
    check_holds(plan.budget, plan.statistics)
    plan.update_statistics({0: plan[0].replace(held=True), 2: plan[2].replace(held=True)})
    with pytest.raises(PlanError, match="every statistic is pinned"):
        check_holds(plan.budget, plan.statistics)


def test_manual_mode_shows_over_budget():
    plan = sample_plan(reserve=0.5)
    plan.set_budget(redistribute=False)
    plan.update_statistic(0, plan[0].replace(epsilon=2.0))
    total = plan.total("basic").epsilon
    assert total == pytest.approx(2.4)
    balance = plan.balance(total)
    assert balance.over and balance.allowed == 0.5
    assert balance.describe().startswith("over budget by 1.9001 (480.1% of the spendable epsilon 0.5)")
    # rounded so that acting on them fits: 0.4 of 0.5 is 80.000000000000004% and leaves 0.0999...
    assert plan.balance(0.4).describe() == ("within budget: 80.1% of the spendable epsilon 0.5 "
                                            "(0.09999 left)")
    assert plan.balance(0.25).describe() == ("within budget: 50.0% of the spendable epsilon 0.5 "
                                             "(0.2500 left)")
    assert plan.balance(float("inf")).describe().startswith("infeasible")


def test_rebalance_under_advanced_spends_at_most_the_budget():
    plan = sample_plan(theorem="advanced")
    for i in range(30):
        plan.append(Statistic(f"c{i}", epsilon=0.01))
    rebalance(plan)
    total = plan.total("advanced").epsilon
    assert total <= 1.0 and total == pytest.approx(1.0, rel=1e-5)


def test_rebalance_under_optimal():
    plan = sample_plan(theorem="optimal")
    plan.set_budget(eta=1e-2)
    for i in range(20):
        plan.append(Statistic(f"c{i}", epsilon=0.01))
    rebalance(plan)
    total = plan.total("optimal")
    assert total.epsilon <= 1.0 and total.epsilon == pytest.approx(1.0, rel=1e-5)
    assert _spent_basic(plan) > 1.0            # optimal composition buys more than basic


def test_engine_allocation_matches_its_contract():
    # the request hands the engine exactly the plan's per-statistic rows
    plan = sample_plan()
    req = plan.allocation_request()
    direct = engine.allocate(list(req.epsilons), list(req.deltas), list(req.held), list(req.weights),
                             1.0, 1e-6, theorem="basic", multiplicities=list(req.multiplicities))
    assert list(direct.epsilons) == pytest.approx(list(req.run().epsilons))


def test_neighbouring_changes_errors():
    plan = sample_plan()
    e_add = plan.privacy(2).error
    plan.set_budget(neighbouring=Neighbouring.REPLACE_ONE)
    assert plan.privacy(2).error == pytest.approx(2 * e_add)
    plan.set_budget(neighbouring="add-remove")
    assert plan.budget.neighbouring is Neighbouring.ADD_REMOVE


def test_target_error_too_small_is_refused_with_the_epsilon_it_would_need():
    plan = sample_plan()
    rec = Recorder(plan)
    assert_refused(plan, rec, lambda: plan.set_target_error(0, 0.01),
                    r"statistic 1 \('count'\): an error of 0.01 would need epsilon 299.58, above the "
                    r"largest allowed 100")
    assert_refused(plan, rec, lambda: plan.set_target_error(0, -1.0),
                    "target error = -1.0 is not allowed")


def test_target_error_beyond_the_budget_says_to_ask_for_a_larger_error():
    plan = sample_plan()
    rec = Recorder(plan)
    assert_refused(plan, rec, lambda: rebalanced_edit(plan, lambda p: p.set_target_error(0, 2.0)),
                    r"the pinned statistics alone need ε [0-9.]+, .*unpin or lower some of: "
                    r"1 \('count'\)")


@pytest.mark.parametrize("operation, expected", [
    (lambda p: p.insert(1, p[0].replace(name="new")), [0, 2, 3, 4]),
    (lambda p: p.remove(1), [0, None, 1, 2]),
    (lambda p: p.move(0, 2), [2, 0, 1, 3]),
    (lambda p: p.move(3, 1), [0, 2, 3, 1]),
    (lambda p: p.replace_all(p.statistics[::-1]), [None, None, None, None]),
    (lambda p: p.set_budget(epsilon=0.5), [0, 1, 2, 3]),
])
def test_a_row_is_followed_through_a_change(operation, expected):
    """Where each row of the plan before a change is after it (an edit typed on the older screen)."""
    from dpplanner.model.events import follow_row

    plan = Plan(Budget(epsilon=1.0, delta=1e-6, redistribute=False),
                [Statistic(f"s{i}", kind=Kind.COUNT, epsilon=0.1) for i in range(4)])
    trial = plan.trial()
    operation(trial)
    assert [follow_row(trial.recorded, r) for r in range(4)] == expected
    for before, after in enumerate(expected):
        if after is not None:
            assert trial[after].name == f"s{before}"


@pytest.mark.parametrize("change", [
    {"epsilon": 0.5}, {"delta": 1e-7}, {"delta_split": 0.25}, {"confidence": 0.99}, {"eta": 1e-2},
    {"theorem": "basic"}, {"redistribute": False}, {"reserve": 0.1}, {"dataset_size": 5000},
    {"population": 500_000}, {"population": None}, {"neighbouring": Neighbouring.REPLACE_ONE},
    {"dataset_size": 200_000, "population": 400_000}, {"epsilon": 2.0, "reserve": 0.5},
    {"contributions": 2}, {"unit": "household"}, {"truncate": True},
])
def test_the_allocation_key_changes_exactly_when_the_allocation_request_does(change):
    """``allocation_budget`` is what decides whether a budget edit redistributes: it must change
    for every budget field the allocation request reads, and only for those. (The relation, the
    dataset size and c rows per individual decide the statistics' release tags: a float sum's
    OpenDP shift, a replace-one histogram's two cells.)"""
    from dpplanner.model.engine_inputs import allocation_budget

    stats = [Statistic("c", kind=Kind.COUNT, epsilon=0.1),
             Statistic("g", kind=Kind.COUNT, mechanism=Mechanism.GAUSSIAN, epsilon=0.2, repetitions=3),
             Statistic("x", kind=Kind.CUSTOM, epsilon=0.05, delta=1e-8),
             Statistic("s", "v", Kind.SUM, epsilon=0.1, lower=-1.5, upper=2.5),
             Statistic("h", "v", Kind.HISTOGRAM, epsilon=0.1, bins=3, noise=Noise.CONTINUOUS)]
    before = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=100_000), stats)
    after = before.trial()
    after.set_budget(**change)
    same_request = (dataclasses.replace(before.allocation_request(), revision=0)
                    == dataclasses.replace(after.allocation_request(), revision=0))
    assert (allocation_budget(before.budget) == allocation_budget(after.budget)) == same_request


def test_written_back_epsilons_change_only_the_epsilons_of_new_statistics():
    """with_epsilons (an allocation written back) makes new statistics equal to replace(epsilon=)'s,
    the free ones only, and leaves the ones it was given as they were (they are the undo step's)."""
    from dpplanner.model.engine_inputs import with_epsilons

    stats = sample_plan().statistics
    before = [dataclasses.astuple(s) for s in stats]
    out = with_epsilons(stats, [0.25, 0.35, 0.15], [True, False, True])
    assert out == (stats[0].replace(epsilon=0.25), stats[1], stats[2].replace(epsilon=0.15))
    assert out[1] is stats[1] and out[0] is not stats[0]
    assert type(out[0].epsilon) is float and hash(out[0]) == hash(stats[0].replace(epsilon=0.25))
    assert [dataclasses.astuple(s) for s in stats] == before
    with pytest.raises(PlanError, match=r"statistic 3 \('hist'\) after redistribution"):
        with_epsilons(stats, [0.25, 0.35, -1.0])


def test_an_allocation_written_back_checks_and_compares_the_epsilons_alone(monkeypatch):
    """apply_allocation over 1000 statistics builds no refusal's message for an epsilon in range
    (the field rule's check is called for a refused one only) and finds the rows it changed by
    their epsilons, comparing no statistic whole; the event names exactly those rows."""
    from dpplanner.model import PlanEvent
    from dpplanner.model.field_rules import FieldRule

    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=10_000),
                [Statistic(f"s{i}", epsilon=0.0005, noise="continuous") for i in range(1000)])
    rec = Recorder(plan)
    calls = {"check": 0, "eq": 0}
    check, eq = FieldRule.check, Statistic.__eq__

    def counted_check(*args, **kwargs):
        calls["check"] += 1
        return check(*args, **kwargs)

    def counted_eq(*args):
        calls["eq"] += 1
        return eq(*args)
    monkeypatch.setattr(FieldRule, "check", counted_check)
    monkeypatch.setattr(Statistic, "__eq__", counted_eq)
    epsilons = [0.0005 * (1.5 if i % 3 else 1.0) for i in range(1000)]
    plan.apply_allocation(epsilons)
    assert calls == {"check": 0, "eq": 0}
    assert rec.events == [PlanEvent("changed", tuple(i for i in range(1000) if i % 3), rebalanced=True)]
    assert [s.epsilon for s in plan.statistics] == epsilons
    rec.events.clear()
    assert_refused(plan, rec, lambda: plan.apply_allocation(epsilons[:4] + [200.0] + epsilons[5:]),
                   r"statistic 5 \('s4'\) after redistribution: epsilon = 200.0 is not allowed")


def test_pins_that_leave_no_room_are_named_by_the_five_that_spend_most():
    """A plan edited for long may pin dozens: the refusal names the five pinned statistics
    spending the most ε, in plan order, and counts the rest."""
    stats = [Statistic(f"q{i}", kind=Kind.COUNT, epsilon=0.01 * (1 + i % 7), held=True) for i in range(40)]
    stats.append(Statistic("free", kind=Kind.COUNT))
    with pytest.raises(PlanError) as info:
        check_holds(Budget(epsilon=1.0, delta=1e-6, theorem="basic"), stats)
    tail = str(info.value).split("unpin or lower some of: ")[1]
    assert tail == "7 ('q6'), 14 ('q13'), 21 ('q20'), 28 ('q27'), 35 ('q34') and 35 more"


def test_kov_is_refused_for_unequal_statistics_in_the_plans_words():
    """Choosing KOV (homogeneous) for a plan whose statistics differ (psi-survey: a weight of 2,
    Gaussian beside Laplace noise) is refused saying why and what to choose, not in the engine's
    words ("kov theorem", "query 3 is (eps=...)")."""
    from dpplanner.model.examples import example_path
    from dpplanner.model.files import load_plan

    plan = load_plan(example_path("psi-survey"))
    before = plan.snapshot()
    with pytest.raises(PlanError) as refused:
        rebalanced_edit(plan, lambda p: p.set_budget(theorem="kov"))
    text = str(refused.value)
    assert text.startswith("KOV (homogeneous) applies only when every statistic gets the same ε_i")
    assert "choose optimal" in text and "query" not in text and "eps=" not in text
    assert plan.snapshot() == before
