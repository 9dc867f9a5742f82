"""Concurrent composition of interactive mechanisms (formulas.md §5).

Two results are reported and the better valid one is used:

* Vadhan–Wang 2021 for approximate DP: (sum eps_i, sum_i e^{sum_{j<i} eps_j} delta_i), in the
  delta-minimising order (ascending (e^{eps_i} - 1)/delta_i, queries with delta_i = 0 last);
* Lyu 2022 / Vadhan–Zhang 2023: concurrent composition is no worse than non-interactive
  composition, so the optimal composition result applies unchanged.
"""

from __future__ import annotations

import numpy as np

from .numerics import log_expm1, round_up
from .types import Composition
from .validation import Releases

NAME = "concurrent"
VW = "Vadhan-Wang 2021"
LYU_VZ = "Lyu22/VZ23 (= optimal)"


def vadhan_wang_order(eps: np.ndarray, delta: np.ndarray) -> np.ndarray:
    """Row order minimising the VW delta: ascending log((e^eps - 1)/delta), delta = 0 last."""
    with np.errstate(divide="ignore"):
        log_num = np.where(eps > 0, log_expm1(np.where(eps > 0, eps, 1.0)), -np.inf)
        key = np.where(delta > 0, log_num - np.log(np.where(delta > 0, delta, 1.0)), np.inf)
    return np.argsort(key, kind="stable")


def _log_geometric(eps: np.ndarray, m: np.ndarray) -> np.ndarray:
    """log(sum_{j<m} e^{j eps}) = log((e^{m eps} - 1)/(e^eps - 1)), stable for any eps >= 0."""
    zero = eps == 0.0
    safe = np.where(zero, 1.0, eps)
    return np.where(zero, np.log(m.astype(float)), log_expm1(m * safe) - log_expm1(safe))


def vadhan_wang_delta(eps: np.ndarray, delta: np.ndarray, mult: np.ndarray | None = None
                      ) -> tuple[float, list[int]]:
    """(total delta rounded up, order of the rows) for the VW approximate-DP bound."""
    mult = np.ones(len(eps), dtype=np.int64) if mult is None else mult
    order = vadhan_wang_order(eps, delta)
    e, d, m = eps[order], delta[order], mult[order]
    # sum_{j<i} m_j eps_j in the order: added one row at a time, as the loop this replaced did
    run = np.add.accumulate(m.astype(float) * e)
    prefix = float(run[-1]) if run.size else 0.0
    before = np.concatenate([[0.0], run[:-1]])
    has = d > 0
    if not has.any():
        return 0.0, [int(i) for i in order]
    logs = np.log(d[has]) + before[has] + _log_geometric(e[has], m[has])
    log_total = _log_sum_exp(logs)
    total = np.inf if log_total > 1.0 else float(np.exp(log_total))
    # Each log term carries an absolute error of about (rows) * ulp(prefix + |log delta|); e^error
    # turns that into a relative error of the total.
    log_error = 8 * len(order) * 2.0 ** -53 * (prefix + abs(log_total) + 50.0)
    return round_up(total, rel=1e-12 + 2 * log_error), [int(i) for i in order]


def _log_sum_exp(a: np.ndarray) -> float:
    """log(sum e^a) by scipy.special.logsumexp's operations (the largest terms apart, their count
    m: log1p(s / m) + log(m) + max), without its array-API dispatch (~0.3-0.5 ms a call)."""
    a_max = np.max(a)
    if not np.isfinite(a_max):
        return float(a_max)     # every term -inf (or one +inf): scipy's answer, not nan
    at = a == a_max
    m = float(np.count_nonzero(at))
    s = np.sum(np.exp(np.where(at, -np.inf, a) - a_max))
    s = s / m if s != 0 else s
    return float(np.log1p(s) + np.log(m) + a_max)


def concurrent(plan: Releases, delta_g: float, sum_eps_up: float, optimal: Composition) -> Composition:
    vw_delta, order = vadhan_wang_delta(plan.eps, plan.delta, plan.mult)
    vw_eps = sum_eps_up if vw_delta <= delta_g else np.inf
    extra = {VW: vw_eps, "Vadhan-Wang delta": vw_delta, "Vadhan-Wang order": order,
             LYU_VZ: optimal.epsilon}
    if optimal.epsilon <= vw_eps and optimal.epsilon < np.inf:
        return Composition(NAME, optimal.epsilon, optimal.delta, epsilon_lower=optimal.epsilon_lower,
                           detail=f"{LYU_VZ}: {optimal.detail}", extra=extra)
    if vw_eps < np.inf:
        return Composition(NAME, vw_eps, vw_delta, detail=VW, extra=extra)
    return Composition(NAME, np.inf, delta_g, detail="none valid", extra=extra,
                       reason=optimal.reason or f"Vadhan-Wang delta {vw_delta:.6g} exceeds delta_g")
