"""The fast path's vectorised pieces against their one-at-a-time definitions."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from dpplanner.engine.optimal.exact import exact_sum
from dpplanner.engine.optimal.lattice import sparse_convolve
from dpplanner.engine.optimal.pld import batch_pmf, kernel_points, lower_kernel, upper_kernel


def test_exact_sum_is_the_rational_sum():
    rng = np.random.default_rng(5)
    eps = np.concatenate([rng.uniform(1e-9, 3.0, 500), [1e-300, 2.0 ** -1074, 1e300, 0.1]])
    mult = rng.integers(1, 10**6, eps.size)
    want = sum((Fraction(float(e)) * int(m) for e, m in zip(eps, mult)), Fraction(0))
    assert exact_sum(eps, mult) == want
    assert exact_sum(np.zeros(0), np.zeros(0, dtype=np.int64)) == 0


@pytest.mark.parametrize("upper", [True, False])
def test_batch_is_the_kernels_composed_one_by_one(upper):
    rng = np.random.default_rng(6)
    step = 2.0 ** -9
    # random doubles, one on the lattice (no split above), one below half a step (n = 0)
    eps = np.concatenate([rng.uniform(0.001, 0.2, 40), [3 * 2.0 ** -10, 2.0 ** -12]])
    got = batch_pmf(eps.tolist(), step, upper)
    arr, rel = np.ones(1), 0.0
    for e in eps.tolist():
        ker = upper_kernel(e, step) if upper else lower_kernel(e, step)
        arr = sparse_convolve(arr, ker.p)[0]
        rel = max(rel, ker.rel)
    assert got.p.size == arr.size
    assert np.all(np.abs(got.p - arr) <= 1e-12 * arr + 1e-300)
    assert got.rel >= eps.size * rel  # every kernel's own error is charged
    offsets = sum((Fraction(float(e if upper else kernel_points(e, step) * step / 2)) for e in eps), Fraction(0))
    assert (Fraction(got.offset) >= -offsets) if upper else (Fraction(got.offset) <= -offsets)


def test_kernel_points_refuses_an_unbounded_kernel_in_an_array():
    assert kernel_points(np.array([0.25, 0.5]), 2.0 ** -4).tolist() == [8, 16]
    with pytest.raises(ValueError, match="epsilon = 1e\\+300 is too large"):
        kernel_points(np.array([0.25, 1e300]), 2.0 ** -10)
