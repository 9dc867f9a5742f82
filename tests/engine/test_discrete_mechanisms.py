"""Discrete Laplace / discrete Gaussian releases: certified brackets against independent references.

* mpmath oracle: the exact loss distribution of a few releases, composed atom by atom at 40
  digits, read at delta_g (lower <= exact root <= upper);
* dp_accounting's discrete PLDs (pessimistic and optimistic) at a fine discretisation: our
  bracket and theirs must overlap, and their midpoint lie in ours up to their own width;
* randomized response: shift 1 discrete Laplace is RR(1/t), so its pld total equals the optimal
  composition of the pure pairs (1/t, 0) and lies ABOVE the continuous Laplace pld total (a test
  that fails if the continuous PLD is used for discrete noise).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from dpplanner.engine import (DiscreteGaussian, DiscreteLaplace, EpsDelta, Gaussian, Laplace, compose,
                              compose_mechanisms, discrete_gaussian_sigma, discrete_laplace_scale)

mpmath.mp.dps = 40


def dl_atoms(t, S):
    """Exact (loss, probability) atoms of one discrete Laplace release (scale t, shift S)."""
    t = mpmath.mpf(t)
    q = mpmath.exp(-1 / t)
    out = {}
    for i in range(S + 1):
        m = (1 - q) * q ** (S - i) / (1 + q)
        if i == S:
            m = 1 / (1 + q)
        if i == 0:
            m = q ** S / (1 + q)
        out[2 * i - S] = m               # loss (2i - S) / t, keyed by the integer 2i - S
    return {k / t: v for k, v in out.items()}


def dg_atoms(sigma, S, width=60):
    sigma = mpmath.mpf(sigma)
    xs = range(-int(width * sigma) - 2, int(width * sigma) + 3)
    f = {x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * sigma ** 2)) for x in xs}
    z = mpmath.fsum(f.values())
    return {mpmath.mpf(S) * (S - 2 * x) / (2 * sigma ** 2): v / z for x, v in f.items()}


def composed(atom_sets):
    out = {mpmath.mpf(0): mpmath.mpf(1)}
    for atoms in atom_sets:
        nxt: dict = {}
        for l1, p1 in out.items():
            for l2, p2 in atoms.items():
                key = mpmath.nstr(l1 + l2, 30)
                if key in nxt:
                    nxt[key] = (nxt[key][0], nxt[key][1] + p1 * p2)
                else:
                    nxt[key] = (l1 + l2, p1 * p2)
        out = {v[0]: v[1] for v in nxt.values() if v[1] > mpmath.mpf(10) ** -45}
    return out


def exact_delta(atoms, x):
    x = mpmath.mpf(x)
    return mpmath.fsum(p * (1 - mpmath.exp(x - l)) for l, p in atoms.items() if l > x)


def assert_contains(r, atoms, delta_g):
    assert r.epsilon_lower <= r.epsilon
    assert exact_delta(atoms, r.epsilon) <= delta_g
    if r.epsilon_lower > 0:
        assert exact_delta(atoms, r.epsilon_lower) >= delta_g


@pytest.mark.parametrize("t, S, k", [(1.5, 2, 3), (0.8, 5, 2), (4.0, 1, 4), (20.0, 3, 2)])
def test_discrete_laplace_brackets_the_exact_composition(t, S, k):
    delta_g = 1e-4
    r = compose_mechanisms([DiscreteLaplace(t, S)], delta_g, eta=1e-3, multiplicities=[k])
    assert_contains(r, composed([dl_atoms(t, S)] * k), delta_g)
    assert r.epsilon - r.epsilon_lower <= 1e-3


@pytest.mark.parametrize("sigma, S, k", [(1.5, 1, 2), (0.7, 2, 1), (3.0, 4, 2)])
def test_discrete_gaussian_brackets_the_exact_composition(sigma, S, k):
    delta_g = 1e-5
    r = compose_mechanisms([DiscreteGaussian(sigma, S)], delta_g, eta=1e-3, multiplicities=[k])
    assert_contains(r, composed([dg_atoms(sigma, S, width=12)] * k), delta_g)


def test_mixed_discrete_releases_bracket_the_exact_composition():
    delta_g = 1e-5
    mechs = [DiscreteLaplace(2.0, 3), DiscreteGaussian(2.0, 1), DiscreteLaplace(5.0, 1)]
    r = compose_mechanisms(mechs, delta_g, eta=1e-3)
    atoms = composed([dl_atoms(2.0, 3), dg_atoms(2.0, 1, width=12), dl_atoms(5.0, 1)])
    assert_contains(r, atoms, delta_g)


def mixed_delta(atoms, mu, x):
    """delta(x) of the atoms composed with a continuous Gaussian of parameter mu (exact)."""
    mu, x = mpmath.mpf(mu), mpmath.mpf(x)
    def one(y):         # delta_G(mu; y)
        return mpmath.ncdf(mu / 2 - y / mu) - mpmath.exp(y) * mpmath.ncdf(-mu / 2 - y / mu)

    return mpmath.fsum(p * one(x - l) for l, p in atoms.items())


@pytest.mark.parametrize("eta", [3e-2, 1e-3])
@pytest.mark.parametrize("with_dg", [True, False])
def test_discrete_releases_beside_a_gaussian_bracket_the_exact_composition(eta, with_dg):
    """With a Gaussian carrying a fair share of the loss the lower end is the hybrid one: the
    discrete kinds give the CTD twins of releases they dominate, charged their Jensen gaps (with
    the discrete Gaussian, a composition of its own); discrete Laplace releases alone are read
    from the upper end's composition, their upper kernels being CTDs of releases a few ulps away."""
    delta_g = 1e-5
    mechs = [DiscreteLaplace(2.0, 3), DiscreteLaplace(5.0, 1), DiscreteLaplace(3.3, 7), Gaussian(1.0)]
    atoms = [dl_atoms(2.0, 3), dl_atoms(5.0, 1), dl_atoms(3.3, 7)]
    if with_dg:
        mechs, atoms = mechs + [DiscreteGaussian(2.0, 1)], atoms + [dg_atoms(2.0, 1, width=12)]
    r = compose_mechanisms(mechs, delta_g, eta=eta)
    atoms = composed(atoms)
    assert r.epsilon_lower <= r.epsilon and r.epsilon - r.epsilon_lower <= eta
    assert mixed_delta(atoms, 1.0, r.epsilon) <= delta_g <= mixed_delta(atoms, 1.0, r.epsilon_lower)


