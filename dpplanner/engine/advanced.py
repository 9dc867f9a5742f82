"""Advanced composition: the best valid of several closed forms (formulas.md §2).

Candidates (each a valid upper bound on its own; the reported epsilon is their minimum):

* ``basic``            (sum eps_i, sum delta_i), when sum delta_i <= delta_g (§1);
* ``DRV``              Dwork–Rothblum–Vadhan applied to the largest eps and delta: every query is
                       then (eps_max, delta_max)-DP, so the homogeneous theorem holds with
                       delta' = delta_g - k delta_max (§2.1);
* ``tanh``             the refined homogeneous form, again at eps_max (§2.2);
* ``KOV Thm 3.5 (b)``, ``KOV Thm 3.5 (c)`` heterogeneous, with delta~ = delta_bar (§2.4);
* ``Steinke``          1/2 sum eps^2 + sqrt(2 ln(1/delta) sum eps^2), delta = delta_g - sum delta_i (§2.3).
"""

from __future__ import annotations

import numpy as np

from .delta import delta_bar_from_log, infeasible_reason, total_delta_up
from .numerics import round_down, round_up
from .stats import Sums
from .theorems import ADVANCED
from .types import Composition

NAME = ADVANCED
CANDIDATES = ("basic", "DRV", "tanh", "KOV Thm 3.5 (b)", "KOV Thm 3.5 (c)", "Steinke")


