"""The discrete kinds' table for the cumulants that place a rung's tilt (mechanisms/cumulants.py)."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from dpplanner.engine.mechanisms.cumulants import KernelCumulants
from dpplanner.engine.optimal.lattice import LatticePMF


@pytest.mark.parametrize("theta", [0.0, 0.7, 25.0])
def test_the_tilt_guide_reads_every_kernel_of_its_table(theta):
    """Kernels laid out as one table (with atoms of no mass among them) give each kernel's own
    log-moment, tilted mean and variance, times its multiplicity (40-digit sums)."""
    rng = np.random.default_rng(4)
    kernels = []
    for start, size, n in ((-7, 9, 3), (2, 1, 1), (-30, 40, 5)):
        p = rng.uniform(0.0, 1.0, size) * (rng.uniform(size=size) > 0.2)
        p[size // 2] = 0.5
        kernels.append((LatticePMF(0.01, start, p / p.sum(), -0.003, True), n))
    want = np.zeros(3)
    with mpmath.workdps(40):
        for k, n in kernels:
            y = [mpmath.mpf(k.offset) + mpmath.mpf(k.step) * (k.start + j) for j in range(k.p.size)]
            w = [mpmath.mpf(float(q)) * mpmath.exp(theta * v) for q, v in zip(k.p, y)]
            total = mpmath.fsum(w)
            mean = mpmath.fsum(a * v for a, v in zip(w, y)) / total
            var = mpmath.fsum(a * (v - mean) ** 2 for a, v in zip(w, y)) / total
            want += n * np.array([float(mpmath.log(total)), float(mean), float(var)])
    assert np.allclose(KernelCumulants(kernels)(theta), want, rtol=1e-11, atol=1e-13)
    assert KernelCumulants([])(theta) == (0.0, 0.0, 0.0)