def test_shift_one_discrete_laplace_is_randomized_response_not_continuous_laplace():
    """k releases of DL(t, 1) compose exactly like k pure (1/t, 0) pairs; the continuous Laplace
    of the same scale composes to less. Using the continuous PLD for discrete noise would report
    the smaller (unsound) total."""
    t, k, delta_g = 10.0, 100, 1e-6
    disc = compose_mechanisms([DiscreteLaplace(t, 1)], delta_g, eta=1e-4, multiplicities=[k])
    pure = compose([1 / t], [0.0], delta_g, theorem="optimal", eta=1e-4, multiplicities=[k])
    cont = compose_mechanisms([Laplace(t)], delta_g, eta=1e-4, multiplicities=[k])
    assert disc.epsilon_lower <= pure.epsilon and pure.epsilon_lower <= disc.epsilon
    assert disc.epsilon_lower > cont.epsilon + 0.05          # about 4.775 against 4.693
    # and the plan tag gives the same numbers as the object at the calibrated scale
    tagged = compose([0.1], [0.0], delta_g, theorem="pld", eta=1e-4, multiplicities=[k],
                     mechanisms=["discrete-laplace"])
    assert tagged.epsilon_lower > cont.epsilon + 0.05
    assert tagged.epsilon_lower <= pure.epsilon + 1e-9


def _dp_accounting_pair(kind, param, S, k, delta_g, interval):
    pld = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    out = []
    for pessimistic in (True, False):
        if kind == "laplace":
            one = pld.from_discrete_laplace_mechanism(1 / param, sensitivity=S, pessimistic_estimate=pessimistic,
                                                      value_discretization_interval=interval)
        else:
            one = pld.from_discrete_gaussian_mechanism(param, sensitivity=S, pessimistic_estimate=pessimistic,
                                                       value_discretization_interval=interval)
        out.append(one.self_compose(k).get_epsilon_for_delta(delta_g))
    return out


@pytest.mark.parametrize("kind, param, S, k", [("laplace", 10.0, 1, 50), ("laplace", 12.0, 3, 20),
                                               ("gaussian", 8.0, 1, 20), ("gaussian", 30.0, 5, 10)])