def _safe_log_inv(d: np.ndarray) -> np.ndarray:
    """ln(1/d) where d > 0, nan elsewhere (the candidate is then marked invalid)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d > 0, -np.log(np.where(d > 0, d, 1.0)), np.nan)


def drv_epsilon(eps_max, k, delta_prime):
    """DRV: sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1); inf for eps > 700 (overflow, useless)."""
    eps_max, k, delta_prime = (np.asarray(a, dtype=float) for a in (eps_max, k, delta_prime))
    with np.errstate(over="ignore"):  # (only where eps_max > 700, which np.where replaces by inf)
        kl = np.where(eps_max <= 700, eps_max * np.expm1(np.minimum(eps_max, 700)), np.inf)
    return round_up(np.sqrt(2 * k * _safe_log_inv(delta_prime)) * eps_max + k * kl)


def tanh_epsilon(eps_max, k, delta_prime):
    """Refined homogeneous form: sqrt(2k ln(1/delta')) eps + k eps tanh(eps/2)."""
    eps_max, k, delta_prime = (np.asarray(a, dtype=float) for a in (eps_max, k, delta_prime))
    return round_up(np.sqrt(2 * k * _safe_log_inv(delta_prime)) * eps_max
                    + k * eps_max * np.tanh(eps_max / 2))


def kov35_b(sum_tanh, sum_sq, delta_tilde):
    """KOV Thm 3.5 (b): sum eps tanh(eps/2) + sqrt(2 sum eps^2 ln(e + sqrt(sum eps^2)/delta~))."""
    sum_tanh, sum_sq, dt = (np.asarray(a, dtype=float) for a in (sum_tanh, sum_sq, delta_tilde))
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = 0.5 * np.log(sum_sq) - np.log(np.where(dt > 0, dt, np.nan))
        inner = np.logaddexp(1.0, log_ratio)  # ln(e + sqrt(S)/delta~) without overflow
    inner = np.where(sum_sq > 0, inner, 1.0)
    return round_up(sum_tanh + np.sqrt(2 * sum_sq * np.where(dt > 0, inner, np.nan)))


def kov35_c(sum_tanh, sum_sq, delta_tilde):
    """KOV Thm 3.5 (c): sum eps tanh(eps/2) + sqrt(2 sum eps^2 ln(1/delta~))."""
    sum_tanh, sum_sq, dt = (np.asarray(a, dtype=float) for a in (sum_tanh, sum_sq, delta_tilde))
    return round_up(sum_tanh + np.sqrt(2 * sum_sq * _safe_log_inv(dt)))


def steinke_epsilon(sum_sq, delta):
    """Steinke: 1/2 sum eps^2 + sqrt(2 ln(1/delta) sum eps^2) (via zCDP, adaptive)."""
    sum_sq, delta = (np.asarray(a, dtype=float) for a in (sum_sq, delta))
    return round_up(0.5 * sum_sq + np.sqrt(2 * _safe_log_inv(delta) * sum_sq))


#: The candidates of the last KEEP Sums asked about, with them (held: no other object can take
#: their ids), each of at most KEEP_POINTS plans or prefixes (a few hundred kilobytes at most). An
#: evaluation asks twice for the same ones, for the advanced row and for optimal's cap
#: (never_worse), of its plan's Sums and of its curve's, in either order (the window's engine
#: process computes the optimal total, its curve, then the advanced row's total and curve).
_last: list = []
KEEP, KEEP_POINTS = 2, 1024


def advanced_candidates(s: Sums, delta_g: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every candidate's (epsilon, total delta) arrays; epsilon is inf where it does not apply.
    The arrays are shared with the next callers asking about the same ``s``: never modify them."""
    for held, d, out in _last:
        if held is s and d == delta_g:
            return out
    out = _candidates(s, delta_g)
    if s.k.size <= KEEP_POINTS:
        _last[:] = [(s, delta_g, out)] + _last[:KEEP - 1]
    return out


def _candidates(s: Sums, delta_g: float) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    k = s.k.astype(float)
    delta_g_arr = np.full(k.shape, delta_g)
    drv_delta = round_down(delta_g - round_up(k * s.max_delta))
    # (1 - delta_max)^k <= prod(1 - delta_i): using it gives a smaller, still valid delta'.
    hom_log_surv = k * np.log1p(-s.max_delta) * (1 + 1e-15)
    hom_bar = delta_bar_from_log(delta_g, hom_log_surv)
    kov_bar = delta_bar_from_log(delta_g, s.log_surv)
    steinke_delta = s.delta_room(delta_g)  # delta_g - sum delta_i for the binary doubles, rounded down

    def valid(eps, ok):
        return np.where(ok & np.isfinite(eps), eps, np.inf)

    with np.errstate(invalid="ignore", over="ignore"):  # a form that overflows is inf: not valid
        out = {
            "basic": (valid(s.sum_eps, s.delta_fits(delta_g)), s.sum_delta),
            "DRV": (valid(drv_epsilon(s.max_eps, k, drv_delta), drv_delta > 0), delta_g_arr),
            "tanh": (valid(tanh_epsilon(s.max_eps, k, hom_bar), hom_bar > 0), delta_g_arr),
            "KOV Thm 3.5 (b)": (valid(kov35_b(s.sum_tanh, s.sum_sq, kov_bar), kov_bar > 0),
                                np.minimum(total_delta_up(np.maximum(kov_bar, 0), s.log_surv), delta_g)),
            "KOV Thm 3.5 (c)": (valid(kov35_c(s.sum_tanh, s.sum_sq, kov_bar), kov_bar > 0),
                                np.minimum(total_delta_up(np.maximum(kov_bar, 0), s.log_surv), delta_g)),
            "Steinke": (valid(steinke_epsilon(s.sum_sq, steinke_delta), steinke_delta > 0), delta_g_arr),
        }
    return out


def advanced_epsilon(s: Sums, delta_g: float) -> np.ndarray:
    cands = advanced_candidates(s, delta_g)
    return np.min(np.stack([eps for eps, _ in cands.values()]), axis=0)


def advanced(s: Sums, delta_g: float) -> Composition:
    cands = advanced_candidates(s, delta_g)
    values = {name: float(eps[0]) for name, (eps, _) in cands.items()}
    winner = min(CANDIDATES, key=lambda n: values[n])
    eps = values[winner]
    if eps == np.inf:
        forced = float(total_delta_up(0.0, s.log_surv[0]))
        return Composition(NAME, eps, float(s.sum_delta[0]), detail="none valid", extra=values,
                           reason=infeasible_reason(delta_g, forced))
    return Composition(NAME, eps, float(cands[winner][1][0]), detail=winner, extra=values)
