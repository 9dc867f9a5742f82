"""Rigorous bounds on sums of f(x) = exp(-x^2 / (2 sigma^2)) over runs of integers.

Everything is normalised by sqrt(2 pi) sigma, the integral of f; the normaliser of the discrete
Gaussian is Z = sqrt(2 pi) sigma theta with theta = sum_k exp(-2 pi^2 sigma^2 k^2) (Poisson
summation, the Jacobi theta identity), so a probability is a normalised sum divided by theta.

* Small sigma (<= DIRECT_SIGMA): the terms are summed one by one (each exp has a relative error
  ~ U (z^2 + 2), sums of non-negative terms gamma_n), and theta is bounded by its series.
* Large sigma: Euler-Maclaurin to the second Bernoulli term,

      sum_{x=a}^{b} f(x) = int_a^b f + (f(a) + f(b)) / 2 + (f'(b) - f'(a)) / 12 + R,

  R = -int_a^b P_4(x) f^(4)(x) dx with |P_4| <= 2 zeta(4) / (2 pi)^4 = 1/720 (the periodic
  Bernoulli function), so |R| <= TV(f^(3) on [a, b]) / 720: the total variation of f^(3) is read
  off its values at a, b and its extrema (the roots of He_4, z^2 = 3 +- sqrt 6). Relative to the
  run's mass that is about (z / sigma)^4 / 720 (z = x / sigma): 1e-14 at sigma = DIRECT_SIGMA,
  |z| = 10. The
  integral is Phi(b / sigma) - Phi(a / sigma), evaluated in log space on each side of 0
  (scipy's log_ndtr, assumed accurate to LOG_NDTR_ULPS ulps of |result| + 1 as in gaussian.py,
  and d log Phi / dz <= |z| + 1 for z <= 0 turning the arguments' rounding into an error).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..optimal.atoms import U
from .gaussian import LOG_NDTR_ULPS

#: Up to this sigma, sums are taken term by term.
DIRECT_SIGMA = 1024.0
#: Sums never reach past Z_MAX sigma: Phi(-38) < 3e-316, below every delta a plan can ask for.
Z_MAX = 38.0
_SQRT_2PI = math.sqrt(2 * math.pi)
_LOG_HALF = math.log(0.5)


def theta_bounds(sigma: float) -> tuple[float, float]:
    """(lower, upper) bounds on theta = Z / (sqrt(2 pi) sigma) >= 1."""
    c = 2 * math.pi * math.pi * sigma * sigma
    if c > 800:                     # e^{-c} < 1e-347: theta = 1 to the last bit
        return 1.0, 1.0 + 2 * U
    k = np.arange(1, 64, dtype=float)
    terms = np.exp(-c * k * k)
    s = 1.0 + 2.0 * math.fsum(terms.tolist())
    tail = 2.0 * math.exp(-c * 64 * 64) / -math.expm1(-c)   # k >= 64, a geometric bound
    return s * (1 - 8 * U), (s + tail) * (1 + 8 * U + 64 * U * c)


def tail_z(tail: float) -> float:
    """A z with Phi(-z) <= tail / 2 (at most Z_MAX; at least 4)."""
    if tail <= 0 or not math.isfinite(tail):
        return Z_MAX
    z = 4.0
    while z < Z_MAX and float(log_ndtr(-z)) > math.log(tail / 2) - 1e-9:
        z += 0.5
    return min(z, Z_MAX)


def upper_tail(x: float, sigma: float) -> float:
    """An upper bound on sum_{y <= x - 1} f(y) / (sqrt(2 pi) sigma) for x <= 0 (f increases there,
    so f(y) <= int_y^{y+1} f): Phi(x / sigma), rounded up."""
    z = x / sigma
    return float(math.exp(float(log_ndtr(z)) + LOG_NDTR_ULPS * U * (abs(float(log_ndtr(z))) + 1)
                          + (abs(z) + 1) * 4 * U * abs(z))) * (1 + 8 * U)


def _g(z: np.ndarray, sigma: float) -> np.ndarray:
    """f'(sigma z) / (sqrt(2 pi) sigma), i.e. -z phi(z) / sigma^2."""
    return -z * np.exp(-0.5 * z * z) / (_SQRT_2PI * sigma * sigma)


def _g3(z: np.ndarray, sigma: float) -> np.ndarray:
    """f^(3)(sigma z) / (sqrt(2 pi) sigma), i.e. -(z^3 - 3 z) phi(z) / sigma^4."""
    return -(z * z * z - 3 * z) * np.exp(-0.5 * z * z) / (_SQRT_2PI * sigma ** 4)


#: Where f^(3) has its extrema (the roots of He_4(z) = z^4 - 6 z^2 + 3), ascending.
_G3_EXTREMA = [-math.sqrt(3 + math.sqrt(6)), -math.sqrt(3 - math.sqrt(6)),
               math.sqrt(3 - math.sqrt(6)), math.sqrt(3 + math.sqrt(6))]


