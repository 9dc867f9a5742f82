"""Releases of C cells ("*C" tags): the noise-aware theorems compose the C moved cells, the
generic ones see the whole release's (eps_i, delta_i)."""

import math

import numpy as np
import pytest

from dpplanner import engine
from dpplanner.engine.mechanisms.zcdp import cks_epsilon, rho_for, zcdp_gaussian_sigma
from dpplanner.engine.theorems import REGISTRY

DG = 1e-6
GENERIC_THEOREMS = [t.name for t in REGISTRY if t.generic]


def total(theorem, eps, deltas, mult, tags, eta=1e-4):
    return engine.compose(eps, deltas, DG, theorem=theorem, eta=eta, multiplicities=mult, mechanisms=tags).epsilon


@pytest.mark.parametrize("theorem", ["pld", "zcdp"])
def test_laplace_cells_are_that_many_laplace_releases_of_a_cells_share(theorem):
    # "laplace*3" at eps = 0.6: three cells of loss 0.6 / 3 each, i.e. three "laplace" releases at 0.2
    grouped = total(theorem, [0.6, 0.1], [0.0, 0.0], [1, 2], ["laplace*3", "laplace"])
    spelled = total(theorem, [0.6 / 3, 0.1], [0.0, 0.0], [3, 2], ["laplace", "laplace"])
    assert grouped == spelled
    # and tighter than one Laplace of the whole epsilon (the cells' losses are independent)
    assert grouped < total(theorem, [0.6, 0.1], [0.0, 0.0], [1, 2], ["laplace", "laplace"])


def test_generic_theorems_see_the_whole_release():
    for theorem in GENERIC_THEOREMS:
        try:
            one = total(theorem, [0.6, 0.1], [0.0, 0.0], [1, 2], ["laplace", "laplace"])
        except ValueError:
            continue
        assert total(theorem, [0.6, 0.1], [0.0, 0.0], [1, 2], ["laplace*3", "laplace"]) == one


def test_gaussian_cells_are_one_gaussian_of_the_whole_budget():
    # C cells of multiplier sqrt(C) m compose to one Gaussian of multiplier m: the tag is exact as it is
    for theorem in engine.THEOREMS:
        try:
            plain = total(theorem, [0.5, 0.2], [1e-8, 0.0], [1, 1], ["gaussian", "laplace"])
        except ValueError:
            continue
        assert total(theorem, [0.5, 0.2], [1e-8, 0.0], [1, 1], ["gaussian*7", "laplace"]) == plain


def test_discrete_laplace_cells_share_the_whole_shift():
    t = engine.discrete_laplace_scale(0.6, 3 * 2)       # C S / t <= eps_i
    assert 3 * 2 / t <= 0.6
    via_tags = total("pld", [0.6], [0.0], [1], ["discrete-laplace:2*3"])
    via_objects = engine.compose_mechanisms([engine.DiscreteLaplace(t, 2)], DG, eta=1e-4, multiplicities=[3]).epsilon
    assert via_tags == via_objects


def test_two_cells_of_shift_one_replace_one_discrete_gaussian_of_shift_two():
    """A replaced record moves two histogram counts by one each: two discrete Gaussian cells of shift 1,
    calibrated together (zCDP) for the whole (eps_i, delta_i); their exact composition is certified to meet it."""
    eps, delta = 0.5, 1e-7
    sigma = engine.discrete_gaussian_sigma(eps, delta, 1, cells=2)
    exact = engine.compose_mechanisms([engine.DiscreteGaussian(sigma, 1)], delta, eta=1e-4, multiplicities=[2])
    assert exact.epsilon <= eps          # the release's own (eps_i, delta_i) holds for the two cells
    assert total("pld", [eps], [delta], [1], ["discrete-gaussian:1*2"]) == \
        engine.compose_mechanisms([engine.DiscreteGaussian(sigma, 1)], DG, eta=1e-4, multiplicities=[2]).epsilon
    # zCDP: two cells of rho 1 / (2 sigma^2) each
    z = engine.compose([eps], [delta], DG, theorem="zcdp", mechanisms=["discrete-gaussian:1*2"])
    assert z.extra["rho"] == pytest.approx(2 * 1 / (2 * sigma ** 2), rel=1e-14)


def test_zcdp_calibration_is_the_least_sigma_it_certifies():
    for eps, delta, sq in ((1.0, 1e-6, 2), (0.1, 1e-9, 9), (3.0, 1e-5, 1)):
        sigma = zcdp_gaussian_sigma(eps, delta, sq)
        assert cks_epsilon(sq / (2 * sigma ** 2), delta) <= eps
        assert cks_epsilon(sq / (2 * (sigma * (1 - 1e-9)) ** 2), delta) > eps * (1 - 1e-6)
        assert cks_epsilon(rho_for(eps, delta), delta) <= eps


