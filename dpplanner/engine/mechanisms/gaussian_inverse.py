"""The inverse of the analytic Gaussian mechanism's delta (gaussian.py) in epsilon: the root of its
directed bound (``epsilon_bracket``, a false-position search), and the epsilon a noise multiplier
is calibrated for (``gaussian_epsilon``), which never asks ``gaussian_multiplier`` for more noise.
"""

from __future__ import annotations

import math

import numpy as np

from ..numerics import illinois_step
from .gaussian import check_delta, check_multiplier, gaussian_multiplier, log_delta_bound


def gaussian_epsilon(m: float, delta: float) -> float:
    """The least eps >= 0 (to ~1e-13 relative, rounded up) at which N(0, (m D)^2) noise is
    (eps, delta)-DP, nudged up if needed so that gaussian_multiplier(eps, delta) <= m (the round
    trip never asks for more noise than m: the delta bound is only monotone up to its margins)."""
    mu = 1.0 / check_multiplier(m)
    delta = check_delta(delta)
    _lo, hi = epsilon_bracket(mu, math.log(delta), True, 1e-14)
    if hi == 0.0:
        return 0.0
    if not math.isfinite(hi):
        raise ValueError(f"no finite epsilon makes noise multiplier m = {m!r} reach delta = {delta!r}")
    for k in range(64):
        if gaussian_multiplier(hi, delta) <= m:
            break
        hi *= 1.0 + 1e-13 * 2.0 ** k
    return hi


def epsilon_bracket(mu: float, log_target: float, upper: bool, rel_tol: float) -> tuple[float, float]:
    """(lo, hi) around the least eps >= 0 with log_delta_bound(mu, eps, upper) <= log_target:
    the bound is > log_target at lo (or lo = 0) and <= it at hi, and hi - lo <= rel_tol * hi
    ((0, 0) if eps = 0 already meets it; hi = inf if no finite eps does).

    False position on the bound (smooth in eps), the kept end's value halved when it is kept
    twice (Illinois), a halving whenever two steps did not halve the interval; once close, each
    evaluation is of two points rel_tol / 2 apart around the estimate, which straddle the root
    (the bound is noisy at that scale, so steps from its values would wander), further apart
    after each miss. About 6 evaluations, where halving took fifty."""
    def g(x):
        return log_delta_bound(mu, x, upper) - log_target

    g_lo = float(g(0.0))
    if g_lo <= 0:
        return 0.0, 0.0
    # delta(eps) <= Phi(mu/2 - eps/mu) <= exp(-(eps/mu - mu/2)^2 / 2): the root is at most about this
    lo, hi = 0.0, mu * mu / 2 + mu * math.sqrt(2 * max(-log_target, 0.0))
    if not 0.0 < hi < math.inf:
        hi = max(1.0, mu * mu)
    for _ in range(1100):
        g_hi = float(g(hi))
        if g_hi <= 0:
            break
        lo, g_lo, hi = hi, g_hi, hi * 2.0
        if not math.isfinite(hi):
            return lo, math.inf
    kept, width = 0, hi - lo          # kept: which end stayed last time (-1 lo, +1 hi)
    spread = rel_tol / 4              # of the two points around the estimate, once close
    for it in range(200):
        if hi - lo <= rel_tol * hi:
            break
        x = hi - g_hi * (hi - lo) / (g_hi - g_lo)
        if hi - lo <= 1e-6 * hi:
            x = x if lo <= x <= hi else 0.5 * (lo + hi)    # (g_hi = -inf gives nan)
            xs = np.array([x * (1 - spread), x * (1 + spread)])
            gs = g(xs)
            for x_i, g_i in zip(xs.tolist(), gs.tolist()):
                if lo < x_i < hi:
                    if g_i <= 0:
                        hi, g_hi = x_i, g_i
                        break
                    lo, g_lo = x_i, g_i
            # both on one side: the estimate is off (where the bound is flat at this scale, it
            # says nothing), so the next two points are 8 times as far apart
            closed = gs[0] > 0 >= gs[1]
            spread = rel_tol / 4 if closed else min(spread * 8, 0.25)
            continue
        if it % 2 == 1 and hi - lo > 0.5 * width or not lo < x < hi:
            x = 0.5 * (lo + hi)
        if it % 2 == 1:
            width = hi - lo
        lo, g_lo, hi, g_hi, kept = illinois_step(x, float(g(x)), lo, g_lo, hi, g_hi, kept)
    return lo, hi
