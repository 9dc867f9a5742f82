"""The discrete Gaussian's privacy loss as lattice twins (see discrete_gaussian.py for the loss).

x ~ N_Z(0, sigma^2), loss L(x) = l (S/2 - x), l = S / sigma^2; the mean of u = e^{-L} over any
set of x is sum f(x - S) / sum f(x) (f(x) e^{-L(x)} = f(x - S)), so every run of integers has its
mass and its mean of u as Gaussian sums (gauss_sums.py: term by term for sigma <= DIRECT_SIGMA,
Euler-Maclaurin bounds above it).

* UPPER: connect the dots (Doroshenko et al. 2022; kernels.py), atom by atom for small sigma
  (each loss moved up by its rounding), cell by cell for large sigma: a cell's run keeps an upper
  bound on its mass M and a lower bound on its mean of u E, and gives (M - e^lo E) / (1 - e^-s) to
  its top point and (e^lo E - e^-s M) / (1 - e^-s) to its bottom one (less E only moves mass up,
  more M only adds mass: both only raise delta).
* LOWER: Jensen. The integers are grouped in runs of about one step of loss, each run put at the
  lattice point below its Jensen point -log(mean of u), computed from a lower bound on its mass and
  an upper bound on its mean (any grouping is sound). The runs are centred a little above lattice
  points (a run's Jensen point is (kappa - 1/2) Var(L | run) from its centre, up to the asymmetry
  of its integers, kappa = d log P / dL = x / S), so that it is rarely rounded down a whole step.
* Integers beyond |x| <= X = z sigma (Phi(-z) <= tail / 2) are cut: the highest losses go to
  +infinity (upper) or are dropped (lower), the lowest losses are moved up to the lowest point
  (upper) or dropped (lower).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..optimal.atoms import TINY, U
from ..optimal.lattice import LatticePMF
from .discrete_laplace import ctd
from .gauss_sums import (DIRECT_SIGMA, direct_terms, run_sum_bounds, tail_z, theta_bounds, theta_direct,
                         upper_tail)

#: A kernel may not have more points than this (the bracket's lattice limit stands far below).
MAX_KERNEL_POINTS = 1 << 26


def dg_kernel(sigma: float, shift: int, step: float, upper: bool, tail: float) -> LatticePMF:
    """The UPPER (or LOWER) twin of one discrete Gaussian release's loss on lattice ``step``, with
    at most ``tail`` cut from its ends (to +inf above, counted against delta, or dropped below)."""
    X = math.ceil(tail_z(tail) * sigma) + 1
    span = 2.0 * X * shift / (sigma * sigma) / step
    if span > MAX_KERNEL_POINTS:
        raise ValueError(f"a discrete Gaussian (sigma {sigma:.6g}, shift {shift}) needs about {span:,.0f} "
                         f"lattice points at step {step:.3g}")
    out = upper_tail(-X, sigma)              # the mass beyond X on each side, over sqrt(2 pi) sigma
    if sigma <= DIRECT_SIGMA:
        return (_direct_upper if upper else _direct_lower)(sigma, shift, step, X, out)
    return (_runs_upper if upper else _runs_lower)(sigma, shift, step, X, out)


def _gamma(n) -> float:
    return 1.01 * (float(n) + 4) * U


def _jensen_shift(S: int, sigma: float, step: float, loss):
    """How far above a lattice point the runs of the lower twin at this loss are centred: a run
    of width s has its Jensen point within (1/2 - kappa)^+ s^2 / 12 below its centre, up to the
    asymmetry of its integers (half a spacing l), with 1/2 - kappa = L / mu^2 (module docstring)."""
    mu2 = (S / sigma) ** 2
    return np.minimum(np.maximum(loss, 0.0) / mu2 * step * step * 0.12 + 0.6 * S / (sigma * sigma), step / 2)


def _direct_upper(sigma: float, S: int, step: float, X: int, out: float) -> LatticePMF:
    x = np.arange(-X, X + 1, dtype=float)
    vals, rel_f = direct_terms(x, sigma)
    th_lo, _ = theta_direct(vals, rel_f, X, sigma)
    loss = S * (S - 2.0 * x) / (2.0 * sigma * sigma)      # S (S - 2x) is exact; two roundings after
    loss = loss + 4 * U * np.abs(loss) + TINY                # >= the exact loss
    offset = float(loss[-1])                                 # the lowest (x = X)
    pos = np.maximum(np.nextafter(loss - offset, np.inf), 0.0)
    n, lo, hi = ctd(pos, vals / th_lo, step)
    size = int(n.max()) + 2
    p = np.bincount(n, lo, minlength=size) + np.bincount(n + 1, hi, minlength=size)
    terms = int(np.max(np.bincount(n, minlength=size) + np.bincount(n + 1, minlength=size)))
    extra = out / th_lo * (1 + 4 * U)
    p[0] += extra                                            # x > X: the lowest losses, moved up
    rel = rel_f + _gamma(terms) + 32 * U
    return _trimmed(LatticePMF(step, 0, p, offset, True, rel=rel, err=size * TINY, inf_mass=extra))


def dg_ctd_lower(sigma: float, shift: int, step: float, tail: float):
    """Connect the dots of a release the discrete Gaussian dominates (for the hybrid lower bound,
    hybrid.py): each loss rounded down, the masses over an upper bound on theta, the integers
    beyond X dropped. None above DIRECT_SIGMA (its runs have no atoms to split)."""
    if not sigma <= DIRECT_SIGMA:
        return None
    S = shift
    X = math.ceil(tail_z(tail) * sigma) + 1
    if 2.0 * X * S / (sigma * sigma) / step > MAX_KERNEL_POINTS:
        return None
    x = np.arange(-X, X + 1, dtype=float)
    vals, rel_f = direct_terms(x, sigma)
    _, th_hi = theta_direct(vals, rel_f, X, sigma)
    loss = S * (S - 2.0 * x) / (2.0 * sigma * sigma)      # S (S - 2x) is exact; two roundings after
    loss = loss - 4 * U * np.abs(loss) - TINY                # <= the exact loss
    offset = float(loss[-1])                                 # the lowest (x = X)
    pos = np.maximum(np.nextafter(loss - offset, 0.0), 0.0)
    n, lo, hi = ctd(pos, vals / th_hi, step)
    size = int(n.max()) + 2
    p = np.bincount(n, lo, minlength=size) + np.bincount(n + 1, hi, minlength=size)
    terms = int(np.max(np.bincount(n, minlength=size) + np.bincount(n + 1, minlength=size)))
    rel = rel_f + _gamma(terms) + 32 * U
    return _trimmed(LatticePMF(step, 0, p, offset, False, rel=rel, err=size * TINY))


def spacing_down(sigma: float, S: int) -> float:
    """A double <= the exact spacing l = S / sigma^2 of the loss's atoms."""
    return S / (sigma * sigma) * (1 - 4 * U)


