"""optimal_bracket: pick the cheapest path that is exact, else the adaptive PLD bracket."""

from __future__ import annotations

import math

import numpy as np

from .exact import GROUPED_MAX_OUTCOMES, _pure_sum, grouped_bracket, grouped_outcomes, homogeneous_bracket
from .pld import common_lattice, lattice_bracket, lattice_points, pld_bracket
from .result import Bracket
from .split import split_bracket
from .two_sets import two_set_bracket

#: Largest composed lattice (points) for the exact common-lattice path.
LATTICE_MAX_POINTS = 1 << 20


def merge_groups(eps: np.ndarray, mult: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct non-zero epsilons (ascending) with summed multiplicities; RR(0) is the identity."""
    eps = np.asarray(eps, dtype=float)
    mult = np.asarray(mult, dtype=np.int64)
    keep = (eps > 0) & (mult > 0)
    u, inv = np.unique(eps[keep], return_inverse=True)
    m = np.zeros(u.size, dtype=np.int64)
    np.add.at(m, inv, mult[keep])
    return u, m


def optimal_bracket(eps, mult, delta_bar: float, eta: float, *, cancel=None, progress=None) -> Bracket:
    """lower <= OptComp(eps, delta_bar) <= upper with upper - lower <= eta where reachable.

    Inputs are validated and the per-query deltas already moved into delta_bar (formulas.md §4.1).
    Since lower <= OptComp(delta_bar) <= OptComp(e^{-eta/2} delta_bar), a width <= eta also gives
    Thm 1.7's accuracy side upper <= OptComp(e^{-eta/2} delta_bar) + eta.
    """
    return _bracket(eps, mult, delta_bar, eta, cancel=cancel, progress=progress, force_pld=False)


def _bracket(eps, mult, delta_bar, eta, *, cancel=None, progress=None, force_pld=False) -> Bracket:
    e, m = merge_groups(eps, mult)
    if delta_bar < 0:
        return Bracket(math.inf, math.inf, "infeasible")
    if e.size == 0:
        return Bracket(0.0, 0.0, "exact (no privacy loss)")
    if delta_bar == 0:
        return _pure_sum(e, m, 0.0)
    if delta_bar >= 1:
        return Bracket(0.0, 0.0, "exact (delta_bar >= 1)")
    if not force_pld:
        if e.size == 1:
            return homogeneous_bracket(float(e[0]), int(m[0]), delta_bar)
        outcomes = grouped_outcomes(e, m)
        if outcomes <= 4096:
            return grouped_bracket(e, m, delta_bar)
        # two small enumerated halves cost milliseconds; enumerating everything or a fine
        # common lattice can cost seconds
        b = two_set_bracket(e, m, delta_bar, cancel)
        if b is not None:
            return b
        if outcomes <= GROUPED_MAX_OUTCOMES:
            return grouped_bracket(e, m, delta_bar)
        lat = common_lattice(e)
        if lat is not None and lattice_points(e, m, 2 * lat[1]) <= LATTICE_MAX_POINTS:
            return lattice_bracket(e, m, delta_bar, lat, cancel)
    b = split_bracket(e, m, delta_bar, eta, cancel=cancel, progress=progress)
    if b is None:
        b = pld_bracket(e, m, delta_bar, eta, cancel=cancel, progress=progress)
    if progress is not None:
        progress(1.0)
    # OptComp <= sum of eps always (delta(sum eps) = 0): a coarse lattice must not report more
    total = _pure_sum(e, m, 0.0)
    if b.upper > total.upper:
        b = Bracket(total.upper, min(b.lower, total.upper), b.method)
    return b
