"""The discrete releases' lattice twins, path by path, against exact loss distributions.

A twin is sound when delta(x) = E[(1 - e^{x - L})^+] read from it (plus its mass at +infinity) is
>= the exact delta (upper) or <= it (lower) at every x; every path of the kernels is checked so:
atom by atom and cell by cell (closed forms), on and off an aligned lattice, term by term and
Euler-Maclaurin sums. Huge shifts are checked against their continuous limits.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpplanner.engine import DiscreteGaussian, DiscreteLaplace, Gaussian, Laplace, compose_mechanisms
from dpplanner.engine.mechanisms import discrete_laplace as dl
from dpplanner.engine.mechanisms.discrete_gaussian_kernel import dg_kernel
from dpplanner.engine.mechanisms.gauss_sums import run_sum_bounds

mpmath.mp.dps = 30
XS = [-0.5, 0.0, 0.1, 0.4, 1.0]


def twin_delta(k, x):
    """delta(x) read from a twin as the engine reads it: its entries within (1 +- rel), err and
    the mass at +infinity counted in its direction."""
    locs = k.offset + (k.start + np.arange(k.p.size)) * k.step
    s = mpmath.fsum(mpmath.mpf(float(p)) * (1 - mpmath.exp(x - mpmath.mpf(float(l))))
                    for l, p in zip(locs, k.p) if l > x and p > 0)
    if k.upper:
        return s * (1 + k.rel) + k.err + k.inf_mass
    return s * (1 - k.rel) - k.err


def dl_exact(t, S, x):
    t, x = mpmath.mpf(t), mpmath.mpf(x)
    q = mpmath.exp(-1 / t)
    total = mpmath.mpf(0)
    for i in range(S + 1):
        m = 1 / (1 + q) if i == S else (q ** S / (1 + q) if i == 0 else (1 - q) * q ** (S - i) / (1 + q))
        loss = (2 * i - S) / t
        if loss > x:
            total += m * (1 - mpmath.exp(x - loss))
    return total


def dg_exact(sigma, S, x, sds=40):
    """delta(x) of one discrete Gaussian: sum over integers y with L(y) > x, in 30 digits (the
    integers beyond sds standard deviations left out: e^-(sds^2 / 2) of the mass)."""
    s2 = mpmath.mpf(sigma) ** 2
    width = int(sds * sigma) + 2
    ys = np.arange(-width, width + 1)
    f = [mpmath.exp(-mpmath.mpf(int(y)) ** 2 / (2 * s2)) for y in ys]
    z = mpmath.fsum(f)
    total = mpmath.mpf(0)
    for y, fy in zip(ys.tolist(), f):
        loss = mpmath.mpf(S) * (S - 2 * y) / (2 * s2)
        if loss > x:
            total += fy * (1 - mpmath.exp(x - loss))
    return total / z


def check(k, exact, upper):
    for x in XS:
        got, want = twin_delta(k, x), exact(x)
        assert (got >= want) if upper else (got <= want), (x, got, want)


@pytest.mark.parametrize("t, S, step", [(2.0, 3, 1 / 64), (50.0, 40, 1 / 64), (300.0, 200, 1 / 64),
                                        (3000.0, 2000, 1 / 256), (2.0, 4, 0.5),
                                        (103.38435465699293, 2, 0.0009516111462236818)])  # (no runs: all pooled)
@pytest.mark.parametrize("dense", [False, True])
def test_discrete_laplace_twins_bracket_the_exact_delta(t, S, step, dense, monkeypatch):
    if dense:       # the closed-form cells and the Jensen runs, on small enough cases to check
        monkeypatch.setattr(dl, "SPARSE_ATOMS", 2)
    for upper in (True, False):
        check(dl.dl_kernel(t, S, step, upper), lambda x: dl_exact(t, S, x), upper)


def test_discrete_laplace_lower_twin_is_exact_on_an_aligned_lattice():
    t, S = 2.0, 5            # atoms 2/t = 1 apart: on a lattice of step 1/4
    k = dl.dl_kernel(t, S, 0.25, False)
    for x in XS:
        assert twin_delta(k, x) <= dl_exact(t, S, x)
        assert float(twin_delta(k, x)) == pytest.approx(float(dl_exact(t, S, x)), rel=1e-12)


@pytest.mark.parametrize("sigma, S, step", [(2.0, 1, 1 / 64), (30.0, 7, 1 / 64), (0.8, 2, 1 / 128),
                                            (2.0, 1, 1 / 4)])
def test_discrete_gaussian_twins_term_by_term(sigma, S, step):
    for upper in (True, False):
        check(dg_kernel(sigma, S, step, upper, 1e-15), lambda x: dg_exact(sigma, S, x), upper)


@pytest.mark.parametrize("sigma, S", [(1500.0, 300), (1100.0, 2000)])
def test_discrete_gaussian_twins_by_euler_maclaurin(sigma, S):
    """sigma above the term-by-term range: cell-by-cell sums with Euler-Maclaurin bounds."""
    mpmath.mp.dps = 20
    exact = {x: dg_exact(sigma, S, x, sds=11) for x in (0.0, 0.4)}      # (e^-60: below every margin)
    for upper in (True, False):
        k = dg_kernel(sigma, S, 1 / 256, upper, 1e-15)
        for x, want in exact.items():
            got = twin_delta(k, x)
            assert (got >= want) if upper else (got <= want)
            assert abs(got - want) <= 2e-3 * want
    mpmath.mp.dps = 30


def test_euler_maclaurin_run_sums_bracket_the_exact_sums():
    sigma = 5000.0
    a = np.array([-150000.0, -15000.0, -10.0, 3.0, 7000.0, -np.inf])
    b = np.array([-149990.0, -14000.0, 10.0, 3.0, 9000.0, -100000.0])
    lo, hi = run_sum_bounds(a, b, sigma)
    s2 = mpmath.mpf(sigma) ** 2
    norm = mpmath.sqrt(2 * mpmath.pi) * sigma
    for i in range(a.size):
        f = lambda y: mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2))  # noqa: E731
        if math.isinf(a[i]):
            # (a half-line at z = -20: terms fall by e^-0.004 each, e^-80 after 20 000 of them)
            exact = mpmath.fsum(f(y) for y in range(int(b[i]) - 20000, int(b[i]) + 1)) / norm
        else:
            exact = mpmath.fsum(f(y) for y in range(int(a[i]), int(b[i]) + 1)) / norm
        assert lo[i] <= exact <= hi[i]
        assert hi[i] - lo[i] <= 1e-9 * exact


def test_a_huge_shift_discrete_laplace_composes_like_the_continuous_one():
    """Shift 2^50 at epsilon 0.1 per release: the atoms are 2e-16 apart, the loss is the
    continuous Laplace's to within that; both certified brackets must overlap."""
    S, k, delta_g = 2 ** 50, 60, 1e-6
    disc = compose_mechanisms([DiscreteLaplace(S / 0.1, S)], delta_g, eta=1e-4, multiplicities=[k])
    cont = compose_mechanisms([Laplace(10.0)], delta_g, eta=1e-4, multiplicities=[k])
    assert disc.epsilon_lower <= cont.epsilon + 1e-9 and cont.epsilon_lower <= disc.epsilon + 1e-9
    assert disc.epsilon - disc.epsilon_lower <= 1e-4


def test_a_huge_shift_discrete_gaussian_composes_like_the_continuous_one():
    S, m, k, delta_g = 2 ** 40, 8.0, 30, 1e-6
    disc = compose_mechanisms([DiscreteGaussian(S * m, S)], delta_g, eta=1e-4, multiplicities=[k])
    cont = compose_mechanisms([Gaussian(m)], delta_g, eta=1e-4, multiplicities=[k])
    assert disc.epsilon_lower <= cont.epsilon + 1e-9 and cont.epsilon_lower <= disc.epsilon + 1e-9
