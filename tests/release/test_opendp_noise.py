"""OpenDP's noise as the plan models it: lattice, shift, calibration through the engine, errors."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from dpplanner import engine
from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, Statistic
from dpplanner.model.opendp_noise import (_chernoff_u, _dg_count, _dl_count, _dl_prefix, _log_chernoff,
                                          lattice_of, opendp_noise)
from dpplanner.model.opendp_sensitivity import certified


def _cert(stat, **budget):
    return certified(stat, Budget(**{"dataset_size": 1000, **budget}))


def test_whole_numbers_are_noised_on_the_integers_with_the_engines_scale():
    cert = _cert(Statistic("s", "x", Kind.SUM, lower=-3, upper=100, integer=True),
                 neighbouring=Neighbouring.REPLACE_ONE)
    noise = opendp_noise(cert, False, 0.5, 0.0)
    assert (noise.k, noise.shift, noise.tag) == (None, 103, "discrete-laplace:103")
    assert noise.scale == engine.discrete_laplace_scale(0.5, 103) and noise.shift / noise.scale <= 0.5


def test_real_numbers_are_noised_on_a_lattice_40_binary_orders_below_the_sensitivity():
    cert = _cert(Statistic("m", "x", Kind.MEAN, lower=18.0, upper=100.0),
                 neighbouring=Neighbouring.REPLACE_ONE)
    k, shift = lattice_of(cert, False)
    assert 2.0 ** k <= cert.l1 * 2.0 ** -40 < 2.0 ** (k + 1)
    # neighbours' rounded sums differ by at most D + 2^k: an integer number of lattice units
    assert shift == math.ceil(Fraction(cert.l1) / Fraction(2) ** k) + 1
    noise = opendp_noise(cert, True, 1.0, 1e-7)
    assert noise.scale == math.ldexp(engine.discrete_gaussian_sigma(1.0, 1e-7, shift), k)
    assert noise.rho >= shift ** 2 / (2 * noise.lattice_scale ** 2)
    assert noise.released_scale == noise.scale / 1000


def test_the_maps_opendp_certifies_are_within_the_plans_budget():
    dp = pytest.importorskip("opendp.prelude")
    dp.enable_features("contrib")
    cert = _cert(Statistic("m", "x", Kind.MEAN, lower=18.0, upper=100.0),
                 neighbouring=Neighbouring.REPLACE_ONE)
    for gaussian in (False, True):
        noise = opendp_noise(cert, gaussian, 0.3, 1e-7)
        make = dp.m.make_gaussian if gaussian else dp.m.make_laplace
        m = make(dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float), scale=noise.scale,
                 k=noise.k)
        spent = m.map(cert.l1)
        assert spent <= (noise.rho if gaussian else 0.3) * (1 + 1e-15)


@pytest.mark.parametrize("t", [0.3, 1.0, 7.9, 250.0])
@pytest.mark.parametrize("beta", [0.05, 0.01, 1e-6])
def test_the_discrete_laplace_error_is_the_exact_quantile(t, beta):
    j = _dl_count(t, beta)
    a = math.exp(-1.0 / t)
    tail = lambda i: 2 * a ** (i + 1) / (1 + a)          # P(|X| > i)
    assert tail(j) <= beta and (j == 0 or tail(j - 1) > beta)


def test_a_discrete_gaussian_error_bounds_its_tail():
    for sigma in (0.7, 3.0, 40.0):
        j = _dg_count(sigma, 0.05)
        xs = range(-int(60 * sigma) - 5, int(60 * sigma) + 6)
        weights = [math.exp(-x * x / (2 * sigma * sigma)) for x in xs]
        tail = sum(w for x, w in zip(xs, weights) if abs(x) > j) / sum(weights)
        assert tail <= 0.05


def test_the_cdf_bound_is_no_looser_than_the_union_of_cells_and_holds():
    t, m, beta = 12.0, 20, 0.05
    s = _dl_prefix(t, m, beta)
    assert s <= m * _dl_count(t, beta / m)
    assert s > _dl_count(t, beta)                        # a sum of cells spreads wider than one


def test_the_cdf_bounds_chernoff_parameter_is_its_minimiser():
    """_dl_prefix reads the Chernoff bound at the u of a closed form: it is the minimiser (no
    point of a fine grid over (0, 1/t) does better), also at lattice scales t ~ 1e12."""
    for t in (0.3, 3.7, 12.0, 98.05, 2.0 ** 20, 1.5e12):
        for m, s_per in ((1, 3.0), (20, 1.5), (1000, 0.2)):
            s = s_per * t * math.sqrt(m) + 1.0
            u = _chernoff_u(s / m, t)
            grid = np.linspace(0.0, 1.0 / t, 4001)[1:-1]
            best = min(_log_chernoff(float(v), s, m, t) for v in grid)
            assert 0.0 < u < 1.0 / t
            assert _log_chernoff(u, s, m, t) <= best + 1e-9 * abs(best)


def test_discrete_noise_can_reach_an_error_of_zero_and_the_target_is_met():
    plan = Plan(Budget(epsilon=10.0, delta=1e-6), [Statistic("c", epsilon=0.5)])
    plan.set_target_error(0, 0.5)                        # an error below 1 record: exactly 0
    assert plan.privacy(0).error == 0.0
    assert plan[0].held and 2 * math.exp(-plan[0].epsilon) / (1 + math.exp(-plan[0].epsilon)) <= 0.05


def test_a_gaussian_target_error_is_met_through_the_engines_calibration():
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=500),
                [Statistic("m", "x", Kind.MEAN, Mechanism.GAUSSIAN, lower=0.0, upper=10.0, epsilon=0.1)])
    plan.set_target_error(0, 0.2)
    assert plan.privacy(0).error <= 0.2
    loose = plan[0].epsilon * (1 - 1e-6)
    assert plan.trial().privacy(0).error <= 0.2
    assert Plan(plan.budget, [plan[0].replace(epsilon=loose, held=False)]).privacy(0).error > 0.2 * (1 - 1e-6)


def test_a_replace_one_gaussian_histogram_is_two_cells_of_shift_one():
    """Under replace-one a Gaussian histogram's counts move by (+1, -1) in two cells: the plan
    composes exactly that, two discrete Gaussians of shift 1 (not one of OpenDP's L2 = 2), and the
    release's own (eps_i, delta_i) is certified for the two cells composed."""
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=1000, neighbouring=Neighbouring.REPLACE_ONE),
                [Statistic("h", "x", Kind.HISTOGRAM, Mechanism.GAUSSIAN, epsilon=0.5, bins=4)])
    assert plan.composition_inputs().mechanisms == ("discrete-gaussian:1*2",)
    p = plan.privacy(0)
    sigma = p.opendp.lattice_scale
    assert sigma == engine.discrete_gaussian_sigma(0.5, p.delta, 1, cells=2)
    two = engine.compose_mechanisms([engine.DiscreteGaussian(sigma, 1)], p.delta, eta=1e-5, multiplicities=[2])
    assert two.epsilon <= 0.5
    assert p.opendp.rho == pytest.approx(2 / (2 * sigma ** 2), rel=1e-15)


