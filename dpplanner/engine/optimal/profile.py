"""delta_bar as a function of the total eps (the privacy profile) from the same distributions.

The UPPER distribution (exact, or connect-the-dots) gives an upper bound on delta(x) at every x,
the LOWER one (exact, or rounded-down epsilons) a lower bound; see ``atoms.delta_at``.
"""

from __future__ import annotations

import numpy as np

from .atoms import Atoms, delta_at
from .bracket import LATTICE_MAX_POINTS, merge_groups
from .exact import GROUPED_MAX_OUTCOMES, grouped_atoms, grouped_outcomes, homogeneous_atoms
from .pld import common_lattice, initial_step, lattice_pmf, lattice_points, plan_pmf

#: delta level the truncation budgets of the profile are sized for (smaller deltas are still
#: bounded soundly, only less tightly).
PROFILE_DELTA_SCALE = 1e-12
#: Lattice size cap for the fast path of the profile: a plotted curve does not need the fine
#: grid of a single certified number, and the bounds stay sound on any grid.
PROFILE_MAX_POINTS = 1 << 19


def _profile_step(e: np.ndarray, m: np.ndarray, eta: float) -> float:
    step = initial_step(e, m, 1e-6, eta)
    while lattice_points(e, m, step) > PROFILE_MAX_POINTS:
        step *= 2
    return step


def _atom_pair(e: np.ndarray, m: np.ndarray, eta: float, force_pld: bool = False) -> tuple[Atoms, Atoms]:
    if force_pld:
        step = _profile_step(e, m, eta)
        db = PROFILE_DELTA_SCALE
        return plan_pmf(e, m, step, True, db).atoms(), plan_pmf(e, m, step, False, db).atoms()
    if e.size == 1:
        e0, m0 = float(e[0]), int(m[0])
        return homogeneous_atoms(e0, m0, True), homogeneous_atoms(e0, m0, False)
    if grouped_outcomes(e, m) <= GROUPED_MAX_OUTCOMES:
        return grouped_atoms(e, m, True), grouped_atoms(e, m, False)
    lat = common_lattice(e)
    db = PROFILE_DELTA_SCALE
    if lat is not None and lattice_points(e, m, 2 * lat[1]) <= LATTICE_MAX_POINTS:
        a, d_up, d_lo = lat
        return lattice_pmf(a, m, d_up, True, db).atoms(), lattice_pmf(a, m, d_lo, False, db).atoms()
    step = _profile_step(e, m, eta)
    return plan_pmf(e, m, step, True, db).atoms(), plan_pmf(e, m, step, False, db).atoms()


def optimal_delta(eps, mult, epsilon_values, eta: float) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) bounds on delta_bar(x) = sup hockey-stick of the pure-eps composition."""
    return _optimal_delta(eps, mult, epsilon_values, eta)


def _optimal_delta(eps, mult, epsilon_values, eta, force_pld=False):
    xs = np.asarray(epsilon_values, dtype=float)
    e, m = merge_groups(eps, mult)
    if e.size == 0:
        return np.zeros(xs.size), np.zeros(xs.size)
    up, lo = _atom_pair(e, m, eta, force_pld)
    return delta_at(up, xs), delta_at(lo, xs)
