"""Discrete noise between two continuous noises: closed-form twins where the lattice is fine.

A pair (P, Q) is dominated by (P', Q') when delta_{P,Q}(x) <= delta_{P',Q'}(x) for every real x
(then it is a post-processing of it). Composition is linear in each release's profile:
delta_{A (x) B}(eps) = E_b[delta_A(eps - b)], b the loss of B under its P (b = +inf counts
delta_A(-inf) = 1). So a release whose profile lies between delta_lo(x) - tau_lo and
delta_hi(x) + tau_up at every x composes, with anything, to a total between the compositions of
the continuous twins, minus or plus tau: the bracket reads its upper twin at delta_bar - tau_up
and its lower twin at delta_bar + tau_lo (composition.twins).

Discrete Laplace, scale t, shift S, a = S / t, q = e^{-1/t}. For |eps| < a the profile is exactly
1 - q^c (q^u + q^{1-u}) / (1 + q), with c = (S - eps t) / 2 the threshold on the noise and
u = c - (ceil(c) - 1) in (0, 1]; the continuous Laplace with the same a has 1 - q^c. So

    delta_DL - delta_Lap(a) = q^c (1 - q^u)(1 - q^{1-u}) / (1 + q)  in  [0, q^c (1 - sqrt q)^2 / (1 + q)],

and outside (-a, a) both are 1 - e^eps or 0. Lap(a + Delta) has 1 - q^c e^{-Delta/2}: with
Delta = 2 log cosh(1/(2t)) it covers the largest difference. Hence, with no tau,

    Lap(S / t)  <=  DL(t, S)  <=  Lap(S / t + 2 log cosh(1/(2t))),

which for a lattice-sized shift (S ~ 2^40, t ~ 2^40 / eps) is the continuous Laplace to 1e-30.

Discrete Gaussian, sigma, shift S, mu = S / sigma, l = S / sigma^2: with f(y) = e^{-y^2/2 sigma^2},
h(y) = f(y) - e^eps f(y - S) (> 0 iff y < c = S/2 - eps sigma^2 / S, a = c / sigma),

    delta_DG(eps) = sum_{x < c} h(x) / Z,   delta_G(mu; eps) = int_{-inf}^c h / (sqrt(2 pi) sigma),

and Z = sqrt(2 pi) sigma theta, 1 <= theta <= 1 + 3 e^{-2 pi^2 sigma^2}. Euler-Maclaurin at the
half-integer t = ceil(c) - 1/2 (B_2k(1/2) = -1/12, 7/240, -31/1344; remainder with max|B_6| / 6!)
and h(c + v) = -kappa g(v) q(v), kappa = l f(c), g(v) = e^{-a v / sigma - v^2 / 2 sigma^2},
q(v) = expm1(l v) / l = v + r-part, give with d = c - t in (-1/2, 1/2]

    E = sum - int = kappa (1/24 - d^2/2 + xi) + R6,   |xi| <= C_LOCAL M(a),
    |R6| / (sqrt(2 pi) sigma) <= (E|He6(Z)| + e^{l/2} E|He6(Z - mu)|) / (30240 sigma^6),

where r(v) = g(v) q(v) - v has a double zero at 0 and |r| <= M(a) on |z| <= 3/2 (Schwarz for its
integral, Cauchy on radius 1 for r', r''', r^(5): 1/54 + 1/24 + 7/960 + 31/8064 <= C_LOCAL), and
M(a) = gamma Q1 + Q2 with gamma = e^{3|a|/2 sigma + 9/8 sigma^2} - 1, Q1 = (e^{3l/2} - 1)/l,
Q2 = (e^{3l/2} - 1 - 3l/2)/l. E|He6(Z - mu)| <= sqrt(sum_k C(6,k)^2 mu^{12-2k} k!) (Appell).
kappa / (sqrt(2 pi) sigma) = (mu / sigma^2) phi(a), and d delta_G / d mu = phi(a) (Balle-Wang):
* upper: from mu to mu(1 + s), a moves towards 0 or by at most s mu, so phi stays above
  phi(a) e^{-mu^2 s (1 + s)} and delta_G(mu(1 + s)) - delta_G(mu) >= mu s e^{-mu^2 s(1+s)} phi(a);
  s_hi covers (1/24 + C_LOCAL M(A)) / sigma^2 for |a| <= A, and tau_up the rest (|a| > A, where
  phi(a) e^{3|a|/2 sigma} is largest at A) plus R6;
* lower: by the symmetry delta(eps) = 1 - e^eps + e^eps delta(-eps) (both pairs are symmetric)
  only eps >= 0 (a <= mu/2) is needed; from mu down to mu(1 - s), |a| grows by at most
  D = s (A + mu) / (1 - s) while |a| <= A, so s_lo covers (1/12 + C_LOCAL M(A)) / sigma^2 with
  the factor e^{-D (2A + D) / 2}; tau_lo the rest, R6 and theta.
Each constant is computed in doubles and then raised by a relative margin far above its rounding.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

from ..memo import Memo
from ..optimal.atoms import U
from .discrete_laplace import directed_ratio

#: Below this sigma the discrete Gaussian keeps its lattice twins (the sandwich's terms grow as
#: 1/sigma^2 and its remainder as 1/sigma^6; nothing in the bounds needs more than theta's
#: e^{-2 pi^2 sigma^2} below _THETA, and they are checked against exact sums from here on). Where
#: a twin is wider than its share of eta (choose_twins), the release stays discrete anyway.
TWIN_SIGMA_MIN = 16.0
#: The calibration takes the twin from this sigma on (discrete_gaussian.py; the sigmas a plan and
#: its release script use are those it has always given).
SIGMA_MIN = 64.0
#: |a| beyond which the local terms are counted in tau: phi(14) ~ 8e-44.
A = 14.0
C_LOCAL = 0.0714
#: Relative margin on every computed constant (their roundings are ~1e-15).
SAFE = 1 + 1e-9
_SQRT_2PI = math.sqrt(2 * math.pi)
_E_ABS_HE6 = math.sqrt(720.0)
#: theta - 1 for sigma >= TWIN_SIGMA_MIN (e^{-2 pi^2 16^2} = e^{-5053} is far below this).
_THETA = 1e-300


def laplace_twins(t: float, shift: int) -> tuple[float, float]:
    """(a_lo, a_hi): Laplace(a_lo) <= DiscreteLaplace(t, S) <= Laplace(a_hi) as pairs, doubles
    with a_lo <= S / t and a_hi >= S / t + 2 log cosh(1/(2t)) (module docstring)."""
    a_lo = directed_ratio(shift, t, False)
    a_up = directed_ratio(shift, t, True)
    x = 0.5 / t
    # 2 log cosh x = x^2 - x^4 / 6 + ... <= x^2 for every x; log1p(e^-2x) + x - log 2 otherwise
    extra = x * x if x < 1e-4 else 2.0 * (x + math.log1p(math.exp(-2.0 * x)) - math.log(2.0))
    return a_lo, (a_up + extra * SAFE) * (1 + 4 * U)


@dataclass(frozen=True)
class GaussianTwins:
    """Continuous twins of a discrete Gaussian: multipliers m_up <= sigma / (S (1 + s_hi)) (the
    upper twin, less noise) and m_lo >= sigma / (S (1 - s_lo)); tau_up, tau_lo its slacks."""

    m_up: float
    m_lo: float
    tau_up: float
    tau_lo: float

    @property
    def width(self) -> float:
        """mu_hi - mu_lo: about what the twins add to a bracket's width per release."""
        return 1.0 / self.m_up - 1.0 / self.m_lo


