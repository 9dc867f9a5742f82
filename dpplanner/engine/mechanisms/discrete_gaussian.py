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
from ..numerics import illinois_step
from ..validation import DISCRETE_MAX_EPSILON, DISCRETE_MIN_EPSILON, DISCRETE_RANGE
from ..optimal.atoms import TINY, U
from .discrete_objects import MAX_SIGMA, check_scale, check_shift
from .gauss_sums import (DIRECT_SIGMA, direct_terms, run_sum_bounds, tail_z, theta_bounds, theta_direct,
                         upper_tail)
from .discrete_sandwich import SIGMA_MIN, upper_terms
from .gaussian import fitting_multipliers, gaussian_multiplier


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
_SIGMAS = Memo(1 << 14)
#: Where the continuous twin calibrates, its slack may take this share of delta.
_TAU_SHARE = 2.0 ** -21


def discrete_gaussian_sigma(epsilon, delta, shift=1, cells=1) -> float:
    """The sigma (lattice units) at which discrete Gaussian noise with shift S is (eps, delta)-DP,
    rounded up so that it is certified: from sigma = 64 on, through its continuous twin
    (discrete_sandwich.py: at most ~0.06 / sigma^2 relative above the least sigma, e.g. 2e-5 at
    64, 1e-29 on a 2^-40 lattice), below by its exact profile, the least sigma to ~1e-12. The one
    home of this calibration (``discrete_gaussian_sigmas`` gives the same bits for arrays).

    ``cells`` = C > 1: the sigma at which C independent such noises, each on a query moving by at
    most S (a release of C cells, cells.py), are (eps, delta)-DP together: through zCDP, as
    C S^2 / (2 sigma^2)-zCDP converted by CKS20 (zcdp.zcdp_gaussian_sigma; the exact profile of C
    composed discrete Gaussians is what "pld" composes, this only certifies the release's own
    (eps_i, delta_i))."""
    S = check_shift(shift, "discrete Gaussian")
    eps, d = _check_eps_delta(epsilon, delta)
    if cells != 1:
        return _cells_sigma(eps, d, S, cells)
    return float(discrete_gaussian_sigmas([eps], [d], [S])[0])


def _check_eps_delta(epsilon, delta) -> tuple[float, float]:
    """The range a discrete Gaussian release is composed in (engine.validation refuses one outside
    it): a calibration outside it would give noise no plan could be composed with."""
    eps, d = float(epsilon), float(delta)
    if not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"epsilon = {epsilon!r} is not allowed; discrete Gaussian noise needs a finite epsilon > 0")
    if not DISCRETE_MIN_EPSILON <= eps <= DISCRETE_MAX_EPSILON:
        raise ValueError(f"epsilon = {epsilon!r} is outside what discrete Gaussian noise can be calibrated "
                         f"for: {DISCRETE_RANGE}")
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta = {delta!r} is not allowed; discrete Gaussian noise needs 0 < delta < 1")
    return eps, d


def discrete_gaussian_sigmas(epsilons, deltas, shifts) -> np.ndarray:
    """discrete_gaussian_sigma of each (epsilon, delta, shift), checked, remembered and calibrated
    together where the continuous twin serves (one vectorised analytic-Gaussian calibration)."""
    keys = []
    for e, dl, k in zip(list(epsilons), list(deltas), list(shifts)):
        keys.append((*_check_eps_delta(e, dl), check_shift(k, "discrete Gaussian")))
    out = np.array([math.nan if (v := _SIGMAS.get(key)) is None else v for key in keys], dtype=float)
    todo = sorted({key for key, v in zip(keys, out.tolist()) if math.isnan(v)})
    if todo:
        found = dict(zip(todo, _twin_sigmas(todo)))
        for key, v in found.items():
            found[key] = v if v is not None else _exact_sigma(*key)
        _SIGMAS.put_all(found.items())
        out = np.array([found.get(key, v) for key, v in zip(keys, out.tolist())], dtype=float)
    return out


def _twin_sigmas(keys) -> list:
    """Per (eps, delta, S): the sigma certified through the continuous twin, or None where that
    does not serve (sigma < 64, or a slack above _TAU_SHARE delta). With m_G a multiplier whose
    analytic Gaussian is (eps, delta (1 - 2^-20))-DP (gaussian.fitting_multipliers: within ~1e-9
    of the least), sigma = S m_G (1 + s_hi) rounded up: then
    delta_DG(eps) <= delta_G(S (1 + s_hi) / sigma) + tau_up <= delta (1 - 2^-20) + tau_up <= delta.
    s_hi and tau_up are read at sigma0 = S m_G (1 - 4u) <= sigma (they only shrink as sigma grows)
    and checked again at the sigma returned. One calibration per (eps, delta), whatever the
    shifts (sigma0 once read at the least multiplier for delta itself: two per pair, narrowed to
    1e-14, for a sigma ~1e-7 smaller where the twin's slack is near its share)."""
    eps, dl, S = (np.array(c, dtype=float) for c in zip(*keys))
    target = dl * (1 - 2.0 ** -20)
    pairs = sorted(set(zip(eps.tolist(), target.tolist())))
    m_of = dict(zip(pairs, fitting_multipliers(*(np.array(c) for c in zip(*pairs))).tolist()))
    out: list = [None] * len(keys)
    for i, (e, t, k, d) in enumerate(zip(eps.tolist(), target.tolist(), S.tolist(), dl.tolist())):
        m, k = m_of[(e, t)], int(k)
        sigma0 = k * m * (1 - 4 * U)
        terms = upper_terms(sigma0, k) if SIGMA_MIN <= sigma0 <= MAX_SIGMA else None
        if terms is None or terms[1] > _TAU_SHARE * d:
            continue
        sigma = math.nextafter(k * m * (1 + terms[0]) * (1 + 16 * U), math.inf)
        final = upper_terms(sigma, k)
        if not (k * 2.0 ** -10 <= sigma <= min(k * 2.0 ** 64, MAX_SIGMA) and final is not None):
            continue
        # the multiplier of the upper twin at this sigma is at least m_G, its slack within the share
        m_up = sigma / k / (1 + final[0]) * (1 - 8 * U)
        if m_up >= m and final[1] <= _TAU_SHARE * d:
            out[i] = sigma
    return out


def _exact_sigma(eps: float, d: float, S: int) -> float:
    """The least sigma certified by dg_delta_upper, to ~1e-12 relative (a false-position search)."""

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
        lo, g_lo, hi, g_hi, kept = illinois_step(x, g(x), lo, g_lo, hi, g_hi, kept)
    return check_scale(hi, S, "DiscreteGaussian", "sigma")


def _cells_sigma(eps: float, d: float, S: int, cells) -> float:
    """discrete_gaussian_sigma of C > 1 cells (see there)."""
    from .zcdp import zcdp_gaussian_sigma

    if isinstance(cells, bool) or not isinstance(cells, int) or cells < 1:
        raise ValueError(f"cells = {cells!r} is not allowed; it must be a whole number >= 1")
    key = (eps, d, S, cells)
    known = _SIGMAS.get(key)
    if known is None:
        known = check_scale(zcdp_gaussian_sigma(eps, d, cells * S * S), S, "DiscreteGaussian", "sigma")
        _SIGMAS.put(key, known)
    return known
