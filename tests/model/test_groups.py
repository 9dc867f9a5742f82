"""Grouped statistics in a plan: parallel composition, errors per cell, selection, hostile input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpplanner import engine
from dpplanner.engine.theorems import REGISTRY
from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, PlanError, Statistic
from dpplanner.model.files import PlanFileError, dumps_plan, loads_plan
from dpplanner.model.selection import selection
from dpplanner.model.statistic import Noise

L, G = Mechanism.LAPLACE, Mechanism.GAUSSIAN
C = Noise.CONTINUOUS


def _totals(plan: Plan) -> dict:
    inp = plan.composition_inputs()
    out = engine.compose_all(list(inp.epsilons), list(inp.deltas), inp.delta_g, eta=1e-5,
                             multiplicities=list(inp.multiplicities), mechanisms=list(inp.mechanisms))
    return {name: r.epsilon for name, r in out.items() if r.applicable}


def _plan(stat: Statistic, c: int = 1, **budget) -> Plan:
    others = [Statistic("people", kind=Kind.COUNT, epsilon=0.2, noise=C),
              Statistic("mean age", "age", Kind.MEAN, G, epsilon=0.3, lower=0, upper=100, noise=C)]
    return Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=10_000, redistribute=False, contributions=c,
                       **budget), [stat] + others)


@pytest.mark.parametrize("mechanism", [L, G])
@pytest.mark.parametrize("noise", list(Noise))
def test_disjoint_groups_cost_what_one_cell_costs_under_every_theorem(mechanism, noise):
    """50 disjoint groups, one per individual (L0 = 1): the table costs exactly one cell's release,
    whatever the number of groups."""
    cell = Statistic("income", "income", Kind.SUM, mechanism, epsilon=0.25, lower=0, upper=1000, noise=noise)
    one = _totals(_plan(cell))
    for g in (1, 50, 5000):
        table = cell.replace(group_by="region", groups=g, one_group_each=True)
        assert _totals(_plan(table)) == one, g


@pytest.mark.parametrize("noise", list(Noise))
def test_three_groups_per_individual_are_the_three_fold_composition(noise):
    """L0 = 3 groups of one row each: under the noise-aware theorems the release is three cells,
    each a (discrete) Laplace release of eps_i / 3, composed; the generic theorems see its
    (eps_i, delta_i) as one release (its cells' basic composition); never g-fold."""
    grouped = Statistic("visits", "", Kind.COUNT, L, epsilon=0.3, noise=noise, group_by="clinic",
                        groups=40, max_groups=3, max_rows=1)
    plan = _plan(grouped, c=3)
    inp = plan.composition_inputs()
    base = "laplace" if noise is C else "discrete-laplace:1"
    assert inp.mechanisms[0] == f"{base}*3"
    totals = _totals(plan)
    rest = list(zip(inp.epsilons[1:], inp.deltas[1:], [1, 1], inp.mechanisms[1:]))
    for t in REGISTRY:
        if t.name not in totals:
            continue
        # generic: the whole release as one (eps_i, 0) row; noise-aware: its three cells spelled out
        first = (0.3, 0.0, 1, "eps-delta") if t.generic else (0.3 / 3, 0.0, 3, base)
        e, d, m, tags = zip(*([first] + rest))
        want = engine.compose(list(e), list(d), inp.delta_g, theorem=t.name, eta=1e-5,
                              multiplicities=list(m), mechanisms=list(tags)).epsilon
        assert totals[t.name] == pytest.approx(want, abs=2e-5), t.name
    # ... and the number of groups never enters
    assert _totals(_plan(grouped.replace(groups=400), c=3)) == totals


def test_gaussian_cells_are_one_gaussian_of_sqrt_l0_times_the_cell():
    # L0 = 4 regions of L_inf = 2 rows, c = 8: L2 = sqrt(4) x 2 x 100 (values in [0, 100])
    stat = Statistic("spend", "spend", Kind.SUM, G, epsilon=0.5, lower=0, upper=100, noise=C,
                     group_by="region", groups=10, max_groups=4, max_rows=2)
    plan = _plan(stat, c=8)
    p = plan.privacy(0)
    assert p.scale == pytest.approx(2 * 2 * 100 * engine.mechanisms.gaussian_multiplier(0.5, plan.deltas()[0]),
                                    rel=1e-12)
    assert plan.composition_inputs().mechanisms[0] == "gaussian"


def test_a_household_of_four_costs_one_release_at_four_times_the_sensitivity():
    """The issue's new user: mean income by region (50 regions), households of up to 4 persons:
    one table row whose noise is one release at 4x a person's sensitivity, not 50 releases."""
    person = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=100_000, redistribute=False),
                  [Statistic("mean income", "income", Kind.MEAN, L, epsilon=0.5, lower=0, upper=200_000,
                             n=1500, noise=C, group_by="region", groups=50, one_group_each=True)])
    household = Plan(person.budget.replace(unit="household", contributions=4), person.statistics)
    a, b = person.privacy(0), household.privacy(0)
    assert b.scale == 4 * a.scale and b.error == pytest.approx(4 * a.error, rel=1e-12)
    assert b.cell_error == pytest.approx(4 * a.cell_error, rel=1e-12)
    assert b.cell_error < b.error             # one group, against all 50 at once
    assert household.total().epsilon == pytest.approx(0.5, abs=1e-5)   # one release of 0.5
    assert "4 rows per individual" in " ".join(b.moves.lines)


