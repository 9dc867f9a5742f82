"""Connect-the-dots kernels of many Laplace and RR releases at once, one row each (vectorised).

The same pmfs as kernels.laplace_upper and kernels.rr_upper (see there for why they are upper
twins, and hybrid.py for their gaps), built for a whole array of parameters in a few numpy passes
instead of one Python call per release: a plan of 10^5 distinct releases spent seconds there.
Row i holds the kernel on indices 0 .. n_i + 1 (zeros after); rel[i] and err[i] are its relative
and absolute (l1) error bounds, as in the scalar functions.
"""

from __future__ import annotations

import math

import numpy as np

from ..optimal.atoms import TINY
from ..optimal.binomial import log_rr
from .hybrid import density_gap, gap_bound
from .kernels import KERNEL_ULPS

U = 2.0 ** -53
#: Up to this exponent (a row's span, in loss) a dense exp is the product of a row's and a column's
#: factors, neither of which over- or underflows.
OUTER_EXP = 600.0


def _floor_frac(x: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray]:
    """n = floor(x / step) and x - n step, exact (fmod is exact; see kernels.floor_frac)."""
    frac = np.fmod(x, step)
    return np.rint((x - frac) / step).astype(np.int64), frac


def _split_top(p: np.ndarray, n: np.ndarray, frac: np.ndarray, step: float, atom: np.ndarray) -> None:
    """Connect the dots for an atom of each row at n step + frac (kernels._split_top, per row)."""
    rows = np.arange(p.shape[0])
    on = frac == 0.0
    den = -np.expm1(-step)
    p[rows[on], n[on]] += atom[on]
    off = ~on
    f = frac[off]
    p[rows[off], n[off]] += atom[off] * np.exp(-f) * -np.expm1(-(step - f)) / den
    p[rows[off], n[off] + 1] += atom[off] * -np.expm1(-f) / den


def laplace_ctd_rows(a: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, rel, err): the connect-the-dots pmfs of Laplace losses with these a (kernels.laplace_upper)."""
    a = np.asarray(a, dtype=float)
    n, frac = _floor_frac(2.0 * a, step)
    width = int(n.max()) + 2
    p = np.zeros((a.size, width))
    p[:, 0] = 0.5 * np.exp(-a)
    j = np.arange(width - 1, dtype=float)
    with np.errstate(under="ignore"):
        if width * step <= OUTER_EXP:
            # e^{(j+1) s/2} e^{-a}: one exp per row and per column, not per entry (10^5 distinct
            # releases: the dense exp was ~1/8 of a rung); each factor's argument is rounded once
            # (U of it), each exp and the product add an ulp: within the rel below
            mass = np.outer(np.exp(-a) * (0.5 * -math.expm1(-step / 2.0)), np.exp((j + 1) * (step / 2.0)))
        else:
            # (j < n: the exponent is at most 0; the masked entries beyond n are clipped, not overflowed)
            mass = 0.5 * np.exp(np.minimum((j[None, :] + 1) * (step / 2.0) - a[:, None], 0.0)) \
                * -np.expm1(-step / 2.0)
    mass[j[None, :] >= n[:, None]] = 0.0
    hi_share = 1.0 / (1.0 + np.exp(-step / 2.0))
    lo_share = np.exp(-step / 2.0) * hi_share
    p[:, :-1] += mass * lo_share
    p[:, 1:] += mass * hi_share
    _split_top(p, n, frac, step, np.full(a.size, 0.5))
    part = frac > 0.0                # the last, partial cell [n s, 2a] of the density
    rows, f, den = np.flatnonzero(part), frac[part], -np.expm1(-step)
    p[rows, n[part]] += 0.5 * np.exp(-f / 2.0) * -np.expm1(-f / 2.0) * -np.expm1(-(step - f / 2.0)) / den
    p[rows, n[part] + 1] += 0.5 * np.expm1(-f / 2.0) ** 2 / den
    rel = KERNEL_ULPS * U + 4 * U * (a + n * step)
    return p, rel, (n + 2) * TINY


def rr_ctd_rows(eps: np.ndarray, step: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(p, rel, err): the connect-the-dots pmfs of RR(eps) (kernels.rr_upper), one row each."""
    eps = np.asarray(eps, dtype=float)
    n, frac = _floor_frac(2.0 * eps, step)
    lp, lq = log_rr(eps)
    p = np.zeros((eps.size, int(n.max()) + 2))
    p[:, 0] = np.exp(lq)
    _split_top(p, n, frac, step, np.exp(lp))
    rel = KERNEL_ULPS * U + 4 * U * (np.abs(lp) + np.abs(lq) + 1)
    return p, rel, np.zeros(eps.size)


def laplace_gap_rows(a: np.ndarray, step: float, theta: float) -> np.ndarray:
    """hybrid.laplace_gaps of each a (the same sums, vectorised), rounded up."""
    a = np.asarray(a, dtype=float)
    n, f = _floor_frac(2.0 * a, step)
    q = step * (theta + 0.5)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_sum = (step / 2 - a) + (n - 1) * q + np.log(-np.expm1(-n * q)) - np.log(-np.expm1(-q))
        dens = np.where(n > 0, 0.25 * density_gap(step) * np.exp(np.minimum(log_sum, 700.0)), 0.0)
        top = (0.5 * gap_bound(f, step) + 0.25 * density_gap(step)) * np.exp(np.minimum(theta * n * step, 700.0))
    return (dens + np.where(f > 0, top, 0.0)) * (1 + 64 * U)


def rr_gap_rows(eps: np.ndarray, step: float, theta: float) -> np.ndarray:
    """hybrid.rr_gaps of each eps (its top atom's mass p, rounded up), vectorised."""
    eps = np.asarray(eps, dtype=float)
    n, f = _floor_frac(2.0 * eps, step)
    p_top = np.exp(log_rr(eps)[0]) * (1 + 8 * U)
    with np.errstate(over="ignore"):
        return p_top * gap_bound(f, step) * np.exp(np.minimum(theta * n * step, 700.0)) * (1 + 8 * U)
