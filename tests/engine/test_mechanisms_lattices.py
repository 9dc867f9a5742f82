"""How the pld bracket picks its lattices, the floor that spares computing "optimal", and what
is remembered between compositions (the costs of every edit's compositions in the window)."""

from __future__ import annotations

import pytest

from dpplanner.engine import Gaussian, Laplace, compose_mechanisms
from dpplanner.engine.mechanisms import forget


def _edited_synthetic_100():
    """synthetic-100's releases with three epsilons moved 5 % off the lattice, as edits leave them."""
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    inputs = composition_inputs(plan.budget, plan.statistics)
    eps = list(inputs.epsilons)
    for i in (0, 7, 14):
        eps[i] *= 1.05
    return eps, list(inputs.deltas), inputs.delta_g, inputs.eta, list(inputs.multiplicities), list(inputs.mechanisms)


def test_an_edited_plan_is_bracketed_on_one_lattice(monkeypatch):
    """Edited epsilons sit off the lattice, where the first ~700-point lattice is loose by more than
    eta / 8; climbing from there by halvings took four lattices. Their offsets predict that, so
    the bracket starts on the lattice a measured width would have jumped to: one lattice."""
    import dpplanner.engine.mechanisms.bracket as bracket_mod
    import dpplanner.engine.mechanisms.ladder as ladder
    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner import engine

    eps, deltas, delta_g, eta, mult, mech = _edited_synthetic_100()
    forget()
    lattices = []
    real = spectral.rung
    monkeypatch.setattr(spectral, "rung", lambda r, step, guess, cancel=None, **kw:
                        lattices.append(bracket_mod.lattice_points(r, step)) or real(r, step, guess, cancel, **kw))
    r = engine.compose(eps, deltas, delta_g, "pld", eta, mult, mechanisms=mech)
    assert len(lattices) == 1 and lattices[0] > 1000      # not the first ~740-point lattice
    assert r.epsilon - r.epsilon_lower <= eta


def test_a_plan_on_the_lattice_keeps_the_first_rung(monkeypatch):
    """The shipped plan as saved: every free release on the lattice, the ladder's first rung (about
    2000 points) is tight (width <= eta / 8) and nothing finer is composed."""
    import dpplanner.engine.mechanisms.bracket as bracket_mod
    import dpplanner.engine.mechanisms.ladder as ladder
    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner import engine
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path

    plan = files.load_plan(example_path("synthetic-100"))
    i = composition_inputs(plan.budget, plan.statistics)
    forget()
    lattices = []
    real = spectral.rung
    monkeypatch.setattr(spectral, "rung", lambda r, step, guess, cancel=None, **kw:
                        lattices.append(bracket_mod.lattice_points(r, step)) or real(r, step, guess, cancel, **kw))
    r = engine.compose(list(i.epsilons), list(i.deltas), i.delta_g, "pld", i.eta, list(i.multiplicities),
                       mechanisms=list(i.mechanisms))
    assert len(lattices) == 1 and lattices[0] < 4 * ladder.FIRST_POINTS
    assert r.epsilon - r.epsilon_lower <= i.eta / 8


def test_a_redistributed_plan_stops_on_the_first_rung_that_meets_eta(monkeypatch):
    """After edits that pin a few statistics, the redistributed epsilons sit off the lattice: the
    first ~2000-point rung is wider than eta / 8 but meets eta, and ends the climb (no second,
    four times larger rung, which moved the upper end by a few 1e-6 only: an allocation composes
    three or four such plans per edit)."""
    import dpplanner.engine.mechanisms.bracket as bracket_mod
    import dpplanner.engine.mechanisms.ladder as ladder
    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner import engine
    from dpplanner.model import files
    from dpplanner.model.engine_inputs import composition_inputs
    from dpplanner.model.examples import example_path
    from dpplanner.model.redistribution import rebalanced

    plan = files.load_plan(example_path("synthetic-100"))
    stats = list(plan.statistics)
    for k in range(1, 8):
        j = 7 * k % len(stats)
        stats[j] = stats[j].replace(epsilon=stats[j].epsilon * (1.05 if k % 2 == 0 else 0.95), held=True)
    i = composition_inputs(plan.budget, rebalanced(plan.budget, stats).statistics)
    forget()
    lattices = []
    real = spectral.rung
    monkeypatch.setattr(spectral, "rung", lambda r, step, guess, cancel=None, **kw:
                        lattices.append(bracket_mod.lattice_points(r, step)) or real(r, step, guess, cancel, **kw))
    r = engine.compose(list(i.epsilons), list(i.deltas), i.delta_g, "pld", i.eta, list(i.multiplicities),
                       mechanisms=list(i.mechanisms))
    assert len(lattices) == 1 and lattices[0] < 2 * ladder.FIRST_POINTS
    assert i.eta / 8 < r.epsilon - r.epsilon_lower <= i.eta


