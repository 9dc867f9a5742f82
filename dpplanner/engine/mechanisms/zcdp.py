"""zCDP accounting (what OpenDP and Tumult certify) and the Canonne-Kamath-Steinke conversion.

A Gaussian with multiplier m is 1/(2 m^2)-zCDP and a pure eps-DP release is eps^2/2-zCDP (Bun &
Steinke 2016, Props 1.6 and 1.4); an (eps, delta)-DP release is delta-approximately eps^2/2-zCDP,
so its delta is added to the total. rho-zCDP implies (eps, delta)-DP for every alpha > 1 with

    eps(alpha) = alpha rho + log1p(-1/alpha) - (log delta + log alpha) / (alpha - 1)

(CKS20 Prop 12 / Cor 13, formulas.md §7): any alpha gives a valid eps, so an optimiser's alpha is
safe as long as the final evaluation is rounded up.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import round_up

#: Golden-section steps on log(alpha - 1) (the objective is convex in alpha); any alpha is valid.
#: 48 steps shrink [-12, 40] to ~5e-9, where eps is within ~1e-13 of its least value (100 steps
#: moved it by 3e-13 at most, over rho in [1e-8, 1e3] and delta in [1e-15, 0.5]).
_STEPS = 48
_GOLD = (math.sqrt(5.0) - 1.0) / 2.0


def cks_eps_at(rho, delta, alpha):
    """eps(alpha) of the CKS conversion, evaluated in floating point (not yet rounded)."""
    rho, delta, alpha = (np.asarray(a, dtype=float) for a in (rho, delta, alpha))
    return alpha * rho + np.log1p(-1.0 / alpha) - (np.log(delta) + np.log(alpha)) / (alpha - 1.0)


def cks_alpha(rho, delta):
    """A near-optimal alpha for each (rho, delta): golden section on t = log(alpha - 1) in [-12, 40]
    (alpha in (1 + 6e-6, 2e17); the objective is convex in alpha), vectorised over all entries."""
    rho, delta = np.broadcast_arrays(np.asarray(rho, dtype=float), np.asarray(delta, dtype=float))

    def f(t):
        return cks_eps_at(rho, delta, 1.0 + np.exp(t))

    a = np.full(rho.shape, -12.0)
    b = np.full(rho.shape, 40.0)
    c = b - _GOLD * (b - a)
    d = a + _GOLD * (b - a)
    fc, fd = f(c), f(d)
    for _ in range(_STEPS):
        left = fc < fd
        b = np.where(left, d, b)
        a = np.where(left, a, c)
        c_new = np.where(left, b - _GOLD * (b - a), d)
        d_new = np.where(left, c, a + _GOLD * (b - a))
        c, d = c_new, d_new
        fc, fd = f(c), f(d)
    return 1.0 + np.exp(np.where(fc < fd, c, d))


def cks_epsilon(rho, delta):
    """The CKS eps for rho-zCDP at delta (arrays broadcast), 0 where rho = 0: the formula at
    cks_alpha, rounded up with a margin for its ~10 roundings (CLOSED_FORM_MARGIN in numerics)."""
    rho, delta = np.broadcast_arrays(np.asarray(rho, dtype=float), np.asarray(delta, dtype=float))
    eps = round_up(np.maximum(cks_eps_at(rho, delta, cks_alpha(rho, delta)), 0.0))
    eps = np.where(rho > 0, eps, 0.0)
    return float(eps) if np.ndim(eps) == 0 else eps


def rho_gaussian(m):
    """1/(2 m^2), rounded up (three roundings: 4 ulps of margin)."""
    m = np.asarray(m, dtype=float)
    return 0.5 / (m * m) * (1 + 8 * 2.0 ** -53)


def rho_pure(eps):
    """eps^2/2, rounded up."""
    eps = np.asarray(eps, dtype=float)
    return 0.5 * eps * eps * (1 + 8 * 2.0 ** -53)


def sum_up(values) -> float:
    """A sum of non-negative terms, rounded up (fsum is correctly rounded: one ulp covers it)."""
    s = math.fsum(np.asarray(values, dtype=float).tolist())
    return math.nextafter(s, math.inf) if s > 0 else s
