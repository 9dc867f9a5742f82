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
from fractions import Fraction

import numpy as np

from ..numerics import round_up

#: Newton steps on eps'(alpha) = 0 (eps is convex in alpha, and any alpha gives a valid eps). Eight
#: land within 4e-13 (relative) of the 48 golden-section steps they replace, over 20,000 random
#: rho in [1e-8, 1e3] and delta in [1e-15, 0.5] (six: 2e-10), at a fifth of the cost (those took
#: ~1.3 ms for one rho, in the zcdp row and curve of every evaluation).
_NEWTON_STEPS = 8
#: The alphas searched: alpha - 1 in [e^-12, e^40], as before.
_ALPHA_MIN, _ALPHA_MAX = 1.0 + math.exp(-12.0), 1.0 + math.exp(40.0)


def cks_eps_at(rho, delta, alpha):
    """eps(alpha) of the CKS conversion, evaluated in floating point (not yet rounded)."""
    rho, delta, alpha = (np.asarray(a, dtype=float) for a in (rho, delta, alpha))
    return alpha * rho + np.log1p(-1.0 / alpha) - (np.log(delta) + np.log(alpha)) / (alpha - 1.0)


def cks_alpha(rho, delta):
    """A near-optimal alpha for each (rho, delta), vectorised: Newton's method on
    eps'(alpha) = rho + (log delta + log alpha) / (alpha - 1)^2 = 0 from the classic
    alpha = 1 + sqrt(log(1/delta) / rho). The least eps lies below alpha = 1/delta (above it
    eps' > 0), where eps'' > 0 (eps is convex): each step is kept inside [_ALPHA_MIN, top] with
    top = min(_ALPHA_MAX, 1/delta), and at most halfway to alpha = 1."""
    rho, delta = np.broadcast_arrays(np.asarray(rho, dtype=float), np.asarray(delta, dtype=float))
    log_d = np.log(delta)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        top = np.maximum(np.minimum(_ALPHA_MAX, 1.0 / delta), _ALPHA_MIN)
        alpha = np.clip(1.0 + np.sqrt(-log_d / rho), _ALPHA_MIN, top)
        for _ in range(_NEWTON_STEPS):
            a1 = alpha - 1.0
            num = log_d + np.log(alpha)
            d1 = rho + num / (a1 * a1)
            d2 = 1.0 / (alpha * a1 * a1) - 2.0 * num / (a1 * a1 * a1)
            step = np.where(d2 > 0, d1 / d2, 0.0)
            nxt = np.maximum(alpha - step, 1.0 + 0.5 * a1)     # never past alpha = 1
            alpha = np.where(np.isfinite(nxt), np.clip(nxt, _ALPHA_MIN, top), alpha)
    return alpha


def cks_epsilon(rho, delta):
    """The CKS eps for rho-zCDP at delta (arrays broadcast), 0 where rho = 0: the formula at
    cks_alpha, rounded up with a margin for its ~10 roundings (CLOSED_FORM_MARGIN in numerics)."""
    if np.ndim(rho) == 0 and np.ndim(delta) == 0 and float(rho) > 0 and 0.0 < float(delta) < 1.0:
        return _cks_scalar(float(rho), float(delta))
    rho, delta = np.broadcast_arrays(np.asarray(rho, dtype=float), np.asarray(delta, dtype=float))
    eps = round_up(np.maximum(cks_eps_at(rho, delta, cks_alpha(rho, delta)), 0.0))
    eps = np.where(rho > 0, eps, 0.0)
    return float(eps) if np.ndim(eps) == 0 else eps


def _cks_scalar(rho: float, delta: float) -> float:
    """cks_epsilon of one rho > 0 at one 0 < delta < 1, the same operations in the same order on
    Python floats (IEEE arithmetic as numpy's; the logarithms and the root are numpy's own, which
    give the same bits on a float as in an array): the same number, bit for bit, without ~150
    numpy calls on 0-d arrays (~0.1 ms, in every pld composition's zCDP cap)."""
    log_d = float(np.log(delta))
    top = max(min(_ALPHA_MAX, 1.0 / delta), _ALPHA_MIN)
    alpha = min(max(1.0 + float(np.sqrt(-log_d / rho)), _ALPHA_MIN), top)
    for _ in range(_NEWTON_STEPS):
        a1 = alpha - 1.0
        num = log_d + float(np.log(alpha))
        d1 = rho + num / (a1 * a1)
        d2 = 1.0 / (alpha * a1 * a1) - 2.0 * num / (a1 * a1 * a1)
        step = d1 / d2 if d2 > 0 else 0.0
        nxt = max(alpha - step, 1.0 + 0.5 * a1)      # (nan first: max keeps it, as np.maximum)
        alpha = min(max(nxt, _ALPHA_MIN), top) if math.isfinite(nxt) else alpha
    eps = alpha * rho + float(np.log1p(-1.0 / alpha)) - (log_d + float(np.log(alpha))) / (alpha - 1.0)
    return float(round_up(max(eps, 0.0)))