@pytest.mark.parametrize("mechanism", [L, G])
def test_the_error_of_one_cell_and_of_all_cells_hold_by_simulation(mechanism):
    """Seeded Monte Carlo on simulated grouped data: the share of cells within the stated one-cell
    error, and of tables with every cell within the all-groups error, are the confidence (within
    sampling error; the all-groups bound is a union bound, so it may only be higher)."""
    g = 40
    stat = Statistic("visits", "", Kind.COUNT, mechanism, epsilon=0.4, noise=C, group_by="site", groups=g,
                     max_groups=2, max_rows=2)
    plan = _plan(stat, c=4)
    p = plan.privacy(0)
    rng = np.random.default_rng(26)
    truth = rng.integers(0, 500, size=g)
    runs = 4000
    noise = (rng.laplace(0, p.scale, size=(runs, g)) if mechanism is L
             else rng.normal(0, p.scale, size=(runs, g)))
    released = truth + noise
    err = np.abs(released - truth)
    conf = plan.budget.confidence
    per_cell = float(np.mean(err <= p.cell_error))
    assert abs(per_cell - conf) <= 4 * math.sqrt(conf * (1 - conf) / (runs * g)) + 1e-3
    every = float(np.mean(np.all(err <= p.error, axis=1)))
    assert every >= conf - 4 * math.sqrt(conf * (1 - conf) / runs)


def test_discrete_noise_per_cell_holds_by_simulation():
    """OpenDP's discrete Laplace noise per cell (the difference of two geometric draws)."""
    g = 30
    stat = Statistic("visits", "", Kind.COUNT, L, epsilon=0.4, group_by="site", groups=g, one_group_each=True)
    plan = _plan(stat, c=2)
    p = plan.privacy(0)
    t = p.opendp.lattice_scale
    rng = np.random.default_rng(7)
    q = 1 - math.exp(-1 / t)
    runs = 3000
    noise = rng.geometric(q, size=(runs, g)) - rng.geometric(q, size=(runs, g))
    conf = plan.budget.confidence
    share = float(np.mean(np.abs(noise) <= p.cell_error))
    assert share >= conf - 4 * math.sqrt(conf * (1 - conf) / (runs * g))
    assert float(np.mean(np.all(np.abs(noise) <= p.error, axis=1))) >= conf - 4 * math.sqrt(conf * (1 - conf) / runs)


