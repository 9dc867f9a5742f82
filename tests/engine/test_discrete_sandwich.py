"""Discrete noise between two continuous noises (discrete_sandwich.py), and what uses it.

A continuous twin is sound when its privacy profile is >= the discrete one's at every x (upper,
plus tau_up) or <= it (lower, minus tau_lo): checked against exact 40-digit sums, at the points
where the two differ most (the threshold on a half-integer for the Gaussian, every loss value for
the Laplace). Then the calibration through the twin is checked by the exact profile bound, and the
compositions that use the twins against the ones that keep every release discrete.
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpplanner.engine import (DiscreteGaussian, DiscreteLaplace, EpsDelta, Gaussian, compose,
                              compose_mechanisms, curve, discrete_gaussian_sigma, discrete_laplace_scale,
                              privacy_profile)
from dpplanner.engine.memo import forget
from dpplanner.engine.mechanisms import discrete as disc_mod
from dpplanner.engine.mechanisms import discrete_gaussian as dg_mod
from dpplanner.engine.mechanisms.discrete_gaussian import dg_delta_upper
from dpplanner.engine.mechanisms.discrete_laplace import discrete_laplace_scales
from dpplanner.engine.mechanisms.discrete_sandwich import gaussian_twins, laplace_twins
from test_discrete_kernels import dl_exact


@pytest.fixture(autouse=True)
def digits():
    """40 digits here, whatever another test module set."""
    with mpmath.workdps(40):
        yield


def lap_profile(a, x):
    """delta(x) of continuous Laplace noise whose loss lies in [-a, a]."""
    a, x = mpmath.mpf(a), mpmath.mpf(x)
    if x >= a:
        return mpmath.mpf(0)
    if x <= -a:
        return 1 - mpmath.exp(x)
    return 1 - mpmath.exp((x - a) / 2)


def gauss_profile(mu, x):
    mu, x = mpmath.mpf(mu), mpmath.mpf(x)
    return mpmath.ncdf(mu / 2 - x / mu) - mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)


class DiscreteGaussianProfile:
    """delta(x) of DiscreteGaussian(sigma, S), exact to ~30 digits: the weights f(y) beyond 22 sd
    left out (e^-242 of the mass), prefix sums of the rest, and delta(x) = (sum_{y <= n} f(y) -
    e^x sum_{y <= n - S} f(y)) / Z, n the last integer with loss > x."""

    def __init__(self, sigma: float, S: int) -> None:
        self.sigma, self.S, self.w = sigma, S, int(22 * sigma) + 1
        s2 = mpmath.mpf(sigma) ** 2
        ys = range(-self.w - S, self.w + 1)
        f = [mpmath.exp(-mpmath.mpf(y) ** 2 / (2 * s2)) for y in ys]
        self.prefix = [mpmath.mpf(0)]
        for v in f:
            self.prefix.append(self.prefix[-1] + v)
        self.z = self.below(self.w) - self.below(-self.w - 1)

    def below(self, n: int):
        """sum of f(y) over -w - S <= y <= n."""
        return self.prefix[min(max(n + self.w + self.S + 1, 0), len(self.prefix) - 1)]

    def __call__(self, x):
        s2 = mpmath.mpf(self.sigma) ** 2
        c = mpmath.mpf(self.S) / 2 - mpmath.mpf(x) * s2 / self.S        # loss(y) > x iff y < c
        n = int(mpmath.ceil(c)) - 1
        return (self.below(n) - mpmath.exp(x) * self.below(n - self.S)) / self.z


@pytest.mark.parametrize("t, S", [(0.5, 1), (10.0, 1), (3.0, 2), (7.3, 5), (2.0, 40), (100.0, 37)])
def test_discrete_laplace_lies_between_its_continuous_twins(t, S):
    a_lo, a_hi = laplace_twins(t, S)
    a = S / t
    xs = [a * j / S for j in range(-S, S + 1)] + [a * f for f in (-1.3, -0.999, -0.4, 1e-3, 0.61, 0.999)]
    for x in xs:          # the discrete profile's kinks are at the loss values j a / S
        d = dl_exact(t, S, x)
        assert lap_profile(a_lo, x) - 1e-30 <= d <= lap_profile(a_hi, x) + 1e-30, x
    # and the upper twin is tight: at loss 0 (shift 1) it meets the discrete profile
    if S == 1:
        assert lap_profile(a_hi, 0.0) == pytest.approx(float(dl_exact(t, S, 0.0)), rel=1e-8)


@pytest.mark.parametrize("sigma, S", [(16.0, 1), (16.0, 3), (16.5, 16), (24.0, 1), (32.0, 5), (47.30128330243166, 1),
                                      (64.0, 1), (64.5, 64), (100.0, 3), (150.0, 400)])
def test_discrete_gaussian_lies_between_its_continuous_twins(sigma, S):
    g = gaussian_twins(sigma, S)
    assert g is not None
    mu = S / sigma
    exact = DiscreteGaussianProfile(sigma, S)
    xs = []
    for a in (-12, -5, -2, -0.5, 0, 0.5, 1, 3, 7):         # a = c / sigma: where the loss threshold is
        base = math.floor(a * sigma)
        # c on a half-integer (the discrete sum exceeds the integral most) and off it (least)
        xs += [(S / 2 - (base + off)) * S / sigma ** 2 for off in (0.5, 0.0)]
    closest_up, closest_lo = math.inf, math.inf
    for x in xs:
        d = exact(x)
        hi = gauss_profile(1 / g.m_up, x) + g.tau_up
        lo = gauss_profile(1 / g.m_lo, x) - g.tau_lo
        assert lo <= d <= hi, x
        mid = gauss_profile(mu, x)
        if d > mid:
            closest_up = min(closest_up, float((hi - d) / (hi - mid)))
        if d < mid:
            closest_lo = min(closest_lo, float((d - lo) / (mid - lo)))
    # the twins are not loose either: each is reached to within a small factor of its correction
    # (below sigma ~ 40 the local remainder's bound, ~ C_LOCAL M(A) / sigma^2, takes a larger share)
    loose = 0.7 if sigma >= 40 else 0.9
    assert closest_up < loose and closest_lo < loose


def test_gaussian_twins_are_refused_below_their_range():
    assert gaussian_twins(15.9, 1) is None
    assert gaussian_twins(64.0, 10 ** 6) is None          # mu ~ 1.6e4: the shifts would not be small


@pytest.mark.parametrize("eps, delta, S", [(0.5, 1e-5, 64), (0.05, 1e-6, 1), (1.0, 1e-9, 20), (0.2, 1e-8, 2 ** 20),
                                           (3.0, 1e-6, 2 ** 40), (0.01, 1e-3, 7)])
def test_discrete_gaussian_sigma_through_the_twin_is_certified_and_nearly_least(eps, delta, S):
    forget()
    sigma = discrete_gaussian_sigma(eps, delta, S)
    assert sigma >= 64
    assert dg_delta_upper(sigma, S, eps) <= delta
    least = dg_mod._exact_sigma(eps, delta, S)        # the exact profile's least sigma, to ~1e-12
    # the twin's shift (~0.06 / sigma^2) and the delta it leaves for its slack (2^-20 delta)
    assert least <= sigma <= least * (1 + 0.1 / sigma ** 2 + 2e-6)


def test_calibrations_in_one_pass_give_the_same_bits_as_one_at_a_time():
    rng = np.random.default_rng(5)
    eps = np.concatenate([rng.uniform(1e-3, 3.0, 200), [0.1, 0.25, 0.5, 1.0, 2.0 ** -20, 3.0]]).tolist()
    shifts = [int(s) for s in rng.choice([1, 2, 3, 7, 1000, 2 ** 20, 2 ** 40], len(eps))]
    scales = discrete_laplace_scales(eps, shifts)
    assert scales.tolist() == [discrete_laplace_scale(e, s) for e, s in zip(eps, shifts)]
    deltas = rng.choice([1e-9, 1e-6, 1e-5], len(eps)).tolist()
    forget()
    together = dg_mod.discrete_gaussian_sigmas(eps[:40], deltas[:40], shifts[:40]).tolist()
    forget()
    assert together == [discrete_gaussian_sigma(e, d, s) for e, d, s in zip(eps[:40], deltas[:40], shifts[:40])]


def test_the_twin_calibration_is_the_one_its_docstring_spells_out():
    """sigma = S m_G (1 + s_hi) rounded up, m_G a multiplier whose analytic Gaussian is (eps,
    delta (1 - 2^-20))-DP, within 1e-9 of the least, s_hi read at S m_G (1 - 4u): one calibration
    per entry, its own (a batch with other releases gives the same bits)."""
    from dpplanner.engine.mechanisms.discrete_sandwich import upper_terms
    from dpplanner.engine.mechanisms.gaussian import fitting_multipliers, gaussian_multiplier

    cases = [(0.5, 1e-5, 64), (1.0, 1e-9, 20), (0.2, 1e-8, 2 ** 20), (3.0, 1e-6, 2 ** 40), (0.01, 1e-3, 7)]
    forget()
    together = dg_mod._twin_sigmas(cases)
    assert sum(sigma is not None for sigma in together) >= 4
    for (eps, delta, S), sigma in zip(cases, together):
        if sigma is None:       # (the twin does not serve: the exact profile calibrates it)
            continue
        forget()
        m_g = float(fitting_multipliers([eps], [delta * (1 - 2.0 ** -20)])[0])
        assert 0 <= m_g / gaussian_multiplier(eps, delta * (1 - 2.0 ** -20)) - 1 <= 1e-9
        s_hi = upper_terms(S * m_g * (1 - 4 * 2.0 ** -53), S)[0]
        assert sigma == math.nextafter(S * m_g * (1 + s_hi) * (1 + 16 * 2.0 ** -53), math.inf)


def test_the_twins_calibrate_each_epsilon_and_delta_once_whatever_the_shifts(monkeypatch):
    """An allocation's step calibrates its free discrete Gaussians again (new epsilons): one
    analytic-Gaussian calibration per (eps, delta), shared by every shift: two here for four
    releases (each call calibrates at delta and at delta (1 - 2^-20) together)."""
    from dpplanner.engine.mechanisms import gaussian as g

    forget()
    calibrated, real = [], g._around
    monkeypatch.setattr(g, "_around", lambda e, d, t: calibrated.extend(e.tolist()) or real(e, d, t))
    sigmas = dg_mod._twin_sigmas([(0.02, 1e-9, 1), (0.02, 1e-9, 2 ** 40), (0.04, 1e-9, 64),
                                  (0.04, 1e-9, 2 ** 40)])
    assert all(sigma is not None for sigma in sigmas) and sorted(calibrated) == [0.02, 0.04]


def _all_discrete(monkeypatch):
    """No release composed as its continuous twin (the exact discrete PLDs throughout)."""
    monkeypatch.setattr(disc_mod, "TWIN_WIDTH_SHARE", 0.0)
    forget()


def _lattice_plan():
    """Releases as OpenDP adds them to real values: shifts of 2^4 to 2^40 lattice units."""
    S = [2 ** 40, 2 ** 20, 19, 2 ** 33]
    mechs = [DiscreteLaplace(discrete_laplace_scale(0.05, S[0]), S[0]),
             DiscreteGaussian(discrete_gaussian_sigma(0.2, 1e-8, S[1]), S[1]),
             DiscreteLaplace(discrete_laplace_scale(0.1, 1), 1),
             DiscreteGaussian(discrete_gaussian_sigma(0.3, 1e-7, S[2]), S[2]),
             DiscreteLaplace(discrete_laplace_scale(0.02, S[3]), S[3])]
    return mechs, [3, 5, 2, 4, 10]


@pytest.mark.parametrize("eta", [1e-2, 1e-3])
def test_twin_brackets_overlap_the_all_discrete_ones(eta, monkeypatch):
    mechs, mult = _lattice_plan()
    forget()
    fast = compose_mechanisms(mechs, 1e-6, eta=eta, multiplicities=mult)
    _all_discrete(monkeypatch)
    slow = compose_mechanisms(mechs, 1e-6, eta=eta, multiplicities=mult)
    # both hold the exact total: they overlap; the twins cost at most their share of eta
    assert fast.epsilon_lower <= slow.epsilon and slow.epsilon_lower <= fast.epsilon
    assert fast.epsilon - fast.epsilon_lower <= eta
    assert fast.epsilon <= slow.epsilon_lower + eta


def test_plan_totals_curves_and_profiles_with_twins_overlap_the_all_discrete_ones(monkeypatch):
    eps = [0.05, 0.2, 0.1, 0.3, 0.02, 0.08]
    deltas = [0.0, 1e-8, 0.0, 1e-7, 0.0, 1e-9]
    tags = ["discrete-laplace:1099511627776", "discrete-gaussian:1048576", "discrete-laplace",
            "discrete-gaussian:19", "discrete-laplace:8589934592", "discrete-gaussian:64"]
    mult = [3, 5, 2, 4, 10, 2]

    def run():
        forget()
        total = compose(eps, deltas, 1e-6, theorem="pld", mechanisms=tags, multiplicities=mult, eta=1e-3)
        c = curve(eps, deltas, 1e-6, mechanisms=tags, multiplicities=mult, theorems=["pld"], points=30)
        p = privacy_profile(eps, deltas, mechanisms=tags, multiplicities=mult, eps_values=[0.5, 1.0, 2.0])
        return total, c, p

    total, c, p = run()
    _all_discrete(monkeypatch)
    total_d, c_d, p_d = run()
    assert np.all(p.delta_lower <= p_d.delta_upper) and np.all(p_d.delta_lower <= p.delta_upper)
    assert total.epsilon_lower <= total_d.epsilon and total_d.epsilon_lower <= total.epsilon
    assert np.array_equal(c.ks, c_d.ks)
    assert np.all(c.lower["pld"] <= c_d.upper["pld"]) and np.all(c_d.lower["pld"] <= c.upper["pld"])
    assert c.upper["pld"][-1] >= total.epsilon_lower


@pytest.mark.parametrize("kind, param, S, k", [("laplace", 2000.0, 100, 20), ("gaussian", 100.0, 8, 10),
                                               ("gaussian", 300.0, 64, 5)])
def test_twin_compositions_agree_with_dp_accounting(kind, param, S, k):
    from test_discrete_mechanisms import _dp_accounting_pair

    forget()
    mech = DiscreteLaplace(param, S) if kind == "laplace" else DiscreteGaussian(param, S)
    rel, mult = disc_mod.grouped([disc_mod.from_object(mech)], [k])
    assert disc_mod.choose_twins(rel, mult, 1e-6, 1e-3)          # composed through its twins
    r = compose_mechanisms([mech], 1e-6, eta=1e-3, multiplicities=[k])
    pess, opt = _dp_accounting_pair(kind, param, S, k, 1e-6, 1e-5)
    assert r.epsilon_lower <= pess and opt <= r.epsilon
    assert r.epsilon - r.epsilon_lower <= 1e-3


def test_discrete_laplace_twins_beside_a_gaussian_keep_the_lower_end():
    """Beside a Gaussian (the hybrid bound) a rung may read its lower end from the upper twins less
    a Lipschitz charge on delta: half of a_hi - a_lo for a discrete Laplace's twins (~3e-6 here,
    delta 1e-6), a few ulps of eps for the discrete release itself. So these stay discrete (twinned,
    the lower end was 10 % below the upper one at every eta)."""
    forget()
    mechs = [DiscreteLaplace(96.648, 4), DiscreteLaplace(193.3, 4), Gaussian(41.7), EpsDelta(0.0414, 0.0)]
    rel, mult = disc_mod.grouped([disc_mod.from_object(m) for m in mechs[:2]], [1, 1])
    rr = 3 * 0.0414 ** 2
    assert len(disc_mod.choose_twins(rel, mult, 1e-6, 1e-2, beside=(0.0, rr))) == 2    # no hybrid bound
    assert disc_mod.choose_twins(rel, mult, 1e-6, 1e-2, beside=(1 / 41.7 ** 2, rr)) == {}
    # a cheaper discrete Laplace twin left out does not keep a discrete Gaussian's from being taken
    rel2, mult2 = disc_mod.grouped([disc_mod.from_object(DiscreteLaplace(1000.0, 4)),
                                    disc_mod.from_object(DiscreteGaussian(100.0, 8))], [1, 1])
    taken = disc_mod.choose_twins(rel2, mult2, 1e-6, 1e-2, beside=(1 / 41.7 ** 2, rr))
    assert [rel2[i].kind for i in taken] == ["gaussian"]
    r = compose_mechanisms(mechs, 1e-6, eta=1e-2, multiplicities=[1, 1, 1, 3])
    assert r.epsilon - r.epsilon_lower <= 1e-3


def test_gaussian_twins_are_made_once_per_release(monkeypatch):
    """Every composition chooses its twins again (an edit's allocation and curve ~40 times over the
    same releases): a release's twins (or that it has none) are made once and then remembered,
    the same as made afresh; forget() drops them."""
    from dpplanner.engine.mechanisms import discrete_sandwich as sandwich

    forget()
    made = []
    real = sandwich.upper_terms
    monkeypatch.setattr(sandwich, "upper_terms", lambda *a: made.append(a) or real(*a))
    for sigma in (200.0, 8.0, 200.0, 8.0, 200.0):      # (8 < TWIN_SIGMA_MIN: none)
        assert gaussian_twins(sigma, 3) == sandwich._gaussian_twins(sigma, 3)
    assert gaussian_twins(8.0, 3) is None
    made.clear()
    gaussian_twins(200.0, 3)
    assert made == []
    forget()
    gaussian_twins(200.0, 3)
    assert made == [(200.0, 3)]