def test_the_floor_on_optimal_is_read_on_a_coarse_lattice_first(monkeypatch):
    """The floor that spares computing "optimal" clears the pld total by ~10 % on the shipped
    plans, so a lattice of ~500 points does; a finer one (up to ~4000 points, never finer than
    pld's) is tried only when that one does not."""
    import dpplanner.engine.mechanisms.theorems as mech_theorems
    import dpplanner.engine.theorem_inputs as theorem_inputs
    from dpplanner import engine

    eps, deltas, delta_g, eta, mult, mech = _edited_synthetic_100()
    generic = engine.compose(eps, deltas, delta_g, "optimal", eta, mult)
    forget()
    floors, optimal_asked = [], []
    real = mech_theorems.side
    monkeypatch.setattr(mech_theorems, "side", lambda r, step, upper, cancel=None:
                        floors.append(mech_theorems.lattice_points(r, step)) or real(r, step, upper, cancel))
    monkeypatch.setattr(theorem_inputs, "optimal", lambda *a: optimal_asked.append(1) or generic)
    engine.compose(eps, deltas, delta_g, "pld", eta, mult, mechanisms=mech)
    assert len(floors) == 1 and floors[0] <= mech_theorems.CHEAP_POINTS / 4 and not optimal_asked

    floors.clear()    # a floor that never clears: read as it is and finer, then "optimal" computed
    forget()
    monkeypatch.setattr(mech_theorems, "side", lambda r, step, upper, cancel=None:
                        floors.append(mech_theorems.lattice_points(r, step)) or 0.0)
    engine.compose([e * 1.01 for e in eps], deltas, delta_g, "pld", eta, mult, mechanisms=mech)
    assert len(floors) == 3 and floors[2] >= 2 * floors[1] and optimal_asked == [1]


def test_a_floor_serves_every_plan_with_larger_epsilons(monkeypatch):
    """Smaller Laplace and RR parameters are dominated, so a floor read at 15/16 of a plan's
    epsilons bounds every plan of that shape whose epsilons are all at least those: an
    allocation's next scales (within 1 %), an edit that raises an epsilon and one that lowers it
    by 5 % find it; an edit that lowers one by 10 % reads its own."""
    import dpplanner.engine.mechanisms.theorems as mech_theorems
    from dpplanner import engine

    eps, deltas, delta_g, eta, mult, mech = _edited_synthetic_100()
    forget()
    reads = []
    real = mech_theorems._floor_at
    monkeypatch.setattr(mech_theorems, "_floor_at", lambda *a: reads.append(1) or real(*a))

    def total(e):
        return engine.compose(e, deltas, delta_g, "pld", eta, mult, mechanisms=mech)

    total(eps)
    assert len(reads) == 1
    (at, floor), = mech_theorems._FLOORS._items.values()
    for scale in (1.004, 0.993):
        scaled = [e * scale for e in eps]
        total(scaled)
        assert len(reads) == 1
        assert floor <= engine.compose(scaled, deltas, delta_g, "optimal", eta, mult).epsilon_lower  # still a floor
    for factor in (1.05, 0.95):
        edited = list(eps)
        edited[3] *= factor
        total(edited)
        assert len(reads) == 1
    lowered = list(eps)
    lowered[3] *= 0.9
    r = total(lowered)
    assert len(reads) == 2 and r.epsilon < engine.compose(lowered, deltas, delta_g, "optimal", eta, mult).epsilon


def test_a_repeated_pld_total_is_remembered_whole(monkeypatch):
    """An allocation's last composition is asked for again by its forward check and by the edit's
    totals: the second ask returns the same numbers without calibrating or reading the floor again."""
    import dpplanner.engine.mechanisms.theorems as mech_theorems
    from dpplanner import engine

    eps, deltas, delta_g, eta, mult, mech = _edited_synthetic_100()
    forget()
    first = engine.compose(eps, deltas, delta_g, "pld", eta, mult, mechanisms=mech)
    monkeypatch.setattr(mech_theorems, "_optimal_floor", lambda *a: pytest.fail("recomputed"))
    monkeypatch.setattr(mech_theorems, "plan_releases", lambda *a: pytest.fail("recomputed"))
    again = engine.compose(eps, deltas, delta_g, "pld", eta, mult, mechanisms=mech)
    assert (again.epsilon, again.epsilon_lower, again.detail, again.extra) == \
        (first.epsilon, first.epsilon_lower, first.detail, first.extra)


