"""delta_bar as a function of the total eps (the privacy profile) from the same distributions.

The UPPER distribution (exact, or connect-the-dots) gives an upper bound on delta(x) at every x
(see ``atoms.delta_at``); the lower bound comes from the exact distribution, or from the split
composition minus its certified second-order error bound (``split``).
"""

from __future__ import annotations

import numpy as np

from .atoms import delta_at
from .bracket import LATTICE_MAX_POINTS, merge_groups
from .exact import GROUPED_MAX_OUTCOMES, grouped_atoms, grouped_outcomes, homogeneous_atoms
from .pld import common_lattice, lattice_pmf, lattice_points
from .split import split_profile

#: delta level the truncation budgets of the profile are sized for (smaller deltas are still
#: bounded soundly, only less tightly).
PROFILE_DELTA_SCALE = 1e-12
#: Lattice size cap for the fast path of the profile: a plotted curve does not need the fine
#: grid of a single certified number, and the bounds stay sound on any grid.
PROFILE_MAX_POINTS = 1 << 19


def optimal_delta(eps, mult, epsilon_values, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) bounds on delta_bar(x) = sup hockey-stick of the pure-eps composition."""
    return _optimal_delta(eps, mult, epsilon_values, eta)


def _exact_pair(e: np.ndarray, m: np.ndarray):
    """Upper and lower atoms where an exact path applies, else None."""
    if e.size == 1:
        e0, m0 = float(e[0]), int(m[0])
        return homogeneous_atoms(e0, m0, True), homogeneous_atoms(e0, m0, False)
    if grouped_outcomes(e, m) <= GROUPED_MAX_OUTCOMES:
        return grouped_atoms(e, m, True), grouped_atoms(e, m, False)
    lat = common_lattice(e)
    if lat is not None and lattice_points(e, m, 2 * lat[1]) <= LATTICE_MAX_POINTS:
        a, d_up, d_lo = lat
        db = PROFILE_DELTA_SCALE
        return lattice_pmf(a, m, d_up, True, db).atoms(), lattice_pmf(a, m, d_lo, False, db).atoms()
    return None


def _optimal_delta(eps, mult, epsilon_values, eta, force_pld=False):
    xs = np.asarray(epsilon_values, dtype=float)
    e, m = merge_groups(eps, mult)
    if e.size == 0:
        return np.zeros(xs.size), np.zeros(xs.size)
    pair = None if force_pld else _exact_pair(e, m)
    if pair is None:
        # connect-the-dots above; below, the same pmf minus the certified second-order error
        return split_profile(e, m, xs, eta, PROFILE_DELTA_SCALE, PROFILE_MAX_POINTS)
    return delta_at(pair[0], xs), delta_at(pair[1], xs)
