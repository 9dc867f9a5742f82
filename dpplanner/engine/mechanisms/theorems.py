"""The two noise-aware theorems over validated Releases: "pld" and "zcdp" (issue 10).

Row i of the Releases is one release tagged plan.mech[i]: "laplace" adds Lap(sensitivity / eps_i), so its
loss has a = eps_i; "gaussian" adds the analytic-Gaussian sigma for (eps_i, delta_i), multiplier
m = gaussian_multiplier(eps_i, delta_i) (the model's sigma is sensitivity * m, one rounding);
"eps-delta" is any (eps_i, delta_i)-DP release; "discrete-laplace[:S]" / "discrete-gaussian[:S]"
add discrete noise calibrated by discrete_laplace_scale / discrete_gaussian_sigma (discrete.py).
A tag ending in "*C" is a release of C cells, each composed here as its own release (cells.py).
eps_i = 0 on a Laplace, Gaussian or discrete row (built by
allocation) means infinite noise: no privacy loss. Float rounding of the model's scale moves a and
m by at most one unit roundoff; the accounting brackets them by two ulps / 2u each way.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Optional

import numpy as np

from ..delta import log_survival, total_delta_down, total_delta_up
from ..memo import Memo
from ..optimal.deadline import Deadline
from ..theorems import PLD, ZCDP
from ..types import Composition
from ..validation import Releases
from .bracket import MAX_POINTS, aligned_step, composed_pmf, initial_step, lattice_points, side
from .ladder import CHEAP_POINTS, bracket, likely_rung, upper_step
from .composition import compose_releases, twins
from .cells import CellRows, cell_rows, only_generic
from .discrete import from_rows
from .gaussian import gaussian_multipliers
from .readout import mixed_delta
from .zcdp import beyond_doubles, cks_epsilon, rho_gaussian, rho_pure, sum_up

U = 2.0 ** -53
#: The profile's lattice is the one a bracket at this delta settles on; truncation and FFT budgets
#: are shares of it (they are added to every delta read, so smaller deltas are read more loosely).
PROFILE_DELTA = 1e-10


def _split(plan: Releases) -> CellRows:
    """The rows' cells (cells.py): per-cell parameters and the masks of each kind."""
    return cell_rows(plan.eps, plan.delta, plan.mult, plan.mech)


def plan_releases(c: CellRows, delta_g, eta: float = 0.0, twin_delta=None):
    """(Twins or None, reason) of the rows' cells, parameters bracketed for both twins (``eta``:
    what the discrete rows' continuous twins may cost)."""
    eps, delta, mult, lap, gau, ed, disc = c.eps, c.delta, c.mult, c.lap, c.gau, c.ed, c.disc
    a = eps[lap]
    a_up = np.nextafter(np.nextafter(a, np.inf), np.inf)
    a_lo = np.nextafter(np.nextafter(a, 0.0), 0.0)
    m = gaussian_multipliers(eps[gau], delta[gau]) if gau.any() else np.zeros(0)
    d_rel = _discrete_releases(c) if disc.any() else []
    return twins((a_up, a_lo), mult[lap], (m * (1 - 2 * U), m * (1 + 2 * U)), mult[gau],
                 eps[ed], delta[ed], mult[ed], delta_g, d_rel, mult[disc].tolist(), eta, twin_delta)


#: The discrete cells' releases (their noise calibrated), keyed by those cells: a pld composition
#: asks for them for its bracket and again for its zcdp cap (~1 ms each on the 100-query example).
_DISCRETE = Memo(4)


def _discrete_releases(c: CellRows) -> list:
    tags = tuple(np.asarray(c.tags)[c.disc].tolist())
    key = (c.eps[c.disc].tobytes(), c.delta[c.disc].tobytes(), tags)
    known = _DISCRETE.get(key)
    if known is None:
        known = from_rows(c.eps[c.disc], c.delta[c.disc], tags)
        _DISCRETE.put(key, known)
    return known


#: Whole pld totals, keyed by what was composed: an allocation's last composition is asked for again
#: by its forward check and by the edit's totals, and the bracket's memory does not keep the
#: calibrations, the floor and the checks around it (~3 ms each time on the 100-query example).
_TOTALS = Memo(16)


