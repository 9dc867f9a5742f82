"""Large plans: k = 1e5 and sums of epsilon in the thousands, without any overflow warning."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpplanner.engine import compose, compose_all, curve, filter_admits

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")


def test_closed_forms_for_k_1e5():
    for theorem in ("basic", "advanced", "filter"):
        r = compose([0.01, 0.02], [1e-12, 0.0], 1e-5, theorem, multiplicities=[50_000, 50_000])
        assert math.isfinite(r.epsilon) and r.epsilon <= 1500 * (1 + 1e-12), theorem
    adv = compose([0.01], [0.0], 1e-5, "advanced", multiplicities=[100_000])
    assert adv.epsilon < 0.2 * 1000  # far below basic's 1000


def test_sum_epsilon_in_the_thousands_and_huge_single_epsilon():
    r = compose_all([50.0, 800.0], [1e-9, 1e-9], 1e-6, eta=1.0, multiplicities=[60, 1],
                    theorems=("basic", "advanced", "filter", "concurrent", "optimal"))
    assert r["basic"].epsilon == pytest.approx(3800.0, rel=1e-12)
    assert r["advanced"].extra["DRV"] == math.inf  # e^800 would overflow: the candidate is dropped
    for name, res in r.items():
        assert res.epsilon >= 0 and not math.isnan(res.epsilon), name
    # Vadhan-Wang multiplies later deltas by e^{sum of earlier eps}: astronomically invalid, not an overflow
    assert r["concurrent"].extra["Vadhan-Wang delta"] == math.inf
    assert r["concurrent"].extra["Vadhan-Wang 2021"] == math.inf


def test_tiny_delta_g_and_many_tiny_deltas():
    r = compose([0.001], [1e-20], 1e-15, "advanced", multiplicities=[100_000])
    assert math.isfinite(r.epsilon)
    r = compose([0.001], [1e-20], 1e-15, "basic", multiplicities=[100_000])
    assert r.delta == pytest.approx(1e-15, rel=1e-9)


@pytest.mark.slow
def test_curve_and_filters_for_k_1e5():
    c = curve([0.001], [0.0], 1e-6, mode="repeat", k_max=100_000, theorems=("basic", "advanced", "filter"))
    assert c.ks.size == 100_000 and np.isfinite(c.upper["advanced"]).all()
    assert filter_admits([0.001], [0.0], 1.0, 1e-6, filter="rruv", multiplicities=[100_000]) == 14799
