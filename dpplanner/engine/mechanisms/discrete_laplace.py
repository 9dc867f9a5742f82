"""The discrete Laplace mechanism: its calibration and its exact privacy loss on a lattice.

Noise P(x) = (1 - q) / (1 + q) q^|x| on the integers, q = e^{-1/t}; the worst pair is the noise
and the noise shifted by S (discrete_objects.py). The loss log P(x) / P(x - S) is S/t for x <= 0,
-S/t for x >= S and (S - 2x)/t in between, so with i = S - x clipped to [0, S] it is
L_i = (2i - S)/t, i = 0..S, with masses

    i = S: 1 / (1 + q);   i = 0: q^S / (1 + q);   0 < i < S: (1 - q) q^(S - i) / (1 + q)

(they add up to 1). For S = 1 that is randomized response with epsilon 1/t. Any run of interior
atoms i = lo..hi has mass q^(S - hi) (1 - q^(hi - lo + 1)) / (1 + q), a closed form in log space:
so the masses on a lattice of step s cost O(S / t / s) whatever S is (S up to 2^53).

Lattice: points n s (offset 0). The UPPER twin moves every atom up to the next point (a loss
rounded up only raises delta(x) = E[(1 - e^{x - L})^+], after composing with anything), the LOWER
twin down to the previous one. Atom i is at loss <= n s iff i <= beta_n = n s t / 2 + S / 2; beta_n
is computed in floating point and moved by its error bound before it is floored (upper) or
ceiled (lower), so every atom lands on the safe side. For S = 1 the randomized-response kernels
(kernels.py: connect the dots above, a post-processing below) are used, with 1/t bracketed.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..optimal.atoms import TINY, U
from ..optimal.lattice import LatticePMF
from .discrete_objects import check_scale, check_shift
from .kernels import KERNEL_ULPS, rr_lower, rr_upper


def _real(value, what: str) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{what} = {value!r} is not a number") from None
    if isinstance(value, bool):
        raise ValueError(f"{what} = {value!r} is not a number")
    return v


def discrete_laplace_scale(epsilon, shift=1) -> float:
    """The scale t (lattice units) at which discrete Laplace noise with shift S is pure eps-DP:
    t = S / eps, rounded up (so S / t <= eps exactly). The one home of this calibration: the model
    shows and exports what it returns. ValueError outside the ranges of discrete_objects.py."""
    s = check_shift(shift, "discrete Laplace")
    eps = _real(epsilon, "epsilon")
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon = {eps!r} is not allowed; discrete Laplace noise needs a finite epsilon > 0")
    t = s / eps
    if math.isfinite(t) and Fraction(t) * Fraction(eps) < s:
        t = math.nextafter(t, math.inf)
    if not math.isfinite(t) or not (s * 2.0 ** -10 <= t <= s * 2.0 ** 64):
        raise ValueError(f"epsilon = {eps!r} with shift {s} is outside what discrete Laplace noise can be "
                         f"calibrated for: epsilon must be between 5.43e-20 and 1024")
    return check_scale(t, s, "DiscreteLaplace", "scale")


def epsilon_bounds(scale: float, shift: int) -> tuple[float, float]:
    """(upper, lower) doubles around the exact S / t (its pure-DP epsilon)."""
    e = shift / scale
    ex = Fraction(shift) / Fraction(scale)
    up = e if Fraction(e) >= ex else math.nextafter(e, math.inf)
    lo = e if Fraction(e) <= ex else math.nextafter(e, 0.0)
    return up, lo


def dl_kernel(scale: float, shift: int, step: float, upper: bool) -> LatticePMF:
    """The UPPER (or LOWER) twin of one discrete Laplace release's loss on lattice ``step``."""
    eps_up, eps_lo = epsilon_bounds(scale, shift)
    if shift == 1:
        return rr_upper(eps_up, step) if upper else rr_lower(eps_lo, step)
    S, t = shift, scale
    v = step * t / 2.0                              # atoms per lattice step, relative error <= 2U
    n_lo = math.floor(-eps_up / step) - 2
    n_hi = math.ceil(eps_up / step) + 2
    n = np.arange(n_lo, n_hi + 1, dtype=float)
    beta = n * v + S / 2.0                          # <= 3 roundings of terms <= |n| v + S/2
    e = 6 * U * (np.abs(n) * v + S / 2.0) + TINY
    if upper:   # bucket n holds i in (b_{n-1}, b_n], b_n = the last atom at loss <= n s
        last = np.clip(np.floor(beta - e), -1, S).astype(np.int64)
        last = np.maximum.accumulate(last)
        lo_i, hi_i = last[:-1] + 1, last[1:]
        pts = n[1:]
    else:       # bucket n holds i in [a_n, a_{n+1}), a_n = the first atom at loss >= n s
        first = np.clip(np.ceil(beta + e), 0, S + 1).astype(np.int64)
        first = np.maximum.accumulate(first)
        lo_i, hi_i = first[:-1], first[1:] - 1
        pts = n[:-1]
    p = _run_masses(lo_i, hi_i, S, t)
    nz = np.flatnonzero(p)
    j0, j1 = int(nz[0]), int(nz[-1]) + 1
    rel = KERNEL_ULPS * U + 8 * U * (eps_up + 2.0)
    return LatticePMF(step, int(pts[j0]), p[j0:j1].copy(), 0.0, upper, rel=rel, err=(j1 - j0) * TINY)


def _run_masses(lo: np.ndarray, hi: np.ndarray, S: int, t: float) -> np.ndarray:
    """Mass of the atoms i = lo..hi (empty where hi < lo), per run: the interior atoms' geometric
    sum in log space, plus the end atoms i = 0 and i = S where the run holds them. Each term is
    exp of a short chain (relative error ~ KERNEL_ULPS U + 4 U (S/t + 1)), at most three added."""
    inv_t = 1.0 / t
    log1p_q = math.log1p(math.exp(-inv_t))
    out = np.zeros(lo.size)
    a, b = np.maximum(lo, 1), np.minimum(hi, S - 1)
    inner = b >= a
    if inner.any():
        with np.errstate(under="ignore"):
            count = (b[inner] - a[inner] + 1).astype(float)
            gap = (S - b[inner]).astype(float)
            out[inner] = np.exp(-gap / t + np.log(-np.expm1(-count / t)) - log1p_q)
    has_top = (lo <= S) & (hi >= S)
    has_bottom = (lo <= 0) & (hi >= 0)
    out[has_top] += math.exp(-log1p_q)
    with np.errstate(under="ignore"):
        out[has_bottom] += math.exp(-S / t - log1p_q)
    return out