def pld_composition(plan: Releases, delta_g: float, eta: float, cancel=None, progress=None,
                    generic_total=None, upper_only: bool = False, rung: int = 0,
                    lower_ahead: bool = False) -> Composition:
    """Theorem "pld": the certified total of the actual releases, never above "optimal".
    ``generic_total()``: that "optimal" total where it is shared with the "optimal" row (computed
    here otherwise). ``upper_only``: a certified upper end only (ladder.upper_end on the ladder's
    ``rung``, ``lower_ahead`` as it takes it), no lower end, not met with the zcdp row's total."""
    start = time.perf_counter()
    key = (plan.eps.tobytes(), plan.delta.tobytes(), plan.mult.tobytes(), tuple(plan.mech),
           float(delta_g), float(eta), upper_only, rung if upper_only else 0)
    known = _TOTALS.get(key)
    if known is None:
        known = _pld_composition(plan, delta_g, eta, cancel, progress, generic_total, upper_only, rung,
                                 lower_ahead)
        if not isinstance(cancel, Deadline):    # under a caller's time limit it may be cut short
            _TOTALS.put(key, known)
    return replace(known, seconds=time.perf_counter() - start)


def _pld_composition(plan: Releases, delta_g: float, eta: float, cancel, progress, generic_total,
                     upper_only: bool, rung: int = 0, lower_ahead: bool = False) -> Composition:
    from ..optimal.bracket import lattices_skipped
    from ..theorem_inputs import optimal

    generic_total = generic_total or (lambda: optimal(plan, delta_g, eta, cancel, None))

    start = time.perf_counter()
    c, r, reason = _releases(plan, delta_g, eta)
    if only_generic(c):
        return replace(generic_total(), theorem=PLD, seconds=time.perf_counter() - start)
    result = compose_releases(r, reason, delta_g, eta, cancel, progress, upper_only, rung, lower_ahead)
    if not upper_only:  # (an upper end alone guides an allocation's search, whose forward check composes
        # the whole total: the bracket's own zCDP cap is a few ulps from the zcdp row's, ~0.2 ms a search step)
        result = _never_above_zcdp(result, plan, delta_g)
    # the floor only spares computing "optimal"; where that composes no lattice it costs less than
    # the floor (3 x 10^6 Laplace queries: 0.4 s against 8 s) and the answer is the same either way
    # (a floor at or above pld's total means "optimal" is too)
    noisy = c.lap | c.gau | c.disc
    if (not lattices_skipped(plan.eps, plan.mult, eta, delta_g)
            and result.epsilon <= _optimal_floor(plan, noisy, c.ed, delta_g, result, cancel)):
        return replace(result, seconds=time.perf_counter() - start)
    generic = generic_total()
    if generic.epsilon < result.epsilon:
        result = replace(result, epsilon=generic.epsilon, reason=generic.reason,
                         detail=result.detail + "; the generic optimal bound is smaller, reported instead")
    return replace(result, seconds=time.perf_counter() - start)


#: The cells and bracketed releases of the last plans composed, keyed as _TOTALS: an allocation's
#: forward check composes the plan its search composed last (grouping and twins: ~0.5 ms).
_RELEASES = Memo(2)


def _releases(plan: Releases, delta_g: float, eta: float):
    """(cells, Twins or None, reason) of the plan's rows (plan_releases)."""
    key = (plan.eps.tobytes(), plan.delta.tobytes(), plan.mult.tobytes(), tuple(plan.mech),
           np.array([delta_g, eta]).tobytes())
    known = _RELEASES.get(key)
    if known is None:
        c = _split(plan)
        known = (c, None, None) if only_generic(c) else (c, *plan_releases(c, delta_g, eta))
        _RELEASES.put(key, known)
    return known


def pld_start_rung(plan: Releases, delta_g: float, eta: float) -> Optional[int]:
    """The rung of pld's ladder an allocation's search of this plan starts on (ladder.likely_rung;
    0 where no lattice is composed; None: its whole bracket tells): read from the releases its
    first composition brackets (the same memory)."""
    c, r, _ = _releases(plan, delta_g, eta)
    return 0 if r is None or only_generic(c) else likely_rung(r, eta)


def pld_upper_step(plan: Releases, delta_g: float, eta: float, rung: int) -> Optional[float]:
    """The lattice an upper end alone of this plan on ``rung`` is read on (ladder.upper_step; 0: none),
    without composing it (the same memories); None where the plan's total is the generic optimal's."""
    c, r, _ = _releases(plan, delta_g, eta)
    if only_generic(c):
        return None
    return 0.0 if r is None else upper_step(r, eta, rung)