def _direct_lower(sigma: float, S: int, step: float, X: int, out: float) -> LatticePMF:
    x = np.arange(-X, X + 1, dtype=float)
    vals, rel_f = direct_terms(x, sigma)
    ell = spacing_down(sigma, S)
    whole = round(ell / step)
    if whole >= 1 and abs(ell / step - whole) <= 1e-9 * whole and \
            Fraction(whole) * Fraction(step) <= Fraction(S) / Fraction(sigma) ** 2:
        # the step divides the spacing (aligned_step): every atom on the lattice, moved down by at
        # most (X - x) (l - whole s) from the lowest one (itself rounded down)
        _, th_hi = theta_direct(vals, rel_f, X, sigma)
        low = S * (S - 2.0 * X) / (2.0 * sigma * sigma)
        low = low - 4 * U * abs(low) - TINY
        p = np.zeros(2 * X * whole + 1)
        p[::whole] = vals[::-1] / th_hi                       # x = X first: the lowest loss
        return _trimmed(LatticePMF(step, 0, p, low, False, rel=rel_f + 4 * U, err=p.size * TINY))
    shifted, rel_s = direct_terms(x - S, sigma)             # f(x - S) = f(x) e^{-L(x)}
    _, th_hi = theta_direct(vals, rel_f, X, sigma)
    loss = S * (S - 2.0 * x) / (2.0 * sigma * sigma)
    run = np.floor((loss + step / 2 - _jensen_shift(S, sigma, step, loss)) / step)
    run = (run - run.min()).astype(np.int64)
    m = np.bincount(run, vals)
    e = np.bincount(run, shifted)
    r = max(rel_f, rel_s) + _gamma(np.max(np.bincount(run)))
    return _jensen(m, e, r, th_hi, step)


def _jensen(m: np.ndarray, e: np.ndarray, r: float, th_hi: float, step: float) -> LatticePMF:
    """Runs with masses m (relative error r) and sums of f(x - S) e (relative error r), each at
    the lattice point below a lower bound on its Jensen point log(m / e)."""
    keep = (m > 0) & (e > 0)                 # (e = 0: loss beyond the range of doubles; dropped)
    m, e = m[keep], e[keep]
    if m.size == 0:                          # nothing certified: no mass at all is a lower twin
        return LatticePMF(step, 0, np.zeros(1), 0.0, False)
    j = np.log(m) - np.log(e)
    j = j - (2.5 * r + 8 * U * (np.abs(j) + 1))
    point = np.floor(j / step).astype(np.int64)
    first = int(point.min())
    p = np.bincount(point - first, m / th_hi)
    return _trimmed(LatticePMF(step, first, p, 0.0, False, rel=r + 4 * U, err=p.size * TINY))


