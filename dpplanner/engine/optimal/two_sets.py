"""Exact optimal composition for a few large groups: two enumerated halves, met in the middle.

When the joint outcomes of all groups (prod of m_g + 1) are too many to enumerate, but the groups
split into two sets A and B with few outcomes each, the loss is L = L_A + L_B with both parts
enumerated exactly (``grouped_atoms``), and

    delta(x) = sum_a P(L_A = a) F_B(x - a),     F_B(y) = E[(1 - e^{y - L_B})^+],

where F_B(y) = S_j - e^{y - l_j} T_j between atoms of B, with suffix sums S_j = sum_{i>=j} p_i and
T_j = sum_{i>=j} p_i e^{-(l_i - l_j)} (accumulated in log space, so nothing overflows). No
discretisation: the bracket comes only from floating-point error bounds, read upward and downward
as in ``atoms``. The root is found by bracketing on x; the cost is O(|A| log |B|) per step.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .atoms import SUB, U
from .exact import grouped_atoms
from .result import Bracket
from ..numerics import widen_down, widen_up

#: Below this log-range of B's atoms, T is summed plainly (see _Reader); above, in log space.
_PLAIN_SPAN = 600.0
#: Most joint outcomes of the set that is looped over (A) and of the one that is searched (B).
A_MAX_OUTCOMES = 1 << 13
B_MAX_OUTCOMES = 1 << 18


def split_sets(m: np.ndarray) -> Optional[np.ndarray]:
    """A mask of set A such that A and B stay within their outcome caps (B may be ~8x larger,
    since a step costs O(|A| log |B|)), or None."""
    mask = np.zeros(m.size, dtype=bool)
    size_a = size_b = 1
    for g in np.argsort(-(m + 1), kind="stable").tolist():
        k = int(m[g]) + 1
        to_a = 8 * size_a <= size_b
        if to_a and size_a * k <= A_MAX_OUTCOMES:
            mask[g], size_a = True, size_a * k
        elif size_b * k <= B_MAX_OUTCOMES:
            size_b *= k
        elif size_a * k <= A_MAX_OUTCOMES:
            mask[g], size_a = True, size_a * k
        else:
            return None
    if not mask.any() and m.size > 1:  # everything fitted into B: move its smallest group to A
        mask[int(np.argmin(m))] = True
    if not mask.any() or mask.all():
        return None
    return mask


class _Reader:
    """F_B(y) for the sorted atoms of B, bounded from above or below."""

    def __init__(self, atoms):
        l, p = atoms.l, atoms.p
        keep = p > 0
        self.l, self.p = l[keep], p[keep]
        n = self.p.size
        self.S = np.append(np.cumsum(self.p[::-1])[::-1], 0.0)
        gam = 1.01 * (n + 4) * U
        self.rS = atoms.rel + gam + atoms.rel * gam
        span = float(self.l[-1] - self.l[0]) if n else 0.0
        if n and span <= _PLAIN_SPAN:
            # T_j = e^(l_j - c) sum_{i>=j} p_i e^(c - l_i), c the top location: each term is >= p_i
            # and <= e^600 (nothing overflows, nothing underflows beyond p itself), so a plain
            # suffix sum does it, ~20x faster than accumulating in log space (7 ms of an edited
            # 100-query plan's 'optimal' total). Errors: p's own; each exp's argument rounded
            # within U span, the exp and the product a few ulps; the sum gamma_n; the same for
            # the last factor (an underflowed product counts in ``extra``)
            c = float(self.l[-1])
            t = np.cumsum((self.p * np.exp(c - self.l))[::-1])[::-1] * np.exp(self.l - c)
            self.T = np.append(np.minimum(t, 1.0), 0.0)         # T_j <= S_j <= 1
            self.rT = atoms.rel + gam + atoms.rel * gam + 4 * U * (span + 4)
        else:
            lp = np.log(self.p) - self.l
            log_t = np.logaddexp.accumulate(lp[::-1])[::-1] + self.l
            self.T = np.append(np.exp(np.minimum(log_t, 0.0)), 0.0)  # T_j <= S_j <= 1
            # the log-space accumulation: a few ulps of the magnitudes per step
            mag = float(np.max(np.abs(lp))) + float(np.max(np.abs(self.l))) + 1.0 if n else 1.0
            self.rT = atoms.rel + float(np.expm1(8 * U * (n + 2) * mag)) + 4 * U
        self.lam = atoms.lam
        self.extra = atoms.err + atoms.inf_mass + n * SUB  # S and T entries that underflowed
        self.l_next = np.append(self.l, np.inf)              # the atom above each segment

    def read(self, y: np.ndarray, upper: bool, slope: bool = False):
        """F_B(y) bounded from above (``upper``) or below; ``slope``: with e^{y - l_j} T_j, minus
        F_B's derivative (unbounded: a Newton step's estimate)."""
        y = y - self.lam if upper else y + self.lam
        # y falls along A's ascending atoms: searched rising (numpy's search starts from the last
        # answer), ~1.6x faster for a few thousand of them
        j = np.searchsorted(self.l, y[::-1], side="right")[::-1]
        lj = self.l_next[j]
        with np.errstate(under="ignore", invalid="ignore"):
            ex = np.where(np.isfinite(lj), np.exp(np.minimum(y - lj, 0.0)), 0.0)
        fall = ex * self.T[j]
        if upper:
            out = np.minimum(1.0, self.S[j] * (1 + self.rS) - fall * (1 - self.rT))
        else:
            out = np.maximum(0.0, self.S[j] * (1 - self.rS) - fall * (1 + self.rT))
        return (out, fall) if slope else out


def _delta(a_atoms, reader: _Reader, x: float, upper: bool, slope: bool = False):
    """An upper (or lower) bound on delta(x); ``slope``: with an estimate of delta'(x)."""
    n = a_atoms.p.size
    gam = 1.01 * (n + 4) * U
    lam = a_atoms.lam
    # (products, then numpy's pairwise sum: np.dot's BLAS kernel, picked for the CPU, sums in its own order)
    f = reader.read(x - a_atoms.l - lam if upper else x - a_atoms.l + lam, upper, slope)
    f, fall = f if slope else (f, None)
    if upper:
        s = float(np.sum(a_atoms.p * f)) * (1 + a_atoms.rel) * (1 + gam)
        out = s + (reader.extra + a_atoms.err + a_atoms.inf_mass) * (1 + 4 * U)
    else:
        s = float(np.sum(a_atoms.p * f)) * (1 - a_atoms.rel) * (1 - gam)
        out = s - reader.extra * (1 + 4 * U)
    return (out, -float(np.sum(a_atoms.p * fall))) if slope else out


