"""Plan rules, notifications and snapshots (including the refusals); redistribution: test_plan_redistribution.py."""

from __future__ import annotations

import dataclasses
import math

import pytest
from plan_fixtures import G, Recorder, assert_refused, sample_plan

from dpplanner.model import BUDGET_RULES, FIELD_RULES, Budget, Kind, Plan, PlanError, PlanEvent, Statistic


# --- construction and validation --------------------------------------------------------------

def test_bad_statistic_is_refused_naming_row_and_range_and_plan_is_unchanged():
    plan = sample_plan()
    rec = Recorder(plan)
    bad = plan[1].replace(epsilon=-1.0)
    assert_refused(plan, rec, lambda: plan.update_statistic(1, bad),
                    r"statistic 2 \('mean'\): epsilon = -1.0 is not allowed; it must be a number in "
                    r"\(0, 100\]")
    assert_refused(plan, rec, lambda: plan.insert(0, Statistic("")), "name must be a non-empty")
    assert_refused(plan, rec, lambda: plan.insert(0, Statistic("h", kind=Kind.HISTOGRAM)),
                    "histogram statistic needs number of bins")
    assert_refused(plan, rec, lambda: plan.update_statistic(
        1, plan[1].replace(lower=5, upper=5)), "lower bound 5 must be below the upper bound 5")
    assert_refused(plan, rec, lambda: plan.remove(7), "row 7 does not exist")
    assert_refused(plan, rec, lambda: plan.insert(0, Statistic("r", repetitions=2.5)),
                    "number of releases = 2.5 is not a whole number; it must be a whole number")


def test_field_rules_are_the_single_source_of_limits():
    rule = FIELD_RULES["epsilon"]
    assert rule.minimum == 0 and not rule.min_inclusive and rule.maximum == 100
    assert BUDGET_RULES["confidence"].describe() == "a percentage in [50 %, 100 %)"
    with pytest.raises(PlanError, match="weight = 0 is not allowed"):
        FIELD_RULES["weight"].check(0, "statistic 1")


def test_budget_rules():
    plan = sample_plan()
    rec = Recorder(plan)
    assert_refused(plan, rec, lambda: plan.set_budget(delta=1e-4),
                    r"global delta = 0.0001 is not allowed for a dataset of n = 10000 records; delta "
                    r"must be below 1/n")
    assert_refused(plan, rec, lambda: plan.set_budget(population=5000),
                    "population N = 5000 must be larger than the dataset size")
    assert_refused(plan, rec, lambda: plan.set_budget(delta=0.0),
                    "uses the Gaussian mechanism, which needs delta > 0")
    assert_refused(plan, rec, lambda: plan.set_budget(theorem="filter"),
                    "theorem = 'filter' is not allowed for redistribution")
    assert_refused(plan, rec, lambda: plan.set_budget(dataset_size=None),
                    "a mean statistic needs records n")
    assert_refused(plan, rec, lambda: plan.apply_tier("bogus"), "unknown sensitivity tier")
    assert_refused(plan, rec, lambda: plan.set_budget(epsilonn=1), "unknown budget setting 'epsilonn'")
    assert_refused(plan, rec, lambda: plan.set_budget(neighbouring="swap"),
                    "neighbouring = 'swap' is not allowed; use one of: add-remove, replace-one")
    empty = Plan()
    with pytest.raises(PlanError, match="row 0 does not exist; the plan has no statistics"):
        empty.remove(0)


def test_epsilon_warning_and_tiers():
    plan = sample_plan()
    assert plan.warnings() == []
    plan.set_budget(epsilon=2.0)
    assert "above 1" in plan.warnings()[0]
    plan.apply_tier("serious-harm")
    assert (plan.budget.epsilon, plan.budget.delta, plan.budget.tier) == (0.05, 1e-7, "serious-harm")
    plan.set_budget(epsilon=0.07)
    assert plan.budget.tier == "custom"


def test_delta_split_goes_to_gaussian_releases_only():
    plan = sample_plan(delta_split=0.4)
    plan.insert(0, Statistic("g2", kind=Kind.HISTOGRAM, mechanism=G, bins=3, repetitions=3))
    deltas = plan.deltas()
    share = 1e-6 * 0.4 / 4                  # four Gaussian releases (1 + 3 repetitions)
    assert deltas == pytest.approx([share, 0.0, share, 0.0])
    assert plan.budget.delta_slack == pytest.approx(0.6e-6)
    inp = plan.composition_inputs()
    assert inp.multiplicities == (3, 1, 1, 1) and inp.delta_g == 1e-6


def test_custom_deltas_must_fit_in_the_slack():
    plan = sample_plan()
    rec = Recorder(plan)
    assert_refused(plan, rec, lambda: plan.append(Statistic("pre", kind=Kind.CUSTOM, delta=6e-7)),
                    "custom statistics' deltas add up to 6e-07, more than the 5e-07 of the "
                    "global delta left for composition")
    plan.append(Statistic("pre", kind=Kind.CUSTOM, delta=4e-7, epsilon=0.05))
    assert plan.deltas()[-1] == 4e-7 and plan.privacy(3).error is None


def test_amplification_refuses_functioning_delta_at_least_one():
    plan = Plan(Budget(epsilon=1, delta=0.4, dataset_size=2, delta_split=0.99),
                [Statistic("g", kind=Kind.HISTOGRAM, mechanism=G, bins=2)])
    rec = Recorder(plan)
    assert_refused(plan, rec, lambda: plan.set_budget(population=6),
                    r"functioning delta 1.19 is >= 1")


def test_amplification_shows_functioning_epsilon():
    plan = sample_plan()
    before = plan.privacy(0)
    plan.set_budget(population=100_000)
    after = plan.privacy(0)
    assert after.epsilon == before.epsilon == 0.2
    assert after.functioning_epsilon == pytest.approx(math.log1p(10 * math.expm1(0.2)))
    assert after.error < before.error


# --- notifications and snapshots -------------------------------------------------------------------

def test_events_say_what_changed():
    plan = sample_plan()
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
    plan = sample_plan()
    plan.move(0, 2)
    assert [s.name for s in plan] == ["mean", "hist", "count"]


def test_snapshot_restore_is_exact_and_statistics_are_immutable():
    plan = sample_plan()
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

    plan = sample_plan()
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
