"""The prefix curve of a small plan from the loss window's two sides (optimal/prefix_window.py):
each prefix's ends are window.py's bounds of that prefix alone, the brackets hold the exact
optimum within eta, and what the window leaves wider goes to the running lattices."""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpplanner.engine.optimal.prefix as prefix
import dpplanner.engine.optimal.prefix_window as pw
from dpplanner.engine.optimal.atoms import sup_root
from dpplanner.engine.optimal.exact import grouped_bracket
from dpplanner.engine.optimal.window import ctd_upper, key_set_lower


def _plan(seed: int, k: int):
    rng = np.random.default_rng(seed)
    eps = rng.uniform(0.01, 0.3, k)
    ks = np.arange(1, k + 1)
    bars = 1e-6 * (1 - 1e-3 * ks / k)          # delta_bar shrinks with k, as a plan's does
    return eps, ks, bars


def _sums(eps, ks):
    return np.array([math.fsum(eps[:k].tolist()) for k in ks.tolist()])


@pytest.mark.parametrize("seed", range(3))
def test_each_prefix_is_read_as_the_window_reads_that_prefix_alone(seed, monkeypatch):
    """Every row of the one pass is window.py's bound of that prefix on the same grid and from
    the same floor: the test set's bit for bit (every cut tried), connect-the-dots' bit for bit
    (nothing cut from its top)."""
    eps, ks, bars = _plan(seed, 40)
    his = bars * (1 + 1e-9)
    sums = _sums(eps, ks)
    step = 2.0 ** -7
    floors = np.array([0.5 * s for s in sums.tolist()])   # any floor below the answers
    monkeypatch.setattr(pw, "BAND_RATIO", math.inf)
    lows = pw._key_set_rows(eps, his, ks, sums, step, floors, None)
    monkeypatch.setattr(pw, "TAIL_SHARE", 0.0)
    ups = pw._ctd_rows(eps, bars, ks, sums, step, lows, None)
    for j, k in enumerate(ks.tolist()):
        log_z = -math.fsum(np.log1p(np.exp(-eps[:k])).tolist())
        assert lows[j] == key_set_lower(eps[:k], float(his[j]), step, float(floors[j]), log_z)
        assert ups[j] == ctd_upper(eps[:k], float(bars[j]), step, float(lows[j]))


def test_prefixes_not_all_requested_read_as_when_every_prefix_is(monkeypatch):
    """The pass composes a requested prefix straight into its row and the others into two spare
    arrays, and a query of epsilon 0 (the identity) adds nothing: every 3rd prefix of a plan with
    such queries (one right at a requested prefix) reads as in the pass that requests them all,
    and without them each reads as connect-the-dots alone."""
    monkeypatch.setattr(pw, "TAIL_SHARE", 0.0)
    step = 2.0 ** -7
    for zeros in ([], [2, 8, 9, 20, 38]):
        eps, ks, bars = _plan(4, 40)
        eps[zeros] = 0.0
        sums = _sums(eps, ks)
        floors = np.array([0.5 * s for s in sums.tolist()])
        every = pw._ctd_rows(eps, bars, ks, sums, step, floors, None)
        some = np.arange(2, 40, 3)
        ups = pw._ctd_rows(eps, bars[some], ks[some], sums[some], step, floors[some], None)
        assert ups.tobytes() == every[some].tobytes()
        if not zeros:
            for j, k in zip(some.tolist(), ks[some].tolist()):
                assert every[j] == ctd_upper(eps[:k], float(bars[j]), step, float(floors[j]))


def test_the_band_of_test_sets_loses_nothing_on_these_plans(monkeypatch):
    """Only the cuts whose P(S) lies between delta_bar and BAND_RATIO times it are tried: the
    lower ends are those of every cut (a band of 100 x lost 1.8e-3 on the mixed plan)."""
    def draw(seed, low, high, k):
        return np.random.default_rng(seed).uniform(low, high, k)

    for eps, bar in ((draw(1, 0.01, 0.2, 100), 1e-6), (draw(2, 0.001, 0.5, 100), 1e-9),
                     (np.concatenate([[1.5, 2.0, 1.0], draw(3, 0.001, 0.01, 97)]), 1e-5),
                     (np.concatenate([draw(4, 0.001, 0.01, 90), draw(5, 0.5, 1.0, 10)]), 1e-5)):
        ks = np.arange(1, eps.size + 1)
        bars, sums = np.full(ks.size, bar), _sums(eps, ks)
        band = pw._key_set_rows(eps, bars, ks, sums, 2.0 ** -8, np.zeros(ks.size), None)
        monkeypatch.setattr(pw, "BAND_RATIO", math.inf)
        every = pw._key_set_rows(eps, bars, ks, sums, 2.0 ** -8, np.zeros(ks.size), None)
        monkeypatch.undo()
        np.testing.assert_array_equal(band, every)