#: Newton steps the upper root takes from a normal approximation's before it is searched for as
#: that was (Brent's method over [0, hi]).
UPPER_STEPS = 12


def _newton(value_slope, db: float, x: float, a: float, b: float, tol: float) -> Optional[float]:
    """An estimate of the root of delta(x) = db in (a, b), where delta(a) > db >= delta(b): Newton
    steps on log delta from x (halving [a, b] where a step would leave it), ending with a step
    within tol; None if UPPER_STEPS do not get there. (Only an estimate: the caller checks.)"""
    for _ in range(UPPER_STEPS):
        d, slope = value_slope(x)
        if d > db:
            a = x
        else:
            b = x
        step = math.log(d / db) * d / slope if d > 0 and slope < 0 else math.nan
        if abs(step) <= tol:
            return x - step
        x = x - step if a < x - step < b else 0.5 * (a + b)
    return None


def _normal_guess(e: np.ndarray, m: np.ndarray, db: float) -> float:
    """Where a normal loss of the groups' mean and variance reaches db (a starting point only)."""
    from scipy.special import ndtri

    t = np.tanh(e / 2)
    mean, var = float(np.sum(m * e * t)), float(np.sum(m * e * e * (1 - t * t)))
    return mean - math.sqrt(var) * float(ndtri(db))


#: Newton steps the lower root takes from the upper one before it is searched for as that was.
NEWTON_STEPS = 4


def _lower_near(value_slope, up: float, db: float, tol: float) -> Optional[float]:
    """A point x <= ``up`` whose lower bound on delta is above ``db`` (a certified lower end), by
    Newton steps on log delta from the upper root ``up``, which the lower one lies within float
    error of; each step lands ``tol`` past its estimate, so that it is taken. ~2 evaluations where
    Brent's search of [0, up] took ~6. None if it is not reached in NEWTON_STEPS."""
    x = up
    for _ in range(NEWTON_STEPS):
        d, slope = value_slope(x)
        if d > db:
            return x
        if not (d > 0 and slope < 0):
            return None
        x -= math.log(db / d) * d / -slope + tol
        if not x >= 0:
            return None
    return None


