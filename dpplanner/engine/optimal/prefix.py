"""The optimal bracket for every prefix of a plan, computed incrementally.

The running upper (connect-the-dots) and lower (rounded-down) lattice pmfs of Y = L + sum eps are
extended by one query at a time: a 2- or 3-atom kernel, i.e. a few shifted adds of the running
array (no FFT, so only relative rounding errors, gamma_3 per step). The root is read only at the
requested prefix lengths. One lattice step is chosen for the whole plan so that the first-order
lower-bound error at the full length K is about ``width`` / 2 (widths grow with k).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .atoms import U, sup_root
from .bracket import merge_groups
from .binomial import log_rr
from .lattice import LatticePMF, sparse_convolve, truncate
from .pld import common_lattice, initial_step, lattice_points, upper_kernel

#: Bound on the running lattice size (points) of the prefix curve.
PREFIX_MAX_POINTS = 1 << 20


def _lower_kernel(eps: float, step: float) -> LatticePMF:
    n = math.floor(2.0 * eps / step)
    e_lo = n * step / 2.0
    lp, lq = log_rr(e_lo)
    ker = np.zeros(n + 1)
    ker[0] += math.exp(lq)
    ker[n] += math.exp(lp)
    return LatticePMF(step, 0, ker, -e_lo, False, rel=16 * U + 4 * U * (abs(lp) + abs(lq) + 1))


def _directed_fraction(x: Fraction, upper: bool) -> float:
    f = float(x)
    if upper and Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    if not upper and Fraction(f) > x:
        f = math.nextafter(f, -math.inf)
    return f


def _lattice_kernel(a: int, d: float, upper: bool) -> LatticePMF:
    """RR(a d) exactly on the Y-lattice 2d (stride a): the common-lattice (exact) prefix path."""
    exact = Fraction(a) * Fraction(d)
    e_eff = float(exact)
    lp, lq = log_rr(e_eff)
    ker = np.zeros(a + 1)
    ker[0] += math.exp(lq)
    ker[a] += math.exp(lp)
    rel = 16 * U + 4 * U * (abs(lp) + abs(lq) + 1) + 4 * U * e_eff  # e_eff is a d rounded
    return LatticePMF(2 * d, 0, ker, _directed_fraction(-exact, upper), upper, rel=rel)


def _extend(run: LatticePMF, ker: LatticePMF, tail: float) -> LatticePMF:
    c, terms = sparse_convolve(run.p, ker.p)
    g = 1.01 * (terms + 2) * U
    rel = run.rel + ker.rel + run.rel * ker.rel
    rel = rel + g + rel * g
    off = run.offset + ker.offset
    off = math.nextafter(off, math.inf) if run.upper else math.nextafter(off, -math.inf)
    nxt = LatticePMF(run.step, run.start + ker.start, c, off, run.upper, rel=rel,
                     err=run.err, inf_mass=run.inf_mass)
    return truncate(nxt, tail)


_ZERO_UP = LatticePMF(1.0, 0, np.ones(1), 0.0, True)   # RR(0): loss 0 with probability 1
_ZERO_LO = LatticePMF(1.0, 0, np.ones(1), 0.0, False)


def optimal_prefix_curve(eps, delta_bars, ks, width: float, *, cancel=None, progress=None):
    """(upper, lower) arrays of OptComp(eps[:k], delta_bars[j]) for each k = ks[j] (ascending)."""
    eps = np.asarray(eps, dtype=float)
    delta_bars = np.asarray(delta_bars, dtype=float)
    ks = np.asarray(ks, dtype=np.int64)
    K = int(ks[-1]) if ks.size else 0
    upper = np.zeros(ks.size)
    lower = np.zeros(ks.size)
    if K == 0:
        return upper, lower
    e, m = merge_groups(eps[:K], np.ones(K, dtype=np.int64))
    pos = delta_bars[delta_bars > 0]
    dmin = float(pos.min()) if pos.size else 1e-12
    lat = common_lattice(e) if e.size else None
    if lat is not None and lattice_points(e, m, 2 * lat[1]) <= PREFIX_MAX_POINTS:
        # all epsilons on one small lattice (typed decimals): exact kernels, no discretisation
        a_of = {float(v): int(ai) for v, ai in zip(e.tolist(), lat[0].tolist())}
        d_up, d_lo = lat[1], lat[2]

        def kernels(x: float):
            if x == 0.0:
                return _ZERO_UP, _ZERO_LO
            return _lattice_kernel(a_of[x], d_up, True), _lattice_kernel(a_of[x], d_lo, False)
        step_up, step_lo = 2 * d_up, 2 * d_lo
    else:
        if e.size == 0:
            step = 1.0
        else:
            step = initial_step(e, m, dmin, width)
            while lattice_points(e, m, step) > PREFIX_MAX_POINTS:
                step *= 2

        def kernels(x: float):
            return upper_kernel(x, step), _lower_kernel(x, step)
        step_up = step_lo = step
    tail = 1e-6 * dmin / K
    run_up = LatticePMF(step_up, 0, np.ones(1), 0.0, True)
    run_lo = LatticePMF(step_lo, 0, np.ones(1), 0.0, False)
    # running sums of non-negative terms, widened by the recursive-summation bound (i + 2) u
    sums_up = np.cumsum(eps[:K]) * (1 + 2.02 * (np.arange(K) + 2) * U) + 1e-300
    prev_lower, prev_db = 0.0, math.inf
    j = 0
    for i in range(K):
        if cancel is not None and i % 16 == 0:
            cancel.check()
        trim = tail if i % 8 == 7 else 0.0  # truncating every 8th step is enough and cheaper
        k_up, k_lo = kernels(float(eps[i]))
        run_up = _extend(run_up, k_up, trim * 8)
        run_lo = _extend(run_lo, k_lo, trim * 8)
        while j < ks.size and ks[j] == i + 1:
            db = float(delta_bars[j])
            if db < 0:
                upper[j] = lower[j] = math.inf
            elif db == 0:
                s_up = math.fsum(eps[: i + 1].tolist())
                upper[j] = math.nextafter(s_up, math.inf) * (1 + 2 * U * (i + 1))
                lower[j] = max(0.0, s_up * (1 - 2 * U * (i + 1)))
            elif db >= 1:
                upper[j] = lower[j] = 0.0
            else:
                # OptComp grows with k and as delta_bar shrinks, so the previous certified lower
                # bound is a valid floor for this root (only the atoms above it are read)
                floor = prev_lower if db <= prev_db else 0.0
                u = sup_root(run_up.atoms(above=floor), db, floor)
                lo = sup_root(run_lo.atoms(above=floor), db, floor)
                upper[j] = u * (1 + 1e-12) + 1e-15 if math.isfinite(u) else u
                lower[j] = max(0.0, lo * (1 - 1e-12) - 1e-15)
                prev_lower, prev_db = lower[j], db
                # OptComp <= the plain sum: a coarse lattice must not report more than that
                s_up = float(sums_up[i])
                if upper[j] > s_up:
                    upper[j] = s_up
                    lower[j] = min(lower[j], s_up)
            j += 1
        if progress is not None and i % 64 == 0:
            progress((i + 1) / K)
    if progress is not None:
        progress(1.0)
    return upper, lower
