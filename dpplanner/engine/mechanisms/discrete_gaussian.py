"""The discrete Gaussian mechanism: its exact privacy profile, calibration and lattice loss.

Noise N_Z(0, sigma^2): P(x) = f(x) / Z on the integers, f(x) = exp(-x^2 / (2 sigma^2)). Against
the noise shifted by S the loss is L(x) = log f(x) / f(x - S) = l (S/2 - x), l = S / sigma^2 (Z
cancels), with x ~ N_Z(0, sigma^2): a discrete distribution on a grid of step l, unbounded both
ways. Its delta at eps is sum over x with L(x) > eps of P(x) (1 - e^{eps - L(x)}); all sums of f
are bounded rigorously by gauss_sums.py (term by term for small sigma, Euler-Maclaurin with an
explicit remainder for large sigma), Z through the Jacobi theta identity.

Its lattice twins are built in discrete_gaussian_kernel.py.
"""

from __future__ import annotations

import math

import numpy as np

from ..memo import Memo
from ..optimal.atoms import TINY, U
from .discrete_objects import MAX_SIGMA, check_scale, check_shift
from .gauss_sums import (DIRECT_SIGMA, direct_terms, run_sum_bounds, tail_z, theta_bounds, theta_direct,
                         upper_tail)
from .gaussian import gaussian_multiplier


def dg_delta_upper(sigma: float, S: int, eps: float, tail: float = 1e-300) -> float:
    """An upper bound on delta(eps) of one discrete Gaussian release (sigma, shift S); sums stop
    where the Gaussian's tails are below ``tail`` (their bound is added)."""
    X = math.ceil(tail_z(tail) * sigma) + 1
    q = sigma * sigma / S
    c = S / 2.0 - eps * q                     # L(x) > eps iff x < c (exactly)
    e_c = 8 * U * (S / 2.0 + abs(eps) * q) + TINY
    x_max = min(math.ceil(c + e_c), X)         # every x with a positive term is <= x_max
    tails = upper_tail(-X, sigma)
    if sigma < 0.5:     # (below, the theta series converges slowly: sum the terms themselves)
        vals, rel = direct_terms(np.arange(-X, X + 1, dtype=float), sigma)
        theta_lo = theta_direct(vals, rel, X, sigma)[0]
    else:
        theta_lo = theta_bounds(sigma)[0]
    if x_max < -X:
        return min(1.0, tails / theta_lo * (1 + 4 * U))
    if sigma <= DIRECT_SIGMA:
        x = np.arange(-X, x_max + 1, dtype=float)
        vals, rel = direct_terms(x, sigma)
        loss = (S / 2.0 - x) * (S / (sigma * sigma))
        y = eps - loss
        e_y = 8 * U * (np.abs(loss) + abs(eps)) + TINY
        with np.errstate(over="ignore"):
            share = np.maximum(-np.expm1(y - e_y), 0.0)
        total = float(np.sum(vals * share)) * (1 + rel + 1.01 * (x.size + 4) * U)
        return min(1.0, (total + tails) / theta_lo * (1 + 4 * U))
    x_min = math.ceil(c - e_c) - 1
    if x_max - x_min > 4:      # x* is not pinned down: delta <= P(L > eps) <= P(x <= x_max - 1)
        hi = float(run_sum_bounds(np.array([-np.inf]), np.array([x_max - 1.0]), sigma)[1][0])
        return min(1.0, hi / theta_lo * (1 + 4 * U))
    cands = np.arange(x_min, x_max, dtype=float)      # x* is one of these (x* = ceil(c) - 1)
    _, g_hi = run_sum_bounds(np.full(cands.size, -np.inf), cands, sigma)
    g_lo, _ = run_sum_bounds(np.full(cands.size, -np.inf), cands - S, sigma)
    best = float(np.max(g_hi - math.exp(eps) * (1 - 4 * U) * g_lo))
    return min(1.0, max(best, 0.0) / theta_lo * (1 + 4 * U))


#: Calibrations made: (eps, delta, S) -> sigma.
_SIGMAS = Memo(1 << 12)


def discrete_gaussian_sigma(epsilon, delta, shift=1) -> float:
    """The sigma (lattice units) at which discrete Gaussian noise with shift S is (eps, delta)-DP
    by its exact privacy profile: the least such sigma to ~1e-12 relative, rounded up (the value
    returned is certified by dg_delta_upper). The one home of this calibration."""
    S = check_shift(shift, "discrete Gaussian")
    eps, d = float(epsilon), float(delta)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon = {epsilon!r} is not allowed; discrete Gaussian noise needs a finite epsilon > 0")
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta = {delta!r} is not allowed; discrete Gaussian noise needs 0 < delta < 1")
    key = (eps, d, S)
    known = _SIGMAS.get(key)
    if known is not None:
        return known

    def g(sig: float) -> float:          # log delta_up - log delta: <= 0 where sig is enough noise
        v = dg_delta_upper(sig, S, eps, 1e-12 * d)   # (tails beyond Phi(-z) <= 1e-12 delta: bounded)
        return math.log(v) - math.log(d) if v > 0 else -math.inf

    floor, ceiling = S * 2.0 ** -10, min(S * 2.0 ** 64, MAX_SIGMA)
    guess = min(max(S * gaussian_multiplier(eps, d), floor), ceiling)
    # the continuous Gaussian's sigma is within ~1e-3 of this one once sigma >~ 2: start there
    factor = 1.001
    lo, hi = max(guess / factor, floor), min(guess * factor, ceiling)
    g_lo, g_hi = g(lo), g(hi)
    for _ in range(60):
        if g_lo > 0 or lo <= floor:
            break
        hi, g_hi, factor = lo, g_lo, factor ** 4
        lo = max(lo / factor, floor)
        g_lo = g(lo)
    for _ in range(60):
        if g_hi <= 0 or hi >= ceiling:
            break
        lo, g_lo, factor = hi, g_hi, factor ** 4
        hi = min(hi * factor, ceiling)
        g_hi = g(hi)
    if not g_hi <= 0:
        raise ValueError(f"epsilon = {eps!r} with delta = {d!r} and shift {S} needs a discrete Gaussian sigma "
                         f"above {ceiling:.6g}, outside what the engine accounts")
    if g_lo <= 0:       # (only at the floor: that little noise is already enough)
        hi = lo
    # false position on g (smooth in sigma), the end kept twice weighted down (Illinois), and a
    # halving every third step: lo never fits, hi always does
    kept = 0
    for it in range(200):
        if hi - lo <= 1e-12 * hi:
            break
        x = 0.5 * (lo + hi)
        if it % 3 != 2 and math.isfinite(g_lo) and math.isfinite(g_hi) and g_lo != g_hi:
            x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
            x = min(max(x, lo + 1e-3 * (hi - lo)), hi - 1e-3 * (hi - lo))
        g_x = g(x)
        if g_x <= 0:
            hi, g_hi = x, g_x
            g_lo = g_lo / 2 if kept == -1 else g_lo
            kept = -1
        else:
            lo, g_lo = x, g_x
            g_hi = g_hi / 2 if kept == 1 else g_hi
            kept = 1
    sigma = check_scale(hi, S, "DiscreteGaussian", "sigma")
    _SIGMAS.put(key, sigma)
    return sigma
