"""The bracket's floor (the largest single release's own epsilon, cheap.cheap_lower) is read only
where it may decide something: its O(1) ceiling must never be below it, or a floor that decides
would be skipped."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine.mechanisms.cheap import cheap_lower, cheap_lower_ceiling
from dpplanner.engine.mechanisms.composition import laplace_params, twins


def _twins(lap_m, gauss_m, rr, delta_g):
    m = np.array(gauss_m, dtype=float)
    r, _ = twins(laplace_params(lap_m), [1] * len(lap_m), (m, m), [1] * len(gauss_m),
                 [e for e, _d in rr], [d for _e, d in rr], [1] * len(rr), delta_g)
    return r


@pytest.mark.parametrize("delta_g", [0.5, 1e-3, 1e-6, 1e-12, 1e-100, 1e-300])
@pytest.mark.parametrize("seed", range(4))
def test_the_ceiling_is_never_below_the_floor(delta_g, seed):
    rng = np.random.default_rng(seed)
    gaussian_decides = 0
    for _ in range(25):
        lap = (10.0 ** rng.uniform(-2, 3, rng.integers(0, 3))).tolist()
        gauss = (10.0 ** rng.uniform(-4, 6, rng.integers(1, 3))).tolist()     # mu from 1e-6 to 1e4
        rr = [(float(e), 0.0) for e in 10.0 ** rng.uniform(-3, 1, rng.integers(0, 2))]
        r = _twins(lap, gauss, rr, delta_g)
        floor = cheap_lower(r)
        assert cheap_lower_ceiling(r) >= floor
        gaussian_decides += floor > cheap_lower(_twins(lap, [], rr, delta_g))
    assert gaussian_decides >= 5