def _never_above_zcdp(result: Composition, plan: Releases, delta_g: float) -> Composition:
    """The bracket's upper end met with the "zcdp" row's total of the same releases: the bracket's
    own zCDP cap (cheap.py) is read at delta_bar from its twins' parameters, a few ulps away from
    the row's, which must never come out below pld."""
    z = zcdp_composition(plan, delta_g)
    if z.epsilon < result.epsilon:
        lower = result.epsilon_lower if result.epsilon_lower is not None else 0.0
        return replace(result, epsilon=z.epsilon, epsilon_lower=min(lower, z.epsilon), reason=None,
                       detail=result.detail + "; the zcdp total is smaller, reported instead")
    return result


#: Floors already read, per plan shape: (the epsilons they were read at, the floor). A floor read
#: at epsilons e is one for every plan of that shape whose epsilons are all >= e (see below).
_FLOORS = Memo(16)
#: A floor is read at the plan's epsilons times this, so that it also serves the nearby plans an
#: allocation tries next (its scales move by under 1 %), the edits that raise an epsilon and those
#: that lower one by up to 6 % (synthetic-100's benchmark edits, every other one x0.95: 0.05 reads
#: an edit instead of 0.52 at 63/64, ~3 ms each). Read there, the shipped plans' floors clear
#: their pld totals by 4-19 % (by 12-27 % at their own epsilons).
FLOOR_SCALE = 1 - 1 / 16


def _optimal_floor(plan: Releases, noisy, ed, delta_g: float, result: Composition, cancel) -> float:
    """A certified lower bound on the generic optimal total, cheap next to computing it: Laplace
    noise with a = eps_i is (eps_i, delta_i)-DP, so the worst (eps_i, delta_i) releases compose to at
    least what these Laplace releases do (their lower twin on a coarse lattice: the floor only has
    to clear the pld total, usually by ~10 %). When the pld total is below it, "optimal" cannot be
    smaller and is not computed. A floor of ~500 points clears on the shipped plans (1-2 ms); where
    it does not, one of ~4000 points is tried before "optimal" is computed.

    Laplace (and RR) releases with smaller parameters are dominated, so a floor read at epsilons
    e bounds every plan of the same shape (rows, deltas, delta_g) with epsilons >= e: it is read
    at FLOOR_SCALE times the plan's and remembered, and an allocation's next compositions (and
    the next edit, if it raised an epsilon) find it instead of reading their own."""
    step = result.extra.get("step", 0.0) if result.extra else 0.0
    if not step or not math.isfinite(result.epsilon):
        return -math.inf
    key = (noisy.tobytes(), ed.tobytes(), plan.mult.tobytes(), plan.delta.tobytes(), float(delta_g))
    known = _FLOORS.get(key)
    if known is not None and result.epsilon <= known[1] and np.all(plan.eps >= known[0]):
        return known[1]
    floor = -math.inf
    # ~500 points (clears on the shipped plans) scaled, then as it is, then ~4000 points
    for scale, points in ((FLOOR_SCALE, CHEAP_POINTS / 8), (1.0, CHEAP_POINTS / 8), (1.0, CHEAP_POINTS)):
        at = plan.eps * scale
        floor = max(floor, _floor_at(at, plan, noisy, ed, delta_g, step, points, cancel))
        if result.epsilon <= floor:
            _FLOORS.put(key, (at, floor))
            break
    return floor


def _floor_at(eps, plan: Releases, noisy, ed, delta_g: float, step: float, points: float, cancel) -> float:
    """The lower twin of the plan's rows as Laplace (and RR) releases of these ``eps``, on a
    lattice of about ``points`` points (-inf where none fits)."""
    a = eps[noisy]
    r, _ = twins((a, np.nextafter(a, 0.0)), plan.mult[noisy], (np.zeros(0), np.zeros(0)), np.zeros(0),
                    eps[ed], plan.delta[ed], plan.mult[ed], delta_g)
    if r is None:
        return -math.inf
    # pld's lattice was laid for its own releases: a Gaussian counted here as Laplace with its
    # eps_i may be far wider than those (eps_i = 0.05 on a 1e-12 lattice: 1e10 points), so the
    # step follows these releases' own width (never finer than pld's)
    floor_step = aligned_step(r, max(step, step * lattice_points(r, step) / points))
    if lattice_points(r, floor_step) > MAX_POINTS:
        return -math.inf        # no floor: "optimal" is then computed, as it always could be
    return side(r, floor_step, False, cancel)


#: zcdp totals, keyed as _TOTALS: each pld composition meets its upper end with the zcdp total of
#: its releases (_never_above_zcdp), and an edit's "zcdp" row asks for the allocated plan's again.
_ZCDP = Memo(16)


