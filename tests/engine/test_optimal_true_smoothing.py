"""The window bound of a smoothing part holding true queries (optimal/true_smoothing.py), against
every window enumerated, and what it buys the prefix curve."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from dpplanner.engine.optimal.true_smoothing import log_window_max_with_true, true_queries_that_fit


def _atoms(lattice, e_true):
    """Every atom (position, mass) of the lattice part plus the true queries' losses (-e or +e)."""
    out = list(lattice)
    for x in e_true:
        p = 1.0 / (1.0 + math.exp(-x))
        out = [(a - x, q * (1 - p)) for a, q in out] + [(a + x, q * p) for a, q in out]
    return out


def _window_max(atoms, step, theta, reach):
    """max over windows [a_i, a_i + reach * step) of sum mass e^{theta a}: reach 1 is the exact
    largest tilted mass of an open window of length step (windows may start just below an atom)."""
    pos = sorted(atoms)
    best = 0.0
    for a, _ in pos:
        best = max(best, math.fsum(q * math.exp(theta * b) for b, q in pos if a <= b < a + reach * step))
    return best


@given(st.integers(0, 5), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=4),
       st.lists(st.floats(0.01, 0.8), min_size=1, max_size=5), st.integers(2, 8), st.floats(-2.0, 2.0))
def test_window_bound_covers_every_window_and_is_near_the_largest(start, masses, e_true, log2_inv_step, offset):
    step = 2.0 ** -log2_inv_step
    masses = np.array(masses) + 1e-3
    masses /= masses.sum()
    l = offset + step * np.arange(start, start + masses.size)
    atoms = _atoms(list(zip(l.tolist(), masses.tolist())), e_true)
    thetas = np.array([0.0, 0.5, 3.0, 20.0])
    got = log_window_max_with_true(l, np.log(masses), 0.0, np.array(e_true), step, thetas)
    for th, g in zip(thetas.tolist(), got.tolist()):
        exact = math.log(_window_max(atoms, step, th, 1.0))
        assert g >= exact - 1e-12 * (1 + abs(exact)), (th, g, exact)
        # not far above the largest window (its computed positions are padded by ulps only)
        assert g <= math.log(_window_max(atoms, step, th, 1.0 + 1e-9)) + 1e-9, (th, g, exact)


def test_true_queries_fit_in_the_atom_budget():
    assert true_queries_that_fit(1, 11) == 10       # 2^10 = MAX_ATOMS
    assert true_queries_that_fit(3, 11) == 8        # 3 x 2^8 = 768 <= 1024 < 3 x 2^9
    assert true_queries_that_fit(1024, 5) == 0
    assert true_queries_that_fit(1, 0) == 0


def _k1000_curve(monkeypatch):
    """The bench's k = 1000 prefix curve at width 1e-2 and how many passes over the plan it took."""
    from dpplanner.engine.delta import delta_bar_from_log, log_survival_prefix
    from dpplanner.engine.optimal import prefix

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    try:
        from bench_optimal import plan_k1000
    finally:
        sys.path.pop(0)
    eps, deltas = plan_k1000()
    passes = []
    real = prefix._one_pass
    monkeypatch.setattr(prefix, "_one_pass", lambda *a: passes.append(a[4].size) or real(*a))
    bars = delta_bar_from_log(1e-5, log_survival_prefix(deltas))
    up, lo = prefix.optimal_prefix_curve(eps, bars, np.arange(1, 1001), 1e-2)
    return up - lo, passes


def test_every_prefix_of_the_k1000_bench_plan_is_within_its_width_in_one_pass(monkeypatch):
    """The first queries smoothed by the head's true queries instead of nothing: no prefix of the
    bench's k = 1000 plan is left wider than 1e-2 (the last 42 were at 1.04e-2) on the first
    lattice."""
    width, passes = _k1000_curve(monkeypatch)
    assert np.all(width <= 1e-2), (float(width.max()), int(np.argmax(width)) + 1)
    assert passes == [1000]


def test_prefixes_left_wider_than_asked_are_read_again_on_a_finer_lattice(monkeypatch):
    """Without the true smoothing the last prefixes miss 1e-2 on the first lattice: only they are
    read again, on a lattice twice as fine, and then every prefix is within the width."""
    from dpplanner.engine.optimal import true_smoothing

    monkeypatch.setattr(true_smoothing, "MAX_ATOMS", 1)
    width, passes = _k1000_curve(monkeypatch)
    assert np.all(width <= 1e-2), (float(width.max()), int(np.argmax(width)) + 1)
    assert len(passes) == 2 and 0 < passes[1] < 100


def _exact_log_window_max(kernels, e_true, step, theta):
    """log of the largest tilted mass of an open window of length ``step`` of (the exact
    composition of ``kernels``' computed entries) + (the true queries), in 60-digit arithmetic."""
    import mpmath as mp

    with mp.workdps(60):
        p, off, start = [mp.mpf(1)], mp.mpf(0), 0
        for k in kernels:
            q = [mp.mpf(x) for x in k.p.tolist()]
            p = [mp.fsum(p[i] * q[j - i] for i in range(len(p)) if 0 <= j - i < len(q))
                 for j in range(len(p) + len(q) - 1)]
            off, start = off + mp.mpf(k.offset), start + k.start
        atoms = [(off + (start + i) * mp.mpf(step), m) for i, m in enumerate(p)]
        for x in e_true:
            px = 1 / (1 + mp.exp(-mp.mpf(x)))
            atoms = [(a - x, m * (1 - px)) for a, m in atoms] + [(a + x, m * px) for a, m in atoms]
        atoms.sort()
        tilted = [m * mp.exp(theta * a) for a, m in atoms]
        return max(mp.log(mp.fsum(w for (b, _), w in zip(atoms, tilted) if a <= b < a + step))
                   for a, _ in atoms)


def test_a_smoothing_entry_that_underflowed_still_counts_in_the_window_bound():
    """Three twins of eps = 1e-120 on D = 1 put (p w)^3 ~ 4e-360 at 3 D: it underflows to 0.0 in
    the composed pmf, but tilted by theta = 300 it is the heaviest atom (log -827 + 900 against
    -551 + 600 for the next). The window bound of the smoothing part (with the true queries that
    fit) must still hold the exact largest window, which was 23 (in log) above it when empty
    entries were left out; where no empty entry dominates it stays as tight as before."""
    from dpplanner.engine.optimal.lattice import LatticePMF, convolve
    from dpplanner.engine.optimal.pld import upper_kernel
    from dpplanner.engine.optimal.prefix_sides import PREFIX_THETAS
    from dpplanner.engine.optimal.true_smoothing import smoothing_window

    step = 1.0
    twins = [upper_kernel(1e-120, step)] * 3
    a = LatticePMF(step, 0, np.ones(1), 0.0, True)
    for k in twins:
        a = convolve(a, k, 0.0, 0.0)
    assert a.p[-1] == 0.0  # (the case: an exact mass > 0 underflowed)
    later = np.array([2.0, 2.0, 0.7, 2.0, 1e-120])
    log_s, _, n_true = smoothing_window(a, len(twins), later, step, PREFIX_THETAS)
    assert n_true == later.size
    for th, got in zip(PREFIX_THETAS.tolist(), log_s.tolist()):
        exact = float(_exact_log_window_max(twins, later.tolist(), step, th))
        assert got >= exact, (th, got, exact)
        if th <= 100:  # the empty entry's charge e^{-708 + 3 theta} is far below the window here
            assert got <= exact + 1e-9 * (1 + abs(exact)), (th, got, exact)
