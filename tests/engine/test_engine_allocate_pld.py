"""allocate() under pld: the search composes upper ends and the whole bracket only where it ends,
remembers upper ends across rungs without changing a bit, and upper_bound (the pins check's cheap
end) is never below the whole total."""

from __future__ import annotations

import importlib

import numpy as np
import pytest

from dpplanner.engine import allocate, compose


def _edited_example():
    """synthetic-100 after a window edit: one statistic pinned 5 % higher (its discrete kinds'
    lower ends are compositions of their own)."""
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import allocation_request
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    stats = list(plan.statistics)
    stats[7] = stats[7].replace(epsilon=stats[7].epsilon * 1.05, held=True)
    return allocation_request(plan.budget, stats)


def test_the_search_composes_upper_ends_and_the_whole_total_only_where_it_ends(monkeypatch):
    """pld's search asks for upper ends only (the first lattice's: no lower end composed); the
    forward check composes the whole bracket once, at the scale found, and the allocation is the
    one a search on whole totals finds, to the bit."""
    import importlib

    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner.engine.mechanisms import forget
    from dpplanner.engine.theorem_inputs import ComposeInputs

    request = _edited_example()
    forget()
    lowers = []
    real = spectral.lower_end
    monkeypatch.setattr(spectral, "lower_end", lambda *a, **k: lowers.append(1) or real(*a, **k))
    fast = request.run()
    assert len(lowers) == 1 and fast.composition.epsilon <= request.epsilon_g
    assert fast.composition.epsilon - fast.composition.epsilon_lower <= request.eta

    forget()
    search = importlib.import_module("dpplanner.engine.allocate")
    monkeypatch.setattr(search, "ComposeInputs", lambda *a, upper_only, **k: ComposeInputs(*a, **k))
    whole = request.run()
    assert len(lowers) > 2
    assert fast.epsilons.tolist() == whole.epsilons.tolist()
    assert fast.composition.epsilon == whole.composition.epsilon


def test_the_search_steps_are_not_met_with_the_zcdp_total(monkeypatch):
    """An upper end alone only guides the search (its forward check composes the whole total):
    the zcdp row's total, a few ulps from the bracket's own zCDP cap, is composed for that whole
    total only, not at each of the search's scales."""
    import dpplanner.engine.mechanisms.theorems as theorems
    from dpplanner.engine.mechanisms import forget

    request = _edited_example()
    forget()
    asked, real = [], theorems.zcdp_composition
    monkeypatch.setattr(theorems, "zcdp_composition", lambda *a: asked.append(1) or real(*a))
    a = request.run()
    assert len(asked) == 1 and a.composition.epsilon <= request.epsilon_g


def test_the_first_step_s_model_calibrates_no_discrete_noise_of_its_own(monkeypatch):
    """The model of the total's bend reads zCDP's at the scale composed (the pinned statistics'
    rho alone besides): its discrete Gaussians are calibrated once per scale pld composes, none
    for a second scale of the model's (that cost one calibration and a zCDP total per edit)."""
    import importlib

    from dpplanner.engine.mechanisms import forget

    dg = importlib.import_module("dpplanner.engine.mechanisms.discrete_gaussian")
    search = importlib.import_module("dpplanner.engine.allocate")
    request = _edited_example()
    forget()
    scales, calibrated = set(), []
    real_compose, real_twins = search.compose_one, dg._twin_sigmas
    monkeypatch.setattr(search, "compose_one", lambda name, inputs: scales.add(inputs.plan.eps.tobytes())
                        or real_compose(name, inputs))
    monkeypatch.setattr(dg, "_twin_sigmas", lambda keys: calibrated.append(keys) or real_twins(keys))
    a = request.run()
    assert 0 <= a.waste < 1e-6 and len(calibrated) == len(scales) >= 3


def test_where_the_whole_total_is_lower_than_the_upper_ends_searched_on_the_search_is_made_again():
    """Where the bracket at the scale found needed a finer lattice than the first, its total is
    below the upper end the search stopped on: the search is made again on whole totals, so the
    plan still spends its budget to within 1e-6."""
    import dpplanner.engine.mechanisms.composition as composition
    from dpplanner.engine.mechanisms import forget
    from dpplanner.engine.mechanisms.ladder import Bracket

    request = _edited_example()
    real = composition.upper_end
    try:     # an upper end 1e-4 above the first lattice's (as a coarse first rung's would be)
        composition.upper_end = lambda r, eta, cancel=None, rung=0, lower_ahead=False: Bracket(
            real(r, eta, cancel).upper + 1e-4, 0.0, "coarse", 0.0, 0.0)
        forget()
        a = request.run()
    finally:
        composition.upper_end = real
    assert a.composition.epsilon <= request.epsilon_g and a.waste < 1e-6


#: A table plan (issue 26's benchmark) after 13 of its 20 statistics were pinned: the whole total at
#: the scale the first lattice's upper ends find climbs to the third lattice.
_LATE_EDIT = dict(
    epsilons=[0.032651211537940386, 0.05894754640818033, 0.09748084073174736, 0.029012300147946934,
              0.06451193013769876, 0.09215990019671252, 0.030719966732237508, 0.05907495742179729,
              0.09811294494832436, 0.029173187580750375, 0.06414835592712251, 0.09215990019671252,
              0.030719966732237508, 0.061439933464475016, 0.09825983978486182, 0.02939338433273651,
              0.06450236982815108, 0.0864911740859042, 0.030719966732237508, 0.061439933464475016],
    held=[True] * 5 + [False] * 2 + [True] * 4 + [False] * 3 + [True] * 4 + [False] * 2,
    weights=([1.0, 2.0, 3.0] * 7)[:20],
    mechanisms=(["gaussian", "eps-delta", "laplace", "gaussian", "laplace", "eps-delta"] * 4)[:20])