def test_tags_are_the_noises_own_and_eps_delta_where_it_cannot_be_calibrated():
    """opendp_tags (a plan's tags, its one-cell discrete Gaussians calibrated together) gives each
    release opendp_noise's tag, and "eps-delta" where opendp_noise refuses, even beside releases
    that can be calibrated (the batch is then refused as a whole and each tried on its own)."""
    from dpplanner.engine.memo import forget
    from dpplanner.model.opendp_noise import opendp_tags

    real = _cert(Statistic("m", "x", Kind.MEAN, lower=18.0, upper=100.0))
    count = _cert(Statistic("c", kind=Kind.COUNT))
    hist = _cert(Statistic("h", "x", Kind.HISTOGRAM, bins=5), neighbouring=Neighbouring.REPLACE_ONE)
    releases = [(count, False, 0.1, 0.0), (real, True, 1e-6, 1e-9), (count, True, 0.2, 1e-7),
                (real, True, 0.5, 1e-8), (count, False, 2000.0, 0.0), (hist, True, 0.3, 1e-7),
                (real, False, 0.05, 0.0)]

    def alone(cert, gaussian, eps, delta):
        try:
            return opendp_noise(cert, gaussian, eps, delta).tag
        except ValueError:
            return "eps-delta"

    forget()
    tags = opendp_tags(releases)
    assert tags == [alone(*r) for r in releases]
    assert tags[1] == tags[4] == "eps-delta"         # sigma beyond 2^57; epsilon beyond 1024
    assert tags[2] == "discrete-gaussian:1" and tags[5] == "discrete-gaussian:1*2"
