"""Reading delta and epsilon off a lattice pmf composed with one exact Gaussian.

With the Gaussian's loss independent of the rest, delta(x) = E_rest[delta_G(x - L_rest)]
(condition on the rest; delta_G is the closed form of gaussian.py, valid for every real
argument). The rest's upper twin bounds E_rest[phi] from above for every convex phi of
u = e^-L_rest, its lower twin from below for every decreasing convex phi, and for each fixed
Gaussian loss the integrand (1 - e^{x - L_G - L_rest})^+ is a decreasing convex phi: so the bound
survives integrating over the Gaussian, and the Gaussian is never discretised.

Float bookkeeping, as in optimal/atoms.py: atom locations move by +-lam (delta_G(x - l) grows with
l) and the difference x - l by its rounding, each probability is within (1 +- rel), err and
inf_mass count in full above and err is subtracted below; exp of a directed log bound and the
products and sum add gamma_{n+4} + 8 u (any order of summation).

The root is searched without rounding control (Halley's method, first on merged atoms, then one
step on the full atoms) and only then certified by an evaluation of the directed bound: two passes
over the full atoms per read-out. Everything works on a batch of read-outs at once (one per prefix
of a curve): the atoms in the windows of all of them are concatenated, so a pass costs a few numpy
calls however many read-outs it serves, and each read-out's numbers are those it would get alone.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.special import log_ndtr

from ..optimal.atoms import TINY, U, Atoms, sum_margin
from .gaussian import log_delta_bound

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
#: Atoms this many Gaussian sd (plus the mean) below x are counted at one bound (delta_G ~ 1e-50).
WINDOW_Z = 15.0


#: Newton first runs on at most this many merged atoms; the full atoms then need a step or two.
COARSE_ATOMS = 256
#: Up to this many atoms a lone read-out (a bracket's) searches them at once: merging them costs
#: more than the passes over a few hundred atoms it saves (numpy's overhead). A batch's (a curve's
#: prefixes) merges from COARSE_ATOMS on: its starts are guesses scaled from another root.
DIRECT_ATOMS = 512


def _window(locs: np.ndarray, mu: float, x: float, z: float = WINDOW_Z) -> int:
    """Index of the first atom that matters at x: below it, x - l >= mu (mu/2 + z), where
    delta_G <= Phi(-z) (~1e-50 at WINDOW_Z; the upper bound still counts those atoms, at that
    value; a search may look at fewer, see search_z)."""
    return int(locs.searchsorted(x - mu * (mu / 2 + z)))     # (side left; the method: ~1 us less a call)


def search_z(log_delta_bar: float) -> float:
    """The z of a search's windows (Halley's: no rounding control): atoms beyond z Gaussian sd
    from x add at most their mass times Phi(-z) < e^{-z^2/2} <= 1e-14 delta_bar to delta or
    take it away (treated as far above), moving its root ~1e-14 relative, well inside the
    certification's 1e-10; at delta_bar 1e-7, z = 9.8 against WINDOW_Z's 15: 2/3 the atoms."""
    return min(WINDOW_Z, math.sqrt(2.0 * (max(-log_delta_bar, 0.0) + 14 * math.log(10.0))))


#: Above an atom's window (x - l <= -mu (mu/2 + WINDOW_Z)) both Phi's of delta_G are 1 within
#: Phi(-WINDOW_Z + 1e-12) < FAR_PHI, so delta_G(y) = -expm1(y) within FAR_PHI (see _far_delta):
#: no log_ndtr there (~40% of a curve's atoms).
FAR_PHI = 1e-50


def _far(y: np.ndarray, m, z=WINDOW_Z) -> np.ndarray:
    """Which atoms (at y = x - l, Gaussian mu m) are far above x: -m/2 - y/m >= z up to the
    rounding of this test (a relative 1e-15 of z)."""
    return y <= -m * (m / 2 + z)


def _far_delta(y: np.ndarray, upper: bool) -> np.ndarray:
    """Bounds on delta_G(y) at far atoms (``_far``), y already rounded to its side. There
    delta_G(y) = (1 - e^y) - Phi(-x1) + e^y Phi(-z) with x1 = z + mu >= z >= WINDOW_Z - 1e-12 and
    e^y <= 1, so it is within FAR_PHI of -expm1(y) (within an ulp; 8 u charged, so that FAR_PHI
    counts even where the sum rounds it away)."""
    if upper:
        return -np.expm1(y) * (1 + 8 * U) + FAR_PHI
    return np.maximum(-np.expm1(y) * (1 - 8 * U) - FAR_PHI, 0.0)


def _gather(sets: Sequence[tuple[np.ndarray, np.ndarray]], js: Sequence[int]):
    """The atoms from index js[i] on of each (locations, probabilities) set, concatenated:
    (locations, probabilities, set number of each atom; None for a single set, whose arrays are
    views: a lone read-out, as a bracket's, pays no copy)."""
    if len(sets) == 1:
        (l, p), j = sets[0], js[0]
        return l[j:], p[j:], None
    sizes = np.fromiter((l.size - j for (l, _p), j in zip(sets, js)), dtype=np.int64, count=len(js))
    locs = np.concatenate([l[j:] for (l, _p), j in zip(sets, js)])
    p = np.concatenate([p[j:] for (_l, p), j in zip(sets, js)])
    return locs, p, np.repeat(np.arange(len(js)), sizes)


def _spread(values: np.ndarray, seg):
    """Per-set values as per-atom ones (a scalar for a single set)."""
    return float(values[0]) if seg is None else values[seg]


def _windows(sets, mus: np.ndarray, xs: np.ndarray, zs=None) -> list[int]:
    if zs is None:
        return [_window(l, mu, x) for (l, _p), mu, x in zip(sets, mus.tolist(), xs.tolist())]
    return [_window(l, mu, x, z) for (l, _p), mu, x, z in zip(sets, mus.tolist(), xs.tolist(), zs.tolist())]


#: A batch of read-outs gathers at most about this many atoms at once (memory: a few arrays of it).
BATCH_ATOMS = 1 << 18


def _chunks(sizes: Sequence[int]):
    """Consecutive ranges of items whose sizes add up to at most BATCH_ATOMS (one item may exceed it)."""
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if i > start and total + size > BATCH_ATOMS:
            yield range(start, i)
            start, total = i, 0
        total += size
    if start < len(sizes):
        yield range(start, len(sizes))


def _per_set(seg, p: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """The sums of p * values over each set's atoms."""
    if seg is None:     # (not np.dot: BLAS threads fight on a busy machine, and sum in any order)
        return np.array([np.sum(p * values)])
    return np.bincount(seg, weights=p * values, minlength=n)


def _coarse(a: Atoms) -> tuple[np.ndarray, np.ndarray]:
    """(locations, probabilities) of at most ~COARSE_ATOMS atoms: runs of neighbours merged at
    their mean. Only a starting point for Newton, so no rounding control."""
    n = a.p.size
    run = -(-n // COARSE_ATOMS)
    if run <= 1:
        return a.l, a.p
    pad = (-n) % run
    p = np.concatenate([a.p, np.zeros(pad)]).reshape(-1, run)
    locs = np.concatenate([a.l, np.full(pad, a.l[-1])]).reshape(-1, run)
    mass = p.sum(axis=1)
    keep = mass > 0
    # (the mean of each run from its shares: masses near the double range times losses overflow)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = p[keep] / mass[keep, None]
    return (np.nan_to_num(share) * locs[keep]).sum(axis=1), mass[keep]


def mixed_delta(a: Atoms, mu: float, xs, upper: bool) -> np.ndarray:
    """Bounds on delta(x) of (the atoms' loss + N(mu^2/2, mu^2)) at each x, in a's direction."""
    xs = np.atleast_1d(np.asarray(xs, dtype=float))
    return mixed_deltas([a] * xs.size, np.full(xs.size, float(mu)), xs, upper)


def mixed_deltas(atoms: Sequence[Atoms], mus, xs, upper: bool) -> np.ndarray:
    """mixed_delta of each atoms[i] with its mus[i] at its xs[i] (all in one direction)."""
    mus, xs = np.asarray(mus, dtype=float), np.asarray(xs, dtype=float)
    sets = [(a.l, a.p) for a in atoms]
    js = _windows(sets, mus, xs)
    s = np.empty(len(atoms))
    for part in _chunks([a.p.size - j for a, j in zip(atoms, js)]):
        i0, i1 = part.start, part.stop
        locs, p, seg = _gather(sets[i0:i1], js[i0:i1])
        lam = np.array([a.lam for a in atoms[i0:i1]])
        locs = locs + _spread(lam if upper else -lam, seg)
        # one rounding: widen it to the side where delta_G (decreasing in y) is larger/smaller
        y = _spread(xs[i0:i1], seg) - locs
        y = y - 2 * U * np.abs(y) if upper else y + 2 * U * np.abs(y)
        m = _spread(mus[i0:i1], seg)
        far = _far(y, m)
        values = np.empty(y.size)
        values[far] = _far_delta(y[far], upper)
        near = ~far
        with np.errstate(under="ignore"):
            values[near] = np.exp(log_delta_bound(m if seg is None else m[near], y[near], upper))
        s[i0:i1] = _per_set(seg, p, values, i1 - i0)
    out = np.empty(len(atoms))
    for i, a in enumerate(atoms):
        r = sum_margin(a.p.size, a.rel)
        si, j = float(s[i]), js[i]
        if upper:
            if j > 0:  # the atoms left out: delta_G(y) <= Phi(mu/2 - y/mu) <= e^{-t^2/2}, t >= 15
                y0 = float(xs[i]) - (float(a.l[j - 1]) + a.lam)
                t = (y0 - 2 * U * abs(y0)) / float(mus[i]) - float(mus[i]) / 2
                si += float(np.sum(a.p[:j])) * 2 * math.exp(-0.5 * t * t * (1 - 8 * U))
            out[i] = min(1.0, si * (1 + r) + (a.err + a.inf_mass) * (1 + 4 * U) + a.p.size * TINY)
        else:
            out[i] = max(0.0, si * (1 - r) - a.err * (1 + 4 * U))
    return out


def _halley(sets: Sequence[tuple[np.ndarray, np.ndarray]], mus: np.ndarray, targets: np.ndarray,
            xs: np.ndarray, tols) -> np.ndarray:
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
    tols = np.broadcast_to(np.asarray(tols, dtype=float), xs.shape)
    zs = np.array([search_z(t) for t in np.asarray(targets, dtype=float).tolist()])
    below, above = np.zeros(len(sets)), np.full(len(sets), math.inf)
    active = np.arange(len(sets))
    for _ in range(_HALLEY_STEPS):
        if active.size == 0:
            break
        mu, x, k = mus[active], xs[active], active.size
        now = sets if k == len(sets) else [sets[i] for i in active.tolist()]
        locs, p, seg = _gather(now, _windows(now, mu, x, zs[active]))
        m = _spread(mu, seg)
        y = _spread(x, seg) - locs
        dens, slope, bend = _search_terms(y, m, _spread(zs[active], seg))
        with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
            d, ds = _per_set(seg, p, dens, k), _per_set(seg, p, slope, k)
            dss = ds - _per_set(seg, p, bend, k)   # -delta'' (delta' = -ds)
        # per read-out in Python floats: a handful of them costs less than numpy's overhead would
        still = []
        for i, x_i, s_i, d_i, ds_i, dss_i in zip(active.tolist(), x.tolist(), mu.tolist(), d.tolist(),
                                                  ds.tolist(), dss.tolist()):
            x_new, close = _halley_step(x_i, d_i, ds_i, dss_i, float(targets[i]), float(tols[i]))
            if d_i > 0 and math.log(d_i) > targets[i]:
                below[i] = max(below[i], x_i)
            else:
                above[i] = min(above[i], x_i)
            if x_new is None:           # x far above every atom (e.g. a stale guess): come down
                x_new = 0.5 * (x_i + max(_top(sets[i]) + s_i * s_i / 2, 0.0))
                x_new = x_new if x_new < x_i else 0.5 * x_i
            if not below[i] <= x_new <= above[i] and above[i] < math.inf:
                x_new, close = 0.5 * (below[i] + above[i]), False
            xs[i] = x_new
            if not close:
                still.append(i)
        active = np.array(still, dtype=np.int64)
    for i in active.tolist():
        xs[i] = _bisect(sets[i], float(mus[i]), float(targets[i]), float(zs[i]), float(below[i]), float(above[i]),
                        float(xs[i]))
    return xs


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
        locs, p, _ = _gather([atoms], [_window(atoms[0], mu, x, z)])
        d = float(np.sum(p * _search_terms(x - locs, mu, z)[0]))
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
    (no rounding control: the search's). Atoms far above x (``_far`` at the search's z, see
    search_z) are taken to have Phi = 1 there: -expm1(y), e^y, 0."""
    with np.errstate(divide="ignore", invalid="ignore", under="ignore", over="ignore"):
        near = ~_far(y, m, z)
        dens, slope, bend = -np.expm1(y), np.exp(y), np.zeros(y.size)
        y, m = y[near], (m if np.ndim(m) == 0 else m[near])
        z = -m / 2 - y / m
        l1 = log_ndtr(m / 2 - y / m)
        l2 = y + log_ndtr(z)
        dens[near] = np.exp(l1) * -np.expm1(np.minimum(l2 - l1, 0.0))
        slope[near] = np.exp(l2)
        bend[near] = np.exp(y - 0.5 * z * z) * (_INV_SQRT_2PI / m)
    return dens, slope, bend


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


def mixed_root(a: Atoms, mu: float, delta_bar: float, upper: bool, guess: float = 0.0) -> float:
    """The least x >= 0 with delta(x) <= delta_bar: >= it (upper) or <= it (lower), certified by
    evaluations of the directed bound (the Newton search itself may be approximate)."""
    return float(mixed_roots([a], [mu], [delta_bar], upper, [guess])[0])


def mixed_roots(atoms: Sequence[Atoms], mus, delta_bars, upper: bool, guesses=None) -> np.ndarray:
    """mixed_root of each atoms[i] with mus[i] at delta_bars[i] (guesses[i]: a start, 0 for none)."""
    n = len(atoms)
    if n == 0:
        return np.empty(0)
    mus, dbs = np.asarray(mus, dtype=float), np.asarray(delta_bars, dtype=float)
    guesses = np.zeros(n) if guesses is None else np.asarray(guesses, dtype=float)
    # aim Newton at what the directed bound adds (rel, err, inf_mass): certification then passes at once
    aims, starts = np.empty(n), np.empty(n)
    for i, a in enumerate(atoms):
        db = float(dbs[i])
        r = sum_margin(a.p.size, a.rel)
        aim = (db - (a.err + a.inf_mass) * (1 + 4 * U)) / (1 + r) if upper else \
            (db + a.err * (1 + 4 * U)) / (1 - r)
        aims[i] = math.log(aim) if aim > 0 else math.log(db)
        g = float(guesses[i])
        starts[i] = g if g > 0 else max(float(a.l[-1]) + float(mus[i]) ** 2 / 2, 1e-3)
    # merged atoms put the root within ~1e-4; one cubic step on the full atoms then lands within
    # ~1e-12, inside the certification's 1e-10 margin. Fewer atoms have no merged stage: their
    # search may start far off (a batch's guess), so it runs until a step is below 1e-6. A search
    # from a guess passes over the atoms of its window (from mu (mu/2 + WINDOW_Z) below it up) and
    # merges from DIRECT_ATOMS of them on (a curve's prefixes: ~140 of ~400 atoms each, whose
    # merged stage cost more than it saved); one from above every atom may come down over all of
    # them: a batch's merges from COARSE_ATOMS atoms on.
    big = np.array([a.p.size - _window(a.l, mu, x) > DIRECT_ATOMS if g > 0 else
                    a.p.size > (DIRECT_ATOMS if n == 1 else COARSE_ATOMS)
                    for a, mu, x, g in zip(atoms, mus.tolist(), starts.tolist(), guesses.tolist())],
                   dtype=bool)
    xs = starts.copy()
    if big.any():
        idx = np.flatnonzero(big)
        xs[idx] = _halley([_coarse(atoms[i]) for i in idx.tolist()], mus[idx], aims[idx], starts[idx], 1e-3)
    xs = _halley([(a.l, a.p) for a in atoms], mus, aims, xs, np.where(big, 3e-4, 1e-6))
    if upper:  # delta_up(x) <= delta_bar certifies exact root <= x (also where the root is 0)
        xs = xs * (1 + 1e-10) + 1e-12
    else:      # delta_lo(x) > delta_bar certifies exact root > x
        xs = xs * (1 - 1e-10)
    fine = np.isfinite(xs) & (xs > 0)
    out = xs.copy()
    if fine.any():
        idx = np.flatnonzero(fine)
        d = mixed_deltas([atoms[i] for i in idx.tolist()], mus[idx], xs[idx], upper)
        passed = d <= dbs[idx] if upper else d > dbs[idx]
        fine[idx[~passed]] = False
    for i in np.flatnonzero(~fine).tolist():     # rare: walk from x until it is certified
        out[i] = _walk(atoms[i], float(mus[i]), float(dbs[i]), upper, float(xs[i]))
    return out


def _walk(a: Atoms, mu: float, delta_bar: float, upper: bool, x: float) -> float:
    def f(x: float) -> float:
        return float(mixed_delta(a, mu, [x], upper)[0])

    if upper:
        for k in range(1100):
            if not math.isfinite(x):    # (e.g. mu = 1e300): no finite x is certified
                return math.inf
            x += 1e-10 * 2.0 ** min(k, 1000) * max(1.0, x)   # (2.0 ** 1024 raises; inf is caught above)
            if f(x) <= delta_bar:
                return x
        return math.inf
    for k in range(60 if x > 1e-12 else 0):
        x -= 1e-10 * 2.0 ** k * max(1.0, x)
        if x <= 0:
            return 0.0
        if f(x) > delta_bar:
            return x
    return 0.0
