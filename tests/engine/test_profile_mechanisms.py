"""The privacy profile of the noise the releases actually add."""

from __future__ import annotations

import numpy as np

from dpplanner import engine
from dpplanner.engine.mechanisms import gaussian_delta, gaussian_multiplier


def test_gaussian_profile_brackets_the_closed_form_and_beats_the_generic_one():
    eps, delta, k = 0.5, 1e-7, 20
    grid = [0.5, 1.0, 2.0, 4.0]
    generic = engine.privacy_profile([eps], [delta], multiplicities=[k], eps_values=grid)
    noisy = engine.privacy_profile([eps], [delta], multiplicities=[k], eps_values=grid,
                                   mechanisms=["gaussian"])
    # k Gaussians of multiplier m are one Gaussian of multiplier m / sqrt(k)
    m = gaussian_multiplier(eps, delta) / np.sqrt(k)
    exact = np.array([gaussian_delta(m, e) for e in grid])
    assert np.all(noisy.delta_lower <= exact * (1 + 1e-9))
    assert np.all(exact <= noisy.delta_upper * (1 + 1e-9))
    assert np.all(noisy.delta_upper <= generic.delta_upper)
    assert noisy.delta_upper[1] < 0.5 * generic.delta_upper[1]


def test_generic_releases_keep_the_optimal_profile():
    a = engine.privacy_profile([0.3, 0.2], [0.0, 1e-8], eps_values=[0.1, 0.4])
    b = engine.privacy_profile([0.3, 0.2], [0.0, 1e-8], eps_values=[0.1, 0.4], mechanisms=["eps-delta"] * 2)
    assert np.array_equal(a.delta_upper, b.delta_upper) and np.array_equal(a.delta_lower, b.delta_lower)
    up, lo = engine.delta_for_epsilon([0.3], [0.0], 0.2, mechanisms=["laplace"])
    assert 0 <= lo <= up <= engine.delta_for_epsilon([0.3], [0.0], 0.2)[0]


def test_delta_at_a_huge_epsilon_is_a_bound_never_nan():
    # A Gaussian's delta is positive at every epsilon, so its upper bound stays above 0 (the
    # smallest doubles where the exact one underflows); it was 0 from eps ~ 1e3 and NaN from 1e154
    # (the log of Phi(x) overflowed, and a delta_bar of 1 gave a NaN total).
    for eps_g in (1e3, 1e154, 1e300):
        up, lo = engine.delta_for_epsilon([1.0, 0.5], [1e-6, 1e-6], eps_g, mechanisms=["gaussian"] * 2)
        assert 0.0 == lo < up <= 1e-300
        # pure releases: exactly 0 beyond the sum of their epsilons (not -0.0)
        up, lo = engine.delta_for_epsilon([1.0, 0.5], [0.0, 0.0], eps_g, mechanisms=["laplace"] * 2)
        assert (up, lo) == (0.0, 0.0) and np.copysign(1.0, up) == 1.0


def test_total_delta_of_a_delta_bar_of_one_is_one():
    from dpplanner.engine.delta import total_delta_down, total_delta_up

    assert total_delta_up(1.0, -1e-6) == 1.0 and total_delta_up(np.array([0.5, 1.0]), 0.0)[1] == 1.0
    assert 0.99 < total_delta_down(1.0, -1e-6) <= 1.0
