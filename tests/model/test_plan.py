"""Plan rules, notifications, snapshots and redistribution (including the refusals)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from dpplanner import engine
from dpplanner.model import (BUDGET_RULES, FIELD_RULES, AllocationRequest, Budget, Kind, Mechanism,
                             Neighbouring, Plan, PlanError, PlanEvent, Statistic)
from dpplanner.model.redistribution import rebalance, rebalanced_edit
from dpplanner.model.statistic import Noise
from dpplanner.model.validation import check_holds

L, G = Mechanism.LAPLACE, Mechanism.GAUSSIAN


def _plan(theorem="basic", **budget):
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=10_000, theorem=theorem, **budget)
    stats = [Statistic("count", epsilon=0.2),
             Statistic("mean", "income", Kind.MEAN, G, epsilon=0.3, lower=0, upper=100),
             Statistic("hist", "age", Kind.HISTOGRAM, epsilon=0.1, bins=10, weight=2.0)]
    # the continuous noise's closed-form errors (OpenDP noise: tests/release)
    return Plan(b, [s.replace(noise="continuous") for s in stats])


class Recorder:
    def __init__(self, plan):
        self.events: list[PlanEvent] = []
        plan.subscribe(self.events.append)


def _assert_refused(plan, rec, call, match):
    before = plan.snapshot()
    revision = plan.revision
    with pytest.raises(PlanError, match=match):
        call()
    assert plan.snapshot() == before and plan.revision == revision and rec.events == []


# --- construction and validation --------------------------------------------------------------

def test_bad_statistic_is_refused_naming_row_and_range_and_plan_is_unchanged():
    plan = _plan()
    rec = Recorder(plan)
    bad = plan[1].replace(epsilon=-1.0)
    _assert_refused(plan, rec, lambda: plan.update_statistic(1, bad),
                    r"statistic 2 \('mean'\): epsilon = -1.0 is not allowed; it must be a number in "
                    r"\(0, 100\]")
    _assert_refused(plan, rec, lambda: plan.insert(0, Statistic("")), "name must be a non-empty")
    _assert_refused(plan, rec, lambda: plan.insert(0, Statistic("h", kind=Kind.HISTOGRAM)),
                    "histogram statistic needs number of bins")
    _assert_refused(plan, rec, lambda: plan.update_statistic(
        1, plan[1].replace(lower=5, upper=5)), "lower bound 5 must be below the upper bound 5")
    _assert_refused(plan, rec, lambda: plan.remove(7), "row 7 does not exist")
    _assert_refused(plan, rec, lambda: plan.insert(0, Statistic("r", repetitions=2.5)),
                    "number of releases = 2.5 is not a whole number; it must be a whole number")


def test_field_rules_are_the_single_source_of_limits():
    rule = FIELD_RULES["epsilon"]
    assert rule.minimum == 0 and not rule.min_inclusive and rule.maximum == 100
    assert BUDGET_RULES["confidence"].describe() == "a percentage in [50 %, 100 %)"
    with pytest.raises(PlanError, match="weight = 0 is not allowed"):
        FIELD_RULES["weight"].check(0, "statistic 1")


def test_budget_rules():
    plan = _plan()
    rec = Recorder(plan)
    _assert_refused(plan, rec, lambda: plan.set_budget(delta=1e-4),
                    r"global delta = 0.0001 is not allowed for a dataset of n = 10000 records; delta "
                    r"must be below 1/n")
    _assert_refused(plan, rec, lambda: plan.set_budget(population=5000),
                    "population N = 5000 must be larger than the dataset size")
    _assert_refused(plan, rec, lambda: plan.set_budget(delta=0.0),
                    "uses the Gaussian mechanism, which needs delta > 0")
    _assert_refused(plan, rec, lambda: plan.set_budget(theorem="filter"),
                    "theorem = 'filter' is not allowed for redistribution")
    _assert_refused(plan, rec, lambda: plan.set_budget(dataset_size=None),
                    "a mean statistic needs dataset size n")
    _assert_refused(plan, rec, lambda: plan.apply_tier("bogus"), "unknown sensitivity tier")
    _assert_refused(plan, rec, lambda: plan.set_budget(epsilonn=1), "unknown budget setting 'epsilonn'")
    _assert_refused(plan, rec, lambda: plan.set_budget(neighbouring="swap"),
                    "neighbouring = 'swap' is not allowed; use one of: add-remove, replace-one")
    empty = Plan()
    with pytest.raises(PlanError, match="row 0 does not exist; the plan has no statistics"):
        empty.remove(0)


def test_epsilon_warning_and_tiers():
    plan = _plan()
    assert plan.warnings() == []
    plan.set_budget(epsilon=2.0)
    assert "above 1" in plan.warnings()[0]
    plan.apply_tier("serious-harm")
    assert (plan.budget.epsilon, plan.budget.delta, plan.budget.tier) == (0.05, 1e-7, "serious-harm")
    plan.set_budget(epsilon=0.07)
    assert plan.budget.tier == "custom"


def test_delta_split_goes_to_gaussian_releases_only():
    plan = _plan(delta_split=0.4)
    plan.insert(0, Statistic("g2", kind=Kind.HISTOGRAM, mechanism=G, bins=3, repetitions=3))
    deltas = plan.deltas()
    share = 1e-6 * 0.4 / 4                  # four Gaussian releases (1 + 3 repetitions)
    assert deltas == pytest.approx([share, 0.0, share, 0.0])
    assert plan.budget.delta_slack == pytest.approx(0.6e-6)
    inp = plan.composition_inputs()
    assert inp.multiplicities == (3, 1, 1, 1) and inp.delta_g == 1e-6


def test_custom_deltas_must_fit_in_the_slack():
    plan = _plan()
    rec = Recorder(plan)
    _assert_refused(plan, rec, lambda: plan.append(Statistic("pre", kind=Kind.CUSTOM, delta=6e-7)),
                    "custom statistics' deltas add up to 6e-07, more than the 5e-07 of the "
                    "global delta left for composition")
    plan.append(Statistic("pre", kind=Kind.CUSTOM, delta=4e-7, epsilon=0.05))
    assert plan.deltas()[-1] == 4e-7 and plan.privacy(3).error is None


def test_amplification_refuses_functioning_delta_at_least_one():
    plan = Plan(Budget(epsilon=1, delta=0.4, dataset_size=2, delta_split=0.99),
                [Statistic("g", kind=Kind.HISTOGRAM, mechanism=G, bins=2)])
    rec = Recorder(plan)
    _assert_refused(plan, rec, lambda: plan.set_budget(population=6),
                    r"functioning delta 1.19 is >= 1")


def test_amplification_shows_functioning_epsilon():
    plan = _plan()
    before = plan.privacy(0)
    plan.set_budget(population=100_000)
    after = plan.privacy(0)
    assert after.epsilon == before.epsilon == 0.2
    assert after.functioning_epsilon == pytest.approx(math.log1p(10 * math.expm1(0.2)))
    assert after.error < before.error


# --- notifications and snapshots -------------------------------------------------------------------

def test_events_say_what_changed():
    plan = _plan()
    rec = Recorder(plan)
    plan.insert(1, Statistic("new"))
    plan.update_statistic(2, plan[2].replace(weight=3.0))
    plan.move(0, 3)
    plan.remove(1)
    plan.set_budget(confidence=0.9)
    plan.replace_all([Statistic("only")])
    assert rec.events == [PlanEvent("inserted", (1,)), PlanEvent("changed", (2,)),
                          PlanEvent("moved", (0, 3), source=0, destination=3),
                          PlanEvent("removed", (1,)), PlanEvent("budget"), PlanEvent("reset")]
    plan.unsubscribe(rec.events.append)
    plan.append(Statistic("quiet"))
    assert len(rec.events) == 6


def test_move_reorders():
    plan = _plan()
    plan.move(0, 2)
    assert [s.name for s in plan] == ["mean", "hist", "count"]


def test_snapshot_restore_is_exact_and_statistics_are_immutable():
    plan = _plan()
    snap = plan.snapshot()
    plan.update_statistic(0, plan[0].replace(name="renamed", epsilon=0.9))
    plan.set_budget(epsilon=0.5)
    rec = Recorder(plan)
    plan.restore(snap)
    assert plan.snapshot() == snap and rec.events == [PlanEvent("reset")]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign"):
        plan[0].epsilon = 1.0  # type: ignore[misc]


def test_a_plans_own_snapshot_is_restored_without_validating_it_again(monkeypatch):
    """Opening or undoing restores a snapshot the plan itself took (always valid): validating
    thousands of statistics again held the window ~0.1 ms each. A snapshot made by hand is still
    checked."""
    import dpplanner.model.plan as plan_module
    from dpplanner.model import PlanSnapshot

    plan = _plan()
    snap = plan.snapshot()
    plan.set_budget(epsilon=0.5)
    checked = []
    real = plan_module.validate_state
    monkeypatch.setattr(plan_module, "validate_state", lambda *a: checked.append(1) or real(*a))
    plan.restore(snap)
    assert not checked and plan.snapshot() == snap
    gaussian = snap.statistics[0].replace(mechanism="gaussian")
    bad = PlanSnapshot(dataclasses.replace(snap.budget, delta=0.0), (gaussian,))   # Gaussian at delta 0
    with pytest.raises(PlanError):
        plan.restore(bad)
    assert checked and plan.snapshot() == snap


def test_an_edit_checks_the_statistics_it_changes_not_all_of_them(monkeypatch):
    """The statistics a plan holds were validated under its budget: an edit of one row of many
    checks that row (and the whole-plan rules), a budget edit checks them all again, and a bad
    edit is still refused."""
    import dpplanner.model.validation as validation

    plan = Plan(Budget(epsilon=1.0, redistribute=False),
                [Statistic(f"count {i}", kind=Kind.COUNT, epsilon=0.001) for i in range(50)])
    checked = []
    real = validation.validate_statistic
    monkeypatch.setattr(validation, "validate_statistic",
                        lambda stat, *a, **k: checked.append(stat.name) or real(stat, *a, **k))
    plan.update_statistic(7, plan[7].replace(epsilon=0.002))
    assert checked == ["count 7"] and plan[7].epsilon == 0.002
    with pytest.raises(PlanError, match="statistic 8"):
        plan.update_statistic(7, plan[7].replace(epsilon=-1.0))
    assert plan[7].epsilon == 0.002
    checked.clear()
    plan.insert(3, Statistic("new", kind=Kind.COUNT, epsilon=0.001))
    assert checked == ["new"] and len(plan) == 51
    checked.clear()
    plan.set_budget(epsilon=0.9)
    assert len(checked) == 51


def test_kind_and_mechanism_accept_their_names():
    s = Statistic("x").replace(kind="histogram", mechanism="gaussian", bins=4)
    assert (s.kind, s.mechanism) == (Kind.HISTOGRAM, G)
    with pytest.raises(ValueError, match="kind = 'pie' is not allowed; use one of: count, sum"):
        Statistic("x").replace(kind="pie")


# --- redistribution ---------------------------------------------------------------------------------

def _spent_basic(plan):
    return sum(s.epsilon * s.repetitions for s in plan)


def test_rebalance_spends_the_budget_with_weights_and_holds():
    plan = _plan()
    plan.update_statistic(0, plan[0].replace(held=True, epsilon=0.2))
    rebalance(plan)
    assert plan[0].epsilon == 0.2
    assert plan[2].epsilon == pytest.approx(2 * plan[1].epsilon, rel=1e-9)   # weight 2 vs 1
    assert _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    assert _spent_basic(plan) <= 1.0 + 1e-12


def test_reserve_keeps_part_of_the_budget():
    plan = _plan(reserve=0.25)
    rebalance(plan)
    assert _spent_basic(plan) == pytest.approx(0.75, rel=1e-6)


def test_rebalanced_edit_is_atomic_and_notifies_once():
    plan = _plan()
    rec = Recorder(plan)
    rebalanced_edit(plan, lambda p: p.append(Statistic("extra")))
    assert _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    assert rec.events == [PlanEvent("inserted", (3,), rebalanced=True)]


def test_held_statistics_alone_over_budget_are_refused_by_name():
    plan = _plan()
    plan.update_statistic(0, plan[0].replace(held=True, epsilon=0.6))
    rec = Recorder(plan)
    too_much = plan[2].replace(held=True, epsilon=0.5)
    with pytest.raises(PlanError, match=r"unpin or lower some of: 1 \('count'\), 3 \('hist'\)") as info:
        rebalanced_edit(plan, lambda p: p.update_statistic(2, too_much))
    assert info.value.held_indices == (0, 2)
    assert rec.events == [] and plan[2].held is False
    _assert_refused(plan, rec, lambda: rebalanced_edit(plan, lambda p: p.update_statistic(2, too_much)),
                    "the pinned statistics alone need ε 1.1000")


def test_a_redistribution_that_succeeds_composes_the_pins_only_inside_the_allocation(monkeypatch):
    """An allocation that fits the budget proves the pins leave room: their own total (one more
    composition, ~25 ms of an edit under pld) is computed only to explain a refusal."""
    import dpplanner.model.redistribution as redistribution

    checked = []
    real = redistribution.check_holds
    monkeypatch.setattr(redistribution, "check_holds", lambda *a: checked.append(1) or real(*a))
    plan = _plan()
    plan.update_statistic(0, plan[0].replace(held=True, epsilon=0.2))
    rebalanced_edit(plan, lambda p: p.update_statistic(2, p[2].replace(held=True, epsilon=0.1)))
    assert checked == [] and _spent_basic(plan) == pytest.approx(1.0, rel=1e-6)
    with pytest.raises(PlanError, match="the pinned statistics alone need"):
        rebalanced_edit(plan, lambda p: p.update_statistic(2, p[2].replace(held=True, epsilon=0.9)))
    assert checked == [1]       # (their plain sum 1.1 is over 1: checked first, refused at once)


def test_at_least_one_statistic_stays_free():
    plan = _plan()
    rec = Recorder(plan)
    plan.update_statistics({0: plan[0].replace(held=True), 1: plan[1].replace(held=True)})
    rec.events.clear()
    _assert_refused(plan, rec, lambda: rebalanced_edit(
        plan, lambda p: p.update_statistic(2, plan[2].replace(held=True))),
                    "every statistic is pinned: at least one must stay free")


def test_target_error_edit_pins_that_statistic():
    plan = _plan()
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
    plan = _plan()
    plan.append(Statistic("pre", kind=Kind.CUSTOM, epsilon=0.05))
    with pytest.raises(PlanError, match="is custom: type its epsilon directly"):
        plan.epsilon_for_error(3, 1.0)


def test_allocation_request_and_apply_for_a_worker_thread():
    plan = _plan()
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
    _assert_refused(plan, rec, lambda: plan.apply_allocation([0.1, 0.1, 0.1], revision=req.revision),
                    "computed for revision")


def test_check_holds_names_statistics():
    plan = _plan()
    plan.update_statistic(1, plan[1].replace(held=True, epsilon=1.5))
    with pytest.raises(PlanError, match=r"2 \('mean'\)"):
        check_holds(plan.budget, plan.statistics)
    plan.update_statistic(1, plan[1].replace(epsilon=0.5))
    check_holds(plan.budget, plan.statistics)
    plan.update_statistics({0: plan[0].replace(held=True), 2: plan[2].replace(held=True)})
    with pytest.raises(PlanError, match="every statistic is pinned"):
        check_holds(plan.budget, plan.statistics)


def test_manual_mode_shows_over_budget():
    plan = _plan(reserve=0.5)
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
    plan = _plan(theorem="advanced")
    for i in range(30):
        plan.append(Statistic(f"c{i}", epsilon=0.01))
    rebalance(plan)
    total = plan.total("advanced").epsilon
    assert total <= 1.0 and total == pytest.approx(1.0, rel=1e-5)


def test_rebalance_under_optimal():
    plan = _plan(theorem="optimal")
    plan.set_budget(eta=1e-2)
    for i in range(20):
        plan.append(Statistic(f"c{i}", epsilon=0.01))
    rebalance(plan)
    total = plan.total("optimal")
    assert total.epsilon <= 1.0 and total.epsilon == pytest.approx(1.0, rel=1e-5)
    assert _spent_basic(plan) > 1.0            # optimal composition buys more than basic


def test_engine_allocation_matches_its_contract():
    # the request hands the engine exactly the plan's per-statistic rows
    plan = _plan()
    req = plan.allocation_request()
    direct = engine.allocate(list(req.epsilons), list(req.deltas), list(req.held), list(req.weights),
                             1.0, 1e-6, theorem="basic", multiplicities=list(req.multiplicities))
    assert list(direct.epsilons) == pytest.approx(list(req.run().epsilons))


def test_neighbouring_changes_errors():
    plan = _plan()
    e_add = plan.privacy(2).error
    plan.set_budget(neighbouring=Neighbouring.REPLACE_ONE)
    assert plan.privacy(2).error == pytest.approx(2 * e_add)
    plan.set_budget(neighbouring="add-remove")
    assert plan.budget.neighbouring is Neighbouring.ADD_REMOVE


def test_target_error_too_small_is_refused_with_the_epsilon_it_would_need():
    plan = _plan()
    rec = Recorder(plan)
    _assert_refused(plan, rec, lambda: plan.set_target_error(0, 0.01),
                    r"statistic 1 \('count'\): an error of 0.01 would need epsilon 299.58, above the "
                    r"largest allowed 100")
    _assert_refused(plan, rec, lambda: plan.set_target_error(0, -1.0),
                    "target error = -1.0 is not allowed")


def test_target_error_beyond_the_budget_says_to_ask_for_a_larger_error():
    plan = _plan()
    rec = Recorder(plan)
    _assert_refused(plan, rec, lambda: rebalanced_edit(plan, lambda p: p.set_target_error(0, 2.0)),
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

    stats = _plan().statistics
    before = [dataclasses.astuple(s) for s in stats]
    out = with_epsilons(stats, [0.25, 0.35, 0.15], [True, False, True])
    assert out == (stats[0].replace(epsilon=0.25), stats[1], stats[2].replace(epsilon=0.15))
    assert out[1] is stats[1] and out[0] is not stats[0]
    assert type(out[0].epsilon) is float and hash(out[0]) == hash(stats[0].replace(epsilon=0.25))
    assert [dataclasses.astuple(s) for s in stats] == before
    with pytest.raises(PlanError, match=r"statistic 3 \('hist'\) after redistribution"):
        with_epsilons(stats, [0.25, 0.35, -1.0])
