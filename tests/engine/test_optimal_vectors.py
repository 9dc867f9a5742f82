"""formulas.md §9 test vectors (sections 3 and 4) for the optimal core."""

from __future__ import annotations

import mpmath as mp
import numpy as np
import pytest

from dpplanner.engine.optimal import homogeneous_bracket, optimal_bracket, optimal_delta


def delta_bar(delta_g: float, delta: float, k: int) -> float:
    """1 - (1 - delta_g)/(1 - delta)^k at 60 digits, rounded down to a double."""
    mp.mp.dps = 60
    v = 1 - (1 - mp.mpf(delta_g)) / (1 - mp.mpf(delta)) ** k
    f = float(v)
    return f if mp.mpf(f) <= v else float(np.nextafter(f, 0.0))


HOMOGENEOUS = [  # eps, delta, k, delta_g, continuous OptComp (10 s.f.)
    (0.1, 0.0, 100, 1e-6, 4.774567588),
    (1.0, 0.0, 10, 1e-5, 9.999770635),
    (0.001, 0.0, 500, 1e-6, 0.07978885417),
    (1.0, 0.001, 30, 0.06, 21.70961262),
    (1.0, 0.001, 30, 0.1, 19.81737917),
    (0.1, 1e-9, 100, 1e-6, 4.787723761),
]


@pytest.mark.parametrize("eps, delta, k, delta_g, expected", HOMOGENEOUS)
def test_homogeneous_vectors(eps, delta, k, delta_g, expected):
    b = homogeneous_bracket(eps, k, delta_bar(delta_g, delta, k))
    assert b.lower <= b.upper
    assert b.upper - b.lower < 1e-9
    assert b.upper == pytest.approx(expected, rel=5e-10)
    # also through the dispatcher (a single distinct eps goes to the homogeneous path)
    d = optimal_bracket(np.array([eps]), np.array([k]), delta_bar(delta_g, delta, k), 1e-3)
    assert d.upper == pytest.approx(expected, rel=5e-10)


def test_homogeneous_infeasible_vector():
    """(0.1, 1e-7, k=100, delta_g=1e-6): the per-query deltas alone exceed the target."""
    db = delta_bar(1e-6, 1e-7, 100)
    assert db < 0
    b = optimal_bracket(np.array([0.1]), np.array([100]), db, 1e-3)
    assert b.upper == float("inf")


GROUPED = [  # eps, mult, delta_bar, OptComp
    ([0.1, 0.5], [5, 5], 1e-5, 2.997312688),
    ([0.1, 0.5], [5, 5], 1e-2, 2.469764492),
    ([0.01, 0.05], [50, 50], 1e-6, 1.527469144),
    ([0.013, 0.047], [50, 50], 1e-6, 1.458584073),
    ([0.13, 0.47], [5, 5], 1e-5, 2.997348854),
]


@pytest.mark.parametrize("eps, mult, db, expected", GROUPED)
def test_grouped_vectors(eps, mult, db, expected):
    b = optimal_bracket(np.array(eps), np.array(mult), db, 1e-3)
    assert b.method.startswith("exact")
    assert b.upper == pytest.approx(expected, rel=5e-10)
    assert b.lower == pytest.approx(expected, rel=5e-10)


def test_three_queries_with_deltas_vector():
    """eps=[0.2,0.4,0.7], delta_i=1e-6, delta_g=1e-5 -> 1.299968174 (8 subsets)."""
    mp.mp.dps = 60
    v = 1 - (1 - mp.mpf(1e-5)) / (1 - mp.mpf(1e-6)) ** 3
    b = optimal_bracket(np.array([0.2, 0.4, 0.7]), np.ones(3, dtype=int), float(v) * (1 - 1e-15), 1e-3)
    assert b.upper == pytest.approx(1.299968174, rel=5e-10)


def test_common_lattice_is_exact_and_contains_grouped_value():
    """0.05 x 300 + 0.1 x 200 + 0.3 x 50: too many joint outcomes to enumerate, one lattice."""
    e, m = np.array([0.05, 0.1, 0.3]), np.array([300, 200, 50])
    b = optimal_bracket(e, m, 1e-6, 1e-3)
    assert b.method.startswith("exact")
    assert b.upper - b.lower < 1e-8
    # both exact paths (the common lattice and the two enumerated sets) agree
    from dpplanner.engine.optimal.pld import common_lattice, lattice_bracket
    from dpplanner.engine.optimal.two_sets import two_set_bracket
    lat = lattice_bracket(e, m, 1e-6, common_lattice(e))
    two = two_set_bracket(e, m, 1e-6)
    assert lat.method.startswith("exact (lattice") and two.method.startswith("exact (two")
    assert lat.lower <= two.upper and two.lower <= lat.upper
    # the same plan through the PLD path must bracket the exact value
    from dpplanner.engine.optimal.bracket import _bracket
    f = _bracket(np.array([0.05, 0.1, 0.3]), np.array([300, 200, 50]), 1e-6, 1e-2, force_pld=True)
    assert f.lower <= b.lower and b.upper <= f.upper


def test_homogeneous_delta_vector():
    """optimal delta at eps_g = 4.0 for 100 x 0.1: 3.422312319e-5."""
    up, lo = optimal_delta(np.array([0.1]), np.array([100]), np.array([4.0]), 1e-3)
    assert lo[0] <= 3.422312319e-5 * (1 + 1e-9) and up[0] >= 3.422312319e-5 * (1 - 1e-9)
    assert up[0] == pytest.approx(3.422312319e-5, rel=1e-9)


def test_inverse_vector_optcomp_per_query_eps():
    """k = 100 queries of 0.02401108040 compose to (1, 1e-6) under OptComp."""
    b = homogeneous_bracket(0.02401108040, 100, 1e-6)
    assert b.upper == pytest.approx(1.0, abs=1e-9)