def _late_edit():
    p = _LATE_EDIT
    deltas = [7.142857142857142e-08 if m == "gaussian" else 0.0 for m in p["mechanisms"]]
    return allocate(p["epsilons"], deltas, p["held"], p["weights"], 1.0, 1e-6, theorem="pld", eta=1e-3,
                    mechanisms=p["mechanisms"]), deltas


def test_where_the_whole_total_climbed_the_search_goes_on_with_that_lattices_upper_ends(monkeypatch):
    """Where the whole total at the scale found was read on a finer lattice (a later rung of pld's
    ladder), the search goes on with upper ends on that lattice: two whole totals (the one that
    showed it and the last one, three lattices each), where a search on whole totals composed four
    (twelve lattices with both ends); the budget is still spent to within 1e-6."""
    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner.engine.mechanisms import forget

    rungs, uppers = [], []
    real_rung, real_upper = spectral.rung, spectral.upper_end
    monkeypatch.setattr(spectral, "rung", lambda r, step, *a, **k: rungs.append(step) or
                        real_rung(r, step, *a, **k))
    monkeypatch.setattr(spectral, "upper_end", lambda r, step, *a, **k: uppers.append(step) or
                        real_upper(r, step, *a, **k))
    forget()
    a, _ = _late_edit()
    assert a.composition.epsilon <= 1.0 and a.waste < 1e-6
    assert len(rungs) == 6 and len(set(rungs)) == 3
    assert min(uppers) == min(rungs)       # upper ends were read on the finest lattice


def test_the_allocation_is_the_same_to_the_bit_whether_or_not_the_engine_remembers_upper_ends():
    """The upper ends the search read on a later lattice are remembered, but a whole total never
    takes them for its own (their read-out starts elsewhere, ~1e-10 away): the allocation's
    verified total is the one a cold composition of its epsilons gives, and an allocation made
    after others filled the engine's memories is the same to the bit."""
    from dpplanner.engine.mechanisms import forget

    forget()
    cold, deltas = _late_edit()
    forget()
    again = compose(cold.epsilons.tolist(), deltas, 1e-6, "pld", eta=1e-3,
                    mechanisms=_LATE_EDIT["mechanisms"])
    assert again.epsilon == cold.composition.epsilon
    assert again.epsilon_lower == cold.composition.epsilon_lower
    forget()
    p = _LATE_EDIT
    allocate([e * 1.01 for e in p["epsilons"]], deltas, p["held"], p["weights"], 1.0, 1e-6, theorem="pld",
             eta=1e-3, mechanisms=p["mechanisms"])
    warm, _ = _late_edit()
    assert warm.epsilons.tolist() == cold.epsilons.tolist()
    assert warm.composition.epsilon == cold.composition.epsilon


@pytest.mark.parametrize("eta", [1e-3, 1e-6])
def test_upper_bound_is_never_below_the_whole_total(eta):
    """allocate's upper_bound (pld: the first lattice's upper end) bounds compose's total from
    above: pins that fit by it fit by their whole total too."""
    from dpplanner.engine.allocate import upper_bound

    rng = np.random.default_rng(7)
    for _ in range(4):
        k = int(rng.integers(2, 30))
        eps = rng.uniform(0.01, 0.5, k).tolist()
        mech = rng.choice(["laplace", "gaussian", "discrete-laplace", "eps-delta"], k).tolist()
        deltas = [1e-8 if m in ("gaussian", "eps-delta") else 0.0 for m in mech]
        args = (eps, deltas, 1e-6, "pld", eta, [1] * k)
        assert upper_bound(*args, mechanisms=mech) >= compose(*args, mechanisms=mech).epsilon


@pytest.mark.parametrize("kinds", [["laplace", "gaussian", "discrete-gaussian"], ["eps-delta"]])
def test_an_upper_bound_below_what_is_enough_is_a_closed_form_never_below_the_whole_total(monkeypatch, kinds):
    """Asked only whether pld's total is below ``enough``: where the zcdp row's total (widened by
    1e-9) says so, it is the bound, with no composition, and never below compose's total (pins
    of (epsilon, delta) releases alone too, whose pld total is the optimal one)."""
    allocate_module = importlib.import_module("dpplanner.engine.allocate")
    from dpplanner.engine.allocate import upper_bound

    rng = np.random.default_rng(11)
    composed, real = [], allocate_module.compose_one
    monkeypatch.setattr(allocate_module, "compose_one", lambda *a: composed.append(1) or real(*a))
    for _ in range(4):
        k = int(rng.integers(2, 30))
        eps = rng.uniform(0.01, 0.5, k).tolist()
        mech = rng.choice(kinds, k).tolist()
        deltas = [1e-8 if m in ("gaussian", "eps-delta", "discrete-gaussian") else 0.0 for m in mech]
        args = (eps, deltas, 1e-6, "pld", 1e-3, [1] * k)
        zcdp = compose(*args[:3], "zcdp", 1e-3, [1] * k, mechanisms=mech).epsilon
        composed.clear()
        bound = upper_bound(*args, mechanisms=mech, enough=2 * zcdp)
        assert zcdp <= bound <= zcdp * (1 + 2e-9) and composed == []
        assert bound >= compose(*args, mechanisms=mech).epsilon
        # (not below what is enough: the first lattice's upper end, composed)
        assert upper_bound(*args, mechanisms=mech, enough=zcdp) == upper_bound(*args, mechanisms=mech)
        assert composed
