"""Properties of the optimal core: monotonicity, soundness of each approximation, no overflow."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpplanner.engine.optimal import (homogeneous_bracket, optimal_bracket,
                                      optimal_prefix_curve)
from dpplanner.engine.optimal.bracket import _bracket, merge_groups
from dpplanner.engine.optimal.lattice import fft_convolve
from dpplanner.engine.optimal.pld import common_lattice, lattice_bracket, pld_side
from dpplanner.engine.optimal.profile import _optimal_delta
from dpplanner.engine.types import CancelToken, Cancelled
from oracle import Oracle


def kov_exact(eps: float, k: int, delta_bar: float) -> float:
    """Homogeneous OptComp by mpmath bisection on MV Thm 1.4 (binomial sum, 50 digits)."""
    mp.mp.dps = 50
    e = mp.mpf(eps)
    den = (1 + mp.exp(e)) ** k
    terms = [(mp.binomial(k, l), l) for l in range(k + 1)]

    def lhs(x):
        return mp.fsum(c * (mp.exp(l * e) - mp.exp(x) * mp.exp((k - l) * e))
                       for c, l in terms if (2 * l - k) * e > x) / den

    lo, hi = mp.mpf(0), k * e + 1
    if lhs(0) <= delta_bar:
        return 0.0
    for _ in range(120):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if lhs(mid) <= delta_bar else (mid, hi)
    return float(hi)


@pytest.mark.parametrize("eps, k, db", [(0.1, 100, 1e-6), (0.5, 40, 1e-10), (0.02, 400, 1e-3),
                                        (1.0, 50, 1e-15)])
@pytest.mark.slow
def test_homogeneous_equals_exact_kov(eps, k, db):
    exact = kov_exact(eps, k, db)
    b = homogeneous_bracket(eps, k, db)
    assert b.lower <= exact <= b.upper
    assert b.upper - b.lower < 1e-9


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.0, 1.5), min_size=2, max_size=9), st.integers(0, 8),
       st.floats(0.0, 0.5), st.floats(-12, -1))
@pytest.mark.slow
def test_monotone_in_every_eps(eps, which, bump, log_db):
    """Raising one eps never lowers the certified interval: lower(eps) <= upper(eps + bump)."""
    db = 10.0 ** log_db
    i = which % len(eps)
    bigger = list(eps)
    bigger[i] += bump
    for force in (False, True):
        a = _bracket(np.array(eps), np.ones(len(eps), dtype=int), db, 1e-3, force_pld=force)
        b = _bracket(np.array(bigger), np.ones(len(eps), dtype=int), db, 1e-3, force_pld=force)
        assert a.lower <= b.upper
        if not force:  # exact paths: monotone up to their float-level width
            assert a.upper <= b.upper + 1e-9


def _nearest_rounding_upper(eps, step, db):
    """What a naive discretisation (round each +-eps to the nearest grid point) would report."""
    from dpplanner.engine.optimal.atoms import Atoms, sup_root
    l, p = np.zeros(1), np.ones(1)
    for e in eps:
        g = round(e / step) * step
        pe = 1 / (1 + math.exp(-e))
        l = np.concatenate([l - g, l + g])
        p = np.concatenate([p * (1 - pe), p * pe])
    o = np.argsort(l)
    return sup_root(Atoms(l[o], p[o], True), db)


def test_fast_path_contains_exact_where_rounding_to_nearest_fails():
    """Connect-the-dots must stay above the exact value even on a coarse grid; rounding each
    loss to the nearest grid point (what CTD replaces) falls below it on this plan."""
    eps = [0.3, 0.3 + 1 / 64, 0.55, 0.7, 0.9, 0.41, 0.17, 1.1]
    step = 2.0 ** -3
    for db in (1e-2, 1e-5, 1e-9):
        exact = float(Oracle(eps).opt_comp(db))
        naive = _nearest_rounding_upper(eps, step, db)
        e, m = np.sort(np.array(eps)), np.ones(len(eps), dtype=int)
        up = pld_side(e, m, step, True, db)
        lo = pld_side(e, m, step, False, db)
        assert naive < exact, "the plan must discriminate CTD from nearest rounding"
        assert lo <= exact <= up


@pytest.mark.slow
def test_fft_error_bound_holds():
    """The charged FFT rounding bound covers the actual difference to a direct convolution."""
    rng = np.random.default_rng(7)
    for n in (100, 3000, 70000):
        a = rng.random(n) ** 8
        b = rng.random(n // 3 + 5) ** 8
        a /= a.sum()
        b /= b.sum()
        c, bound = fft_convolve(a, b)
        exact = np.convolve(a.astype(np.longdouble), b.astype(np.longdouble))
        assert float(np.abs(c - exact).sum()) <= bound


def test_extended_fft_error_bound_holds():
    """Long-double FFTs: the charged bound plus the final rounding to double (relative U per entry,
    which convolve() adds to rel) covers the actual error. Dyadic inputs with entries over 30
    binary orders make the exact result an integer convolution (Python ints), and its small
    entries expose any absolute error larger than the long-double bound."""
    rng = np.random.default_rng(8)
    for n in (100, 2000):
        ia = (rng.random(n) ** 8 * 2.0 ** 30).astype(np.int64)
        ib = (rng.random(n // 3 + 5) ** 8 * 2.0 ** 30).astype(np.int64)
        sa, sb = int(ia.sum()).bit_length(), int(ib.sum()).bit_length()
        a, b = np.ldexp(ia.astype(float), -sa), np.ldexp(ib.astype(float), -sb)
        c, bound = fft_convolve(a, b, extended=True)
        exact_int = np.convolve(ia.astype(object), ib.astype(object))
        exact = np.array([math.ldexp(float(v), -(sa + sb)) for v in exact_int])  # rounded: U each
        excess = np.maximum(np.abs(c - exact) - 2.02 * 2.0 ** -53 * exact, 0.0)
        assert float(np.sum(excess)) <= bound


def test_homogeneous_large_k_and_large_sum_do_not_overflow():
    b = homogeneous_bracket(0.1, 100_000, 1e-6)
    assert math.isfinite(b.upper) and 0 < b.lower <= b.upper and b.upper - b.lower < 1e-5
    b = homogeneous_bracket(1.0, 5000, 1e-15)  # sum of eps 5000
    assert math.isfinite(b.upper) and b.upper < 5000 and b.upper - b.lower < 1e-6


@pytest.mark.slow
def test_heterogeneous_large_sum_does_not_overflow():
    rng = np.random.default_rng(3)
    eps = rng.uniform(0.5, 1.5, 3000)  # sum ~ 3000
    b = optimal_bracket(eps, np.ones(eps.size, dtype=int), 1e-8, 1.0)
    assert math.isfinite(b.upper) and b.lower <= b.upper <= eps.sum()
    assert b.upper - b.lower <= 1.0


def test_pure_and_degenerate_cases():
    assert optimal_bracket(np.array([0.1, 0.2]), np.array([3, 1]), 0.0, 1e-3).upper == pytest.approx(0.5)
    assert optimal_bracket(np.array([0.0, 0.0]), np.array([3, 1]), 1e-6, 1e-3).upper == 0.0
    assert optimal_bracket(np.array([0.3]), np.array([2]), -1e-9, 1e-3).upper == math.inf


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(0.0, 1.2), min_size=1, max_size=9), st.floats(-10, -2))
def test_prefix_curve_contains_exact_for_every_prefix(eps, log_db):
    db = 10.0 ** log_db
    ks = np.arange(1, len(eps) + 1)
    up, lo = optimal_prefix_curve(np.array(eps), np.full(ks.size, db), ks, 0.05)
    for j, k in enumerate(ks):
        exact = float(Oracle(eps[:k]).opt_comp(db))
        assert lo[j] <= exact <= up[j], (k, lo[j], exact, up[j])


# the 50-digit oracle cannot resolve delta ~ eps for eps ~ 1e-100: keep eps 0 or >= 1e-4
_eps = st.one_of(st.just(0.0), st.floats(1e-4, 1.2))


@settings(max_examples=15, deadline=None)
@given(st.lists(_eps, min_size=1, max_size=9))
def test_profile_brackets_exact_delta(eps):
    orc = Oracle(eps)
    xs = np.array([0.0, 0.1, 0.5, 1.0, 2.5])
    for force_pld in (False, True):
        up, lo = _optimal_delta(np.array(eps), np.ones(len(eps), dtype=int), xs, 1e-3, force_pld=force_pld)
        for x, u, l_ in zip(xs, up, lo):
            exact = float(orc.delta(x))
            # 1e-60 absolute: below the 50-digit oracle's resolution of A - e^x B (a CI run once saw
            # a lower bound of 2.75e-78 against an oracle value of ~0); irrelevant at any real delta
            assert l_ <= exact * (1 + 1e-12) + 1e-60 and exact <= u * (1 + 1e-12)


def test_cancel_and_progress():
    rng = np.random.default_rng(5)
    eps = rng.uniform(0.01, 0.3, 300)
    seen = []
    b = optimal_bracket(eps, np.ones(eps.size, dtype=int), 1e-6, 1e-2, progress=seen.append)
    assert seen and seen[-1] == 1.0 and all(0 <= s <= 1 for s in seen)
    assert b.upper - b.lower <= 1e-2
    tok = CancelToken()
    tok.cancel()
    with pytest.raises(Cancelled, match="cancelled"):
        optimal_bracket(eps, np.ones(eps.size, dtype=int), 1e-6, 1e-2, cancel=tok)


def exact_lattice(eps, delta_bar: float):
    """The exact common-lattice bracket of typed decimals (the reference the tests below need;
    optimal_bracket may answer such a plan by the faster loss window instead)."""
    e, m = merge_groups(np.asarray(eps, dtype=float), np.ones(len(eps), dtype=int))
    return lattice_bracket(e, m, delta_bar, common_lattice(e))


def test_prefix_curve_on_a_common_lattice_is_exact(monkeypatch):
    """Typed decimals share a lattice: the incremental curve then matches the exact brackets
    (a plan too large for the loss window's curve, which takes small plans to width eta)."""
    import dpplanner.engine.optimal.prefix as prefix

    monkeypatch.setattr(prefix, "window_prefix_curve", lambda *args: None)
    eps = [0.05, 0.1, 0.3, 0.05, 0.0, 0.25, 0.1] * 6
    ks = np.arange(1, len(eps) + 1)
    dbs = np.full(ks.size, 1e-7)
    up, lo = optimal_prefix_curve(np.array(eps), dbs, ks, 1e-2)
    for j in (0, 4, 9, 20, len(eps) - 1):
        k = int(ks[j])
        exact = exact_lattice(eps[:k], 1e-7)
        assert exact.method.startswith("exact")
        assert lo[j] <= exact.upper and exact.lower <= up[j]
        assert up[j] - lo[j] < 1e-6
    assert all(float(Oracle(eps[:k]).opt_comp(1e-7)) <= up[k - 1] for k in (3, 7, 12))


@pytest.mark.parametrize("seed, delta_bar", [(11, 1e-6), (12, 1e-10)])
def test_fast_path_on_a_large_plan_is_consistent_with_exact_neighbours(seed, delta_bar):
    """k=300 random doubles (FFT convolutions, truncation): rounding every eps down / up to three
    decimals gives plans with an exact (lattice) answer below / above the true value, so the fast
    bracket must overlap [exact(floor), exact(ceil)]."""
    rng = np.random.default_rng(seed)
    eps = rng.uniform(0.01, 0.3, 300)
    ones = np.ones(eps.size, dtype=int)
    floor = np.floor(eps * 1000) / 1000
    ceil = np.ceil(eps * 1000) / 1000
    # the doubles of floor/ceil must really be below/above eps for the sandwich to hold
    floor = np.minimum(floor, np.nextafter(eps, 0))
    ceil = np.maximum(ceil, np.nextafter(eps, 1))
    lo_ref = exact_lattice(floor, delta_bar)
    hi_ref = exact_lattice(ceil, delta_bar)
    window = optimal_bracket(eps, ones, delta_bar, 1e-2)
    assert window.method.startswith("window")
    fft = _bracket(eps, ones, delta_bar, 1e-2, force_pld=True)
    assert fft.method.startswith("pld")
    for b in (window, fft):
        assert b.upper >= lo_ref.lower
        assert b.lower <= hi_ref.upper
    assert window.upper - window.lower <= 1e-2
    if delta_bar >= 1e-6:
        # for tiny delta_bar the charged FFT rounding bound (absolute) widens the bracket; it stays
        # sound (checked above) but need not reach eta
        assert fft.upper - fft.lower <= 1e-2


@pytest.mark.parametrize("upper", [True, False])
def test_short_pmfs_are_kept_whole_and_long_ones_cut(upper):
    """Truncation scans and copies the pmf: on a short one that costs more than the few points it
    could save, so only pmfs longer than TRUNCATE_MIN_POINTS are cut (keeping mass is sound)."""
    from dpplanner.engine.optimal.lattice import TRUNCATE_MIN_POINTS, LatticePMF, truncate

    for n, cut in ((TRUNCATE_MIN_POINTS, False), (4 * TRUNCATE_MIN_POINTS, True)):
        p = np.exp(-0.5 * ((np.arange(n) - n / 2) / (n / 20)) ** 2)
        x = LatticePMF(1e-3, 0, p / p.sum(), 0.0, upper)
        y = truncate(x, 1e-12)
        assert (y.p.size < n) == cut
        assert y.err == x.err and (y.inf_mass > 0) == (cut and upper)


@pytest.mark.parametrize("upper", [True, False])
def test_truncation_finds_the_ends_without_a_scan_when_they_carry_mass(upper, monkeypatch):
    """A composed pmf usually has mass at both ends: truncation then takes them as they are
    (it scanned every entry for the first and last non-zero on each convolution: ~15 % of pld's
    all-k curve of 1000 queries). With zeros at an end it finds the non-zero ends, as before."""
    import dpplanner.engine.optimal.lattice as lattice

    n = 4 * lattice.TRUNCATE_MIN_POINTS
    p = np.exp(-0.5 * ((np.arange(n) - n / 2) / (n / 20)) ** 2)
    p /= p.sum()
    scans = []
    real = np.flatnonzero
    monkeypatch.setattr(lattice.np, "flatnonzero", lambda a: scans.append(a.size) or real(a))
    whole = lattice.truncate(lattice.LatticePMF(1e-3, 0, p, 0.0, upper), 1e-12)
    assert not scans
    padded = np.concatenate([np.zeros(7), p, np.zeros(3)])
    again = lattice.truncate(lattice.LatticePMF(1e-3, -7, padded, 0.0, upper), 1e-12)
    assert scans
    assert again.start == whole.start and np.array_equal(again.p, whole.p)
    assert again.inf_mass == whole.inf_mass and again.rel == whole.rel


def test_a_prefix_curve_builds_one_kernel_per_distinct_epsilon(monkeypatch):
    """Equal releases share one connect-the-dots kernel (a plan's free releases often are equal):
    100 releases of 4 distinct epsilons build 4 kernels, with or without the lower side, and the
    curve is the same as before."""
    import numpy as np

    import dpplanner.engine.optimal.prefix as prefix
    import dpplanner.engine.optimal.prefix_sides as sides

    eps = np.array([0.0103217, 0.0217789, 0.0151, 0.033 + 1e-9] * 25)     # no common lattice
    built = []
    real = sides.kernels

    def counted(e, step, upper):
        table = real(e, step, upper)
        if upper:
            built.extend(table)
        return table

    monkeypatch.setattr(sides, "kernels", counted)
    monkeypatch.setattr(prefix, "window_prefix_curve", lambda *args: None)     # the running lattices
    for want_lower in (False, True):
        built.clear()
        up, _ = prefix.optimal_prefix_curve(eps, np.full(10, 1e-7), np.arange(10, 101, 10), 1e-3,
                                            want_lower=want_lower)
        assert len(set(built)) == 4 and len(built) == 4
        assert np.all(np.diff(up) >= 0)


def test_an_upper_only_prefix_curve_enumerates_no_prefix(monkeypatch):
    """The first prefixes are enumerated exactly only for their lower bounds: an upper-only curve
    (the window's plot) reads every prefix off its lattice, and those uppers still hold the exact
    value, within the width of it."""
    import numpy as np

    import dpplanner.engine.optimal.prefix as prefix
    import dpplanner.engine.optimal.prefix_sides as sides
    from oracle import Oracle

    monkeypatch.setattr(prefix, "window_prefix_curve", lambda *args: None)     # the running lattices
    eps = np.random.default_rng(3).uniform(0.01, 0.2, 40)
    ks, bars = np.arange(1, 41), np.full(40, 1e-6)
    read = []
    real = sides.grouped_atoms
    monkeypatch.setattr(sides, "grouped_atoms", lambda e, m, upper: read.append(upper) or real(e, m, upper))
    up, lo = prefix.optimal_prefix_curve(eps, bars, ks, 1e-3, want_lower=False)
    assert not read and np.all(lo == 0)
    both_up, both_lo = prefix.optimal_prefix_curve(eps, bars, ks, 1e-3)
    assert read and not any(read)     # the exact head, lower side only
    np.testing.assert_array_equal(up, both_up)  # (the same grouped upper reads either way)
    for n in (1, 2, 6, sides.EXACT_HEAD):
        exact = float(Oracle(eps[:n]).opt_comp(1e-6))
        assert both_lo[n - 1] <= exact <= up[n - 1] <= exact + 1e-3, (n, exact, up[n - 1])
