"""The pld bracket's rungs: the tilted Fourier-domain composition, the pairwise tree of single
releases, and the hybrid (second-order) lower bound, each against a brute-force reference."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpplanner.engine import DiscreteLaplace, Gaussian, Laplace, compose_mechanisms
from dpplanner.engine.mechanisms import spectral
from dpplanner.engine.mechanisms.discrete_gaussian_kernel import dg_kernel
from dpplanner.engine.mechanisms.discrete_laplace import dl_kernel
from dpplanner.engine.mechanisms.hybrid import density_gap, gap_bound
from dpplanner.engine.mechanisms.kernel_rows import laplace_ctd_rows, rr_ctd_rows
from dpplanner.engine.mechanisms.kernels import laplace_upper, rr_upper
from dpplanner.engine.mechanisms.rowtree import kernel_tree, reduce_rows, tilt_rows
from dpplanner.engine.mechanisms.tilted import compose, tilt
from direct_composition import direct as _direct


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


@pytest.mark.parametrize("chunk, outer", [(2048, 600.0), (2, 600.0), (3, 0.0)])
def test_the_pairwise_tree_of_rows_is_the_direct_composition(monkeypatch, chunk, outer):
    """Also in chunks of rows of about equal width (rowtree.CHUNK_ROWS), and with the kernels' and
    the tilt's exponentials per entry or as products of a row's and a column's (OUTER_EXP)."""
    from dpplanner.engine.mechanisms import kernel_rows, rowtree

    monkeypatch.setattr(rowtree, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(rowtree, "OUTER_EXP", outer)
    monkeypatch.setattr(kernel_rows, "OUTER_EXP", outer)
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
    exact = np.concatenate([exact, np.zeros(max(0, int(j[-1]) + 1 - exact.size))])  # (rows padded)
    tilted_exact = exact[j] * np.exp(theta * step * j - red.log_m)
    assert float(np.sqrt(np.sum((red.t - tilted_exact) ** 2))) <= red.e2 + red.err + red.rel
    q, _, _ = rr_ctd_rows(np.array([0.02, 0.3]), step)
    assert np.allclose(q[1, :rr_upper(0.3, step).p.size], rr_upper(0.3, step).p, rtol=1e-13, atol=0)


def test_discrete_kernels_that_come_a_few_times_compose_as_one_tree_within_its_error_bounds():
    """Distinct discrete releases (each alone would cost a transform of the whole window) are the
    rows of one tree; one that comes more than SPREAD times stays a power of its own transform,
    and so does one much wider than the others.
    The composition is still the direct one within its error bounds, and the discrete Gaussian's
    tail sent to +infinity is counted once for each of its releases."""
    step, theta = 2.0 ** -7, 5.0
    few = [(dl_kernel(t, S, step, True), 1) for t, S in [(7.0, 3), (9.5, 3), (12.0, 2), (20.0, 5)]]
    few += [(dl_kernel(15.0, 4, step, True), 2), (dg_kernel(12.0, 1, step, True, 1e-9), 3)]
    often = (dl_kernel(30.0, 3, step, True), spectral.SPREAD + 3)
    kernels = few + [often]
    kinds = kernel_tree([tilt(k, theta, n) for k, n in kernels], spectral.SPREAD)
    assert len(kinds) == 2 and kinds[1].mult == often[1]
    wide = tilt(dl_kernel(0.5, 20, step, True), theta, 1)     # padding every row to it would cost more
    alone = kernel_tree([tilt(k, theta, n) for k, n in kernels] + [wide], spectral.SPREAD)
    assert len(alone) == 3 and any(k is wide for k in alone)
    inf_mass = sum(k.inf_mass * n for k, n in kernels)
    in_tree = inf_mass - often[0].inf_mass * often[1]
    assert in_tree > 0 and kinds[0].inf_mass == pytest.approx(in_tree, rel=1e-12)
    comp = compose(kinds, step, theta, 0.0)
    assert comp.inf_mass == pytest.approx(inf_mass, rel=1e-9)
    exact = _direct(kernels)
    start = sum(k.start * n for k, n in kernels)          # the exact pmf's index 0
    idx = comp.w0 + np.arange(comp.c.size) - start
    inside = (idx >= 0) & (idx < exact.size)
    tilted_exact = exact[idx[inside]] * np.exp(theta * step * (idx[inside] + start) - comp.log_m)
    diff = comp.c[inside] - tilted_exact
    allowed = comp.e2 + comp.e1 + comp.rel * float(np.sum(tilted_exact)) + comp.outside
    assert float(np.sqrt(np.sum(diff * diff))) <= allowed
    assert float(np.sum(tilted_exact)) == pytest.approx(1.0 - inf_mass, abs=1e-9)


def test_one_kind_that_comes_once_is_its_own_composition(monkeypatch):
    """Where every kind comes at most SPREAD times, the Laplace rows' tree is a row of the discrete
    kinds' tree and that tree is the whole composition: compose keeps it as it is (no transform,
    nothing outside its support) with every error bound it carries, and it is the direct
    composition within them."""
    step, theta = 2.0 ** -7, 5.0
    kernels = [(dl_kernel(t, S, step, True), 1) for t, S in [(7.0, 3), (9.5, 3), (12.0, 2)]]
    kernels += [(dg_kernel(12.0, 1, step, True, 1e-9), 2), (laplace_upper(0.05, step), 1)]
    (tree,) = kernel_tree([tilt(k, theta, n) for k, n in kernels], spectral.SPREAD)
    comp = compose([tree], step, theta, 0.0)
    assert np.array_equal(comp.c, tree.t) and comp.w0 == tree.start and comp.outside == 0.0
    assert comp.e2 >= tree.e2 > 0 and comp.rel >= tree.rel > 0 and comp.e1 >= tree.err > 0
    assert comp.inf_mass == tree.inf_mass > 0 and comp.log_m == tree.log_m
    exact = _direct(kernels)
    start = sum(k.start * n for k, n in kernels)
    idx = comp.w0 + np.arange(comp.c.size) - start
    tilted_exact = exact[idx] * np.exp(theta * step * (idx + start) - comp.log_m)
    diff = comp.c - tilted_exact
    assert float(np.sqrt(np.sum(diff * diff))) <= comp.e2 + comp.e1 + comp.rel * float(np.sum(tilted_exact))
    counts = []
    real = spectral.compose
    monkeypatch.setattr(spectral, "compose", lambda kinds, *a, **k: counts.append(len(kinds)) or real(kinds, *a, **k))
    r = compose_mechanisms([DiscreteLaplace(7.8, 1), DiscreteLaplace(15.5, 2), DiscreteLaplace(97.0, 25),
                            Laplace(8.0), Laplace(7.0), Gaussian(30.0)], 1e-6)
    assert "lattice" in r.detail and counts and set(counts) == {1}


def test_many_distinct_discrete_releases_cost_a_few_transforms_of_the_window(monkeypatch):
    """A bracket of 60 distinct discrete releases composes at most three kinds per rung (the tree
    of those that stay discrete, the continuous twins some become, the power of the five equal
    ones), not one kind each."""
    counts = []
    real = spectral.compose

    def counted(kinds, *args, **kwargs):
        counts.append(len(kinds))
        return real(kinds, *args, **kwargs)

    monkeypatch.setattr(spectral, "compose", counted)
    mechs = [DiscreteLaplace(200.0 + 7 * i, 1) for i in range(60)] + [DiscreteLaplace(9.0, 1)]
    r = compose_mechanisms(mechs, 1e-6, eta=1e-4, multiplicities=[1] * 60 + [5])
    assert "lattice" in r.detail and counts and max(counts) <= 3


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


@pytest.mark.parametrize("theta", [0.0, 0.3, 7.0, 72.9, 2e3])
def test_the_laplace_losses_cumulants_that_place_the_tilt_are_their_integrals(theta):
    """K, K' and K'' of the Laplace loss (atoms a and -a, density e^{(u - a)/2}/4 between), as the
    tilt's Newton search reads them, against their integrals in 30 digits (both branches: the
    series below c a = 1e-3)."""
    from dpplanner.engine.mechanisms.saddle import laplace_cumulant, laplace_cumulants

    mpmath.mp.dps = 30
    a = np.array([1e-5, 0.01, 0.1287, 0.5, 3.0])
    vectorised = np.array(laplace_cumulants(a, theta)).T
    one_by_one = [laplace_cumulant(ai, theta) for ai in a.tolist()]    # (Python floats, for a few kinds)
    for i, ai in enumerate(a.tolist()):
        for k0, k1, k2 in (vectorised[i], one_by_one[i]):
            _assert_laplace_cumulants(ai, theta, k0, k1, k2)


def _assert_laplace_cumulants(ai, theta, k0, k1, k2):
    x, t = mpmath.mpf(ai), mpmath.mpf(theta)
    moments = [mpmath.exp(t * x) / 2 * x ** j + mpmath.exp(-x - t * x) / 2 * (-x) ** j
               + mpmath.quad(lambda u: mpmath.exp((u - x) / 2 + t * u) / 4 * u ** j, [-x, x]) for j in range(3)]
    mean = moments[1] / moments[0]
    assert float(k0) == pytest.approx(float(mpmath.log(moments[0])), rel=1e-9, abs=1e-12)
    assert float(k1) == pytest.approx(float(mean), rel=1e-7, abs=1e-15)
    assert float(k2) == pytest.approx(float(moments[2] / moments[0] - mean ** 2), rel=1e-6, abs=1e-15)


def test_a_ladder_of_continuous_noise_searches_its_tilt_once(monkeypatch):
    """Without discrete kinds the saddle point depends on the releases only: every rung reuses the
    first one's (the same tilt, so the same bracket as searching it again)."""
    from dpplanner.engine.mechanisms import saddle
    from dpplanner.engine.memo import forget

    rng = np.random.default_rng(5)
    releases = [Laplace(float(m)) for m in rng.uniform(200, 2000, 300)] + \
               [Gaussian(float(m)) for m in rng.uniform(100, 1000, 300)]
    forget()
    before = compose_mechanisms(releases, 1e-6, eta=1e-6)
    searches, rungs = [], []
    real_search, real_rung = saddle._saddle, spectral.rung
    monkeypatch.setattr(saddle, "_saddle", lambda *a: searches.append(1) or real_search(*a))
    monkeypatch.setattr(spectral, "rung", lambda *a, **k: rungs.append(1) or real_rung(*a, **k))
    forget()
    again = compose_mechanisms(releases, 1e-6, eta=1e-6)
    assert len(rungs) >= 3 and len(searches) == 1
    assert (again.epsilon, again.epsilon_lower) == (before.epsilon, before.epsilon_lower)


@pytest.mark.parametrize("split", [False, True])
def test_the_rows_tree_repeats_each_kind_that_comes_a_few_times(monkeypatch, split):
    """Distinct releases are the tree's rows as they are; kinds that come 2-4 times are repeated
    (10 kinds twice beside 10 five times: as many rows as the kinds, which is not every row once)."""
    from dpplanner.engine.memo import forget

    seen = []
    real = spectral.reduce_rows
    monkeypatch.setattr(spectral, "reduce_rows", lambda rows, cancel=None: seen.append(rows.log_m.copy())
                        or real(rows, cancel))
    twice = [Laplace(100.0 + 7 * i) for i in range(10)]
    others = [Laplace(200.0 + 13 * i) for i in range(10)]
    forget()
    compose_mechanisms(twice + others + [Gaussian(80.0)], 1e-6, eta=1e-2,
                       multiplicities=([2] * 10 + [5] * 10 if split else [1] * 20) + [1])
    counts = {n for log_m in seen for n in np.unique(log_m, return_counts=True)[1].tolist()}
    assert counts == ({2} if split else {1})


# Large-epsilon Laplace releases beside Gaussians: the saddle point sits past the Laplace losses'
# top atoms, so the tilt is the normal approximation's at the first guess, the zCDP bound (342.5),
# ten times the root. Read there, neither end was certified (the rounding charged from below the
# read grows as e^{theta (guess - x)}): the bracket was [15.68, 342.53], zCDP's bound.
# dp_accounting 0.6 (pessimistic PLDs, value_discretization_interval 3e-4): 35.823961.
RETILT_PLAN = ([Laplace(0.06376186073648751), Gaussian(3.4026252120704035)], [2, 16], 5.279562206519951e-05)


def test_a_tilt_set_for_a_guess_far_above_the_root_is_set_again_for_the_first_read_out(monkeypatch):
    from dpplanner.engine.memo import forget
    from dpplanner.engine.mechanisms import composition, ladder

    releases, mult, delta = RETILT_PLAN
    tilts, twins = [], []
    real_tilt, real_bracket = spectral.saddle_tilt, ladder.bracket
    monkeypatch.setattr(spectral, "saddle_tilt", lambda r, k, x: tilts.append(x) or real_tilt(r, k, x))
    monkeypatch.setattr(composition, "bracket", lambda r, *a, **k: twins.append(r) or real_bracket(r, *a, **k),
                        raising=True)
    b = compose_mechanisms(releases, delta, multiplicities=mult, eta=1e-3)
    assert b.epsilon_lower <= 35.823961 <= b.epsilon
    assert b.epsilon - b.epsilon_lower <= 1e-3 and "width" not in b.detail
    assert any(x < 40.0 for x in tilts)         # (tilted again near the root, ~35.8)
    # the allocation's upper end alone is the bracket's on the rung it stopped on, to the bit
    forget()
    twin = twins[0]
    assert ladder.upper_end(twin, 1e-3).upper == real_bracket(twin, 1e-3).upper


def test_a_retilted_rungs_bracket_is_the_same_whether_its_upper_end_was_read_first(monkeypatch):
    """The bracket of a plan does not depend on what the process computed before: the allocation
    reads a rung's upper end alone (memorised), the totals then read the whole bracket."""
    from dpplanner.engine.memo import forget
    from dpplanner.engine.mechanisms import composition, ladder

    releases, mult, delta = RETILT_PLAN
    twins, real_bracket = [], ladder.bracket
    monkeypatch.setattr(composition, "bracket", lambda r, *a, **k: twins.append(r) or real_bracket(r, *a, **k),
                        raising=True)
    compose_mechanisms(releases, delta, multiplicities=mult, eta=1e-3)
    forget()
    fresh = real_bracket(twins[0], 1e-3)
    forget()
    ladder.upper_end(twins[0], 1e-3)
    after = real_bracket(twins[0], 1e-3)
    assert (after.lower, after.upper) == (fresh.lower, fresh.upper)


def test_each_level_of_the_rows_tree_sums_its_rows_squares_once(monkeypatch):
    """A level's error bound takes the l2 norms of its input rows and of its output rows; the
    input ones are the last level's output ones, not summed again (~10% of a tree of 13 Laplace
    rows of ~1600 points, a grouped plan's allocation). The same tree, to the bit."""
    from dpplanner.engine.mechanisms import rowtree

    rng = np.random.default_rng(1)
    t = rng.random((8, 40)) ** 8
    rows = rowtree.Rows(t / t.sum(axis=1)[:, None], np.zeros(8, dtype=np.int64), np.zeros(8),
                        np.full(8, 1e-15), np.full(8, 1e-17), np.zeros(8))
    roots = []

    class Counted:
        def __getattr__(self, name):
            return getattr(np, name)

        @staticmethod
        def sqrt(x):
            roots.append(np.size(x))
            return np.sqrt(x)

    monkeypatch.setattr(rowtree, "np", Counted())
    tree = reduce_rows(rows)
    assert roots == [8, 4, 2, 1]        # the 8 rows once, then each level's output (no trim: < 512 wide)
    monkeypatch.undo()
    level = rowtree._level
    unknown = lambda r: level(rowtree.Rows(r.t, r.start, r.log_m, r.rel, r.e1, r.e2))   # noqa: E731
    monkeypatch.setattr(rowtree, "_level", unknown)
    again = reduce_rows(rows)
    assert np.array_equal(tree.t, again.t)
    assert (tree.e2, tree.err, tree.rel) == (again.e2, again.err, again.rel)


def test_a_lower_end_read_below_its_first_charge_is_charged_from_just_below_that_root():
    """psi-survey with redistribution off and one discrete Gaussian statistic at epsilon 100: its
    lower ends read below x_min; charged from 4 gaps below the root read (the first retry's
    gap), the bracket stayed 0.0112 wide; from one gap below, 0.00146 (the same lattices)."""
    from dpplanner.engine import compose

    eps = [0.12873836888668605] * 2 + [0.2574767377733721] + [0.12873836888668605] * 3 + [100.0, 0.12873836888668605]
    deltas = [0.0] * 6 + [2.5e-07, 2.5e-07]
    mechs = ["discrete-laplace:1", "discrete-laplace:1408749273111", "discrete-laplace:2097152000028",
             "discrete-laplace:1*2", "discrete-laplace:1", "discrete-laplace:1*2", "discrete-gaussian:1*2",
             "discrete-gaussian:1511828488214"]
    r = compose(eps, deltas, 1e-6, "pld", 1e-3, mechanisms=mechs)
    assert r.epsilon == 48.83810917981634
    assert 48.8 < r.epsilon_lower <= r.epsilon and r.epsilon - r.epsilon_lower < 0.0015


def test_a_forward_check_after_its_upper_end_lays_out_the_lower_end_s_kinds_only(monkeypatch):
    """An allocation's search reads a rung's upper end alone; its forward check's bracket then
    composes only the lower end there: the upper end's kinds are not laid on the lattice again
    (discrete Laplace releases of a huge shift, whose lower end is a composition of its own)."""
    from dpplanner.engine import DiscreteLaplace
    from dpplanner.engine.memo import forget
    from dpplanner.engine.mechanisms import composition, ladder

    shift = 2147483667010
    releases = [DiscreteLaplace(shift * (20.0 + 3 * i), shift) for i in range(6)] + \
        [DiscreteLaplace(40.0 + 7 * i, 1) for i in range(4)]
    twins, real_bracket = [], ladder.bracket
    monkeypatch.setattr(composition, "bracket", lambda r, *a, **k: twins.append(r) or real_bracket(r, *a, **k))
    whole = compose_mechanisms(releases, 1e-7, eta=1e-2)
    forget()
    sides, real_side = [], spectral.side_of
    monkeypatch.setattr(spectral, "side_of", lambda r, step, upper, ctd: sides.append(upper) or
                        real_side(r, step, upper, ctd))
    ladder.upper_end(twins[0], 1e-2)
    assert sides == [True]
    again = real_bracket(twins[0], 1e-2)
    assert sides == [True, False]       # (the upper end's kinds laid out once)
    assert (again.upper, again.lower) == (whole.epsilon, whole.epsilon_lower)