def test_rho_for_batched_bisection_gives_the_one_at_a_time_bits():
    """rho_for knows its bisection's verdicts far from the root without evaluating them
    (zcdp._verdicts); the rho, hence every sigma a plan and its release script calibrate through
    zCDP, is the one-at-a-time loop's to the bit."""
    def one_at_a_time(eps, delta):
        lo, hi = 1e-300, 1.0
        while cks_epsilon(hi, delta) <= eps and hi < 1e300:
            lo, hi = hi, hi * 16.0
        for _ in range(200):
            if hi <= lo * (1 + 1e-13):
                break
            mid = math.sqrt(lo * hi)
            lo, hi = (mid, hi) if cks_epsilon(mid, delta) <= eps else (lo, mid)
        return lo

    rng = np.random.default_rng(25)
    cases = [(0.1287384140610734, 2.5e-7), (1.0, 1e-6), (40.0, 0.3)]
    cases += [(float(e), float(d)) for e, d in zip(np.exp(rng.uniform(-8, 3, 12)), np.exp(rng.uniform(-34, -1, 12)))]
    for eps, delta in cases:
        assert rho_for(eps, delta) == one_at_a_time(eps, delta)


def test_rho_for_evaluates_only_near_the_root(monkeypatch):
    """About ten evaluations of the CKS conversion (the secant's and those inside the checked
    bracket), not one per bisection step (~55): an allocation calls rho_for at every scale."""
    from dpplanner.engine.mechanisms import zcdp

    calls = []
    real = zcdp.cks_epsilon
    monkeypatch.setattr(zcdp, "cks_epsilon", lambda *a: calls.append(1) or real(*a))
    zcdp._RHOS.clear()
    rho_for(0.3141, 1e-7)
    assert 0 < len(calls) <= 25


def test_curve_of_cells_ends_at_the_total():
    eps = [0.3, 0.2, 0.1]
    tags = ["laplace*4", "discrete-laplace:1*2", "laplace"]
    c = engine.curve(eps, [0.0] * 3, DG, theorems=("pld", "zcdp"), eta=1e-4, mechanisms=tags, lower=False)
    for theorem in ("pld", "zcdp"):
        whole = engine.compose(eps, [0.0] * 3, DG, theorem=theorem, eta=1e-4, mechanisms=tags)
        assert c.upper[theorem][-1] <= whole.epsilon + 1e-4
        assert c.upper[theorem][-1] >= (whole.epsilon_lower if theorem == "pld" else whole.epsilon) - 1e-12
    # the first step of k is the first statistic: four cells of 0.075 each
    one = engine.compose([0.3 / 4], [0.0], DG, theorem="pld", eta=1e-4, multiplicities=[4], mechanisms=["laplace"])
    assert c.upper["pld"][0] == pytest.approx(one.epsilon, abs=2e-4)


@pytest.mark.parametrize("tag, delta, message", [
    ("laplace*0", 0.0, "number after '\\*'"),
    ("laplace*x", 0.0, "number after '\\*'"),
    ("laplace*", 0.0, "number after '\\*'"),
    ("laplace*2*3", 0.0, "number after '\\*'"),
    ("eps-delta*2", 1e-9, "must be pure"),
    ("discrete-laplace:4503599627370496*4", 0.0, "above 2\\^53"),
])
def test_bad_cells_are_refused(tag, delta, message):
    with pytest.raises(ValueError, match=message):
        engine.compose([0.5], [delta], DG, theorem="pld", mechanisms=[tag])


def test_eps_delta_cells_compose_as_worst_case_pure_pairs():
    # each of 30 cells is (eps/30)-DP: thirty RR(eps/30) pairs, far tighter than one RR(eps) at delta_g > 0
    cells = total("pld", [3.0], [0.0], [1], ["eps-delta*30"])
    # (the spelled-out plan is all (eps, delta): pld reports the generic optimal's exact total;
    # the cells go through pld's bracket, within its eta)
    assert cells == pytest.approx(total("pld", [0.1], [0.0], [30], ["eps-delta"]), abs=1e-4)
    assert math.isfinite(cells) and cells < 0.8 * total("pld", [3.0], [0.0], [1], ["eps-delta"])


@pytest.mark.parametrize("mode", ["prefix", "repeat"])
def test_a_curve_of_multi_cell_discrete_gaussians_alone_is_drawn(mode):
    """The whole plan's pld bracket composes these releases as Gaussian twins in closed form (no
    lattice), while the curve keeps each two-cell release's discrete kernel: the curve must still
    lay a lattice for it (it divided by a step of 0 and no curve was drawn), and its upper ends are
    sound, never above the generic optimal curve."""
    eps, delta = 0.10356070326356899, 2.5e-07
    tags = ["discrete-gaussian:1*2"] * 3
    c = engine.curve([eps] * 3, [delta] * 3, DG, mode=mode, k_max=6, theorems=("optimal", "pld"),
                     mechanisms=tags, lower=False, eta=1e-3)
    pld, optimal = np.asarray(c.upper["pld"]), np.asarray(c.upper["optimal"])
    assert np.all(np.isfinite(pld)) and np.all(pld <= optimal)
    k = len(tags) if mode == "prefix" else 6
    whole = engine.compose([eps] * k, [delta] * k, DG, theorem="pld", eta=1e-3, mechanisms=tags[:1] * k)
    assert pld[-1] >= whole.epsilon_lower