@pytest.mark.parametrize("seed, eta", [(0, 1e-2), (1, 1e-3), (2, 1e-4)])
def test_every_prefix_bracket_holds_the_exact_optimum_within_eta(seed, eta):
    """Five distinct epsilons, 60 queries in a random order: every prefix's exact optimum (grouped
    enumeration) is inside its bracket, every bracket within eta, from the window's pass."""
    rng = np.random.default_rng(seed)
    eps = rng.choice(rng.uniform(0.01, 0.4, 5), 60)
    ks = np.arange(1, 61)
    bars = np.full(60, 10.0 ** -rng.uniform(3, 10))
    up, lo = pw.window_prefix_curve(eps, bars, bars, ks, eta)
    for j, k in enumerate(ks.tolist()):
        e, m = np.unique(eps[:k], return_counts=True)
        exact = grouped_bracket(e, m, float(bars[j]))
        assert lo[j] <= exact.upper and exact.lower <= up[j], k
    assert np.all(up - lo <= eta)


def test_the_prefixes_a_grid_leaves_wide_are_read_again_alone_on_a_finer_one(monkeypatch):
    """The prefixes a grid leaves wider than eta (here a grid four times too coarse to start
    from) are composed again, alone (the queries up to the last of them), twice as fine, until
    every bracket is within eta."""
    eps, ks, bars = _plan(2, 100)
    passes = []
    real = pw._ctd_rows
    monkeypatch.setattr(pw, "_ctd_rows", lambda e, d, k, *rest: passes.append((e.size, k.tolist(), rest[1])) or
                        real(e, d, k, *rest))
    monkeypatch.setattr(pw, "_start_step", lambda eps, eta: 2.0 ** -6)
    up, lo = pw.window_prefix_curve(eps, bars, bars, ks, 1e-3)
    assert np.all(up - lo <= 1e-3)
    assert len(passes) >= 3 and passes[0] == (100, ks.tolist(), 2.0 ** -7)
    for (_, rows, step), (size, again, finer) in zip(passes, passes[1:]):
        assert set(again) < set(rows) and size == again[-1] and finer == step / 2


def test_the_mass_cut_from_the_top_counts_against_delta(monkeypatch):
    """Cutting far more than the tail from the top of the CTD pmf (mass moved to +infinity) keeps
    the upper ends above the exact optimum; without its charge they fall below."""
    rng = np.random.default_rng(9)
    eps = rng.choice([0.05, 0.11, 0.2], 200)
    ks = np.arange(50, 201, 50)
    bars = np.full(ks.size, 1e-3)
    sums = _sums(eps, ks)
    exact = [grouped_bracket(*np.unique(eps[:k], return_counts=True), 1e-3) for k in ks.tolist()]
    monkeypatch.setattr(pw, "TAIL_SHARE", 300.0)    # cuts of up to 0.3 delta_bar in all
    ups = pw._ctd_rows(eps, bars, ks, sums, 2.0 ** -7, np.zeros(ks.size), None)
    assert all(u >= b.upper for u, b in zip(ups.tolist(), exact))
    assert np.all(ups - np.array([b.upper for b in exact]) > 1e-3)   # (the cuts did bite)