def _m_bound(sigma: float, S: int) -> float:
    """M(A) of the module docstring, rounded up."""
    l = S / (sigma * sigma)
    r = 1.5
    gamma = math.expm1(A * r / sigma + r * r / (2 * sigma * sigma))
    q1 = math.expm1(l * r) / l
    q2 = (math.expm1(l * r) - l * r) / l if l * r > 1e-4 else l * r * r * (0.5 + l * r / 6)  # (no cancellation)
    return (gamma * q1 + q2) * SAFE


def _r6(sigma: float, S: int) -> float:
    """|R6| / (sqrt(2 pi) sigma), rounded up."""
    mu = S / sigma
    l = mu / sigma
    m2 = mu * mu
    # E He6(Z - mu)^2 = sum_k C(6, k)^2 mu^(12 - 2k) k!
    second = sum(math.comb(6, k) ** 2 * m2 ** (6 - k) * math.factorial(k) for k in range(7))
    return (_E_ABS_HE6 + math.exp(l / 2) * math.sqrt(second)) / (30240.0 * sigma ** 6) * SAFE


def _phi(x: float) -> float:
    return math.exp(-0.5 * x * x) / _SQRT_2PI


def _shift_up(k: float, mu: float) -> Optional[float]:
    """s with s e^{-mu^2 s (1 + s)} >= k (None if mu is too large for a small s)."""
    s1 = 2.0 * k
    s = k * math.exp(mu * mu * s1 * (1 + s1)) * SAFE
    return s if s <= s1 else None


