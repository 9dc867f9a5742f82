"""compose_mechanisms: the certified total epsilon of the actual Laplace / Gaussian / discrete releases."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Optional

import numpy as np

from ..delta import delta_bar_bounds, infeasible_reason, log_survival, total_delta_up
from ..theorems import PLD
from ..types import CancelToken, Composition, ProgressCallback
from ..validation import validate_delta_g, validate_eta
from ..optimal.atoms import U
from .bracket import Twins, gaussian_params, laplace_params
from .ladder import bracket, upper_end
from .discrete import continuous_twins, from_object, grouped as discrete_grouped
from .objects import DiscreteGaussian, DiscreteLaplace, EpsDelta, Gaussian, Laplace, validate_mechanisms


def twins(lap_a, lap_mult, gauss_m, gauss_mult, rr_eps, rr_delta, rr_mult, delta_g: float,
          disc=(), disc_mult=(), eta: float = 0.0, twin_delta: Optional[float] = None
          ) -> tuple[Optional[Twins], Optional[str]]:
    """The Twins to bracket, or (None, reason) when the EpsDelta deltas alone exceed delta_g.

    lap_a = (a_up, a_lo) arrays bracketing each Laplace release's 1/m; gauss_m = (m_lo, m_hi)
    arrays bracketing each Gaussian's multiplier (m_lo gives the upper bound: less noise);
    disc: discrete.DiscreteRelease per discrete release, disc_mult their multiplicities; those
    that are nearly continuous join the Laplace and Gaussian columns as their continuous twins
    where that costs at most a small share of ``eta`` (discrete.continuous_twins; 0: none do) and
    of ``twin_delta`` (default: the delta_bar the upper twin is read at)."""
    rr_eps, rr_delta = np.asarray(rr_eps, dtype=float), np.asarray(rr_delta, dtype=float)
    rr_mult = np.asarray(rr_mult, dtype=np.int64)
    # Every sum below runs over equal parameters merged, in sorted order: the same releases give
    # the same bits whether they come as plan rows or one by one (the curve's prefix), so the
    # bracket memory recognises them.
    ds, d_mult = _grouped(rr_delta, rr_mult)
    db, db_hi = delta_bar_bounds(delta_g, ds, d_mult) if ds.size else (delta_g, delta_g)
    if db < 0:
        forced = float(total_delta_up(0.0, log_survival(ds, d_mult)))
        return None, infeasible_reason(delta_g, forced)
    d_rel, d_mult = discrete_grouped(disc, disc_mult)
    near = beside(lap_a[1], lap_mult, gauss_m[1], gauss_mult, rr_eps, rr_mult) if d_rel else (0.0, 0.0)
    cont = continuous_twins(d_rel, d_mult, float(db if twin_delta is None else min(db, twin_delta)), eta,
                            near)
    lap_k = np.concatenate([np.asarray(lap_mult, dtype=np.int64), np.asarray(cont.lap_mult, dtype=np.int64)])
    a_up, up_mult = _grouped(np.concatenate([np.asarray(lap_a[0], dtype=float), cont.lap_hi]), lap_k)
    a_lo, lo_mult = _grouped(np.concatenate([np.asarray(lap_a[1], dtype=float), cont.lap_lo]), lap_k)
    g_k = np.concatenate([np.asarray(gauss_mult, dtype=np.int64), np.asarray(cont.gauss_mult, dtype=np.int64)])
    mu_up = gaussian_params(*_grouped(np.concatenate([np.asarray(gauss_m[0], dtype=float), cont.gauss_up]), g_k))[0]
    mu_lo = gaussian_params(*_grouped(np.concatenate([np.asarray(gauss_m[1], dtype=float), cont.gauss_lo]), g_k))[1]
    keep = rr_eps > 0  # an RR(0) release has no loss
    rr_eps, rr_mult = _grouped(rr_eps[keep], rr_mult[keep])
    # the twins' slacks: the upper twin is read tau_up lower, the lower twin tau_lo higher
    db_up = (float(db) - cont.tau_up) * (1 - 2 * U) if cont.tau_up else float(db)
    db_lo = (float(db_hi) + cont.tau_lo) * (1 + 2 * U) if cont.tau_lo else float(db_hi)
    return Twins(a_up, up_mult, a_lo, lo_mult, mu_up, mu_lo, rr_eps, rr_mult, db_up, db_lo,
                 cont.rest, cont.rest_mult, cont.tau_up, cont.tau_lo), None


def beside(a, a_mult, m, m_mult, rr_eps, rr_mult) -> tuple[float, float]:
    """(sum of mu^2, sum of eps^2) of the continuous releases beside the discrete ones (Gaussian
    multipliers m, mu = 1/m; Laplace a, RR eps): what decides the hybrid bound (choose_twins)."""
    m = np.asarray(m, dtype=float)
    with np.errstate(all="ignore"):        # (an estimate: inf at the edges of floating point is fine)
        mu2 = float(np.sum(np.asarray(m_mult, dtype=float) / m ** 2)) if m.size else 0.0
        var = float(np.sum(np.asarray(a, dtype=float) ** 2 * np.asarray(a_mult, dtype=float)))
        var += float(np.sum(np.asarray(rr_eps, dtype=float) ** 2 * np.asarray(rr_mult, dtype=float)))
    return mu2, var


#: Up to this many parameters are merged in Python.
FEW = 16


def _grouped(values, mult) -> tuple[np.ndarray, np.ndarray]:
    """Equal parameters merged (their multiplicities added): one kernel power instead of many."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return values, np.zeros(0, dtype=np.int64)
    if values.size <= FEW:      # (the same arrays, without np.unique's overhead on a few entries)
        counts: dict = {}
        for v, k in zip(values.tolist(), np.asarray(mult).tolist()):
            counts[v] = counts.get(v, 0) + int(k)
        keys = sorted(counts)
        return np.array(keys, dtype=float), np.array([counts[v] for v in keys], dtype=np.int64)
    u, inv = np.unique(values, return_inverse=True)
    return u, np.bincount(inv, weights=np.asarray(mult, dtype=float)).astype(np.int64)


