"""The optimal engine's work bound: a plan whose lattices it cannot afford (three groups of 10^6
queries at delta_g 1e-14) gets the cheaper theorems' total at once, with the reason, and pld (and
its allocation) no longer spends minutes on a comparison with "optimal" that cannot change its
answer. Work is counted in lattice convolutions, never in time."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine import allocate, compose
from dpplanner.engine.mechanisms import theorems as mech_theorems
from dpplanner.engine.optimal import bracket, lattice

EPS, MULT, DELTA_G, ETA = [0.001, 0.002, 0.003], [10**6] * 3, 1e-14, 1e-3


@pytest.fixture
def no_convolution(monkeypatch):
    """Fail at the first lattice convolution (composing this plan's lattices takes ~300, minutes)."""
    def refuse(*_args, **_kwargs):
        raise AssertionError("a lattice was convolved")

    monkeypatch.setattr(lattice, "convolve", refuse)


def test_optimal_beyond_its_work_bound_composes_no_lattice_and_says_so(no_convolution):
    r = compose(EPS, [0.0] * 3, DELTA_G, "optimal", ETA, multiplicities=MULT)
    assert bracket.fast_work(np.array(EPS), np.array(MULT), ETA, DELTA_G) > bracket.FAST_MAX_WORK
    assert "work bound" in r.detail and "width > eta" in r.detail
    zcdp = compose(EPS, [0.0] * 3, DELTA_G, "zcdp", ETA, multiplicities=MULT)
    assert r.epsilon == zcdp.epsilon        # the least cheaper theorem's total
    assert 0 < r.epsilon_lower < r.epsilon


def test_pld_skips_the_floor_where_optimal_is_cheap_and_stays_below_it(no_convolution, monkeypatch):
    def no_floor(*_args, **_kwargs):
        raise AssertionError("the floor was read")

    monkeypatch.setattr(mech_theorems, "_optimal_floor", no_floor)
    pld = compose(EPS, [0.0] * 3, DELTA_G, "pld", ETA, multiplicities=MULT, mechanisms=["laplace"] * 3)
    optimal = compose(EPS, [0.0] * 3, DELTA_G, "optimal", ETA, multiplicities=MULT)
    assert pld.epsilon - pld.epsilon_lower <= ETA
    # every Laplace release is eps_i-DP: the optimal total bounds what pld brackets
    assert pld.epsilon_lower <= optimal.epsilon and pld.epsilon <= optimal.epsilon


def test_pld_allocation_of_the_plan_composes_no_lattice(no_convolution):
    a = allocate(EPS, [0.0] * 3, [False] * 3, [1.0, 2.0, 3.0], 36.0, DELTA_G, theorem="pld", eta=ETA,
                 multiplicities=MULT, mechanisms=["laplace"] * 3)
    assert a.composition.epsilon <= 36.0
    assert a.composition.extra["met_eta"]


def test_a_delta_that_lets_tails_be_truncated_is_not_held_to_the_work_bound():
    """Three groups of 3 x 10^5 queries at delta_g 1e-6: their whole span would count 2.2e9
    point-squarings, but truncation at that delta keeps only their spread, and their common
    lattice's whole binomials (1.8 x 10^6 points) are built: the total is exact (11.3266), well
    below zCDP's 12.04 that a refusal by the count would give."""
    eps, mult, delta_g = [0.001, 0.002, 0.003], [3 * 10**5] * 3, 1e-6
    assert bracket.fast_work(np.array(eps), np.array(mult, dtype=float), ETA, 1e-14) > bracket.FAST_MAX_WORK
    r = compose(eps, [0.0] * 3, delta_g, "optimal", ETA, multiplicities=mult)
    assert "work bound" not in r.detail and r.epsilon - r.epsilon_lower <= ETA
    assert r.epsilon < 0.95 * compose(eps, [0.0] * 3, delta_g, "zcdp", ETA, multiplicities=mult).epsilon
