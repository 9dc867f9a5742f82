"""Optimal homogeneous composition (KOV15 Thm 3.3, continuous root as in MV Thm 1.4; formulas.md §3).

Applies only when every query has the same (eps, delta). The exact continuous root is computed by
the optimal core's ``homogeneous_bracket``; the literal Thm 3.3 grid value (k - 2i) eps is kept in
``extra`` for comparison with other tools.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp

from .delta import delta_bar_bounds, infeasible_reason, log_survival, total_delta_up
from .errors import NotApplicable
from .types import Composition
from .validation import Releases

NAME = "kov"


def require_homogeneous(plan: Releases) -> None:
    for i in range(len(plan.eps)):
        if plan.eps[i] != plan.eps[0] or plan.delta[i] != plan.delta[0]:
            raise NotApplicable(
                # Queries are numbered from 1, as in the window's table and the report.
                f"kov applies only when all queries are equal: query {i + 1} is (eps={plan.eps[i]:g}, "
                f"delta={plan.delta[i]:g}) but query 1 is (eps={plan.eps[0]:g}, delta={plan.delta[0]:g}); "
                "use 'optimal' for unequal queries")


def kov_grid_epsilon(eps: float, k: int, delta_bar_value: float) -> float:
    """KOV Thm 3.3 as literally stated: the least (k - 2i) eps whose delta_i <= delta_bar.

    delta_i = sum_{l<i} C(k,l) (e^{(k-l)eps} - e^{(k-2i+l)eps}) / (1+e^eps)^k, in log space. Only
    informative (the continuous root is never larger), so plain float accuracy is enough.
    """
    if delta_bar_value < 0:
        return math.inf
    if eps == 0:
        return 0.0
    log_norm = k * np.logaddexp(0.0, eps)
    ls = np.arange(k + 1)
    log_binom = gammaln(k + 1) - gammaln(ls + 1) - gammaln(k - ls + 1)
    log_target = math.log(delta_bar_value) if delta_bar_value > 0 else -math.inf

    def log_delta_i(i: int) -> float:
        # e^{(k-l)eps} - e^{(k-2i+l)eps} = e^{(k-l)eps} (1 - e^{-2(i-l)eps})
        l = ls[:i]
        terms = log_binom[:i] + (k - l) * eps + np.log(-np.expm1(-2.0 * (i - l) * eps))
        return float(logsumexp(terms) - log_norm)

    lo, hi = 0, k // 2  # delta_i grows with i: find the largest i with delta_i <= delta_bar
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if log_delta_i(mid) <= log_target:
            lo = mid
        else:
            hi = mid - 1
    return float((k - 2 * lo) * eps)


def kov(plan: Releases, delta_g: float) -> Composition:
    require_homogeneous(plan)
    from .optimal import homogeneous_bracket  # the optimal core (engine/optimal/)

    db, db_hi = delta_bar_bounds(delta_g, plan.delta, plan.mult)  # upper read at db, lower at db_hi
    if db < 0:
        forced = float(total_delta_up(0.0, log_survival(plan.delta, plan.mult)))
        return Composition(NAME, math.inf, delta_g, detail="infeasible", reason=infeasible_reason(delta_g, forced))
    bracket = homogeneous_bracket(float(plan.eps[0]), plan.k, db, db_hi)
    extra = {"delta_bar": db}
    if plan.k <= 1_000_000:
        extra["grid (Thm 3.3)"] = kov_grid_epsilon(float(plan.eps[0]), plan.k, db)
    return Composition(NAME, float(bracket.upper), delta_g, epsilon_lower=float(bracket.lower),
                       detail=f"KOV Thm 3.3 continuous root ({bracket.method})", extra=extra)
