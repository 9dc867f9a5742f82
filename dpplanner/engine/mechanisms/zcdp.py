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

from ..numerics import inverse_square, round_up, tiny_up

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


def beyond_doubles(rho: float) -> str:
    """Why rho (beyond or near the largest double) has no finite CKS epsilon: at every alpha,
    alpha rho + log1p(-1/alpha) >= rho - log rho - log 2 (alpha - 1 = 1/rho gives the least below
    alpha = 2) and the rest of eps(alpha) is above -1."""
    said = f"rho = {rho:.6g}" if math.isfinite(rho) else "rho is above the largest double (1.8e308)"
    return (f"{said} (each release adds eps_i^2 / 2, a Gaussian 1 / (2 m^2)), and zCDP's epsilon is at "
            "least rho less 711 (CKS20 Prop 12): no finite epsilon is certified this way; the other "
            "theorems' totals still hold")


def rho_gaussian(m):
    """1/(2 m^2), rounded up (three roundings: 4 ulps of margin; below the smallest normal double,
    numerics.tiny_up; numerics.inverse_square: m * m overflows above 1.3e154)."""
    m = np.asarray(m, dtype=float)
    with np.errstate(under="ignore"):
        return tiny_up(0.5 * inverse_square(m) * (1 + 8 * 2.0 ** -53), np.isfinite(m))


def rho_pure(eps):
    """eps^2/2, rounded up (numerics.tiny_up where it underflows)."""
    if isinstance(eps, float):      # (a discrete release's rho, once per release and composition)
        eps = float(eps)
        return tiny_up(0.5 * eps * eps * (1 + 8 * 2.0 ** -53), eps > 0)
    eps = np.asarray(eps, dtype=float)
    with np.errstate(over="ignore", under="ignore"):    # (inf for eps ~ 1e200: an honest upper bound)
        return tiny_up(0.5 * eps * eps * (1 + 8 * 2.0 ** -53), eps > 0)


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

    fits_here = _verdicts(fits, _near_root(eps, d))
    lo, hi = 1e-300, 1.0
    while fits_here(hi) and hi < 1e300:       # rho <= eps always fits loosely; the loop is short
        lo, hi = hi, hi * 16.0
    while not fits_here(lo):
        if lo < 1e-290:
            raise ValueError(f"epsilon = {eps!r} at delta = {d!r} is below what zCDP can certify")
        lo /= 16.0
    for _ in range(200):
        if hi <= lo * (1 + 1e-13):
            break
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if fits_here(mid) else (lo, mid)
    if not fits(lo):
        raise ArithmeticError(f"rho_for({eps!r}, {d!r}): the bisection gave a rho that does not fit")
    if len(_RHOS) < 1 << 14:
        _RHOS[key] = lo
    return lo


#: The bracket around the root found by _near_root, checked at both ends, outside which the
#: bisection's verdicts are known without evaluating cks_epsilon (relative half-width).
_KNOWN_OUTSIDE = 1e-11


def _verdicts(fits, near):
    """``fits``, with the verdicts known where rho is outside [near (1 - w), near (1 + w)] once
    ``fits`` holds at its lower end and not at its upper one (fits falls with rho: a larger rho is
    a weaker guarantee): the bisection then takes the very steps, to the bit, with ~10
    evaluations of cks_epsilon instead of ~55 (each ~20 us; rho_for is called at every scale an
    allocation of a plan with multi-cell discrete Gaussian releases tries). ``fits`` itself where
    that check fails or there is no ``near``."""
    if near is None:
        return fits
    below, above = near * (1 - _KNOWN_OUTSIDE), near * (1 + _KNOWN_OUTSIDE)
    if not (fits(below) and not fits(above)):
        return fits
    return lambda rho: True if rho <= below else (False if rho >= above else fits(rho))


def _near_root(eps: float, d: float):
    """Where cks_epsilon(rho, d) crosses eps, by the secant method in log rho (no rounding
    control: only where rho_for's verdicts are known, checked there), from the classic
    conversion's rho = (sqrt(L + eps) - sqrt(L))^2, L = log(1/d), whose epsilon is above CKS's.
    None where it does not settle."""
    root_l = math.sqrt(-math.log(d))
    rho = (eps / (math.sqrt(root_l * root_l + eps) + root_l)) ** 2     # (the same, without cancelling)
    if not (rho > 0 and math.isfinite(rho)):
        return None
    t0, t1 = math.log(rho), math.log(rho) + 0.1
    f0 = cks_epsilon(math.exp(t0), d) - eps
    for _ in range(30):
        f1 = cks_epsilon(math.exp(t1), d) - eps
        if f1 == f0 or not math.isfinite(f1):
            break
        t0, t1, f0 = t1, t1 - f1 * (t1 - t0) / (f1 - f0), f1
        if abs(t1 - t0) < 1e-13 or not abs(t1) < 700:
            break
    return math.exp(t1) if abs(t1) < 700 else None


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
