"""Reading delta and epsilon off a lattice pmf composed with one exact Gaussian.

With the Gaussian's loss independent of the rest, delta(x) = E_rest[delta_G(x - L_rest)]
(condition on the rest; delta_G is the closed form of gaussian.py, valid for every real
argument). The rest's upper (lower) twin bounds E_rest[phi] from above (below) for every convex phi
of u = e^-L_rest, and for each fixed Gaussian loss the integrand (1 - e^{x - L_G - L_rest})^+ is such
a phi: so the bound survives integrating over the Gaussian, and the Gaussian is never discretised.

Float bookkeeping, as in optimal/atoms.py: atom locations move by +-lam (delta_G(x - l) grows with
l) and the difference x - l by its rounding, each probability is within (1 +- rel), err and
inf_mass count in full above and err is subtracted below; exp of a directed log bound and the
products and sum add gamma_{n+4} + 8 u.

The root is searched without rounding control (Halley's method, first on merged atoms, then one
step on the full atoms) and only then certified by an evaluation of the directed bound: two passes
over the full atoms per read-out.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..optimal.atoms import TINY, U, Atoms
from .gaussian import log_delta_bound

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Atoms this many Gaussian sd (plus the mean) below x are counted at one bound (delta_G ~ 1e-50).
WINDOW_Z = 15.0


#: Newton first runs on at most this many merged atoms; the full atoms then need a step or two.
COARSE_ATOMS = 256


def _window(locs: np.ndarray, mu: float, x: float) -> int:
    """Index of the first atom that matters at x: below it, x - l >= mu (mu/2 + WINDOW_Z), where
    delta_G <= Phi(-WINDOW_Z) ~ 1e-50. (The upper bound still counts those atoms, at that value.)"""
    return int(np.searchsorted(locs, x - mu * (mu / 2 + WINDOW_Z), side="left"))


def _coarse(a: Atoms) -> tuple[np.ndarray, np.ndarray]:
    """(locations, probabilities) of at most ~COARSE_ATOMS atoms: runs of neighbours merged at
    their mean. Only a starting point for Newton, so no rounding control."""
    n = a.p.size
    run = -(-n // COARSE_ATOMS)
    if run <= 1:
        return a.l, a.p
    pad = (-n) % run
    p = np.concatenate([a.p, np.zeros(pad)]).reshape(-1, run)
    locs = np.concatenate([a.l, np.full(pad, a.l[-1])]).reshape(-1, run)
    mass = p.sum(axis=1)
    keep = mass > 0
    return (p * locs).sum(axis=1)[keep] / mass[keep], mass[keep]


def mixed_delta(a: Atoms, mu: float, xs, upper: bool) -> np.ndarray:
    """Bounds on delta(x) of (the atoms' loss + N(mu^2/2, mu^2)) at each x, in a's direction."""
    xs = np.atleast_1d(np.asarray(xs, dtype=float))
    r = a.rel + 1.01 * (a.p.size + 4) * U + 8 * U
    out = np.empty(xs.size)
    for i, x in enumerate(xs.tolist()):
        j = _window(a.l, mu, x)
        locs = a.l[j:] + (a.lam if upper else -a.lam)
        y = x - locs  # one rounding: widen it to the side where delta_G (decreasing in y) is larger/smaller
        y = y - 2 * U * np.abs(y) if upper else y + 2 * U * np.abs(y)
        with np.errstate(under="ignore"):
            s = float(np.dot(a.p[j:], np.exp(log_delta_bound(mu, y, upper))))
            if upper:
                if j > 0:  # the atoms left out: delta_G(y) <= Phi(mu/2 - y/mu) <= e^{-t^2/2}, t >= 15
                    y0 = x - (a.l[j - 1] + a.lam)
                    t = (y0 - 2 * U * abs(y0)) / mu - mu / 2
                    s += float(np.sum(a.p[:j])) * 2 * math.exp(-0.5 * t * t * (1 - 8 * U))
                out[i] = min(1.0, s * (1 + r) + (a.err + a.inf_mass) * (1 + 4 * U) + a.p.size * TINY)
            else:
                out[i] = max(0.0, s * (1 - r) - a.err * (1 + 4 * U))
    return out


def _newton(locs: np.ndarray, p: np.ndarray, mu: float, target: float, x: float, tol: float) -> float:
    """Approximate root of g(x) = log delta(x) - target (no rounding control: only a starting point
    for the certified read-out), by Halley's method: with delta_G'(y) = -e^y Phi(z), z = -mu/2 - y/mu,
    and delta_G''(y) = -e^y (Phi(z) - phi(z) / mu), the error is cubed at each step, so once a step
    is below tol (relative) the next would be ~tol^3."""
    for _ in range(30):
        j = _window(locs, mu, x)
        y = x - locs[j:]
        z = -mu / 2 - y / mu
        l1 = log_ndtr(mu / 2 - y / mu)
        l2 = y + log_ndtr(z)
        with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
            dens = np.exp(l1) * -np.expm1(np.minimum(l2 - l1, 0.0))
            slope = np.exp(l2)
            bend = np.exp(y - 0.5 * z * z) * (_INV_SQRT_2PI / mu)
            d, ds = float(np.dot(p[j:], dens)), float(np.dot(p[j:], slope))
            dss = ds - float(np.dot(p[j:], bend))   # -delta'' (delta' = -ds)
        if not (d > 0 and ds > 0):  # x far above every atom (e.g. a stale guess): come down
            x = 0.5 * (x + max(float(locs[-1]) + mu * mu / 2, 0.0))
            continue
        g, g1 = math.log(d) - target, -ds / d
        g2 = -dss / d - g1 * g1
        den = 2 * g1 * g1 - g * g2
        step = -2 * g * g1 / den if den > 0 else -g / g1   # (Newton where Halley's would turn back)
        x = max(x + step, 0.5 * x)
        if abs(step) <= tol * max(1.0, x):
            break
    return x


def mixed_root(a: Atoms, mu: float, delta_bar: float, upper: bool, guess: float = 0.0) -> float:
    """The least x >= 0 with delta(x) <= delta_bar: >= it (upper) or <= it (lower), certified by
    evaluations of the directed bound (the Newton search itself may be approximate)."""
    target = math.log(delta_bar)

    def f(x: float) -> float:
        d = float(mixed_delta(a, mu, [x], upper)[0])
        return (math.log(d) if d > 0 else -1e300) - target

    # aim Newton at what the directed bound adds (rel, err, inf_mass): certification then passes at once
    r = a.rel + 1.01 * (a.p.size + 4) * U + 8 * U
    aim = (delta_bar - (a.err + a.inf_mass) * (1 + 4 * U)) / (1 + r) if upper else \
        (delta_bar + a.err * (1 + 4 * U)) / (1 - r)
    start = guess if guess > 0 else max(float(a.l[-1]) + mu * mu / 2, 1e-3)
    aim = math.log(aim) if aim > 0 else target
    # merged atoms put the root within ~1e-4; one cubic step on the full atoms then lands within
    # ~1e-12, inside the certification's 1e-10 margin
    x = _newton(*_coarse(a), mu, aim, start, 1e-3) if a.p.size > COARSE_ATOMS else start
    x = _newton(a.l, a.p, mu, aim, x, 3e-4)
    if upper:  # delta_up(x) <= delta_bar certifies exact root <= x (also where the root is 0)
        x = x * (1 + 1e-10) + 1e-12
        for k in range(1100):
            if not math.isfinite(x):    # (e.g. mu = 1e300): no finite x is certified
                return math.inf
            if f(x) <= 0:
                return x
            x += 1e-10 * 2.0 ** min(k, 1000) * max(1.0, x)   # (2.0 ** 1024 raises; inf is caught above)
        return math.inf
    x = x * (1 - 1e-10)  # delta_lo(x) > delta_bar certifies exact root > x
    for k in range(60 if x > 1e-12 else 0):
        if x <= 0:
            return 0.0
        if f(x) > 0:
            return x
        x -= 1e-10 * 2.0 ** k * max(1.0, x)
    return 0.0
