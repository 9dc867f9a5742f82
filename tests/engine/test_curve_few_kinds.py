"""A long prefix curve over few distinct epsilons (one statistic repeated many times, then a few
others) brackets each point on its own: the points are exactly what compose() says of each prefix,
and they agree with the incremental prefix curve."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine import compose, curve
from dpplanner.engine.optimal import optimal_prefix_curve

EPS = [0.0102] * 3000 + [0.0204, 0.0051, 0.0102, 0.05] * 5
DELTAS = [0.0] * 3000 + [1e-8, 0.0, 3e-8, 0.0] * 5


def test_each_point_is_the_composition_of_its_prefix():
    c = curve(EPS, DELTAS, 1e-6, mode="prefix", points=4, eta=1e-3, theorems=("optimal", "advanced"))
    for j, k in enumerate(c.ks.tolist()):
        r = compose(EPS[:k], DELTAS[:k], 1e-6, theorem="optimal", eta=1e-3)
        # (the curve's delta_bar per prefix may differ from compose's in the last bits)
        assert c.upper["optimal"][j] == pytest.approx(r.epsilon, rel=1e-12)
        assert c.lower["optimal"][j] == pytest.approx(r.epsilon_lower, rel=1e-12)
        assert c.upper["optimal"][j] <= c.upper["advanced"][j]
    assert all(c.met_eta("optimal"))


def test_the_points_agree_with_the_incremental_curve():
    c = curve(EPS[:3000] + [0.05] * 3, [0.0] * 3003, 1e-6, mode="prefix", points=3, eta=1e-3,
              theorems=("optimal",))
    up, lo = optimal_prefix_curve(np.array(EPS[:3000] + [0.05] * 3), np.full(c.ks.size, 1e-6), c.ks, 1e-3)
    assert np.all(c.lower["optimal"] <= up) and np.all(lo <= c.upper["optimal"])


def test_infeasible_points_stay_infinite():
    c = curve(EPS, [2e-7] * len(EPS), 1e-6, mode="prefix", points=3, eta=1e-3, theorems=("optimal",))
    assert c.upper["optimal"][0] < np.inf and c.upper["optimal"][-1] == np.inf