def _shift_down(k: float, mu: float) -> Optional[float]:
    """s with s e^{-D (2A + D) / 2} >= k, D = s (A + mu) / (1 - s) (None if none small)."""
    s1 = 2.0 * k
    if s1 >= 0.5:
        return None
    d1 = s1 * (A + mu) / (1 - s1)
    s = k * math.exp(d1 * (2 * A + d1) / 2) * SAFE
    return s if s <= s1 else None


def upper_terms(sigma: float, shift: int) -> Optional[tuple[float, float]]:
    """(s_hi, tau_up): DiscreteGaussian(sigma, S) <= Gaussian(mu (1 + s_hi)) + tau_up at every eps,
    mu = S / sigma; None below TWIN_SIGMA_MIN. Both only shrink as sigma grows (S fixed), so the terms
    at a smaller sigma hold at a larger one."""
    if not sigma >= TWIN_SIGMA_MIN:
        return None
    mu = shift / sigma                 # within an ulp: every use below has a relative margin
    m_a = _m_bound(sigma, shift)
    s_hi = _shift_up((1 / 24 + C_LOCAL * m_a) / (sigma * sigma) * SAFE, mu * SAFE)
    if s_hi is None:
        return None
    local = mu / (sigma * sigma) * _phi(A) * SAFE
    return s_hi, (local * (1 / 24 + C_LOCAL * m_a) + _r6(sigma, shift)) * SAFE


#: Twins made: (sigma, shift) -> (GaussianTwins or None,). Every composition of a plan chooses its
#: twins again (choose_twins: an edit's allocation and curve ~40 times over the same releases).
_TWINS = Memo(1 << 12)


def gaussian_twins(sigma: float, shift: int) -> Optional[GaussianTwins]:
    """The continuous twins of DiscreteGaussian(sigma, shift), or None where sigma < TWIN_SIGMA_MIN or
    the shifts would not be small (module docstring)."""
    key = (float(sigma), int(shift))
    known = _TWINS.get(key)
    if known is None:
        known = (_gaussian_twins(*key),)
        _TWINS.put(key, known)
    return known[0]


def _gaussian_twins(sigma: float, shift: int) -> Optional[GaussianTwins]:
    up = upper_terms(sigma, shift)
    if up is None:
        return None
    s_hi, tau_up = up
    S = shift
    mu = S / sigma
    m_a = _m_bound(sigma, S)
    s_lo = _shift_down((1 / 12 + C_LOCAL * m_a) / (sigma * sigma) * SAFE, mu * SAFE)
    if s_lo is None:
        return None
    local = mu / (sigma * sigma) * _phi(A) * SAFE
    tau_lo = (local * (1 / 12 + C_LOCAL * m_a) + _r6(sigma, S) + _THETA) * SAFE
    base = sigma / S
    m_up = base / (1 + s_hi) * (1 - 8 * U)
    m_lo = base / (1 - s_lo) * (1 + 8 * U)
    return GaussianTwins(m_up, m_lo, tau_up, tau_lo)