def _root(f, hi: float, want_upper: bool, search=None) -> float:
    """Upper: a point where f <= 0 (f decreasing); lower: a point where f > 0. Within ~1e-13.
    ``search``, with f's sign, is what Brent's method steps on (every answer is checked with f)."""
    if want_upper:
        if f(0.0) <= 0:
            return 0.0
        if f(hi) > 0:
            return math.inf
    else:
        if f(0.0) <= 0:
            return 0.0
        if f(hi) > 0:
            return hi
    tol = max(1e-13, 4 * U * hi)
    if search is None or not search(0.0) > 0 > search(hi):
        search = f      # (the search's sign at the ends must be f's)
    from scipy.optimize import brentq   # here: the window starts without scipy.optimize
    x = brentq(search, 0.0, hi, xtol=tol, rtol=8 * U, maxiter=200)
    for k in range(64):
        cand = x + tol * 2.0 ** k if want_upper else x - tol * 2.0 ** k
        cand = min(max(cand, 0.0), hi)
        v = f(cand)
        if (v <= 0) if want_upper else (v > 0):
            return cand
    return hi if want_upper else 0.0


def two_set_bracket(e: np.ndarray, m: np.ndarray, delta_bar: float, cancel=None,
                    delta_bar_hi: Optional[float] = None) -> Optional[Bracket]:
    """The exact bracket if the groups split into two small sets, else None (0 < delta_bar <=
    delta_bar_hi < 1; the upper bound is read at delta_bar, the lower at delta_bar_hi)."""
    mask = split_sets(m)
    if mask is None:
        return None
    hi = math.nextafter(math.fsum((m * e).tolist()), math.inf) * (1 + 4 * U)
    a_atoms = grouped_atoms(e[mask], m[mask], True)  # the upper flag only matters to sup_root
    reader = _Reader(grouped_atoms(e[~mask], m[~mask], True))
    out = []
    for upper, db in ((True, delta_bar), (False, delta_bar if delta_bar_hi is None else delta_bar_hi)):

        known: dict[float, float] = {}     # the ends are asked for by the checks and by Brent

        def delta(x: float, upper=upper, known=known) -> float:
            if x not in known:
                if cancel is not None:
                    cancel.check()
                known[x] = _delta(a_atoms, reader, x, upper)
            return known[x]

        def f(x: float, db=db, delta=delta) -> float:
            return delta(x) - db

        def log_f(x: float, db=db, delta=delta) -> float:
            # about f's sign, and nearly linear in x where delta falls by tens of orders of
            # magnitude between 0 and hi: Brent takes ~9 steps instead of ~13 (a delta of 0 past
            # the largest loss counts as 1e-320)
            return math.log(max(delta(x), 1e-320)) - math.log(db)

        def value_slope(x: float, upper=upper, known=known) -> tuple[float, float]:
            if cancel is not None:
                cancel.check()
            known[x], slope = _delta(a_atoms, reader, x, upper, True)
            return known[x], slope

        tol = max(1e-13, 4 * U * hi)
        if upper:
            # Newton steps on log delta from a normal approximation's root, then the first point
            # just past their estimate where the upper read is at most db (~8 reads in all where
            # Brent's search of [0, hi] and its checks took ~14); else that search
            guess = _normal_guess(e, m, db)
            x = None if f(0.0) <= 0 else \
                _newton(value_slope, db, guess if tol < guess < hi else 0.5 * hi, 0.0, hi, tol)
            fits = None if x is None else \
                next((c for c in (x + tol, x + 4 * tol) if c < hi and f(c) <= 0), None)
            out.append(_root(f, hi, True, log_f) if fits is None else fits)
            continue

        # the lower root lies below the upper one, within float error of it: Newton steps from
        # there, or (where they do not get there) a search of [0, a little above it]
        near = _lower_near(value_slope, out[0], db, tol) if 0 < out[0] < math.inf else None
        out.append(near if near is not None else _root(f, min(hi, out[0] * (1 + 1e-6) + 1e-9), False, log_f))
    up, lo = out
    return Bracket(widen_up(up), widen_down(lo), "exact (two enumerated sets)")
