"""A finite privacy-loss distribution with certified error bounds, and its two read-outs.

The pure-eps composition has loss L = sum of +-eps_i; for x >= 0

    delta(x) = E[(1 - e^{x - L})^+]       (Murtagh-Vadhan Thm 1.5, formulas.md §4.1)

Between consecutive atoms l_{j-1} <= x < l_j only the atoms >= l_j count, so
delta(x) = A_j - e^x B_j with suffix sums A_j = sum_{i>=j} P_i and B_j = sum_{i>=j} P_i e^{-l_i},
and the least x with delta(x) <= delta_bar is ln((A_j - delta_bar) / B_j) in the right segment.

An ``Atoms`` object stores computed probabilities ``p`` together with what is known about how far
the exact distribution it stands for can be from them:

* ``rel``: every entry is within a factor (1 +- rel) of the exact one (summation, gammaln, ...);
* ``err``: an l1 bound on additional absolute errors (FFT rounding);
* ``inf_mass``: mass sitting at +infinity (truncated from the top; counts fully against delta);
* ``lam``: every atom location is within +-lam of the exact one.

``upper=True`` objects are read so that delta comes out too large (so eps too large) and
``upper=False`` objects so that it comes out too small. Because
delta_exact(x) <= A(1+r) + err + inf_mass - e^x B(1-r) (each entry's absolute error is weighted by
(1 - e^{x-l}) <= 1), solving with these inflated sums can only move the root up; the lower read-out
is the mirror image. The root is taken as sup{x >= 0 : delta_fn(x) > delta_bar}, which is >= the
exact root whenever delta_fn >= delta_exact everywhere (and <= it in the lower case).
``lower_root`` and ``delta_slope`` serve the brackets whose lower read-out subtracts an error
bound that is not monotone in x (the split and prefix brackets).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

U = 2.0 ** -53
TINY = 2.0 ** -1022  # smallest normal double: below it only absolute accuracy is left
#: A result that underflows (subnormal or zero) is off by at most half of this, absolutely.
SUB = 2.0 ** -1074


@dataclass(frozen=True)
class Atoms:
    l: np.ndarray          # ascending atom locations
    p: np.ndarray          # non-negative probabilities
    upper: bool
    rel: float = 0.0
    err: float = 0.0
    inf_mass: float = 0.0
    lam: float = 0.0


def sum_margin(n: int, rel: float) -> float:
    """Relative bound covering ``rel`` plus recursive summation of n non-negative terms (in any
    order), their products with exactly rounded factors, and a few ulps of the result."""
    gam = 1.01 * (n + 4) * U
    return rel + gam + rel * gam + 8 * U


#: Log-range of one window of sup_root: exp(-(l - shift)) stays within [e^-600, 1] there.
WINDOW = 600.0


def _seg_roots(l, p, A, delta_bar, a: Atoms, left0: float, shift: float, carry: float, carry_err: float):
    """Candidate roots per segment of the window (l, p); returns the max valid one or None.

    ``A``: the suffix masses of the whole array at the window's atoms; ``carry``: log of
    sum p_i e^{-l_i} over the atoms above the window (-inf if none), within ``carry_err``.
    """
    m = l.size
    r = sum_margin(a.p.size, a.rel)
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        # l - shift is in [0, span]: its rounding moves each exp by <= U span (+ 1 ulp of exp)
        B = np.cumsum((p * np.exp(-(l - shift)))[::-1])[::-1]
        r_den = r + 2 * U * (float(l[-1]) - shift + 2.0)
        if carry > -math.inf:
            B = B + math.exp(carry + shift)
            r_den += math.expm1(min(carry_err + 4 * U * (abs(carry + shift) + 1.0), 700.0))
        if a.upper:
            extra = (a.err + a.inf_mass) * (1 + 4 * U)
            num = (A * (1 + r + 4 * U) + extra) - delta_bar
            num = num * (1 + 2 * U)
            den = B * max(1 - r_den - 4 * U, 0.0)  # no accuracy left: a root at the atom itself
        else:
            extra = a.err * (1 + 4 * U)
            num = (A * (1 - r - 4 * U) - extra) - delta_bar
            num = num * (1 - 2 * U)
            den = B * (1 + r_den + 4 * U) + m * SUB  # an underflowed product loses < SUB / 2
        ok = num > 0
        root = np.full(m, -np.inf)
        root[ok] = shift + np.log(num[ok] / den[ok])
    # log and division: a few ulps of the result and of the shift
    fin = np.isfinite(root)
    slack = 8 * U * (np.abs(root[fin]) + abs(shift) + 1.0)
    root[fin] = root[fin] + slack if a.upper else root[fin] - slack
    left = np.empty(m)
    left[0] = left0
    left[1:] = l[:-1]
    valid = ok & (root > left)
    if not valid.any():
        return None
    cand = np.minimum(root[valid], l[valid])
    return float(cand.max())


def edge_count(p: np.ndarray, level: float) -> int:
    """How many leading entries of p carry (computed) mass <= level, scanning only what is needed.

    Pass ``p[::-1]`` to count from the top."""
    n = p.size
    chunk, done, acc = 1024, 0, 0.0
    while done < n:
        part = np.cumsum(p[done:done + chunk]) + acc
        k = int(np.searchsorted(part, level, side="right"))
        if k < part.size:
            return done + k
        acc = float(part[-1])
        done += part.size
        chunk *= 4
    return n


def sup_root(a: Atoms, delta_bar: float, floor: float = 0.0) -> float:
    """Least x >= 0 with delta_fn(x) <= delta_bar, read so that it is >= (upper) / <= (lower) exact.

    ``floor`` must be a certified lower bound on the exact root (0 if nothing is known). Only
    x >= floor is searched: there the atoms <= floor contribute nothing, and since the exact root
    is >= floor the upper read-out stays >= it and the lower read-out stays <= it.

    The segments are scanned from the top in windows of log-range WINDOW, each with its own shift,
    so that p e^{-(l - shift)} neither overflows nor underflows wholesale (a single shift over a
    range of Sigma eps > 745 would underflow every B_j near the root); the first window with a
    valid candidate holds the largest one.
    """
    if a.upper and (a.err + a.inf_mass) * (1 + 4 * U) >= delta_bar:
        return math.inf
    floor = max(float(floor), 0.0)
    j0 = int(np.searchsorted(a.l, floor, side="right"))
    l, p = a.l[j0:], a.p[j0:]
    if l.size == 0:
        return _finish(floor, a, floor)
    A = np.cumsum(p[::-1])[::-1]
    hi, carry, carry_err = l.size, -math.inf, 0.0
    while hi > 0:
        lo = int(np.searchsorted(l, l[hi - 1] - WINDOW, side="left"))
        # underflowed products are charged (SUB each) and harmless unless delta_bar itself is near
        # the underflow range: then narrow until no product p e^{-(l - shift)} leaves the normal range
        while delta_bar < 1e-250 and hi - lo > 1:
            with np.errstate(under="ignore"):
                w = p[lo:hi] * np.exp(-(l[lo:hi] - l[lo]))
            if not np.any((w < TINY) & (p[lo:hi] >= TINY)):
                break
            lo = int(np.searchsorted(l, 0.5 * (l[lo] + l[hi - 1]), side="left"))
            lo = min(lo, hi - 1)
        shift = float(l[lo])
        left0 = floor if lo == 0 else float(l[lo - 1])
        best = _seg_roots(l[lo:hi], p[lo:hi], A[lo:hi], delta_bar, a, left0, shift, carry, carry_err)
        if best is not None:
            return _finish(best, a, floor)
        with np.errstate(divide="ignore", under="ignore"):
            part = float(np.sum(p[lo:hi] * np.exp(-(l[lo:hi] - shift))))
            if part > 0:  # window sum: (n + WINDOW) ulps; each log / logaddexp: ulps of magnitudes
                carry = float(np.logaddexp(carry, math.log(part) - shift))
                carry_err += 4 * U * (hi - lo + float(l[hi - 1]) - shift + abs(carry) + abs(shift) + 2)
        hi = lo
    return _finish(floor, a, floor)


def _finish(x: float, a: Atoms, floor: float = 0.0) -> float:
    x = max(x, floor)
    if a.upper:
        return x + a.lam + 4 * U * abs(x)
    return max(x - a.lam - 4 * U * abs(x), 0.0)


def delta_at(a: Atoms, xs: np.ndarray) -> np.ndarray:
    """delta_fn(x) for each x: an upper (or lower) bound on the exact delta(x)."""
    f = delta_fn(a)
    return np.array([f(x) for x in np.asarray(xs, dtype=float).tolist()])


def delta_fn(a: Atoms):
    """x -> ``delta_at(a, [x])[0]``, the same number, for one x at a time (a root search calls it
    a few times per prefix of a curve: the per-call numpy overhead was a tenth of the curve)."""
    r = sum_margin(a.p.size, a.rel) + 8 * U
    l, p, lam = a.l, a.p, a.lam
    if a.upper:
        extra = (a.err + a.inf_mass) * (1 + 4 * U)
    else:
        extra = a.err * (1 + 4 * U)

    def f(x: float) -> float:
        # atoms moved by +lam (upper) or -lam (lower): same as evaluating at x -+ lam
        xe = x - lam if a.upper else x + lam
        j = int(l.searchsorted(xe, side="right"))
        with np.errstate(under="ignore"):
            s = float((p[j:] * -np.expm1(xe - l[j:])).sum())  # non-negative terms, no cancellation
        if a.upper:
            return min(1.0, s * (1 + r) + extra + (l.size - j) * SUB)
        return max(0.0, s * (1 - r) - extra)

    return f


def lower_root(h, hi: float, tol: float, first: float, slope: float = 0.0) -> float:
    """The largest x found in [0, hi] with h(x) > 0, searching down from hi (0 if none).

    h need not be monotone (the error bound grows away from where its tilt was chosen), so the
    search brackets the sign change nearest below hi and returns a point where h > 0 was seen.
    ``slope`` (about -h'(hi), optional) gives a first guess by one Newton step; with a loose
    ``tol`` that guess and one secant step are usually all it takes.
    """
    h_hi = h(hi)
    if h_hi > 0:
        return hi
    if slope > 0:
        x = hi - 1.2 * (-h_hi) / slope
        if 0.0 < x < hi:
            h_x = h(x)
            if h_x > 0:
                if hi - x <= 8 * tol:
                    return x
                y = x + 0.9 * (hi - x) * h_x / (h_x - h_hi)
                return y if y > x and h(y) > 0 else x
    prev, gap = hi, max(first, tol)
    while True:
        x = max(0.0, hi - gap)
        if h(x) > 0:
            break
        if x == 0.0:
            return 0.0
        prev, gap = x, gap * 4
    from scipy.optimize import brentq   # here: the window starts without scipy.optimize
    r = brentq(h, x, prev, xtol=tol, rtol=8 * U, maxiter=200)
    for k in range(64):
        cand = max(x, r - tol * 2.0 ** k)
        if h(cand) > 0:
            return cand
    return x


def delta_slope(atoms, x: float) -> float:
    """-d delta / dx at x for an atoms read-out (sum of p e^{x - l} over atoms above x)."""
    j = int(np.searchsorted(atoms.l, x, side="right"))
    with np.errstate(under="ignore"):
        return float(np.sum(atoms.p[j:] * np.exp(x - atoms.l[j:])))
