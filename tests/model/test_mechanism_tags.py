"""The model tells the engine what each release is, so noise-aware theorems can use the noise."""

from __future__ import annotations

import math
from fractions import Fraction

from dpplanner.model.opendp_sensitivity import certified
from dpplanner.model.plan import Plan
from dpplanner.model.statistic import Budget, Kind, Mechanism, Statistic


def _plan(noise="continuous", **budget):
    stats = [Statistic("a", kind=Kind.COUNT, mechanism=Mechanism.LAPLACE, epsilon=0.1, noise=noise),
             Statistic("b", kind=Kind.COUNT, mechanism=Mechanism.GAUSSIAN, epsilon=0.2, noise=noise),
             Statistic("c", kind=Kind.CUSTOM, epsilon=0.3, delta=1e-9)]
    return Plan(Budget(epsilon=1.0, delta=1e-6, redistribute=False, **budget), stats)


def test_each_statistic_is_tagged_with_its_noise():
    inp = _plan().composition_inputs()
    assert inp.mechanisms == ("laplace", "gaussian", "eps-delta")
    assert inp.deltas[1] > 0 and inp.deltas[0] == 0.0


def test_opendp_noise_is_tagged_with_its_discrete_noise_and_shift():
    inp = _plan(noise="opendp").composition_inputs()
    assert inp.mechanisms == ("discrete-laplace:1", "discrete-gaussian:1", "eps-delta")
    sums = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=100, redistribute=False),
                [Statistic("whole", "x", Kind.SUM, lower=0, upper=10, integer=True),
                 Statistic("real", "x", Kind.SUM, lower=0.0, upper=10.0)])
    whole, real = sums.composition_inputs().mechanisms
    assert whole == "discrete-laplace:10"
    # real values: OpenDP's sensitivity D (10 plus its float-rounding term) on the lattice 2^-37
    # (2^k <= D 2^-40), moved by at most ceil(D / 2^k) + 1 lattice units
    d = certified(sums[1], sums.budget).l1
    assert 10 < d < 10 + 1e-9
    assert real == f"discrete-laplace:{math.ceil(Fraction(d) * 2 ** 37) + 1}"


def test_amplified_releases_are_known_only_by_their_epsilon_delta():
    inp = _plan(dataset_size=1000, population=10_000).composition_inputs()
    assert inp.mechanisms == ("eps-delta",) * 3


def test_allocation_request_carries_the_tags():
    req = _plan().allocation_request()
    assert req.mechanisms == ("laplace", "gaussian", "eps-delta")


def test_the_report_says_what_the_noise_aware_total_assumes(tmp_path):
    from dpplanner.model.report import render_report

    html = render_report(_plan())
    assert "noise-aware (PLD)" in html and "zCDP (as OpenDP / Tumult)" in html
    assert "exactly the noise it is planned with (OpenDP&#x27;s discrete noise, or the continuous noise)" in html


def test_edits_that_move_a_sensitivity_move_the_tag_at_once():
    """Certifications are remembered (a plan asks for them twice per edit); an edit of anything a
    sensitivity reads, in the statistic or the budget, is never answered from that memory."""
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=100, redistribute=False),
                [Statistic("whole", "x", Kind.SUM, lower=0, upper=10, integer=True),
                 Statistic("g", "y", Kind.HISTOGRAM, mechanism=Mechanism.GAUSSIAN, bins=4)])
    assert plan.composition_inputs().mechanisms == ("discrete-laplace:10", "discrete-gaussian:1")
    plan.update_statistic(0, plan[0].replace(upper=25))
    assert plan.composition_inputs().mechanisms[0] == "discrete-laplace:25"
    plan.update_statistic(0, plan[0].replace(lower=-40))
    assert plan.composition_inputs().mechanisms[0] == "discrete-laplace:40"
    plan.set_budget(neighbouring="replace-one")     # (U - L) d_in / 2 over the sized domain
    assert plan.composition_inputs().mechanisms == ("discrete-laplace:65", "discrete-gaussian:1*2")
    plan.set_budget(contributions=3)
    assert plan.composition_inputs().mechanisms[0] == "discrete-laplace:195"
    plan.update_statistic(0, plan[0].replace(integer=False))
    d = certified(plan[0], plan.budget).l1      # real values: on the lattice 2^k <= d 2^-40
    assert plan.composition_inputs().mechanisms[0] == f"discrete-laplace:{math.ceil(Fraction(d) * 2 ** 33) + 1}"


def test_what_an_edit_or_a_redistribution_moves_changes_no_certification():
    """The memory's key leaves out a statistic's epsilon, weight, pin and target: every shipped
    statistic's certification is the same, computed afresh, whatever they are."""
    from dpplanner.model import examples, files
    from dpplanner.model.opendp_sensitivity import _certified

    for name in examples.EXAMPLE_NAMES:
        plan = files.load_plan(examples.example_path(name))
        for s in plan.statistics:
            if s.kind is Kind.CUSTOM:
                continue
            before = certified(s, plan.budget)
            moved = s.replace(epsilon=s.epsilon / 3, weight=s.weight * 7, held=not s.held, target_error=0.5)
            assert _certified(moved, plan.budget) == before == certified(moved, plan.budget)
