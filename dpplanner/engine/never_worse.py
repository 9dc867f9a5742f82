"""Upper bounds on the optimal composition from cheaper theorems (closed forms, O(1) per plan).

Each is a theorem about k-fold composition of (eps_i, delta_i)-DP releases whose total delta is at
most delta_g, so each bounds OptComp((eps_i, delta_i), delta_g) from above; the optimal engine's
upper end is met with the least of them, so ``optimal`` (and ``concurrent``, which reports it) is
never worse than a cheaper theorem, whatever its lattices could resolve:

* every candidate of ``advanced`` (basic, DRV, tanh, KOV Thm 3.5 (b) and (c), Steinke);
* zCDP for generic releases: an (eps_i, delta_i)-DP release is delta_i-approximately
  eps_i^2/2-zCDP (Bun & Steinke 2016), approximate zCDP composes adaptively with the deltas added,
  and rho-zCDP is converted with Canonne-Kamath-Steinke 2020 at delta' = delta_g - sum delta_i
  (rounded down), so the total delta is at most delta_g (formulas.md §7).
"""

from __future__ import annotations

import numpy as np

from .advanced import advanced_candidates
from .mechanisms.zcdp import cks_epsilon
from .numerics import round_up
from .stats import Sums

ZCDP = "zCDP (CKS20)"


def zcdp_generic(s: Sums, delta_g: float) -> np.ndarray:
    """The CKS total of rho = sum eps_i^2 / 2 at delta_g - sum delta_i (inf where no room)."""
    rho = np.asarray(round_up(0.5 * s.sum_sq), dtype=float)
    room = np.asarray(s.delta_room(delta_g), dtype=float)
    ok = (room > 0) & np.isfinite(rho)  # (a sum of squares that overflowed bounds nothing)
    out = np.full(room.shape, np.inf)
    if ok.size == 1 and ok[0]:      # one plan: cks_epsilon's scalar path, the same number
        out[0] = cks_epsilon(float(rho[0]), float(room[0]))
    elif ok.any():
        out[ok] = np.atleast_1d(cks_epsilon(rho[ok], room[ok]))
    return out


def cheap_bounds(s: Sums, delta_g: float) -> dict[str, np.ndarray]:
    """Every cheap upper bound, by name, as arrays over the plan(s) in ``s`` (inf: not valid)."""
    out = {name: eps for name, (eps, _delta) in advanced_candidates(s, delta_g).items()}
    out[ZCDP] = zcdp_generic(s, delta_g)
    return out


def best_cheap(s: Sums, delta_g: float) -> tuple[np.ndarray, list[str]]:
    """The least cheap bound per plan and the name of the candidate that gives it."""
    return _least(cheap_bounds(s, delta_g))


def _least(bounds: dict[str, np.ndarray]) -> tuple[np.ndarray, list[str]]:
    names = list(bounds)
    table = np.stack([np.asarray(bounds[n], dtype=float) for n in names])
    pick = np.argmin(table, axis=0)
    return table[pick, np.arange(table.shape[1])], [names[i] for i in pick.tolist()]


def best_cheap_for(plan, s: Sums, delta_g: float, upper: float) -> tuple[float, str]:
    """``best_cheap`` for one plan whose own bracket ends at ``upper``, met with the registry's own
    zCDP total where that could be the least: both are valid upper bounds, and the theorem sums
    its rho in another order and rounding than ``Sums`` (the two differ in the 13th digit), so
    only their minimum keeps ``optimal`` <= ``zcdp`` exactly. Elsewhere (the result more than a
    part in 10^9 below the sums' zCDP bound) the theorem's total is not computed (39 ms at 10^5)."""
    bounds = cheap_bounds(s, delta_g)
    cheap, names = _least(bounds)
    best, name = float(cheap[0]), names[0]
    if min(upper, best) >= float(bounds[ZCDP][0]) * (1 - 1e-9):
        from .mechanisms.theorems import zcdp_composition  # (its module imports the lattice engine)

        own = zcdp_composition(plan, delta_g).epsilon
        if own < best:
            return float(own), ZCDP
    return best, name
