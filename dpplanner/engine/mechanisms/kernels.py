"""Lattice pmfs of the privacy loss of one Laplace or randomized-response release.

Every pmf lives on offset + step * Z (step a power of two) and is an UPPER or LOWER twin in the
sense of engine/optimal: delta(x) = E[(1 - e^{x - L})^+] read from it is >= (upper) or <= (lower)
the exact one, for every real x and after composing with anything (the losses add).

Laplace, a = 1/m (worst pair Lap(0, m) vs Lap(1, m)): L = -a + Y with Y in [0, 2a]; an atom
e^-a / 2 at Y = 0, an atom 1/2 at Y = 2a and density e^{y/2 - a} / 4 in between (so
delta(eps) = (1 - e^{(eps - a)/2})^+, which grows with a).
* UPPER, connect the dots (Doroshenko et al. 2022; see optimal/pld.py for the convex-order
  argument): each cell [js, (j+1)s] keeps its mass and E[e^-Y] on its two ends. For the
  density, E[e^-Y | cell] = e^-(js + s/2) exactly, so the upper end gets the share 1/(1 + e^{-s/2}).
* LOWER: E[phi(u)] may only fall, u = e^-Y, for every decreasing convex phi (each delta read is
  one, at every real eps, and so is the composition with anything else, the other losses held
  fixed). Jensen (E phi(u) >= phi(E u)) on cells of width 2s, whose mean of u is exactly at the
  cell's midpoint (a lattice point), and moving mass towards less loss, both do that. The top
  atom 2a is off the lattice unless 2a/s is whole: it is pooled with the density under it, or a is
  shrunk by under half a step (a Laplace with more noise); see laplace_lower.

RR(eps) (the dominating pair of an (eps, delta) release once delta is moved into delta_bar):
atoms at Y = 0 and 2 eps; upper splits the top atom by connect the dots, lower is RR(e) with
2e = n s <= 2 eps (a post-processing of RR(eps)). The step need not be a power of two: floors and
remainders are exact (fmod), offsets rounded to the safe side.

Relative errors: each entry is a short chain of exp/expm1/log (a few ulps each, budgeted
KERNEL_ULPS) plus the rounding of the exponent's argument, |d arg| <= 4 U (a + n s), which becomes
a relative error of exp. Underflowed entries lose at most TINY each (added to ``err``).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..exact import directed
from ..optimal.atoms import TINY, U
from ..optimal.binomial import log_rr
from ..optimal.lattice import LatticePMF

KERNEL_ULPS = 64


def floor_frac(x: float, step: float) -> tuple[int, float]:
    """n = floor(x / step) and frac = x - n step, both exact, for x >= 0 and any step > 0.

    fmod is exact (IEEE 754: its result is representable), and (x - frac) / step is the integer n
    up to two roundings, i.e. within n * 2.3e-16 of it: rounding to the nearest integer recovers n
    while n < 2^50 (the kernels built from it hold n + 2 entries, far fewer)."""
    frac = math.fmod(x, step)
    return round((x - frac) / step), frac


def _split_top(p: np.ndarray, n: int, frac: float, step: float, atom: float) -> None:
    """Connect the dots for an atom at n step + frac (0 <= frac <= step): mass to n and n + 1 with
    the same total and the same E[e^-Y]; frac rounded up only moves the atom up (safe)."""
    if frac == 0.0:
        p[n] += atom
        return
    den = -math.expm1(-step)
    p[n] += atom * math.exp(-frac) * -math.expm1(-(step - frac)) / den
    p[n + 1] += atom * -math.expm1(-frac) / den


def rr_upper(eps: float, step: float) -> LatticePMF:
    """Connect-the-dots pmf of RR(eps): Y = 0 (prob q) or 2 eps (prob p) on the lattice, L = Y - eps."""
    n, frac = floor_frac(2.0 * eps, step)
    lp, lq = log_rr(eps)
    p = np.zeros(n + 2)
    p[0] = math.exp(lq)
    _split_top(p, n, frac, step, math.exp(lp))
    rel = KERNEL_ULPS * U + 4 * U * (abs(lp) + abs(lq) + 1)
    return LatticePMF(step, 0, p, -eps, True, rel=rel)


def rr_lower(eps: float, step: float) -> LatticePMF:
    """RR(e) with e = n step / 2 <= eps (n the largest such): a post-processing of RR(eps)."""
    n, _ = floor_frac(2.0 * eps, step)
    if n == 0:
        return LatticePMF(step, 0, np.ones(1), 0.0, False)
    half = Fraction(n) * Fraction(step) / 2
    lp, lq = log_rr(float(half))  # |float(half) - half| <= U half: a relative error of ~U eps in p
    p = np.zeros(n + 1)
    p[0], p[n] = math.exp(lq), math.exp(lp)
    rel = KERNEL_ULPS * U + 4 * U * (abs(lp) + abs(lq) + 1) + 4 * U * float(half)
    return LatticePMF(step, 0, p, directed(-half, False), False, rel=rel)


def laplace_upper(a: float, step: float) -> LatticePMF:
    """Connect-the-dots pmf of a Laplace loss with a >= the exact 1/m (a an exact double)."""
    n, frac = floor_frac(2.0 * a, step)
    p = np.zeros(n + 2)
    p[0] = 0.5 * math.exp(-a)
    if n > 0:
        j = np.arange(n, dtype=float)
        with np.errstate(under="ignore"):   # 0.5 e^{j s/2 - a} (e^{s/2} - 1), never overflowing
            mass = 0.5 * np.exp((j + 1) * (step / 2.0) - a) * -math.expm1(-step / 2.0)
        hi_share = 1.0 / (1.0 + math.exp(-step / 2.0))
        lo_share = math.exp(-step / 2.0) * hi_share
        p[:n] += mass * lo_share
        p[1:n + 1] += mass * hi_share
    _split_top(p, n, frac, step, 0.5)
    if frac > 0.0:  # the last, partial cell [ns, 2a] of the density, split by connect the dots
        f, s = frac, step
        den = -math.expm1(-s)
        # (e^-f (e^{f/2} - 1) and 2 e^{-f/2} sinh(f/4)^2, written so that no term overflows)
        p[n] += 0.5 * math.exp(-f / 2.0) * -math.expm1(-f / 2.0) * -math.expm1(-(s - f / 2.0)) / den
        p[n + 1] += 0.5 * math.expm1(-f / 2.0) ** 2 / den
    rel = KERNEL_ULPS * U + 4 * U * (a + n * step)
    return LatticePMF(step, 0, p, -a, True, rel=rel, err=(n + 2) * TINY)


def laplace_lower(a: float, step: float) -> LatticePMF:
    """A lower twin of the Laplace loss with this a (a <= the exact 1/m). Y has atoms e^-a / 2 at 0
    and 1/2 at 2a = m s + f (f < s: off the lattice unless f = 0). Two constructions, both valid,
    whichever is tighter (measured on composed plans: pooling wins once a^2 >= f):

    * pooled (offset -a): the top atom is pooled with the density on [y_c, 2a]; with
      e^{y_c / 2 - a} = 1 - sqrt(1 - e^-f) (y_c ~ 2a - 2 sqrt f) the pool's mean of u = e^-Y is
      e^-(m s), so Jensen puts it on the lattice point m s. y_c is then raised to a lattice point
      k s (less density in the pool: its mean of u only falls) and [0, k s] is cut into cells;
    * shrunk (offset -a', 2a' = m s): Laplace with a' = a - f / 2 <= a, a post-processing; [0, m s]
      is cut into cells.

    The cells have width 2s and are centred on lattice points, where their mean of u is exactly
    (see the module docstring), starting at 0 when k (or m) is even; when it is odd the first cell
    is [0, s], put on 0. Jensen, and moving mass towards less loss, lower E[phi(u)] for every
    decreasing convex phi, which is what a lower twin must do (every delta read, and every
    composition, is such an expectation)."""
    m, f = floor_frac(2.0 * a, step)    # 2a = m step + f, exactly
    if m == 0:  # 2a < step: no loss at all, which every pair dominates
        return LatticePMF(step, 0, np.ones(1), 0.0, False)
    k, offset = m, -a
    if 0.0 < f <= a * a:
        # log(1 - root) = -f - log(1 + root) (1 - root^2 = e^-f): finite where root rounds to 1
        root = math.sqrt(-math.expm1(-f))
        y_c = 2.0 * a - 2.0 * (f + math.log1p(root))
        y_c += 16 * U * (2.0 * a + 1.0)            # rounded up: a few ulps of 2a cover its errors
        n, frac = floor_frac(max(y_c, 0.0), step)
        k = min(n + (frac > 0.0), m)
    elif f > 0.0:
        offset = -math.nextafter(m * step / 2.0, math.inf)     # <= -a' exactly
    top = -offset                                 # the a of the density below (a or a')
    p = np.zeros(m + 1)
    p[0] = 0.5 * math.exp(-top)
    with np.errstate(under="ignore"):
        p[m] += 0.5 - 0.5 * math.expm1(k * step / 2.0 - top)     # the top atom (pooled: and density)
        first = k % 2                                           # a first cell [0, s], on 0
        if first:       # (s/2 <= top here: k s <= 2 top, so no exponent below is positive)
            p[0] += 0.5 * math.exp(step / 2.0 - top) * -math.expm1(-step / 2.0)
        i = np.arange((k - first) // 2, dtype=float)
        # cells [(2i + first) s, (2i + 2 + first) s], centred on (2i + 1 + first) s
        p[1 + first:k:2] += 0.5 * np.exp((i + 1 + first / 2.0) * step - top) * -math.expm1(-step)
    rel = KERNEL_ULPS * U + 4 * U * (3.0 * a + 2.0)
    return LatticePMF(step, 0, p, offset, False, rel=rel, err=(m + 2) * TINY)