def test_selection_costs_what_is_derived_and_suppresses_rare_groups():
    s = selection(0.2, 1e-6, 2)          # K = 2 keys per individual
    assert 2 / s.scale <= 0.2 and 2 / s.scale == pytest.approx(0.2, rel=1e-15)
    assert 2 * 0.5 * math.exp(-(s.threshold - 1) / s.scale) <= 1e-6
    # a key held by one individual alone is released with probability delta_s / K (Monte Carlo)
    rng = np.random.default_rng(3)
    loose = selection(2.0, 0.05, 1)
    released = np.mean(1 + rng.laplace(0, loose.scale, size=200_000) >= loose.threshold)
    assert released == pytest.approx(0.05, abs=0.003)
    # and a group of about tau individuals is released about half of the time
    half = np.mean(loose.threshold + rng.laplace(0, loose.scale, size=200_000) >= loose.threshold)
    assert half == pytest.approx(0.5, abs=0.01)


def test_with_opendps_noise_the_threshold_is_the_least_integer_that_keeps_delta():
    """Discrete Laplace, P(Z = z) ~ p^|z|, p = exp(-1/b): a key held by one individual alone is
    kept when 1 + Z >= T, with probability P(Z >= T - 1) = p^(T-1) / (1 + p)."""
    for eps, delta, keys in ((2.0, 0.05, 1), (0.2, 1e-6, 2), (0.05, 1e-7, 1), (1e-3, 1e-9, 6)):
        s = selection(eps, delta, keys, discrete=True)
        p = math.exp(-1 / s.scale)
        assert isinstance(s.threshold, int) and keys / s.scale <= eps
        assert keys * p ** (s.threshold - 1) / (1 + p) <= delta < keys * p ** (s.threshold - 2) / (1 + p)
    loose = selection(2.0, 0.05, 1, discrete=True)       # b = 0.5: T = 3 (T = 2 would keep 0.119)
    assert loose.threshold == 3
    rng = np.random.default_rng(4)
    q = 1 - math.exp(-1 / loose.scale)
    z = rng.geometric(q, 400_000) - rng.geometric(q, 400_000)       # discrete Laplace of scale b
    kept = np.mean(1 + z >= loose.threshold)
    assert kept == pytest.approx(math.exp(-4) / (1 + math.exp(-2)), abs=0.001)
    assert "τ = 3 " in loose.sentence("person") and "discrete Laplace" in loose.sentence("person")


def test_a_statistic_that_selects_its_groups_shows_its_threshold_and_composes_both_parts():
    stat = Statistic("mean income", "income", Kind.MEAN, L, epsilon=0.4, lower=0, upper=1000, n=200, noise=C,
                     group_by="occupation", select_groups=True, max_groups=1, selection_share=0.25)
    plan = _plan(stat)
    p = plan.privacy(0)
    assert p.selection is not None and p.delta > 0            # it took a share of delta
    assert p.selection.epsilon == pytest.approx(0.1) and p.selection.delta == p.delta
    assert "suppressed" in p.selection.sentence("person") and "τ =" in p.selection.sentence("person")
    assert "Laplace (ideal) noise" in p.selection.sentence("person")    # continuous noise, said as everywhere
    assert plan.composition_inputs().mechanisms[0] == "eps-delta"
    # the values get the other 0.3: their noise is that of a plain mean at 0.3
    plain = _plan(stat.replace(group_by="", select_groups=False, max_groups=None, epsilon=0.3)).privacy(0)
    assert p.scale == pytest.approx(plain.scale, rel=1e-12)


HOSTILE = [
    ({"group_by": "region", "groups": 3, "max_groups": 4}, 4, "max_groups", "more than the g = 3 groups"),
    ({"group_by": "region", "groups": 30, "max_rows": 5}, 4, "max_rows", "more than the c = 4 rows"),
    ({"group_by": "region", "groups": 0}, 1, "groups", "number of groups g = 0 is not allowed"),
    ({"group_by": "region", "groups": -3}, 1, "groups", "is not allowed"),
    ({"group_by": "region", "groups": 5, "max_groups": -1}, 1, "max_groups", "is not allowed"),
    ({"group_by": "region"}, 1, "groups", "needs its number of groups g"),
    ({"groups": 5}, 1, "groups", "not grouped"),
    ({"group_by": "region", "group_keys": "a, b, a"}, 1, "group_keys", "listed more than once"),
    ({"group_by": "region", "group_keys": "a, b", "groups": 3}, 1, "groups", "2 keys are listed"),
    ({"group_by": "region", "groups": 4, "one_group_each": True, "max_groups": 2}, 2, "max_groups",
     "property of the individual"),
]