def zcdp_composition(plan: Releases, delta_g: float) -> Composition:
    """Theorem "zcdp": rho = sum rho_i converted with CKS20 at delta' = delta_g - sum of the
    eps-delta rows' deltas (rounded down)."""
    start = time.perf_counter()
    key = (plan.eps.tobytes(), plan.delta.tobytes(), plan.mult.tobytes(), tuple(plan.mech), float(delta_g))
    known = _ZCDP.get(key)
    if known is None:
        known = _zcdp_composition(plan, delta_g)
        _ZCDP.put(key, known)
    return replace(known, seconds=time.perf_counter() - start)


def _zcdp_composition(plan: Releases, delta_g: float) -> Composition:
    start = time.perf_counter()
    c = _split(plan)
    lap, gau, ed, disc = c.lap, c.gau, c.ed, c.disc
    mult = c.mult.astype(float)       # cells counted: each cell of a row is a release here
    rho_terms = [rho_pure(c.eps[lap | ed]) * mult[lap | ed]]
    if gau.any():
        m = gaussian_multipliers(c.eps[gau], c.delta[gau]) * (1 - 2 * U)  # less noise: rho up
        rho_terms.append(rho_gaussian(m) * mult[gau])
    if disc.any():      # eps^2 / 2 (discrete Laplace, pure DP); S^2 / (2 sigma^2) (discrete Gaussian)
        rels = _discrete_releases(c)
        rho_terms.append(np.array([d.rho() for d in rels]) * mult[disc])
    rho = sum_up(np.concatenate(rho_terms))
    spent = sum_up(c.delta[ed] * mult[ed] * (1 + 2 * U))
    delta_used = (delta_g - spent) * (1 - 2 * U)  # the subtraction and this product: rounded down
    if delta_used <= 0:
        return Composition(ZCDP, math.inf, delta_g, detail="infeasible",
                           seconds=time.perf_counter() - start,
                           reason=f"delta_g = {delta_g:.6g} is too small: the (epsilon, delta) releases' own "
                                  f"deltas add up to {spent:.6g}; raise delta_g or lower some delta_i")
    eps = cks_epsilon(rho, delta_used) if rho > 0 else 0.0
    if not math.isfinite(eps):
        return Composition(ZCDP, math.inf, delta_g, detail="no finite bound",
                           reason=beyond_doubles(rho), seconds=time.perf_counter() - start,
                           extra={"rho": rho, "delta_used": delta_used})
    return Composition(ZCDP, float(eps), delta_g,
                       detail=f"rho = {rho:.6g}, converted at delta = {delta_used:.6g}",
                       seconds=time.perf_counter() - start, extra={"rho": rho, "delta_used": delta_used})


def pld_delta(plan: Releases, eps_values, eta: float):
    """(delta_upper, delta_lower): the total delta of the actual releases at each total eps."""
    from ..optimal.atoms import delta_at

    eps_values = np.asarray(eps_values, dtype=float)
    c = _split(plan)
    log_surv = log_survival(c.delta[c.ed], c.mult[c.ed])
    # (continuous twins' slacks within a share of the profile's middling delta, not of 0.5)
    r, _ = plan_releases(c, 0.5, eta, PROFILE_DELTA)
    if r.a_up.size == 0 and r.rr_eps.size == 0 and not r.disc:
        from .gaussian import delta_upper, log_delta_bounds
        if r.mu_up == 0:
            up = lo = np.zeros(eps_values.size)
        else:
            up = delta_upper(r.mu_up, eps_values)
            lo = np.exp(log_delta_bounds(r.mu_lo, eps_values)[0]) * (1 - 4 * U)
    else:
        # the lattice is the one a bracket at a middling delta settles on; both twins are read there
        probe = replace(r, delta_bar=PROFILE_DELTA, delta_bar_hi=PROFILE_DELTA)
        step = bracket(probe, eta).step or initial_step(eta)
        up_atoms, lo_atoms = composed_pmf(probe, step, True).atoms(), composed_pmf(probe, step, False).atoms()
        if r.mu_up > 0:
            up = mixed_delta(up_atoms, r.mu_up, eps_values, True)
            lo = mixed_delta(lo_atoms, r.mu_lo, eps_values, False)
        else:
            up, lo = delta_at(up_atoms, eps_values), delta_at(lo_atoms, eps_values)
    if r.tau_up or r.tau_lo:    # discrete releases composed as continuous twins: their slacks
        up, lo = (up + r.tau_up) * (1 + 2 * U), np.maximum((lo - r.tau_lo) * (1 - 2 * U), 0.0)
    return (np.atleast_1d(total_delta_up(np.clip(up, 0.0, 1.0), log_surv)),
            np.atleast_1d(total_delta_down(np.clip(lo, 0.0, 1.0), log_surv)))
