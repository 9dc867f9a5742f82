"""Each error charge of the spectral composition, checked without a fixed slack: the pmf's one-sided
excess over the exact composition of the same computed kernels (in long double) is within its
``err``, the mass outside a narrow window is within its ``inf_mass``, and the offsets and the
split's lower pmf are on their safe side. (test_optimal_spectral's l1 check allows a slack larger
than these charges, so it cannot see one missing.)"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from dpplanner.engine.optimal import split
from dpplanner.engine.optimal.atoms import U
from dpplanner.engine.optimal.hybrid_error import kernel_shift
from dpplanner.engine.optimal.lattice import U_LONG
from dpplanner.engine.optimal.pld import kernel_table, spectral_plan
from dpplanner.engine.optimal.spectral import _directed_sum, _frequency_bounds, _total_mass, spectral_pmf

STEP = 2.0 ** -10
#: 1500 copies each of two queries whose 2 eps is 7 and 8 lattice points (as test_optimal_spectral)
EPS = np.repeat([7 * STEP / 2, 8 * STEP / 2], 1500)


def _power(kernel: np.ndarray, m: int) -> np.ndarray:
    out, base = np.ones(1, dtype=np.longdouble), kernel
    while m:
        if m & 1:
            out = np.convolve(out, base)
        m >>= 1
        if m:
            base = np.convolve(base, base)
    return out


def _exact(n, q, a, b, m) -> np.ndarray:
    """The composition of the computed kernels by direct convolutions in long double (index =
    lattice position; its own rounding ~1e-19 of the mass on x86, far below the charges)."""
    out = np.ones(1, dtype=np.longdouble)
    for ni, qi, ai, bi, mi in zip(n.tolist(), q.tolist(), a.tolist(), b.tolist(), m.tolist()):
        kernel = np.zeros(ni + 2, dtype=np.longdouble)
        kernel[0] += qi
        kernel[ni] += ai
        kernel[ni + 1] += bi
        out = np.convolve(out, _power(kernel, int(mi)))
    return out


def _against_exact(upper: bool, budget: float, tail_budget: float, extended: bool = False):
    """(pmf, its one-sided excess over the exact composition in its window, mass outside it)."""
    e, mult = np.unique(EPS, return_counts=True)
    n, q, a, b, off, rel = kernel_table(e, STEP, upper)
    pmf = spectral_pmf(n, q, a, b, off, rel, mult.astype(float), STEP, upper, budget, tail_budget, extended)
    assert pmf is not None
    exact = _exact(n, q, a, b, mult)
    lo, size = pmf.start, pmf.p.size
    ref = np.zeros(size, dtype=np.longdouble)
    s, t = max(lo, 0), min(lo + size, exact.size)
    ref[s - lo:t - lo] = exact[s:t]
    outside = float(exact[:max(lo, 0)].sum() + exact[max(lo + size, 0):].sum())
    x = pmf.p.astype(np.longdouble)
    excess = float(np.maximum(ref - x, 0).sum() if upper else np.maximum(x - ref, 0).sum())
    return pmf, excess, outside


@pytest.mark.parametrize("extended", [False, True])
@pytest.mark.parametrize("budget", [1e-15, 1e-5])
@pytest.mark.parametrize("upper", [True, False])
def test_the_one_sided_excess_is_within_err(upper, budget, extended):
    """Sum (exact - x)^+ <= err for an upper pmf, sum (x - exact)^+ <= err for a lower: no slack
    (the kernels are the same computed ones, so the kernels' part of ``rel`` is not needed). In
    long double at budget 1e-15 the rounding dominates err (~5.6e-16; the same spectrum in double
    is off by ~1e-15): only the cast back to double, one ulp of each entry (in ``rel``), is added."""
    pmf, excess, _ = _against_exact(upper, budget, 1e-16, extended)
    cast = 1.01 * U * float(pmf.p.sum()) if extended else 0.0
    assert excess <= pmf.err + cast


@pytest.mark.skipif(U_LONG >= U, reason="long double is double on this platform")
def test_the_long_double_pmf_charges_its_cast_to_double():
    """The long-double pmf is rounded back to double entry by entry (up to half an ulp each, not in
    err): its rel carries that ulp on top of the kernels' own."""
    e, mult = np.unique(EPS, return_counts=True)
    n, q, a, b, off, rel = kernel_table(e, STEP, True)
    args = (n, q, a, b, off, rel, mult.astype(float), STEP, True, 1e-15, 1e-16)
    assert spectral_pmf(*args, True).rel >= spectral_pmf(*args).rel + U


@pytest.mark.parametrize("upper", [True, False])
def test_a_narrow_window_charges_its_tails(upper):
    """A large tail budget (1e-4): the window leaves ~1e-8 outside. An upper pmf must put at least
    that at +infinity; a lower pmf folds it in, so its excess (~1e-8, far above the frequencies'
    1e-10) must be in err."""
    pmf, excess, outside = _against_exact(upper, 1e-10, 1e-4)
    assert outside > 1e-10  # the window really cuts mass
    if upper:
        assert outside <= pmf.inf_mass
    else:
        assert excess > 1e-10 and pmf.inf_mass == 0.0
    assert excess <= pmf.err


def test_total_mass_minus_one_is_from_the_exact_sum():
    """T - 1 of each kernel within an ulp of the exact q + a + b - 1 plus 2 u^2 (the rounded T - 1 is
    off by up to u per query, k u in log X_j)."""
    eps = np.random.default_rng(7).uniform(0.0005, 0.01, 2000)
    for upper in (True, False):
        _, q, a, b, _, _ = kernel_table(eps, STEP, upper)
        _, t1 = _total_mass(q, a, b)
        for qi, ai, bi, ti in zip(q.tolist(), a.tolist(), b.tolist(), t1.tolist()):
            exact = Fraction(qi) + Fraction(ai) + Fraction(bi) - 1
            assert abs(Fraction(ti) - exact) <= Fraction(math.ulp(float(exact))) + 2 * Fraction(U) ** 2


def test_the_frequency_bound_at_zero_is_above_the_exact_mass():
    """|X_0| is the product of the kernels' exact masses T_i: the bound must be above it, also where
    the FFT's sum of the histogram rounds below its exact sum (its error is charged, not assumed
    away). 12 plans x both sides x 5 window lengths; the exact log in mpmath at 40 digits."""
    mpmath.mp.dps = 40
    for seed in range(12):
        eps = np.random.default_rng(seed).uniform(0.0005, 0.01, 2000)
        for upper in (True, False):
            n, q, a, b, _, _ = kernel_table(eps, STEP, upper)
            exact = mpmath.fsum(mpmath.log(mpmath.mpf(qi) + mpmath.mpf(ai) + mpmath.mpf(bi))
                                for qi, ai, bi in zip(q.tolist(), a.tolist(), b.tolist()))
            for size in (1000, 2048, 3000, 4096, 6000):
                bound = _frequency_bounds(np.asarray(n, dtype=np.int64), q, a, b, np.ones(eps.size), size)[0]
                assert mpmath.mpf(bound) >= exact, (seed, upper, size)


def test_the_offsets_round_away_from_the_exact_sum():
    """The upper pmf's offset is >= the exact sum of its kernels' offsets, the lower's <= it: where
    the nearest double is on the wrong side, it moves one ulp."""
    m = np.array([1.0, 1.0])
    for off in ([1.0, 2.0 ** -60], [1.0, -(2.0 ** -60)], [0.1, 0.2]):
        off = np.array(off)
        exact = sum(Fraction(v) for v in off.tolist())
        assert Fraction(_directed_sum(off, m, True)) >= exact
        assert Fraction(_directed_sum(off, m, False)) <= exact
    # and through a whole pmf (offsets -eps / 2 of many distinct queries)
    eps = np.random.default_rng(8).uniform(0.0005, 0.004, 1500)
    for upper in (True, False):
        n, q, a, b, off, rel = kernel_table(eps, STEP, upper)
        pmf = spectral_pmf(n, q, a, b, off, rel, np.ones(eps.size), STEP, upper, 1e-6, 1e-12)
        exact = sum(Fraction(v) for v in off.tolist())
        assert (Fraction(pmf.offset) >= exact) if upper else (Fraction(pmf.offset) <= exact)


def test_the_split_lower_pmf_charges_the_rounded_up_kernels():
    """The spectral split's lower pmf composes R_S with the rest's CTD kernels, whose weights are
    rounded up: its err carries ``kernel_shift`` on top of the composition's own."""
    rng = np.random.default_rng(9)
    es, er = rng.uniform(0.0005, 0.004, 300), rng.uniform(0.0005, 0.004, 1500)
    ms, mr = np.ones(es.size, dtype=np.int64), np.ones(er.size, dtype=np.int64)
    blocks = split._blocks(np.arange(er.size))
    got = split._spectral_compositions(es, ms, er, mr, blocks, STEP, 1e-7)
    assert got is not None
    own = spectral_plan([(es, ms, False), (er, mr, True)], STEP, False, 1e-7)
    assert got[3].err >= own.err + kernel_shift(mr, STEP)
