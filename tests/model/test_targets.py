"""Issue 24.3: a target error typed by the user is a requirement of the plan. It is kept (in the
plan, the file, the CSV), met after every later edit - the statistic's ε_i follows it and the free
statistics are redistributed - or the edit is refused at that statistic."""

from __future__ import annotations

import json

import pytest

from dpplanner.model import Budget, Kind, Mechanism, Plan, PlanError, Statistic
from dpplanner.model import csvio, files
from dpplanner.model.redistribution import rebalance, rebalanced_edit
from dpplanner.model.statistic import Noise


def survey(noise: Noise = Noise.CONTINUOUS) -> Plan:
    budget = Budget(epsilon=3.0, delta=1e-6, theorem="basic", dataset_size=2500)
    return Plan(budget, [
        Statistic("respondents", kind=Kind.COUNT, epsilon=0.2, noise=noise),
        Statistic("mean age", variable="age", kind=Kind.MEAN, lower=-50, upper=100, epsilon=0.2,
                  mechanism=Mechanism.GAUSSIAN, noise=noise),
        Statistic("age histogram", variable="age", kind=Kind.HISTOGRAM, bins=10, epsilon=0.2,
                  mechanism=Mechanism.GAUSSIAN, noise=noise),
    ])


def spent(plan: Plan) -> float:
    return sum(s.epsilon * s.repetitions for s in plan)


def with_target(error: float = 0.5, noise: Noise = Noise.CONTINUOUS) -> Plan:
    plan = survey(noise)
    rebalanced_edit(plan, lambda p: p.set_target_error(1, error))
    return plan


def test_a_target_error_is_stored_as_typed_and_pins_the_statistic():
    plan = with_target(0.5)
    s = plan[1]
    assert s.target_error == 0.5 and s.held
    assert plan.privacy(1).error <= 0.5
    assert spent(plan) == pytest.approx(3.0) and spent(plan) <= 3.0 + 1e-12


@pytest.mark.parametrize("edit", [
    lambda p: p.set_budget(confidence=0.99),
    lambda p: p.set_budget(neighbouring="replace-one"),
    lambda p: p.set_budget(dataset_size=2000),
    lambda p: p.update_statistic(1, p[1].replace(upper=120.0)),
    lambda p: p.update_statistic(1, p[1].replace(lower=-150.0)),
    lambda p: p.update_statistic(1, p[1].replace(n=1800)),
    lambda p: p.update_statistic(1, p[1].replace(mechanism="laplace")),
    lambda p: p.append(Statistic("hist 2", kind=Kind.HISTOGRAM, bins=5, mechanism=Mechanism.GAUSSIAN)),
    lambda p: p.set_budget(delta_split=0.2),
], ids=["confidence", "neighbours", "plan n", "upper", "lower", "statistic n", "laplace",
        "another gaussian", "delta split"])
def test_the_target_is_met_after_any_later_edit_and_the_rest_redistributes(edit):
    plan = with_target(0.5)
    before = plan[1].epsilon
    rebalanced_edit(plan, edit)
    assert plan[1].target_error == 0.5 and plan[1].held
    error = plan.privacy(1).error
    assert error <= 0.5 and error == pytest.approx(0.5, rel=1e-9)      # met, and not overshot
    assert plan[1].epsilon != before                                     # ε_i followed the target
    assert spent(plan) <= 3.0 + 1e-12 and spent(plan) == pytest.approx(3.0)   # the rest rebalanced


@pytest.mark.parametrize("edit", [
    lambda p: p.set_budget(confidence=0.99),
    lambda p: p.update_statistic(1, p[1].replace(upper=120.0)),
    lambda p: p.append(Statistic("hist 2", kind=Kind.HISTOGRAM, bins=5, mechanism=Mechanism.GAUSSIAN)),
], ids=["confidence", "upper", "another gaussian"])
def test_the_target_is_met_with_opendp_noise_too(edit):
    plan = with_target(0.5, Noise.OPENDP)
    assert plan.privacy(1).opendp is not None           # the error of OpenDP's discrete noise
    before = plan[1].epsilon
    rebalanced_edit(plan, edit)
    assert plan[1].target_error == 0.5 and plan.privacy(1).error <= 0.5
    assert plan[1].epsilon != before
    assert spent(plan) <= 3.0 + 1e-12


