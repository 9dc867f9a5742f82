"""Optimal homogeneous composition (KOV15 Thm 3.3, continuous root as in MV Thm 1.4; formulas.md §3).

Applies only when every query has the same (eps, delta). The exact continuous root is computed by
the optimal core's ``homogeneous_bracket``; the literal Thm 3.3 grid value (k - 2i) eps is kept in
``extra`` for comparison with other tools.
"""

from __future__ import annotations

import math

from .basic import basic_epsilon
from .delta import delta_bar_bounds, infeasible_reason, log_survival, total_delta_up
from .errors import NotApplicable
from .stats import plan_sums
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


def _grid_index(eps: float, k: int, x: float) -> int:
    """The largest i in [0, k // 2] with (k - 2i) eps >= x (0 if none): the least grid point >= x."""
    i = min(k // 2, max(0, math.floor((k * eps - x) / (2 * eps))))
    # (the quotient's rounding may put i one off either way)
    while i > 0 and (k - 2 * i) * eps < x:
        i -= 1
    while i < k // 2 and (k - 2 * (i + 1)) * eps >= x:
        i += 1
    return i


def kov_grid_epsilon(eps: float, k: int, lower: float, upper: float, delta_bar_value: float) -> float:
    """KOV Thm 3.3 as literally stated: the least (k - 2i) eps, 0 <= i <= k/2, whose delta_i <=
    delta_bar, from the continuous root's bracket [lower, upper] at delta_bar.

    At epsilon_g = (k - 2i) eps the continuous condition's left side equals delta_i, and it falls as
    epsilon_g grows: delta_i <= delta_bar exactly where (k - 2i) eps >= the root. The least grid
    point >= upper is therefore certified and those below lower are not; the few in between (a
    root on a grid point: 0 for an even k and a large delta_bar) are told apart by the certified
    upper delta there, in O(log k) read-outs of the binomial's window. The sums delta_i themselves
    cost O(k) each: 10^6 queries made them most of an allocation's time.
    """
    if eps == 0:
        return 0.0
    lo, hi = _grid_index(eps, k, upper), _grid_index(eps, k, lower)
    if hi > lo:
        from .optimal.atoms import delta_fn
        from .optimal.exact import homogeneous_atoms

        delta_up = delta_fn(homogeneous_atoms(eps, k, True, delta_bar_value))
        while lo < hi:      # the largest i whose grid point is certified
            mid = (lo + hi + 1) // 2
            if delta_up((k - 2 * mid) * eps) <= delta_bar_value:
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
    grid = kov_grid_epsilon(float(plan.eps[0]), plan.k, float(bracket.lower), float(bracket.upper), db)
    extra = {"delta_bar": db, "grid (Thm 3.3)": grid}
    upper, detail = float(bracket.upper), f"KOV Thm 3.3 continuous root ({bracket.method})"
    # (the root's upper end carries its finder's margin, 1e-15 absolute: far above the plain sum of
    # tiny releases, also a bound here (sum delta_i <= delta_g), and then above a budget of 1e-15
    # that two releases at the least epsilon of their discrete noise, 5.4e-20, fit in)
    plain = float(basic_epsilon(plan_sums(plan), delta_g)[0])
    if plain < upper:
        upper, detail = plain, detail + "; the basic sum is smaller, reported instead"
    return Composition(NAME, upper, delta_g, epsilon_lower=min(float(bracket.lower), upper), detail=detail,
                       extra=extra)