@pytest.mark.parametrize("seed", range(4))
def test_the_rows_are_read_as_sup_root_reads_each_prefix_alone(seed):
    """_read_rows lays every prefix's pmf out from the 2-D rows at once: each read-out is, bit for
    bit, sup_root's of that prefix's pmf (_row_pmf) from its floor, whether it goes through the
    table or alone (beyond one window, mass at +infinity above delta_bar, delta_bar in the
    underflow range, nothing above the floor)."""
    rng = np.random.default_rng(seed)
    n, width = 40, 300
    step = [2.0 ** -7, 2.0 ** -3, 4.0][seed % 3]     # (4: spans beyond sup_root's window of 600)
    reach = rng.integers(2, width + 1, n)
    cuts = np.minimum(rng.integers(0, 40, n) * (rng.random(n) < 0.5), reach - 1)
    tops = reach - 1 + rng.integers(0, 50, n)
    rows = rng.dirichlet(np.full(width, 0.5), n) * (rng.random((n, width)) > 0.05)
    offsets = -rng.uniform(0.2, 0.9, n) * tops * step
    rels = rng.uniform(0, 1e-12, n)
    infs = rng.choice([0.0, 1e-12, 0.5], n, p=[0.6, 0.3, 0.1])
    bars = 10.0 ** rng.uniform(-9, -1, n)
    bars[rng.random(n) < 0.1] = 1e-300
    tops_at = offsets + tops * step
    floors = np.maximum(tops_at * rng.uniform(-0.5, 1.1, n), 0.0)
    got = pw._read_rows(rows, tops, reach, cuts, offsets, rels, infs, step, bars, floors)
    pmfs = [pw._row_pmf(rows, r, tops, reach, cuts, offsets, rels, infs, step) for r in range(n)]
    want = [sup_root(pmf.atoms(above=floors[r]), bars[r], floors[r]) for r, pmf in enumerate(pmfs)]
    np.testing.assert_array_equal(got, want)


def test_plans_beyond_the_window_go_to_the_running_lattices(monkeypatch):
    """Beyond MAX_QUERIES (or the work caps) the window's pass returns None and the curve is the
    running lattices'; the prefixes the window's caps leave wider than eta are read there too."""
    eps, ks, bars = _plan(2, 100)
    lattices = []
    real = prefix._lattice_curve
    monkeypatch.setattr(prefix, "_lattice_curve", lambda *args: lattices.append(args[5].tolist()) or real(*args))
    up, lo = prefix.optimal_prefix_curve(eps, bars, ks, 1e-3)
    assert not lattices and np.all(up - lo <= 1e-3)
    monkeypatch.setattr(pw, "MAX_QUERIES", 99)
    assert pw.window_prefix_curve(eps, bars, bars, ks, 1e-3) is None
    prefix.optimal_prefix_curve(eps, bars, ks, 1e-3)
    assert lattices == [ks.tolist()]
    monkeypatch.setattr(pw, "MAX_QUERIES", 2000)
    # one pass on a grid too coarse: the prefixes it leaves wide are left over for the lattices
    monkeypatch.setattr(pw, "MAX_LEVELS", 1)
    monkeypatch.setattr(pw, "_start_step", lambda eps, eta: 2.0 ** -6)
    w_up, w_lo = pw.window_prefix_curve(eps, bars, bars, ks, 1e-3)
    wide = ks[w_up - w_lo > 1e-3].tolist()
    lattices.clear()
    up1, lo1 = prefix.optimal_prefix_curve(eps, bars, ks, 1e-3)
    assert len(lattices) == 1 and 10 < len(wide) and set(wide) <= set(lattices[0])
    assert np.all(up1 - lo1 <= 1e-3)


def test_an_upper_only_curve_has_the_same_upper_ends_and_no_lower_end():
    eps, ks, bars = _plan(6, 50)
    up, lo = prefix.optimal_prefix_curve(eps, bars, ks, 1e-2)
    up_only, zero = prefix.optimal_prefix_curve(eps, bars, ks, 1e-2, want_lower=False)
    np.testing.assert_array_equal(up, up_only)
    assert np.all(zero == 0) and np.all(lo > 0)


def test_typed_decimals_read_at_few_points_keep_the_exact_lattice(monkeypatch):
    """A common lattice read at few points gives the exact curve (as the psi-survey example's);
    read at every one of 240, the window's pass, within eta."""
    eps = np.array([0.05, 0.1, 0.3, 0.05, 0.25, 0.1] * 40)          # a lattice of ~700 points
    windows = []
    real = pw.window_prefix_curve
    monkeypatch.setattr(prefix, "window_prefix_curve", lambda *args: windows.append(1) or real(*args))
    few = np.array([1, 80, 160, 240])
    up, lo = prefix.optimal_prefix_curve(eps, np.full(few.size, 1e-7), few, 1e-2)
    assert not windows and np.all(up - lo < 1e-6)
    many = np.arange(1, 241)
    up, lo = prefix.optimal_prefix_curve(eps, np.full(many.size, 1e-7), many, 1e-2)
    assert windows and np.all(up - lo <= 1e-2)