def test_the_lattices_of_a_coarser_eta_are_the_first_ones_of_a_finer_eta(monkeypatch):
    """Issue 23.4: the ladder of lattices depends on the releases only, eta only says where the climb
    stops. So a finer eta composes every lattice a coarser one did (and more), and keeping the best
    bounds found, its bracket is never worse."""
    import numpy as np

    import dpplanner.engine.mechanisms.bracket as bracket_mod
    import dpplanner.engine.mechanisms.ladder as ladder
    import dpplanner.engine.mechanisms.spectral as spectral

    rng = np.random.default_rng(2)
    releases = [Laplace(float(m)) for m in rng.uniform(200, 2000, 300)] + \
               [Gaussian(float(m)) for m in rng.uniform(100, 1000, 300)]
    lattices = []
    real = spectral.rung
    monkeypatch.setattr(spectral, "rung", lambda r, step, guess, cancel=None, **kw:
                        lattices.append(step) or real(r, step, guess, cancel, **kw))
    seen, previous = [], None
    for eta in (1e-1, 1e-3, 1e-5, 1e-6):     # (many distinct releases start on a fine lattice)
        forget()
        lattices.clear()
        r = compose_mechanisms(releases, 1e-6, eta=eta)
        assert lattices[:len(seen)] == seen and len(lattices) >= len(seen)
        seen = list(lattices)
        if previous is not None:
            assert r.epsilon <= previous.epsilon and r.epsilon_lower >= previous.epsilon_lower
        previous = r
    assert len(seen) >= 3 and previous.epsilon - previous.epsilon_lower <= 1e-6


def test_a_ladder_stopped_by_a_stuck_lower_end_says_so():
    # at delta 1e-300 the lower twin stays at 0 while the upper end falls: the reason names
    # both ends instead of blaming the rounding charged to delta
    forget()
    c = compose_mechanisms([Laplace(1.0)] * 3 + [Gaussian(2.0)] * 3, 1e-300, 1e-6)
    assert "two finer lattices in a row did not narrow it" in c.detail
    assert "lower end 0 -> 0 on the last three" in c.detail
    assert "rounding charged to delta" not in c.detail
    assert c.epsilon_lower <= c.epsilon


def test_a_rung_whose_window_is_too_wide_is_not_the_rung_reported(monkeypatch):
    """A finer rung that cannot be composed (its window too wide) ends the climb on the rung
    before: the bracket names that one, so an allocation that goes on with upper ends on the
    bracket's rung reads finite ones, not the failed rung's infinite ends."""
    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner.engine.mechanisms.tilted import WindowTooWide

    releases = [Laplace(1.0)] * 3 + [Gaussian(2.0)] * 3
    forget()
    steps = []
    real = spectral.rung

    def rung(r, step, guess, cancel=None, **kw):
        steps.append(step)
        if len(steps) > 1:
            raise WindowTooWide("the second rung needs a wider window")
        return real(r, step, guess, cancel, **kw)

    monkeypatch.setattr(spectral, "rung", rung)
    c = compose_mechanisms(releases, 1e-6, eta=1e-9)
    assert len(steps) == 2 and "wider window" in c.detail
    assert c.extra["rung"] == 0 and f"pld lattice {steps[0]:.3g}" in c.detail


def test_a_bracket_reads_the_upper_end_a_search_composed_on_its_rung(monkeypatch):
    """An allocation's search composes upper ends on the rung a whole total climbed to, and its
    forward check then composes the whole bracket at the scale found: the bracket takes that
    rung's upper end from memory (read from the same guess on the same lattice: the same number)
    and composes only its lower end there. The bracket is the one composed cold, bit for bit."""
    import dpplanner.engine.mechanisms.spectral as spectral
    from dpplanner.engine.compose import compose, compose_one
    from dpplanner.engine.theorem_inputs import ComposeInputs
    from dpplanner.engine.validation import validate_plan

    eps = [0.1 * (i + 1) ** 1.37 + 0.0123 for i in range(8)]   # Laplace only: a rung's ends composed apart
    args = (eps, [0.0] * 8, 1e-6, "pld", 1e-3)
    mech = ["laplace"] * 8
    composed = []
    real = spectral._composed
    monkeypatch.setattr(spectral, "_composed", lambda *a, **k: composed.append(1) or real(*a, **k))
    forget()
    cold = compose(*args, mechanisms=mech)
    cold_count, rung = len(composed), cold.extra["rung"]
    assert rung >= 2
    forget()
    plan = validate_plan(eps, [0.0] * 8, None, mech)
    compose_one("pld", ComposeInputs(plan, 1e-6, 1e-3, upper_only=True, upper_rung=rung))
    composed.clear()
    warm = compose(*args, mechanisms=mech)
    assert len(composed) == cold_count - 1
    assert (warm.epsilon, warm.epsilon_lower, warm.extra["rung"]) == (cold.epsilon, cold.epsilon_lower, rung)
