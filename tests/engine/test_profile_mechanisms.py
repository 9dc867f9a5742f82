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