@pytest.mark.parametrize("fields, c, field, message", HOSTILE, ids=[h[2] + str(i) for i, h in enumerate(HOSTILE)])
def test_hostile_grouping_is_refused_at_its_field_and_the_plan_is_unchanged(fields, c, field, message):
    plan = _plan(Statistic("visits", "", Kind.COUNT, L, epsilon=0.1, noise=C), c=c)
    before = plan.snapshot()
    with pytest.raises(PlanError, match=message) as info:
        plan.update_statistic(0, plan[0].replace(**fields))
    assert info.value.field == field and info.value.index == 0
    assert plan.snapshot() == before
    # the same in a file: a clear error naming the statistic, nothing loaded
    doc = json.loads(dumps_plan(plan))
    doc["statistics"][0].update(fields)
    with pytest.raises(PlanFileError, match=message):
        loads_plan(json.dumps(doc))


@pytest.mark.parametrize("value, message", [(10 ** 9, "rows per individual c = 1000000000 is not allowed"),
                                            (0, "is not allowed"), (-2, "is not allowed"),
                                            (2.5, "not a whole number")])
def test_hostile_c_is_refused_at_its_field(value, message):
    plan = _plan(Statistic("visits", "", Kind.COUNT, L, epsilon=0.1, noise=C))
    before = plan.snapshot()
    with pytest.raises(PlanError, match=message) as info:
        plan.set_budget(contributions=value)
    assert info.value.field == "contributions" and plan.snapshot() == before
    doc = json.loads(dumps_plan(plan))
    doc["budget"]["contributions"] = value
    with pytest.raises(PlanFileError, match=message):
        loads_plan(json.dumps(doc))


def test_lowering_c_below_a_statistics_bound_is_refused_naming_it():
    plan = _plan(Statistic("visits", "", Kind.COUNT, L, epsilon=0.1, noise=C, group_by="site", groups=9,
                           max_rows=3), c=3)
    with pytest.raises(PlanError, match=r"statistic 1 .* L∞ = 3 is more than the c = 2") as info:
        plan.set_budget(contributions=2)
    assert (info.value.index, info.value.field) == (0, "max_rows") and plan.budget.contributions == 3


def test_a_version_1_file_reads_as_one_row_per_person_and_says_so():
    doc = json.loads(dumps_plan(_plan(Statistic("visits", "", Kind.COUNT, L, epsilon=0.1, noise=C))))
    doc["format_version"] = 1
    for key in ("unit", "contributions", "truncate"):
        doc["budget"].pop(key)
    plan = loads_plan(json.dumps(doc))
    assert (plan.budget.unit, plan.budget.contributions, plan.budget.truncate) == ("person", 1, False)
    assert any("one row (c = 1)" in note for note in plan.notes)


def test_grouped_statistics_survive_a_round_trip():
    stat = Statistic("by region", "income", Kind.MEAN, G, epsilon=0.1, lower=0, upper=10, n=300, noise=C,
                     group_by="region", group_keys="north, south, east", one_group_each=True)
    plan = _plan(stat, c=2, unit="household", truncate=True)
    again = loads_plan(dumps_plan(plan))
    assert again.statistics == plan.statistics and again.budget == plan.budget
    assert "group_by" not in json.loads(dumps_plan(again))["statistics"][1]     # ungrouped: not written


def test_replace_one_lists_the_old_and_new_groups():
    stat = Statistic("visits", "", Kind.COUNT, L, epsilon=0.1, noise=C, group_by="site", groups=9, max_groups=2,
                     max_rows=1)
    plan = _plan(stat, c=2, neighbouring=Neighbouring.REPLACE_ONE)
    assert plan.composition_inputs().mechanisms[0] == "laplace*4"
    assert plan.privacy(0).moves.cells == 4
