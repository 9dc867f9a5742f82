"""The tilt of a rung's composition (spectral.py): where the exponential tilt puts the tilted mass
just above the root, so the composition's rounding is small beside the mass that decides delta.
The cumulant generating function of the total loss is a guide only (any tilt is sound): closed
forms for the Laplace, RR and Gaussian losses, the discrete kinds' kernels on the lattice
(cumulants.py); no rounding control."""

from __future__ import annotations

import math

import numpy as np

from ..memo import Memo
from .cumulants import KernelCumulants

#: Newton steps towards the tilt's saddle point (each a pass over every kernel), and the largest tilt.
THETA_STEPS = 12
THETA_MAX = 1e6
#: A tilt this many times the inverse of the widest release's span sits on the top atoms only.
TILT_SPAN = 100.0


def saddle_tilt(r, kernels: list, x_guess: float) -> tuple[float, float]:
    """(theta, x): the tilt, and the Chernoff estimate x of the root that it gives.

    theta minimises the Chernoff bound x(theta) = (K(theta) + log c(theta) - log delta_bar) / theta
    of the total loss L (K: its cumulant generating function, c(theta) = sup_v e^{-theta v}
    (1 - e^{-v})), i.e. it solves h(theta) = theta K'(theta) - K(theta) + log(1 + theta)
    + log delta_bar = 0, h increasing (h' = theta K'' + 1/(1 + theta)): there the tilted mass sits
    just above the root, where the releases' delta is decided. Any theta >= 0 is sound (it only
    decides how the rounding is spread), but far from that saddle point the tilted mass that decides
    delta is a tiny share of the whole, and the rounding charged against it swamps delta at 1e-14;
    a normal approximation of L put theta far from it for mixed plans at small delta, and the saddle
    point of a guess of the root (the cheap bounds, far above it) further still. Where h has no
    root below THETA_MAX, or one beyond TILT_SPAN over the widest release's span (the loss's top
    atom alone exceeds delta_bar: the root is at it), the normal approximation's tilt at x_guess. K is that of the exact Laplace, RR and Gaussian losses (closed forms, one pass
    over the kinds, not over their lattices) and of the discrete kinds' kernels on this lattice."""
    if not (r.delta_bar > 0 and math.isfinite(x_guess)):
        return 0.0, x_guess
    log_db = math.log(r.delta_bar)
    # without discrete kinds the search is a function of the continuous releases only: every rung
    # of a ladder has the same saddle point (10^5 distinct releases: ~13 passes over them a rung)
    key = None if kernels else (r.a_up.tobytes(), r.up_mult.tobytes(), r.rr_eps.tobytes(), r.rr_mult.tobytes(),
                                r.mu_up, r.delta_bar)
    found = _SADDLES.get(key) if key is not None else None
    if found is None:
        found = _saddle(r, KernelCumulants(kernels), log_db)
        if key is not None:
            _SADDLES.put(key, found)
    theta, k0, no_root, kernels = found
    if no_root or theta * _widest(r) > TILT_SPAN:
        # no saddle point, or one where the tilt sits on every release's top atom (their product
        # alone exceeds delta_bar, and the hinge's factor 1/theta keeps the bound falling slowly):
        # the normal approximation's tilt
        _, mean, var = _cumulants(r, kernels, 0.0)
        return (float(min(max((x_guess - mean) / var, 0.0), THETA_MAX)) if var > 0 else 0.0), x_guess
    log_c = theta * math.log(theta) - (1 + theta) * math.log1p(theta)
    return float(theta), (k0 + log_c - log_db) / theta


#: Saddle points of plans without discrete kinds, keyed by their continuous releases.
_SADDLES = Memo(8)


def _saddle(r, kernels: KernelCumulants, log_db: float):
    """(theta, K(theta), whether h has no usable root, kernels) of saddle_tilt's Newton search."""

    last: list = [None, None]        # (the loop usually ends where it last evaluated h: not twice)

    def h(theta: float):
        if last[0] != theta:
            k0, k1, k2 = _cumulants(r, kernels, theta)
            last[:] = theta, (theta * k1 - k0 + math.log1p(theta) + log_db, theta * k2 + 1 / (1 + theta), k0)
        return last[1]

    lo, hi, theta = 0.0, math.inf, 1.0
    for _ in range(THETA_STEPS):
        value, slope, _ = h(theta)
        if math.isfinite(value) and value < 0:
            lo = theta
        else:
            hi = theta
        if hi - lo <= 1e-3 * theta or lo >= THETA_MAX:
            break
        nxt = theta - value / slope if math.isfinite(value) and slope > 0 else math.nan
        if not lo < nxt < hi:       # Newton left the bracket: bisect it (geometrically)
            nxt = 4.0 * theta if math.isinf(hi) else (math.sqrt(lo * hi) if lo > 0 else hi / 4.0)
        theta = min(nxt, THETA_MAX)
    value, _, k0 = h(theta)
    return theta, k0, math.isinf(hi) or not (math.isfinite(value) and theta > 0), kernels


def _widest(r) -> float:
    """The widest single release's loss span (2a, 2 eps, a discrete kind's span)."""
    spans = [0.0] + (2 * r.a_up).tolist() + (2 * r.rr_eps).tolist() + [d.span() for d in r.disc]
    return max(spans)