def compose_releases(r: Optional[Twins], reason: Optional[str], delta_g: float, eta: float,
                     cancel=None, progress=None, upper_only: bool = False, rung: int = 0,
                     lower_ahead: bool = False) -> Composition:
    """The bracket of ``r`` at eta, or (``upper_only``) the upper end on the ladder's ``rung``
    (``lower_ahead`` as ladder.upper_end takes it); ``extra["rung"]``: the rung read (where an
    allocation's search goes on with upper ends)."""
    start = time.perf_counter()
    if r is None:
        return Composition(PLD, math.inf, delta_g, detail="infeasible", reason=reason)
    up, lo, detail, step, _, read = upper_end(r, eta, cancel, rung, lower_ahead) if upper_only else \
        bracket(r, eta, cancel, progress)
    why = "Gaussian noise needs delta_g > 0 (its delta is positive at every epsilon)" \
        if math.isinf(up) and r.delta_bar == 0 and r.unbounded else None
    if math.isinf(up) and why is None:
        why = f"the privacy loss of these releases is beyond floating point ({detail})"
    return Composition(PLD, up, delta_g, epsilon_lower=lo, detail=detail, reason=why,
                       seconds=time.perf_counter() - start,
                       extra={"delta_bar": r.delta_bar, "eta": eta, "step": step, "rung": read,
                              "met_eta": up - lo <= eta})


def _generic(eps, delta, mult, delta_g: float, eta: float, cancel, progress) -> Composition:
    """EpsDelta releases only: their dominating pairs are what the generic optimal core composes
    (exactly where it can), so its bracket is this one."""
    from ..theorem_inputs import optimal
    from ..validation import Releases

    plan = Releases(np.asarray(eps, dtype=float), np.asarray(delta, dtype=float), np.asarray(mult, dtype=np.int64))
    result = optimal(plan, delta_g, eta, cancel, progress)
    lower = result.epsilon_lower if result.epsilon_lower is not None else 0.0
    return replace(result, theorem=PLD, extra={**result.extra, "met_eta": result.epsilon - lower <= eta})


def compose_mechanisms(mechanisms, delta_g, eta: float = 1e-3, multiplicities=None, *,
                       cancel: Optional[CancelToken] = None, progress: Optional[ProgressCallback] = None
                       ) -> Composition:
    """Certified total epsilon at ``delta_g`` of the composition of these releases.

    Laplace(m) / Gaussian(m): exactly that continuous noise, multiplier m = scale / sensitivity,
    worst case a shift of one sensitivity; EpsDelta(eps, delta): any (eps, delta)-DP release;
    DiscreteLaplace(scale, shift) / DiscreteGaussian(sigma, shift): that noise on the integers,
    worst case a shift of ``shift`` lattice units (their exact discrete loss distributions).
    ``epsilon`` is a certified upper bound, ``epsilon_lower`` a certified lower bound on the exact
    value; the width is at most eta unless ``detail`` says why not; inf with ``reason`` when the
    EpsDelta deltas (or a Gaussian at delta_g = 0) make delta_g infeasible.
    """
    mechs, mult = validate_mechanisms(mechanisms, multiplicities)
    delta_g = validate_delta_g(delta_g)
    eta = validate_eta(eta)
    cols: dict = {Laplace: ([], []), Gaussian: ([], []), EpsDelta: ([], [], [])}
    disc, disc_mult = [], []
    for m, k in zip(mechs, mult):
        if isinstance(m, (DiscreteLaplace, DiscreteGaussian)):
            disc.append(from_object(m)), disc_mult.append(k)
        elif isinstance(m, EpsDelta):
            e, d, ks = cols[EpsDelta]
            e.append(m.epsilon), d.append(m.delta), ks.append(k)
        else:
            ms, ks = cols[type(m)]
            ms.append(m.m), ks.append(k)
    lap_m, lap_k = cols[Laplace]
    g_m, g_k = cols[Gaussian]
    if not lap_m and not g_m and not disc:
        return _generic(*cols[EpsDelta], delta_g, eta, cancel, progress)
    r, reason = twins(laplace_params(lap_m), lap_k, (np.array(g_m), np.array(g_m)), g_k, *cols[EpsDelta],
                      delta_g, disc, disc_mult, eta)
    return compose_releases(r, reason, delta_g, eta, cancel, progress)
