"""The search for the root of delta(x) = delta_bar of lattice atoms mixed with one exact Gaussian
(readout.py, which then certifies what it finds): no rounding control, only starting points.

Halley's method, all read-outs of a batch in step (one pass over the atoms of all their windows,
AtomSets), each kept between the points it has seen below and above its root, finished by
bisection where it does not settle.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from .atom_sets import FEW, WINDOW_Z, AtomSets, far, per_set, spread, window

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def search_z(log_delta_bar: float) -> float:
    """The z of a search's windows (Halley's: no rounding control): atoms beyond z Gaussian sd
    from x add at most their mass times Phi(-z) < e^{-z^2/2} <= 1e-14 delta_bar to delta or
    take it away (treated as far above), moving its root ~1e-14 relative, well inside the
    certification's 1e-10; at delta_bar 1e-7, z = 9.8 against WINDOW_Z's 15: 2/3 the atoms."""
    return min(WINDOW_Z, math.sqrt(2.0 * (max(-log_delta_bar, 0.0) + 14 * math.log(10.0))))


def halley(sets: AtomSets, mus: np.ndarray, targets: np.ndarray, xs: np.ndarray, tols) -> np.ndarray:
    """Approximate roots of g_i(x) = log delta_i(x) - target_i (no rounding control: only starting
    points for the certified read-out), by Halley's method, all sets in step: with
    delta_G'(y) = -e^y Phi(z), z = -mu/2 - y/mu, and delta_G''(y) = -e^y (Phi(z) - phi(z) / mu),
    the error is cubed at each step, so once a step is below tols[i] (relative) the next would be
    ~tols[i]^3. Each search keeps the points known below and above its root, and a step that
    leaves them halves the interval instead (atoms further apart than mu make delta nearly
    kinked: Halley's steps from a start 10% off went back and forth past the root until the cap,
    and the certified read-out was 2% above it). A search still going after _HALLEY_STEPS (a
    start far above every atom comes down by halving: from 1e9, the certified upper end was 14%
    above the root, from 1e15 at 9e5, the lower end 0) is finished by bisection (_bisect)."""
    xs = np.array(xs, dtype=float)
    targets = np.asarray(targets, dtype=float)
    tols = np.full(xs.shape, tols) if np.ndim(tols) == 0 else np.asarray(tols, dtype=float)
    if sets.n == 1:
        target = float(targets[0])
        xs[0] = _halley_one(sets.view(0), float(mus[0]), target, float(xs[0]), float(tols[0]), search_z(target))
        return xs
    zs = np.array([search_z(t) for t in targets.tolist()])
    below, above = np.zeros(sets.n), np.full(sets.n, math.inf)
    active = np.arange(sets.n)
    for _ in range(_HALLEY_STEPS):
        if active.size == 0:
            break
        mu, x, z, k = mus[active], xs[active], zs[active], active.size
        # each window's atoms near x (within z sd) and those far above it (taken to have Phi = 1
        # there: -expm1(y), e^y, 0), gathered apart: both are runs of the sorted atoms
        cut = sets.windows(active, x, mu, z, side=1.0)
        near, far_above = sets.gather(active, sets.windows(active, x, mu, z), cut), sets.gather(active, cut)
        with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
            locs, p, seg = near
            dens, slope, bend = _near_terms(spread(x, seg) - locs, spread(mu, seg))
            d, ds, bent = per_set(seg, p, dens), per_set(seg, p, slope), per_set(seg, p, bend)
            locs, p, seg = far_above
            y = spread(x, seg) - locs
            d, ds = d + per_set(seg, p, -np.expm1(y)), ds + per_set(seg, p, np.exp(y))
            dss = ds - bent   # -delta'' (delta' = -ds)
        if k <= FEW:
            active = _steps_alone(sets, active, xs, d, ds, dss, targets, tols, mus, below, above)
        else:
            active = _steps_together(sets, active, xs, d, ds, dss, targets[active], tols[active], mu, below, above)
    for i in active.tolist():
        xs[i] = _bisect(sets.view(i), float(mus[i]), float(targets[i]), float(zs[i]), float(below[i]),
                        float(above[i]), float(xs[i]))
    return xs


def _halley_one(atoms: tuple[np.ndarray, np.ndarray], mu: float, target: float, x: float, tol: float,
                z: float) -> float:
    """halley's search of a lone read-out (a bracket's), in floats: the same operations on the same
    values as its pass over one set (the same bits; a batch of several sets sums per set with
    reduceat, which may differ in the last bits), without the gathers and per-set sums (~40% of
    a lone search's time)."""
    below, above, reach = 0.0, math.inf, mu * (mu / 2 + z)
    for _ in range(_HALLEY_STEPS):
        d, ds, dss = _lone_terms(atoms, x, mu, reach)
        x_new, close = _halley_step(x, d, ds, dss, target, tol)
        if d > 0 and math.log(d) > target:
            below = max(below, x)
        else:
            above = min(above, x)
        if x_new is None:           # (as in _steps_alone)
            x_new = 0.5 * (x + max(_top(atoms) + mu * mu / 2, 0.0))
            x_new = x_new if x_new < x else 0.5 * x
        if not below <= x_new <= above and above < math.inf:
            x_new, close = 0.5 * (below + above), False
        x = x_new
        if close:
            return x
    return _bisect(atoms, mu, target, z, below, above, x)


def _lone_terms(atoms: tuple[np.ndarray, np.ndarray], x: float, mu: float, reach: float):
    """(delta, -delta', -delta'') at x of a lone read-out: one pass over its atoms from ``reach``
    below x up (those above x + reach far above it), as halley's pass sums them."""
    locs, p = atoms
    lo, cut = int(locs.searchsorted(x - reach)), int(locs.searchsorted(x + reach))
    with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
        dens, slope, bend = _near_terms(x - locs[lo:cut], mu)
        near, far_p = p[lo:cut], p[cut:]
        y = x - locs[cut:]
        d = float((near * dens).sum()) + float((far_p * -np.expm1(y)).sum())
        ds = float((near * slope).sum()) + float((far_p * np.exp(y)).sum())
    return d, ds, ds - float((near * bend).sum())


def _steps_alone(sets: AtomSets, active, xs, d, ds, dss, targets, tols, mus, below, above) -> np.ndarray:
    """The next x of each active search (into xs), keeping the points seen below and above its
    root; the searches still going."""
    still = []
    for i, d_i, ds_i, dss_i in zip(active.tolist(), d.tolist(), ds.tolist(), dss.tolist()):
        x_i, s_i = float(xs[i]), float(mus[i])
        x_new, close = _halley_step(x_i, d_i, ds_i, dss_i, float(targets[i]), float(tols[i]))
        if d_i > 0 and math.log(d_i) > targets[i]:
            below[i] = max(below[i], x_i)
        else:
            above[i] = min(above[i], x_i)
        if x_new is None:           # x far above every atom (e.g. a stale guess): come down
            x_new = 0.5 * (x_i + max(_top(sets.view(i)) + s_i * s_i / 2, 0.0))
            x_new = x_new if x_new < x_i else 0.5 * x_i
        if not below[i] <= x_new <= above[i] and above[i] < math.inf:
            x_new, close = 0.5 * (below[i] + above[i]), False
        xs[i] = x_new
        if not close:
            still.append(i)
    return np.array(still, dtype=np.int64)


def _steps_together(sets: AtomSets, active, xs, d, ds, dss, targets, tols, mu, below, above) -> np.ndarray:
    """_steps_alone for many searches at once (numpy, elementwise: the same operations)."""
    x = xs[active]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lost = ~((d > 0) & (ds > 0))
        g, g1 = np.log(d) - targets, -ds / d
        g2 = -dss / d - g1 * g1
        den = 2 * g1 * g1 - g * g2
        step = np.where(den > 0, -2 * g * g1 / den, -g / g1)   # (Newton where Halley's would turn back)
        x_new = np.maximum(x + step, 0.5 * x)
        close = ~lost & (np.abs(step) <= tols * np.maximum(1.0, x_new))
        over = (d > 0) & (g > 0)
    below[active] = np.where(over, np.maximum(below[active], x), below[active])
    above[active] = np.where(over, above[active], np.minimum(above[active], x))
    for n in np.flatnonzero(lost).tolist():     # (as in _steps_alone)
        x_i, s_i = float(x[n]), float(mu[n])
        down = 0.5 * (x_i + max(_top(sets.view(int(active[n]))) + s_i * s_i / 2, 0.0))
        x_new[n] = down if down < x_i else 0.5 * x_i
    lo, hi = below[active], above[active]
    out = ~((lo <= x_new) & (x_new <= hi)) & (hi < math.inf)
    xs[active] = np.where(out, 0.5 * (lo + hi), x_new)
    return active[~(close & ~out)]


#: Halley steps before a search is finished by bisection (a step's error is cubed: near its root a
#: search ends in a few; only one that starts far off takes more).
_HALLEY_STEPS = 30


def _bisect(atoms: tuple[np.ndarray, np.ndarray], mu: float, target: float, z: float, below: float,
            above: float, x: float) -> float:
    """The root of log delta(x) - target within 1e-12 (relative, or absolute below 1) by bisection
    from the points a search left known below it (delta above the target) and above it, x a
    point it reached: geometric halving while the two are decades apart, then plain halving. Each
    step at least halves the interval, or its ratio's logarithm: the loop ends within its count,
    the double range being 2098 binary decades."""
    def over(x: float) -> bool:     # delta(x) is above the target: the root is above x
        j = window(atoms[0], mu, x, z)
        d = float(np.sum(atoms[1][j:] * _search_terms(x - atoms[0][j:], mu, z)[0]))
        return d > 0 and math.log(d) > target

    lo, hi = below, above
    if not math.isfinite(hi):      # (no point above known: look upwards from x)
        hi = max(x, _top(atoms) + mu * mu / 2, 1.0)
        while over(hi) and math.isfinite(hi):
            lo, hi = hi, 2.0 * hi
        if not math.isfinite(hi):   # (delta stays above the target: the read-out walks, then gives inf)
            return hi
    for _ in range(4400):
        if hi - lo <= 1e-12 * max(1.0, hi):
            break
        mid = math.sqrt(max(lo, 1.0) * hi) if hi > 4.0 * max(lo, 1.0) else 0.5 * (lo + hi)
        lo, hi = (mid, hi) if over(mid) else (lo, mid)
    return hi


def _search_terms(y: np.ndarray, m, z) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per atom at y = x - l: delta_G(y), -delta_G'(y) and the part phi(z)/mu e^y of -delta_G''
    (no rounding control: the search's). Atoms far above x (``far`` at the search's z, see
    search_z) are taken to have Phi = 1 there: -expm1(y), e^y, 0."""
    with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
        near = ~far(y, m, z)
        dens, slope, bend = -np.expm1(y), np.exp(y), np.zeros(y.size)
        dens[near], slope[near], bend[near] = _near_terms(y[near], m if np.ndim(m) == 0 else m[near])
    return dens, slope, bend


def _near_terms(y: np.ndarray, m) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """_search_terms of atoms near x: the closed forms with Phi (log_ndtr)."""
    z = -m / 2 - y / m
    l1 = log_ndtr(m / 2 - y / m)
    l2 = y + log_ndtr(z)
    return np.exp(l1) * -np.expm1(np.minimum(l2 - l1, 0.0)), np.exp(l2), np.exp(y - 0.5 * z * z) * (_INV_SQRT_2PI / m)


def _top(atoms: tuple[np.ndarray, np.ndarray]) -> float:
    """The highest atom that carries mass, towards which a search that lost delta (x above all of
    them) comes down: a truncated pmf may end in zeros, and their top was a point it never left."""
    l, p = atoms
    nz = np.flatnonzero(p)
    return float(l[nz[-1]]) if nz.size else 0.0


def _halley_step(x: float, d: float, ds: float, dss: float, target: float, tol: float):
    """(next x, whether the step was below tol) from delta, -delta' and -delta'' at x; next x is
    None where delta or its slope vanished (x far above every atom)."""
    if not (d > 0 and ds > 0):
        return None, False
    g, g1 = math.log(d) - target, -ds / d
    g2 = -dss / d - g1 * g1
    den = 2 * g1 * g1 - g * g2
    step = -2 * g * g1 / den if den > 0 else -g / g1   # (Newton where Halley's would turn back)
    x_new = max(x + step, 0.5 * x)
    return x_new, abs(step) <= tol * max(1.0, x_new)
