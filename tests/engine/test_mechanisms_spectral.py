"""The pld bracket's rungs: the tilted Fourier-domain composition, the pairwise tree of single
releases, and the hybrid (second-order) lower bound, each against a brute-force reference."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpplanner.engine import Gaussian, Laplace, compose_mechanisms
from dpplanner.engine.mechanisms.hybrid import density_gap, gap_bound
from dpplanner.engine.mechanisms.kernel_rows import laplace_ctd_rows, rr_ctd_rows
from dpplanner.engine.mechanisms.kernels import laplace_upper, rr_upper
from dpplanner.engine.mechanisms.rowtree import reduce_rows, tilt_rows
from dpplanner.engine.mechanisms.tilted import compose, tilt


def _direct(kernels_mult):
    """The exact composition of kernels (each to its multiplicity), by direct convolution."""
    out = np.ones(1)
    for k, n in kernels_mult:
        for _ in range(n):
            out = np.convolve(out, k.p)
    return out


@pytest.mark.parametrize("theta", [0.0, 3.0, 40.0])
def test_the_tilted_composition_is_the_direct_one_within_its_error_bounds(theta):
    step = 2.0 ** -9
    kernels = [(laplace_upper(0.05, step), 7), (laplace_upper(0.013, step), 3), (rr_upper(0.02, step), 5)]
    exact = _direct(kernels)
    comp = compose([tilt(k, theta, n) for k, n in kernels], step, theta, 0.0)
    idx = comp.w0 + np.arange(comp.c.size)
    inside = (idx >= 0) & (idx < exact.size)
    # untilted: c_k M e^{-theta s k}; l2 error e2 (and relative rel, l1 e1) in the tilted vector
    tilted_exact = exact[idx[inside]] * np.exp(theta * step * idx[inside] - comp.log_m)
    diff = comp.c[inside] - tilted_exact
    allowed = comp.e2 + comp.e1 + comp.rel * float(np.sum(tilted_exact)) + comp.outside
    assert float(np.sqrt(np.sum(diff * diff))) <= allowed
    assert float(np.sum(tilted_exact)) == pytest.approx(1.0, abs=1e-9)    # the window holds the mass


def test_the_pairwise_tree_of_rows_is_the_direct_composition():
    step = 2.0 ** -10
    a = np.array([0.011, 0.02, 0.0033, 0.05, 0.041, 0.0071, 0.03])
    p, rel, err = laplace_ctd_rows(a, step)
    for i, x in enumerate(a.tolist()):        # the rows are the scalar kernels
        k = laplace_upper(x, step)
        assert np.allclose(p[i, :k.p.size], k.p, rtol=1e-13, atol=0) and not p[i, k.p.size:].any()
    theta = 7.0
    red = reduce_rows(tilt_rows(p, rel, err, step, theta))
    exact = _direct([(laplace_upper(x, step), 1) for x in a.tolist()])
    j = red.start + np.arange(red.t.size)
    tilted_exact = exact[j] * np.exp(theta * step * j - red.log_m)
    assert float(np.sqrt(np.sum((red.t - tilted_exact) ** 2))) <= red.e2 + red.err + red.rel
    q, _, _ = rr_ctd_rows(np.array([0.02, 0.3]), step)
    assert np.allclose(q[1, :rr_upper(0.3, step).p.size], rr_upper(0.3, step).p, rtol=1e-13, atol=0)


def test_the_jensen_gap_of_connect_the_dots_is_within_its_bound():
    """Mass at g + v split onto g and g + s keeping E[e^-Y] raises (1 - e^{Y* - Y})^+ by at most
    gap_bound(v), for every kink Y*; and a density's gaps over a cell add up to at most density_gap."""
    s = 0.37
    for v in np.linspace(0, s, 41).tolist():
        w = (1 - math.exp(-v)) / (1 - math.exp(-s))    # the share moved up
        worst = 0.0
        for kink in np.linspace(-0.1, s + 0.1, 401).tolist():
            def h(y):
                return max(0.0, 1 - math.exp(kink - y))
            worst = max(worst, (1 - w) * h(0.0) + w * h(s) - h(v))
        assert worst <= float(gap_bound(v, s)) + 1e-15
    integral = mpmath.quad(lambda v: (1 - mpmath.exp(-v)) * (1 - mpmath.exp(v - s)) / (1 - mpmath.exp(-s)), [0, s])
    assert integral <= density_gap(s)


def test_a_laplace_release_moves_delta_by_at_most_half_the_change_of_a():
    """The Lipschitz charge that lets one composition serve both ends (spectral.rung)."""
    def delta(a, y):
        a, y = mpmath.mpf(a), mpmath.mpf(y)
        if y >= a:
            return mpmath.mpf(0)
        if y >= 0:
            return 1 - mpmath.exp((y - a) / 2)
        return 1 - mpmath.exp(y) + mpmath.exp(y) * (1 - mpmath.exp((-y - a) / 2) if -y < a else 0)

    for a in (0.001, 0.3, 2.0):
        for y in np.linspace(-3 * a, 2 * a, 37).tolist():
            d = mpmath.diff(lambda t: delta(t, y), a) if abs(abs(y) - a) > 1e-9 else 0
            assert abs(d) <= 0.5 + 1e-12


@pytest.mark.parametrize("m, g", [(4.0, 2.5), (7.0, 3.0), (1.5, 1.2)])
def test_the_hybrid_lower_end_is_below_the_exact_epsilon(m, g):
    """A Laplace and a Gaussian release (the hybrid bound applies): lower <= exact <= upper, with
    the exact delta by numerical integration over the Laplace loss (mpmath)."""
    r = compose_mechanisms([Laplace(m), Gaussian(g)], 1e-5, eta=1e-5)
    assert "lattice" in r.detail and r.epsilon - r.epsilon_lower <= 1e-5
    mpmath.mp.dps = 30
    a, mu = 1 / mpmath.mpf(m), 1 / mpmath.mpf(g)

    def exact_delta(x):
        def dg(y):      # the Gaussian's delta at y (formulas.md §8)
            return mpmath.ncdf(mu / 2 - y / mu) - mpmath.exp(y) * mpmath.ncdf(-mu / 2 - y / mu)
        # the Laplace loss -a + Y: atoms e^-a / 2 at Y = 0 and 1/2 at 2a, density e^{y/2 - a} / 4
        body = mpmath.quad(lambda y: dg(x + a - y) * mpmath.exp(y / 2 - a) / 4, [0, 2 * a])
        return dg(x + a) * mpmath.exp(-a) / 2 + dg(x - a) / 2 + body

    assert exact_delta(r.epsilon) <= 1e-5 <= exact_delta(r.epsilon_lower)