def _cells(sigma: float, S: int, step: float, X: int, shift=None):
    """Runs of integers, consecutive and covering [-X, X]: run n holds the x with L(x) in
    ((n - 1) s + shift(n - 1), n s + shift(n)] (shift: a function of n, at most s; none: 0), up to
    rounding at the ends of runs, which only matters where the caller says so. Returns (n, first
    x, last x) of the non-empty runs."""
    ell = S / (sigma * sigma)
    w = step / ell
    n_top = math.ceil(ell * (S / 2.0 + X) / step) + 2       # (+-2 cover the roundings and shifts)
    n_bot = math.floor(ell * (S / 2.0 - X) / step) - 3
    n = np.arange(n_bot - 1, n_top + 1, dtype=float)
    shift = np.zeros(n.size) if shift is None else shift(n)
    gamma = S / 2.0 - n * w - shift / ell
    e = 8 * U * (S / 2.0 + np.abs(n) * w + np.abs(shift / ell)) + TINY
    A = np.clip(np.ceil(gamma + e), -X, X + 1)           # the least x with L(x) <= n s + shift
    A = np.minimum.accumulate(A)
    A[0], A[-1] = X + 1, -X
    lo, hi = A[1:], A[:-1] - 1
    full = hi >= lo
    return n[1:][full], lo[full], hi[full]


def _runs_upper(sigma: float, S: int, step: float, X: int, out: float) -> LatticePMF:
    th_lo, _ = theta_bounds(sigma)
    n, a, b = _cells(sigma, S, step, X)
    _, m_hi = run_sum_bounds(a, b, sigma)
    e_lo, _ = run_sum_bounds(a - S, b - S, sigma)
    bottom = (n - 1) * step                                  # the cell is [(n - 1) s, n s]
    # e^bottom E, lowered by the roundings of bottom and of the cells' ends (an x up to l e below
    # the bottom): less E is the same mass higher up. At least e^-s M: all of it at the top.
    slack = 16 * U * (np.abs(bottom) + S * S / (sigma * sigma) + 2)
    with np.errstate(divide="ignore", under="ignore"):
        eu = np.exp(np.log(e_lo) + bottom - slack) * (1 - 4 * U)
    eu = np.maximum(eu, math.exp(-step) * m_hi)
    den = -math.expm1(-step)
    w_top = ((m_hi - eu) * (1 + 4 * U) + 2 * U * m_hi) / den * (1 + 4 * U)
    w_bot = np.maximum(eu - math.exp(-step) * m_hi, 0.0) * (1 + 4 * U) / den * (1 + 4 * U)
    first = int(n[0]) - 1
    idx = (n - 1 - first).astype(np.int64)
    size = int(idx.max()) + 2
    p = (np.bincount(idx, w_bot, minlength=size) + np.bincount(idx + 1, w_top, minlength=size)) / th_lo
    extra = out / th_lo * (1 + 4 * U)
    p[0] += extra
    return _trimmed(LatticePMF(step, first, p * (1 + 4 * U), 0.0, True, rel=8 * U, err=size * TINY,
                               inf_mass=extra))


def _runs_lower(sigma: float, S: int, step: float, X: int, out: float) -> LatticePMF:
    _, th_hi = theta_bounds(sigma)
    # runs (n s - s/2 + d_n, n s + s/2 + d_n], d_n = _jensen_shift at n s
    _n, a, b = _cells(sigma, S, step, X, lambda n: step / 2 + _jensen_shift(S, sigma, step, n * step))
    m_lo, _ = run_sum_bounds(a, b, sigma)
    _, e_hi = run_sum_bounds(a - S, b - S, sigma)
    return _jensen(m_lo, e_hi, 8 * U, th_hi, step)


def _trimmed(k: LatticePMF) -> LatticePMF:
    nz = np.flatnonzero(k.p)
    if nz.size == 0:
        return LatticePMF(k.step, 0, np.zeros(1), k.offset, k.upper, rel=k.rel, inf_mass=k.inf_mass)
    j0, j1 = int(nz[0]), int(nz[-1]) + 1
    return LatticePMF(k.step, k.start + j0, k.p[j0:j1].copy(), k.offset, k.upper, rel=k.rel,
                      err=(j1 - j0) * TINY, inf_mass=k.inf_mass)