def test_an_edit_after_which_the_target_cannot_be_met_is_refused_at_that_statistic():
    plan = with_target(0.5)
    before = plan.snapshot()
    with pytest.raises(PlanError) as caught:
        plan.update_statistic(1, plan[1].replace(upper=1e6))           # the error would need ε > 100
    assert caught.value.index == 1 and caught.value.field == "error"
    assert "target error of ± 0.5" in str(caught.value)
    assert plan.snapshot() == before
    with pytest.raises(PlanError, match="mean age"):                    # ε_i ~7 > ε_g = 3
        rebalanced_edit(plan, lambda p: p.update_statistic(1, p[1].replace(upper=1000.0)))
    assert plan.snapshot() == before


def test_a_kind_change_that_changes_the_units_of_the_target_is_refused():
    plan = with_target(0.5)
    with pytest.raises(PlanError, match="other units"):
        plan.update_statistic(1, plan[1].replace(kind="count"))
    with pytest.raises(PlanError):
        plan.update_statistic(1, plan[1].replace(kind="custom"))
    assert plan[1].kind is Kind.MEAN and plan[1].target_error == 0.5


def test_typing_an_epsilon_or_unpinning_ends_the_target():
    plan = with_target(0.5)
    plan.update_statistic(1, plan[1].replace(epsilon=0.3, held=True))     # an ε_i typed over it
    assert plan[1].target_error is None and plan[1].epsilon == 0.3 and plan[1].held
    plan = with_target(0.5)
    plan.update_statistic(1, plan[1].replace(held=False))                 # unpinned
    assert plan[1].target_error is None and not plan[1].held
    rebalance(plan)
    assert plan.privacy(1).error != pytest.approx(0.5)


def test_the_target_survives_save_and_reopen_and_is_met_there(tmp_path):
    plan = with_target(0.5)
    path = tmp_path / "survey.dpplan"
    files.save_plan(plan, path)
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 2
    assert doc["statistics"][1]["target_error"] == 0.5
    again = files.load_plan(path)
    assert again.statistics == plan.statistics
    rebalanced_edit(again, lambda p: p.set_budget(confidence=0.99))
    assert again.privacy(1).error <= 0.5 and again[1].target_error == 0.5


def test_a_version_1_file_migrates_with_no_targets_and_says_so(tmp_path):
    path = tmp_path / "old.dpplan"
    path.write_text(json.dumps({"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-6},
                                "statistics": [{"name": "a", "kind": "count", "mechanism": "laplace", "epsilon": 0.5,
                                                "held": True}]}))
    plan = files.load_plan(path)
    assert plan[0].target_error is None and plan[0].held
    assert plan.notes and "saving writes format_version 2" in plan.notes[0]
    assert with_target().notes == ()


def test_a_file_target_on_an_unpinned_statistic_is_not_a_target(tmp_path):
    """held false means free: the target is dropped (documented), never half-applied."""
    path = tmp_path / "x.dpplan"
    path.write_text(json.dumps({"format_version": 2,
                                "budget": {"epsilon": 1.0, "delta": 1e-6, "dataset_size": 100},
                                "statistics": [{"name": "a", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 0.5, "held": False, "target_error": 3.0},
                                               {"name": "b", "kind": "count", "mechanism": "laplace",
                                                "epsilon": 0.1}]}))
    assert files.load_plan(path)[0].target_error is None


def test_the_csv_carries_the_target_and_a_new_plan_imports_it():
    plan = with_target(0.5)
    text = csvio.export_csv(plan)
    assert "target_error" in text.splitlines()[0]
    stats = csvio.parse_csv(text)                    # no budget: a new plan knows no n
    fresh = Plan(Budget(epsilon=1.0, delta=1e-6, theorem="basic"), stats)
    assert fresh[1].target_error == 0.5 and fresh.privacy(1).error <= 0.5