def test_brackets_agree_with_dp_accounting(kind, param, S, k):
    delta_g = 1e-6
    mech = DiscreteLaplace(param, S) if kind == "laplace" else DiscreteGaussian(param, S)
    r = compose_mechanisms([mech], delta_g, eta=1e-3, multiplicities=[k])
    pess, opt = _dp_accounting_pair(kind, param, S, k, delta_g, 1e-5)
    assert opt <= pess
    # both brackets hold the exact value: they overlap, and theirs (width ~1e-4) sits inside ours.
    # (Where the atoms sit on its grid its read-out is exact up to its unrounded floating point:
    # discrete Laplace(10, 1) x 50 is RR(0.1) x 50, exact 3.17290273401919 by mpmath, its
    # "optimistic" 3.1729027341003 above it; so a tight bracket of ours is compared to 1e-9.)
    slack = 1e-9 * r.epsilon
    assert r.epsilon_lower <= pess + slack and opt <= r.epsilon + slack
    mid = 0.5 * (pess + opt)
    assert r.epsilon_lower - (pess - opt) - slack <= mid <= r.epsilon + (pess - opt) + slack


def test_discrete_laplace_scale_is_the_exact_calibration_rounded_up():
    for eps, S in [(0.1, 1), (0.3, 7), (1e-3, 2 ** 40), (2.5, 3)]:
        t = discrete_laplace_scale(eps, S)
        assert Fraction(t) * Fraction(eps) >= S
        assert Fraction(math.nextafter(t, 0.0)) * Fraction(eps) < S


def test_discrete_gaussian_sigma_is_certified_and_nearly_least():
    from dpplanner.engine.mechanisms.discrete_gaussian import dg_delta_upper

    for eps, delta, S in [(0.5, 1e-5, 1), (1.0, 1e-6, 3), (0.2, 1e-8, 2 ** 20)]:
        sigma = discrete_gaussian_sigma(eps, delta, S)
        assert dg_delta_upper(sigma, S, eps) <= delta
        assert dg_delta_upper(sigma * (1 - 1e-9), S, eps) > delta * (1 - 1e-6) or S > 1
    # small case against mpmath: the exact delta at the calibrated sigma is within delta, and
    # 0.1 % less noise is not enough
    sigma = discrete_gaussian_sigma(1.0, 1e-3, 1)
    assert exact_delta(dg_atoms(sigma, 1, width=20), 1.0) <= 1e-3
    assert exact_delta(dg_atoms(sigma * 0.999, 1, width=20), 1.0) > 1e-3


def test_single_discrete_gaussian_delta_bound_in_the_euler_maclaurin_regime():
    """sigma above the term-by-term range: the Euler-Maclaurin bound against an mpmath sum."""
    from dpplanner.engine.mechanisms.discrete_gaussian import dg_delta_upper

    sigma, S, eps = 3000.0, 500, 0.4
    mpmath.mp.dps = 30
    s2 = mpmath.mpf(sigma) ** 2
    z = mpmath.sqrt(2 * mpmath.pi) * sigma       # theta = 1 to 1e-40 000 at this sigma
    thr = math.ceil(S / 2 - eps * sigma ** 2 / S) - 1
    # delta = (sum_{x <= thr} f(x) - e^eps sum_{x <= thr - S} f(x)) / Z, sums by mpmath.nsum
    f = lambda x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2))  # noqa: E731
    g = lambda n: mpmath.nsum(lambda j: f(n - j), [0, mpmath.inf])  # noqa: E731
    exact = (g(thr) - mpmath.exp(eps) * g(thr - S)) / z
    up = dg_delta_upper(sigma, S, eps)
    assert exact <= up <= exact * (1 + 1e-5)


def test_equal_discrete_releases_are_merged_in_their_order_without_their_slow_hash(monkeypatch):
    """discrete.grouped (a curve's ~100 releases, and every composition's): equal releases (other
    objects, the same fields) merged with their multiplicities added, sorted as the releases
    compare, the first of each kept; counted by their fields, not the dataclass's hash, which
    builds a tuple at each call (~3 times the time)."""
    from dpplanner.engine.mechanisms.discrete import DiscreteRelease, grouped

    params = [("laplace", 2.5, 1), ("gaussian", 3.0, 2), ("laplace", 1.5, 1), ("laplace", 2.5, 2), ("gaussian", 3.0, 2)]
    releases = [DiscreteRelease(*f) for f in params * 3]
    mult = list(range(1, len(releases) + 1))
    want: dict = {}
    for r, k in zip(releases, mult):
        want[r] = want.get(r, 0) + k
    hashed = []
    real = DiscreteRelease.__hash__
    monkeypatch.setattr(DiscreteRelease, "__hash__", lambda self: hashed.append(1) or real(self))
    rel, counts = grouped(releases, mult)
    assert hashed == []
    assert list(rel) == sorted(want) and list(counts) == [want[r] for r in sorted(want)]
    assert all(any(r is x for x in releases[:5]) for r in rel)      # (the first of each kept)