def _cumulants(r, kernels: KernelCumulants, theta: float) -> tuple[float, float, float]:
    """(K(theta), K'(theta), K''(theta)) of the total loss (only a guide to the tilt: no rounding
    control): every kind's log-moment, tilted mean and variance, times its multiplicity (the
    discrete kinds' from their kernels, cumulants.py)."""
    mu = r.mu_up
    parts = [(mu * mu * theta * (theta + 1) / 2, mu * mu * (theta + 0.5), mu * mu, 1), kernels(theta) + (1,)]
    if 0 < r.a_up.size <= FEW_LAPLACE:
        parts.append(_few_laplace_cumulants(r.a_up.tolist(), r.up_mult.tolist(), theta))
    elif r.a_up.size:
        parts.append(laplace_cumulants(r.a_up, theta) + (r.up_mult,))
    if r.rr_eps.size:
        parts.append(_rr_cumulants(r.rr_eps, theta) + (r.rr_mult,))
    k0 = k1 = k2 = 0.0
    for a, b, c, n in parts:
        if isinstance(a, float):        # (a scalar part, n = 1: what np.sum would give, without it)
            k0, k1, k2 = k0 + a, k1 + b, k2 + c
            continue
        k0 += float(np.sum(n * a))
        k1 += float(np.sum(n * b))
        k2 += float(np.sum(n * c))
    return k0, k1, k2


#: Up to this many Laplace kinds, their cumulants are summed in Python floats (numpy's per-call
#: overhead on a few entries cost ~60 us per Newton step, ~0.4 ms of a psi-survey composition).
FEW_LAPLACE = 8


def _few_laplace_cumulants(a: list, mult: list, theta: float) -> tuple[float, float, float, int]:
    """The sums over the Laplace kinds of mult * (K, K', K'') (laplace_cumulant each), as a scalar
    part of _cumulants."""
    k0 = k1 = k2 = 0.0
    for ai, n in zip(a, mult):
        c0, c1, c2 = laplace_cumulant(ai, theta)
        k0, k1, k2 = k0 + n * c0, k1 + n * c1, k2 + n * c2
    return k0, k1, k2, 1


def laplace_cumulant(a: float, theta: float) -> tuple[float, float, float]:
    """laplace_cumulants of one a, in Python floats (the same formulas; inf or nan where numpy's
    would be, e.g. an a that underflowed to 0: the Newton search then bisects)."""
    c = theta + 0.5
    z = c * a
    if not (0.0 < z < 700.0 and 0.0 < a < math.inf):
        k0, k1, k2 = laplace_cumulants(np.array([a]), theta)
        return float(k0[0]), float(k1[0]), float(k2[0])
    l0, l1 = math.log(0.5) + theta * a, math.log(0.5) - a - theta * a
    l2 = math.log(0.25) - a / 2 + z + math.log(-math.expm1(-2 * z)) - math.log(c)
    top = max(l0, l1, l2)
    w0, w1, w2 = math.exp(l0 - top), math.exp(l1 - top), math.exp(l2 - top)
    total = w0 + w1 + w2
    s0, s1, s2 = w0 / total, w1 / total, w2 / total
    if z < 1e-3:
        m3, v3 = a * (z / 3 - z ** 3 / 45), a * a * (1 / 3 - z * z / 15)
    else:
        m3, v3 = a / math.tanh(z) - 1 / c, 1 / (c * c) - (a / math.sinh(z)) ** 2
    mean = s0 * a + s1 * -a + s2 * m3
    var = s0 * (a - mean) ** 2 + s1 * (-a - mean) ** 2 + s2 * (v3 + (m3 - mean) ** 2)
    return math.log(total) + top, mean, var


def laplace_cumulants(a: np.ndarray, theta: float):
    """Per a = 1/m: (K, K', K'') of the Laplace loss at theta. The loss is a with probability 1/2,
    -a with e^{-a}/2, and has density e^{(u - a)/2}/4 on (-a, a): tilted, a mixture of two atoms
    and a truncated exponential of rate c = theta + 1/2 (mean a coth(ca) - 1/c, variance
    1/c^2 - a^2/sinh^2(ca); their series below ca = 1e-3, where the differences cancel)."""
    c = theta + 0.5
    z = c * a
    # (the three parts one by one, summed in the order np.sum took them: the tilt's Newton search
    # calls this ~8 times on a few releases, where stacking them cost more than the arithmetic)
    l0, l1 = math.log(0.5) + theta * a, math.log(0.5) - a - theta * a
    l2 = math.log(0.25) - a / 2 + z + np.log(-np.expm1(-2 * z)) - math.log(c)
    top = np.maximum(np.maximum(l0, l1), l2)
    w0, w1, w2 = np.exp(l0 - top), np.exp(l1 - top), np.exp(l2 - top)
    total = w0 + w1 + w2
    s0, s1, s2 = w0 / total, w1 / total, w2 / total
    small = z < 1e-3
    zs = np.where(small, 1.0, z)
    with np.errstate(over="ignore"):
        m3 = np.where(small, a * (z / 3 - z ** 3 / 45), a / np.tanh(zs) - 1 / c)
        v3 = np.where(small, a * a * (1 / 3 - z * z / 15), 1 / (c * c) - (a / np.sinh(zs)) ** 2)
    mean = s0 * a + s1 * -a + s2 * m3
    var = s0 * (0 * a + (a - mean) ** 2) + s1 * (0 * a + (-a - mean) ** 2) + s2 * (v3 + (m3 - mean) ** 2)
    return np.log(total) + top, mean, var


def _rr_cumulants(eps: np.ndarray, theta: float):
    """(K, K', K'') of randomized response's loss: eps with probability e^eps/(1 + e^eps), else -eps."""
    log_w = np.stack([(1 + theta) * eps, -theta * eps]) - np.logaddexp(0.0, eps)
    top = np.max(log_w, axis=0)
    w = np.exp(log_w - top)
    total = np.sum(w, axis=0)
    share = w[0] / total
    mean = eps * (2 * share - 1)
    return np.log(total) + top, mean, 4 * eps * eps * share * (1 - share)
