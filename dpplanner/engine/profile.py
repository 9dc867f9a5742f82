"""The privacy profile: total delta as a function of total epsilon under optimal composition, or,
given what each release is, of the noise the releases actually add (the "pld" theorem)."""

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
                    num: int = 200, mechanisms=None, cancel: Optional[CancelToken] = None,
                    progress: Optional[ProgressCallback] = None) -> Profile:
    """delta_upper/delta_lower bracket the total delta at each total eps. With ``mechanisms``
    naming Laplace or Gaussian releases, the bracket is for those releases' actual noise: the
    upper end is the smaller of two valid upper bounds (optimal's and pld's), the lower end pld's
    (optimal's lower end bounds the worst release with these (eps_i, delta_i), not this noise)."""
    from .optimal import optimal_delta

    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    eta = validate_eta(eta)
    grid = _eps_grid(eps_values, num, float(plan_sums(plan).sum_eps[0]))
    if cancel is not None:
        cancel.check()
    eps_u, mult_u = grouped(plan)
    bar_up, bar_lo = optimal_delta(eps_u, mult_u, grid, eta)
    log_surv = log_survival(plan.delta, plan.mult)
    up = total_delta_up(np.clip(np.asarray(bar_up, dtype=float), 0.0, 1.0), log_surv)
    lo = total_delta_down(np.clip(np.asarray(bar_lo, dtype=float), 0.0, 1.0), log_surv)
    if any(m != "eps-delta" for m in plan.mech):
        from .mechanisms import pld_delta

        if cancel is not None:
            cancel.check()
        pld_up, lo = pld_delta(plan, grid, eta)
        up = np.minimum(up, pld_up)
    if progress is not None:
        progress(1.0)
    return Profile(eps=grid, delta_upper=np.atleast_1d(up), delta_lower=np.atleast_1d(lo))


def delta_for_epsilon(epsilons, deltas, epsilon_g, *, eta: float = 1e-3, multiplicities=None,
                      mechanisms=None) -> tuple[float, float]:
    """(upper, lower) bounds on the total delta at total epsilon ``epsilon_g`` (optimal composition,
    or the releases' actual noise when ``mechanisms`` names it; see privacy_profile)."""
    epsilon_g = validate_epsilon_g(epsilon_g)
    p = privacy_profile(epsilons, deltas, eta=eta, multiplicities=multiplicities, eps_values=[epsilon_g],
                        mechanisms=mechanisms)
    return float(p.delta_upper[0]), float(p.delta_lower[0])


__all__ = ["Profile", "privacy_profile", "delta_for_epsilon"]
