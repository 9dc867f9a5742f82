"""One end's releases on a rung's lattice (spectral.py composes them): the Laplace and RR kinds
as rows, the others as kernels, and the sum of their offsets rounded to that end's safe side."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..optimal.pld import TAIL_FRACTION
from .kernel_rows import laplace_ctd_rows, laplace_gap_rows, rr_ctd_rows, rr_gap_rows
from .kernels import laplace_lower, rr_lower

U = 2.0 ** -53


@dataclass
class Side:
    """One end's releases on a lattice: ``rows`` (p, rel, err, offset, mult, gaps(theta) or None per
    row) for the Laplace and RR kinds, ``kernels`` (LatticePMF, mult) for the others."""

    p: np.ndarray
    rel: np.ndarray
    err: np.ndarray
    offset: np.ndarray
    mult: np.ndarray
    gaps: object            # theta -> per-row gap sums (hybrid lower end), or None
    kernels: list
    ctd_kernels: int = 0    # how many of the kernels (with multiplicity) are CTD twins for the hybrid bound


def side_of(r, step: float, upper: bool, ctd: bool) -> Side:
    """The kinds of the upper end (upper: CTD twins of a_up, the discrete kinds' upper twins), or of
    the lower end: CTD twins of a_lo (``ctd``, for the hybrid bound) or the lower twins."""
    a, mult = (r.a_up, r.up_mult) if upper else (r.a_lo, r.lo_mult)
    rr, rr_mult = r.rr_eps, r.rr_mult
    if upper or ctd:
        p1, rel1, err1 = laplace_ctd_rows(a, step) if a.size else (np.zeros((0, 1)),) + (np.zeros(0),) * 2
        p2, rel2, err2 = rr_ctd_rows(rr, step) if rr.size else (np.zeros((0, 1)),) + (np.zeros(0),) * 2
        offsets = np.concatenate([-a, -rr])
        gaps = (lambda theta: np.concatenate([laplace_gap_rows(a, step, theta), rr_gap_rows(rr, step, theta)]))
    else:                   # lower twins (first order in the step)
        kernels = [laplace_lower(x, step) for x in a.tolist()] + [rr_lower(e, step) for e in rr.tolist()]
        p1 = _stack([k.p for k in kernels])
        rel1 = np.array([k.rel for k in kernels])
        err1 = np.array([k.err for k in kernels])
        p2, rel2, err2 = np.zeros((0, p1.shape[1])), np.zeros(0), np.zeros(0)
        offsets = np.array([k.offset for k in kernels])
        gaps = None
    width = max(p1.shape[1], p2.shape[1])
    # (Laplace rows alone are the stack as they are: 10^5 of them are ~25 MB, copied twice here)
    p = p1 if p2.shape[0] == 0 and p1.shape[1] == width else \
        np.vstack([np.pad(p1, ((0, 0), (0, width - p1.shape[1]))), np.pad(p2, ((0, 0), (0, width - p2.shape[1])))])
    n_total = sum(int(k) for k in r.disc_mult) + 1
    # (the discrete kinds' tails: a share of the truncation budget); on the hybrid lower end each
    # discrete kind gives the CTD twin of a release it dominates where it has one (second order)
    tail = TAIL_FRACTION * r.delta_bar / n_total
    # (and on the upper end, those whose upper kernel is such a CTD count for a lower end read
    # from it: rung)
    kernels, n_ctd = [], 0
    for d, k in zip(r.disc, r.disc_mult):
        twin = d.ctd_lower(step, tail) if ctd and not upper else None
        is_ctd = twin is not None or (upper and ctd and d.lipschitz() is not None)
        n_ctd += int(k) if is_ctd else 0
        kernels.append((twin if twin is not None else d.kernel(step, upper, tail), int(k)))
    return Side(p, np.concatenate([rel1, rel2]), np.concatenate([err1, err2]), offsets,
                np.concatenate([mult, rr_mult]).astype(np.int64), gaps, kernels, n_ctd)


def _stack(arrays: list) -> np.ndarray:
    width = max([a.size for a in arrays] + [1])
    out = np.zeros((len(arrays), width))
    for i, a in enumerate(arrays):
        out[i, :a.size] = a
    return out


def side_offset(side: Side, upper: bool) -> float:
    """sum of n times each kind's offset (exact within 2 u of the sum of magnitudes), rounded to
    the safe side (up for the upper end: more loss)."""
    terms = (side.offset * side.mult).tolist() + [k.offset * n for k, n in side.kernels]
    total = math.fsum(terms)
    # each product rounded (u |t|), then fsum correctly rounded: 2 u sum |t| (summed, with its own
    # (n + 2) u of relative rounding) and an ulp of the total cover both
    size = float(np.sum(np.abs(terms))) * (1 + (len(terms) + 2) * U) if terms else 0.0
    margin = 2 * U * size + 2 * math.ulp(total)
    return total + margin if upper else total - margin
