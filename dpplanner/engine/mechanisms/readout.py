"""Reading delta and epsilon off a lattice pmf composed with one exact Gaussian.

With the Gaussian's loss independent of the rest, delta(x) = E_rest[delta_G(x - L_rest)]
(condition on the rest; delta_G is the closed form of gaussian.py, valid for every real
argument). The rest's upper (lower) twin bounds E_rest[phi] from above (below) for every convex phi
of u = e^-L_rest, and for each fixed Gaussian loss the integrand (1 - e^{x - L_G - L_rest})^+ is such
a phi: so the bound survives integrating over the Gaussian, and the Gaussian is never discretised.

Float bookkeeping, as in optimal/atoms.py: atom locations move by +-lam (delta_G(x - l) grows with
l), each probability is within (1 +- rel), err and inf_mass count in full above and err is
subtracted below; exp of a directed log bound and the products and sum add gamma_{n+4} + 8 u.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq

from ..optimal.atoms import TINY, U, Atoms
from .gaussian import log_delta_bounds


def mixed_delta(a: Atoms, mu: float, xs, upper: bool) -> np.ndarray:
    """Bounds on delta(x) of (the atoms' loss + N(mu^2/2, mu^2)) at each x, in a's direction."""
    xs = np.atleast_1d(np.asarray(xs, dtype=float))
    locs = a.l + (a.lam if upper else -a.lam)
    r = a.rel + 1.01 * (a.p.size + 4) * U + 8 * U
    out = np.empty(xs.size)
    for i, x in enumerate(xs.tolist()):
        lo, hi = log_delta_bounds(mu, x - locs)
        with np.errstate(under="ignore"):
            if upper:
                s = float(np.dot(a.p, np.exp(hi)))
                out[i] = min(1.0, s * (1 + r) + (a.err + a.inf_mass) * (1 + 4 * U) + a.p.size * TINY)
            else:
                s = float(np.dot(a.p, np.exp(lo)))
                out[i] = max(0.0, s * (1 - r) - a.err * (1 + 4 * U))
    return out


def mixed_root(a: Atoms, mu: float, delta_bar: float, upper: bool) -> float:
    """The least x >= 0 with delta(x) <= delta_bar: >= it (upper) or <= it (lower), certified by a
    final evaluation of the directed bound (the search itself may be approximate)."""
    target = math.log(delta_bar)

    def f(x: float) -> float:
        d = float(mixed_delta(a, mu, [x], upper)[0])
        return (math.log(d) if d > 0 else -1e300) - target

    if f(0.0) <= 0:
        return 0.0
    lo, hi = 0.0, max(1.0, float(a.l[-1]) + mu * mu)
    for _ in range(64):
        if f(hi) <= 0:
            break
        lo, hi = hi, hi * 2.0
    else:
        return math.inf
    x = brentq(f, lo, hi, xtol=1e-12, rtol=1e-10, maxiter=200)
    if upper:
        for k in range(60):  # delta_up(x) <= delta_bar certifies exact root <= x
            if f(x) <= 0:
                return x
            x = min(hi, x + 1e-10 * 2.0 ** k * max(1.0, x))
        return hi
    for k in range(60):  # delta_lo(x) > delta_bar certifies exact root > x
        if x <= 0 or f(x) > 0:
            return max(x, 0.0)
        x = max(lo, x - 1e-10 * 2.0 ** k * max(1.0, x))
        if x == lo:
            return lo
    return lo