def rho_gaussian(m):
    """1/(2 m^2), rounded up (three roundings: 4 ulps of margin)."""
    m = np.asarray(m, dtype=float)
    return 0.5 / (m * m) * (1 + 8 * 2.0 ** -53)


def rho_pure(eps):
    """eps^2/2, rounded up."""
    eps = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore"):    # (inf for eps ~ 1e200: an honest upper bound)
        return 0.5 * eps * eps * (1 + 8 * 2.0 ** -53)


def sum_up(values) -> float:
    """A sum of non-negative terms, rounded up (fsum is correctly rounded: one ulp covers it)."""
    s = math.fsum(np.asarray(values, dtype=float).tolist())
    return math.nextafter(s, math.inf) if s > 0 else s


def rho_for(epsilon: float, delta: float) -> float:
    """The largest rho (to ~1e-13 relative, rounded down) whose CKS conversion at ``delta`` is at
    most ``epsilon``: bisection in log rho on cks_epsilon, which grows with rho (a larger rho is a
    weaker guarantee at every alpha). The answer is checked with cks_epsilon itself (rounded up),
    so rho-zCDP is (epsilon, delta)-DP by CKS20 Prop 12 for the rho returned."""
    eps, d = float(epsilon), float(delta)
    if not (eps > 0 and math.isfinite(eps)) or not (0.0 < d < 1.0):
        raise ValueError(f"(epsilon, delta) = ({epsilon!r}, {delta!r}) cannot be reached through zCDP: it "
                         "needs a finite epsilon > 0 and 0 < delta < 1")
    key = (eps, d)
    known = _RHOS.get(key)
    if known is not None:
        return known

    def fits(rho: float) -> bool:
        return cks_epsilon(rho, d) <= eps

    lo, hi = 1e-300, 1.0
    while fits(hi) and hi < 1e300:       # rho <= eps always fits loosely; the loop is short
        lo, hi = hi, hi * 16.0
    while not fits(lo):
        if lo < 1e-290:
            raise ValueError(f"epsilon = {eps!r} at delta = {d!r} is below what zCDP can certify")
        lo /= 16.0
    lo = _bisect(lo, hi, lambda rhos: cks_epsilon(rhos, d) <= eps)
    if not fits(lo):     # (the batches' bits are the scalar ones; a scalar check costs little)
        raise ArithmeticError(f"rho_for({eps!r}, {d!r}): the batched bisection gave a rho that does not fit")
    if len(_RHOS) < 1 << 14:
        _RHOS[key] = lo
    return lo


#: Bisection steps rho_for decides per batch (2^depth - 1 points evaluated at once).
_BATCH_DEPTH = 8


def _bisect(lo: float, hi: float, fits_many) -> float:
    """The bisection in log rho from [lo, hi] (lo fits, hi does not) to hi <= lo (1 + 1e-13), at
    most 200 steps, with every step's midpoint sqrt(lo hi) and its verdict exactly those of the
    one-at-a-time loop: each batch evaluates the tree of the next _BATCH_DEPTH steps' possible
    midpoints (255 points; heap order: node k's children are 2k + 1 where its midpoint fits,
    2k + 2 where it does not) in one vectorised call, then follows the actual verdicts. Seven
    calls instead of ~55 (a call costs about as much for 255 points as for one)."""
    steps = 0
    while steps < 200 and hi > lo * (1 + 1e-13):
        mids, level = [], [(lo, hi)]
        for _ in range(_BATCH_DEPTH):
            nxt = []
            for a, b in level:
                m = math.sqrt(a * b)
                mids.append(m)
                nxt += [(m, b), (a, m)]
            level = nxt
        ok = np.asarray(fits_many(np.array(mids)), dtype=bool)
        k = 0
        for _ in range(_BATCH_DEPTH):
            if steps >= 200 or hi <= lo * (1 + 1e-13):
                break
            if ok[k]:
                lo, k = mids[k], 2 * k + 1
            else:
                hi, k = mids[k], 2 * k + 2
            steps += 1
    return lo


#: rho_for answers already computed.
_RHOS: dict = {}


def zcdp_gaussian_sigma(epsilon: float, delta: float, l2_squared) -> float:
    """The least sigma (rounded up) at which Gaussian noise, continuous or discrete and in any
    dimension, on a query whose squared L2 sensitivity is ``l2_squared`` (in the noise's units,
    e.g. a whole number on the integers) is (epsilon, delta)-DP through zCDP: such noise is
    (l2_squared / (2 sigma^2))-zCDP (Bun & Steinke 2016 Prop 1.6; the discrete Gaussian, Canonne,
    Kamath & Steinke 2020 Thm 14), and rho_for(epsilon, delta) is converted by CKS20. sigma is
    raised by ulps until l2_squared / (2 sigma^2) <= rho holds in exact rational arithmetic."""
    rho = rho_for(epsilon, delta)
    sq = Fraction(l2_squared)
    sigma = math.sqrt(float(sq) / (2.0 * rho))
    while sq / (2 * Fraction(sigma) ** 2) > Fraction(rho):
        sigma = math.nextafter(sigma, math.inf)
    return sigma
