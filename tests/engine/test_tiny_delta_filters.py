"""The filters at a global delta below ~1e-308, where 1/delta_g and 2/delta_g overflow: the RRUV
filter stays finite (it had been inf, its bisection dividing inf by inf)."""

import warnings

import numpy as np
import pytest

from dpplanner.engine import compose_all
from dpplanner.engine.filters import rruv_statistic


@pytest.mark.parametrize("delta_g", [1e-320, 5e-324, 1e-309])
def test_the_rruv_filter_is_finite_at_a_tiny_global_delta(delta_g):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        totals = compose_all([0.5, 1.0], [0.0, 0.0], delta_g, multiplicities=[3, 2], theorems=("filter",))
    total = totals["filter"]
    assert np.isfinite(total.extra["RRUV advanced filter"])
    assert total.epsilon <= total.extra["basic filter"]


def test_the_rruv_statistic_grows_as_delta_g_shrinks_past_the_overflow():
    values = [float(rruv_statistic(1.0, 2.0, 3.0, d)) for d in (1e-300, 1e-305, 1e-310, 1e-320)]
    assert all(np.isfinite(values)) and values == sorted(values)