def _left_diff(za: np.ndarray, zb: np.ndarray, dza: np.ndarray, dzb: np.ndarray):
    """(lower, upper) bounds on Phi(zb) - Phi(za) for za <= zb <= 0 (za may be -inf)."""
    with np.errstate(invalid="ignore", divide="ignore", over="ignore", under="ignore"):
        la, lb = log_ndtr(za), log_ndtr(zb)
        ea = LOG_NDTR_ULPS * U * (np.abs(la) + 1) + (np.abs(za) + 1) * dza
        eb = LOG_NDTR_ULPS * U * (np.abs(lb) + 1) + (np.abs(zb) + 1) * dzb
        d = la - lb
        ed = np.where(np.isfinite(za), ea + eb + 2 * U * np.abs(d), 0.0)
        hi = np.exp(lb + eb) * -np.expm1(d - ed) * (1 + 8 * U)
        lo = np.exp(lb - eb) * -np.expm1(np.minimum(d + ed, 0.0)) * (1 - 8 * U)
    hi = np.where(np.isnan(hi), np.exp(lb + eb) * (1 + 8 * U), hi)     # (za = -inf)
    lo = np.where(np.isnan(lo), np.exp(lb - eb) * (1 - 8 * U), lo)
    return np.maximum(lo, 0.0), hi


def integral_bounds(a: np.ndarray, b: np.ndarray, sigma: float):
    """(lower, upper) bounds on Phi(b / sigma) - Phi(a / sigma) for a <= b (a may be -inf, b +inf)."""
    za, zb = a / sigma, b / sigma               # two roundings each (the int -> float, the division)
    dza, dzb = 2 * U * np.abs(za) + 1e-300, 2 * U * np.abs(zb) + 1e-300
    zero = np.zeros_like(za)
    # the part below 0, [za, min(zb, 0)], and the part above 0, mirrored: [-zb, -max(za, 0)]
    l1, h1 = _left_diff(za, np.minimum(zb, 0.0), dza, np.where(zb < 0, dzb, 0.0))
    l2, h2 = _left_diff(-zb, -np.maximum(za, 0.0), dzb, np.where(za > 0, dza, 0.0))
    l1, h1 = np.where(za < 0, l1, zero), np.where(za < 0, h1, zero)
    l2, h2 = np.where(zb > 0, l2, zero), np.where(zb > 0, h2, zero)
    return (l1 + l2) * (1 - 2 * U), (h1 + h2) * (1 + 2 * U)


def run_sum_bounds(a: np.ndarray, b: np.ndarray, sigma: float):
    """(lower, upper) bounds on sum_{x=a}^{b} f(x) / (sqrt(2 pi) sigma) for integer arrays a <= b
    (a = -inf allowed: a half-line), by Euler-Maclaurin (module docstring). For sigma > DIRECT_SIGMA."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    il, ih = integral_bounds(a, b, sigma)
    za, zb = a / sigma, b / sigma
    with np.errstate(under="ignore", invalid="ignore"):
        fa = np.where(np.isfinite(za), np.exp(-0.5 * za * za), 0.0) / (_SQRT_2PI * sigma)
        fb = np.exp(-0.5 * zb * zb) / (_SQRT_2PI * sigma)
        f_err = 8 * U * (np.where(np.isfinite(za), za * za, 0.0) + zb * zb + 4)
        ends = 0.5 * (fa + fb)
        za_f = np.where(np.isfinite(za), za, -1e100)
        slope = (_g(zb, sigma) - np.where(np.isfinite(za), _g(za_f, sigma), 0.0)) / 12
        # TV of f^(3) on [a, b], through its extrema inside (clipped points collapse onto a or b)
        pts = [za_f] + [np.clip(c, za_f, zb) for c in _G3_EXTREMA] + [zb]
        vals = [np.where(np.isfinite(za), _g3(za_f, sigma), 0.0)] + [_g3(q, sigma) for q in pts[1:]]
        tv = sum(np.abs(v1 - v0) for v0, v1 in zip(vals, vals[1:])) * 1.01 + 1e-300
        margin = tv / 720 + (ends + np.abs(slope)) * f_err
    lo = il + ends + slope - margin
    hi = ih + ends + slope + margin
    return np.maximum(lo, 0.0), hi


def direct_terms(x: np.ndarray, sigma: float):
    """f(x) / (sqrt(2 pi) sigma) term by term, and a relative error bound that holds for all."""
    z = x / sigma
    with np.errstate(under="ignore"):
        vals = np.exp(-0.5 * z * z) / (_SQRT_2PI * sigma)
    zmax = float(np.max(np.abs(z))) if z.size else 0.0
    return vals, 4 * U * (zmax * zmax + 4)


def theta_direct(vals: np.ndarray, rel: float, X: int, sigma: float) -> tuple[float, float]:
    """Bounds on theta from the terms |x| <= X (direct_terms, relative error ``rel`` each) and the
    two tails beyond."""
    s = math.fsum(vals.tolist())
    r = rel + 2 * U
    return s * (1 - r), (s * (1 + r) + 2 * upper_tail(-X, sigma)) * (1 + 4 * U)
