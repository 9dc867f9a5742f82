"""The privacy profile: total delta as a function of total epsilon under optimal composition."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from .theorem_inputs import grouped
from .delta import log_survival, total_delta_down, total_delta_up
from .stats import plan_sums
from .types import CancelToken, ProgressCallback
from .validation import validate_epsilon_g, validate_eta, validate_plan


@dataclass(frozen=True)
class Profile:
    """delta_upper[j] (sound) and delta_lower[j] bracket the total delta at total epsilon eps[j]."""

    eps: np.ndarray
    delta_upper: np.ndarray
    delta_lower: np.ndarray


def _eps_grid(eps_values, num, sum_eps: float) -> np.ndarray:
    if eps_values is None:
        if isinstance(num, bool) or not isinstance(num, int) or num < 2:
            raise ValueError(f"num = {num!r} is not allowed; it must be a whole number >= 2")
        return np.linspace(0.0, sum_eps, num)
    values = np.asarray(eps_values, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("eps_values must be a non-empty one-dimensional sequence of numbers")
    bad = np.flatnonzero(~np.isfinite(values) | (values < 0))
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"eps_values[{i}] = {float(values[i])!r} is not allowed; each must be a finite number >= 0")
    return values


def privacy_profile(epsilons, deltas, *, eta: float = 1e-3, multiplicities=None, eps_values=None,
                    num: int = 200, cancel: Optional[CancelToken] = None,
                    progress: Optional[ProgressCallback] = None) -> Profile:
    from .optimal import optimal_delta

    plan = validate_plan(epsilons, deltas, multiplicities)
    eta = validate_eta(eta)
    grid = _eps_grid(eps_values, num, float(plan_sums(plan).sum_eps[0]))
    if cancel is not None:
        cancel.check()
    eps_u, mult_u = grouped(plan)
    bar_up, bar_lo = optimal_delta(eps_u, mult_u, grid, eta)
    log_surv = log_survival(plan.delta, plan.mult)
    up = total_delta_up(np.clip(np.asarray(bar_up, dtype=float), 0.0, 1.0), log_surv)
    lo = total_delta_down(np.clip(np.asarray(bar_lo, dtype=float), 0.0, 1.0), log_surv)
    if progress is not None:
        progress(1.0)
    return Profile(eps=grid, delta_upper=np.atleast_1d(up), delta_lower=np.atleast_1d(lo))


def delta_for_epsilon(epsilons, deltas, epsilon_g, *, eta: float = 1e-3, multiplicities=None
                      ) -> tuple[float, float]:
    """(upper, lower) bounds on the total delta at total epsilon ``epsilon_g`` (optimal composition)."""
    epsilon_g = validate_epsilon_g(epsilon_g)
    p = privacy_profile(epsilons, deltas, eta=eta, multiplicities=multiplicities, eps_values=[epsilon_g])
    return float(p.delta_upper[0]), float(p.delta_lower[0])


__all__ = ["Profile", "privacy_profile", "delta_for_epsilon"]
