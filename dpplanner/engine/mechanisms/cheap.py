"""Cheap valid upper bounds on the epsilon of the releases a bracket composes (issue 27).

Once the EpsDelta deltas are moved into delta_bar (bracket.py), what is left is a composition of
pure releases (Laplace with a = 1/m, randomized response RR(eps)) and Gaussians (one, mu). Each is
also covered by theorems that cost microseconds, and the bracket's upper end never exceeds them:

* zCDP: Laplace(a) is a-DP, hence a^2/2-zCDP, RR(eps) eps^2/2-zCDP, the Gaussian mu^2/2-zCDP
  (Bun & Steinke 2016, Props 1.4 and 1.6); rho adds up, and CKS20 converts it at delta_bar: the
  finite part's delta at that epsilon is at most delta_bar, which is what the bracket certifies;
* without Gaussians: the pure total (basic composition, exact at delta 0) and KOV Thm 3.5 (b) and
  (c) of the pure releases at delta~ = delta_bar (formulas.md §2.4).

Discrete releases count with their own rho (discrete.DiscreteRelease.rho) and, discrete Laplace
being pure DP, with their epsilon in the pure bounds.

Every parameter is the upper twin's (a_up >= 1/m, mu_up), so the bounds hold for the exact releases.

And a cheap certified LOWER bound: a composition's delta at every epsilon is at least that of any
one of its parts (dropping the others is a post-processing), so the largest of the single releases'
exact epsilons (closed forms below, lower twins' parameters, read at delta_bar_hi) is one.
"""

from __future__ import annotations

import math

import numpy as np

from ..advanced import kov35_b, kov35_c
from ..stats import eps_tanh, squares
from ..numerics import round_down, round_up
from .gaussian_inverse import epsilon_bracket
from .zcdp import cks_epsilon, rho_pure, sum_up

U = 2.0 ** -53


def cheap_upper(r) -> tuple[float, str]:
    """(the least cheap bound, its name) for Twins ``r`` at r.delta_bar (inf where none applies)."""
    if r.delta_bar <= 0:
        return math.inf, "none"
    # the discrete releases: their own rho (eps^2/2, S^2/(2 sigma^2)); discrete Laplace is pure too
    d_pure = [d.pure(True) for d in r.disc if d.kind == "laplace"]
    d_mult = [m for d, m in zip(r.disc, r.disc_mult) if d.kind == "laplace"]
    pure = np.concatenate([r.a_up, r.rr_eps, np.array(d_pure, dtype=float)])
    mult = np.concatenate([r.up_mult, r.rr_mult, np.array(d_mult, dtype=float)]).astype(float)
    best, name = math.inf, "none"
    with np.errstate(over="ignore"):    # (epsilons ~ 1e200: rho = inf, no bound)
        rho_terms = (rho_pure(pure) * mult).tolist() + [float(rho_pure(r.mu_up))]
        rho_terms += [d.rho() * m for d, m in zip(r.disc, r.disc_mult) if d.kind != "laplace"]
        sum_sq = sum_up(squares(pure) * (1 + 4 * U) * mult)
    rho = sum_up(rho_terms)
    if math.isfinite(rho):
        best, name = (float(cks_epsilon(rho, r.delta_bar)), "zCDP") if rho > 0 else (0.0, "zCDP")
    if r.unbounded or pure.size == 0:
        return best, name
    sum_tanh = sum_up(eps_tanh(pure) * (1 + 8 * U) * mult)
    with np.errstate(over="ignore", invalid="ignore"):
        for label, value in (("KOV Thm 3.5 (b)", kov35_b(sum_tanh, sum_sq, r.delta_bar)),
                             ("KOV Thm 3.5 (c)", kov35_c(sum_tanh, sum_sq, r.delta_bar))):
            value = float(value)
            if value < best:        # (nan: not applicable, never taken)
                best, name = value, label
    return best, name


def laplace_root(a: float, delta_bar: float, upper: bool) -> float:
    """The exact epsilon of one Laplace release with this a at delta_bar, rounded up (or down):
    delta(x) = 1 - e^{(x - a)/2} for 0 <= x <= a (kernels.py), so it is max(0, a + 2 log(1 - delta_bar)).
    log1p is within an ulp or two: 4 U of it covers that, round_up/round_down the sum."""
    if not delta_bar < 1.0:
        return 0.0
    x = a + 2.0 * math.log1p(-delta_bar) * ((1 - 4 * U) if upper else (1 + 4 * U))
    return max(0.0, float(round_up(x) if upper else round_down(x)))


def rr_root_lower(eps: float, delta_bar: float) -> float:
    """A lower bound on the exact epsilon of RR(eps) alone: delta(x) = (e^eps - e^x) / (1 + e^eps) for
    0 <= x <= eps, so the root is eps + log(1 - delta_bar (1 + e^-eps)) (0 if that is negative)."""
    inner = delta_bar * (1.0 + math.exp(-eps)) * (1 + 4 * U)        # rounded up: the log falls
    if not inner < 1.0:
        return 0.0
    return max(0.0, float(round_down(eps + math.log1p(-inner) * (1 + 4 * U))))


def cheap_lower(r) -> float:
    """The largest single release's exact epsilon at r.delta_bar_hi, rounded down (0 if none)."""
    best = _pure_lower(r)
    if _has_gaussian(r):
        lo, _hi = epsilon_bracket(r.mu_lo, math.log(r.delta_bar_hi), False, 1e-15)
        best = max(best, float(round_down(lo)))
    return best


def cheap_lower_ceiling(r) -> float:
    """At least cheap_lower(r), without its Gaussian root (a search of ~16 evaluations): that root
    is below mu^2/2 + mu sqrt(2 ln(1/delta)), where the Gaussian's tail bound on delta is delta/2
    (the search starts there), taken 1e-9 higher for its rounding."""
    best = _pure_lower(r)
    if _has_gaussian(r):
        mu = r.mu_lo
        best = max(best, (mu * mu / 2 + mu * math.sqrt(2 * -math.log(r.delta_bar_hi))) * (1 + 1e-9))
    return best


def _has_gaussian(r) -> bool:
    return 0.0 < r.delta_bar_hi < 1.0 and r.mu_lo > 0 and math.isfinite(r.mu_lo)


def _pure_lower(r) -> float:
    """cheap_lower's Laplace and RR releases (closed forms)."""
    db = r.delta_bar_hi
    if not 0.0 < db < 1.0:
        return 0.0
    best = 0.0
    if r.a_lo.size:
        best = max(best, laplace_root(float(np.max(r.a_lo)), db, False))
    if r.rr_eps.size:
        best = max(best, rr_root_lower(float(np.max(r.rr_eps)), db))
    return best
