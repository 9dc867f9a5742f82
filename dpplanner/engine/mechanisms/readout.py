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

The root is searched without rounding control (mixed_search.py: Halley's method, first on merged
atoms, then one step on the full atoms) and only then certified by an evaluation of the directed
bound: two passes over the full atoms per read-out. Everything works on a batch of read-outs at
once (one per prefix of a curve): the atoms in the windows of all of them are gathered together
(atom_sets.py), so a pass costs a few numpy calls however many read-outs it serves, and each
read-out's numbers are those it would get alone.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..optimal.atoms import TINY, U, Atoms, sum_margin
from .atom_sets import FEW, WINDOW_Z, AtomSets, far, per_set, spread
from .gaussian import log_delta_bound
from .mixed_search import halley


#: Newton first runs on at most this many merged atoms; the full atoms then need a step or two.
COARSE_ATOMS = 256
#: Up to this many atoms a lone read-out (a bracket's) searches them at once: merging them costs
#: more than the passes over a few hundred atoms it saves (numpy's overhead). A batch's (a curve's
#: prefixes) merges from COARSE_ATOMS on: its starts are guesses scaled from another root.
DIRECT_ATOMS = 512


#: Above an atom's window (x - l <= -mu (mu/2 + WINDOW_Z)) both Phi's of delta_G are 1 within
#: Phi(-WINDOW_Z + 1e-12) < FAR_PHI, so delta_G(y) = -expm1(y) within FAR_PHI (see _far_delta):
#: no log_ndtr there (~40% of a curve's atoms).
FAR_PHI = 1e-50
#: A read-out certified against a delta_bar counts the atoms beyond a narrower window (certify_z)
#: at bounds that add at most this share of delta_bar on each side (about 2 u in all), below the
#: sum's own rounding margin (sum_margin: (n + 4) u and more): it may rarely decide otherwise
#: than at WINDOW_Z, and is sound either way.
CERTIFY_SHARE = 1e-16


def certify_z(delta_bars: np.ndarray) -> np.ndarray:
    """Per read-out, the z of its window when it is certified against delta_bars[i] (no delta_bar,
    0 or less: WINDOW_Z). Atoms outside it count at most 2 e^{-z^2/2} <= CERTIFY_SHARE delta_bar
    each side per unit of mass (_far_phi, _left_out): at delta_bar 1e-7, z = 10.4 against
    WINDOW_Z's 15, 2/3 the atoms that need log_ndtr (most of a read-out's certification)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.sqrt(2.0 * (np.maximum(-np.log(delta_bars), 0.0) - math.log(CERTIFY_SHARE / 2)))
    return np.where(delta_bars > 0, np.minimum(z, WINDOW_Z), WINDOW_Z)


def _far_phi(z):
    """A bound on Phi(-z') for every z' >= z - 1e-12 (the far test's rounding): FAR_PHI at
    WINDOW_Z, else e^{-(z - 1e-6)^2 / 2} >= 2 Phi(-(z - 1e-6)) (rounding of exp: ulps)."""
    return np.where(z >= WINDOW_Z, FAR_PHI, np.exp(-0.5 * (z - 1e-6) ** 2))


def _far_delta(y: np.ndarray, upper: bool, phi) -> np.ndarray:
    """Bounds on delta_G(y) at far atoms (atom_sets.far at z), y rounded to its side. There
    delta_G(y) = (1 - e^y) - Phi(-x1) + e^y Phi(-z') with x1 = z' + mu >= z' >= z - 1e-12 and
    e^y <= 1, so it is within phi >= Phi(-z') of -expm1(y) (_far_phi; within an ulp; 8 u
    charged, so that phi counts even where the sum rounds it away)."""
    if upper:
        return -np.expm1(y) * (1 + 8 * U) + phi
    return np.maximum(-np.expm1(y) * (1 - 8 * U) - phi, 0.0)


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


def mixed_deltas(atoms: Sequence[Atoms], mus, xs, upper: bool, delta_bars=None) -> np.ndarray:
    """mixed_delta of each atoms[i] with its mus[i] at its xs[i] (all in one direction); with
    ``delta_bars``, bounds that serve only to compare each with delta_bars[i] (certify_z)."""
    zs = WINDOW_Z if delta_bars is None else certify_z(np.asarray(delta_bars, dtype=float))
    return _deltas(*_laid_out(atoms), np.asarray(mus, dtype=float), np.asarray(xs, dtype=float), upper, zs)


class _Books:
    """Each read-out's bookkeeping (atoms.py's Atoms) as arrays over the read-outs."""

    def __init__(self, rel, err, inf_mass, lam) -> None:
        self.rel, self.err, self.inf_mass, self.lam = rel, err, inf_mass, lam

    @classmethod
    def of(cls, atoms: Sequence[Atoms]) -> "_Books":
        return cls(*(np.array([getattr(a, f) for a in atoms], dtype=float) for f in ("rel", "err", "inf_mass", "lam")))


class LatticeAtoms:
    """The atoms of lattice pmfs (each ``LatticePMF.atoms()``) as a batch of read-outs, laid end to
    end in one pass: the same locations offset + step * index, probabilities and bookkeeping, at a
    few numpy calls for the batch where each pmf's own ``atoms()`` took ~10-20 us (a 100-point
    curve's read-outs: ~1-2 ms). A pmf given more than once is stored once. Indexing gives a pmf's
    Atoms."""

    def __init__(self, pmfs) -> None:
        self.pmfs = list(pmfs)
        unique = list({id(x): x for x in self.pmfs}.values())
        where = {id(x): i for i, x in enumerate(unique)}
        which = np.array([where[id(x)] for x in self.pmfs], dtype=np.int64)
        size = np.array([x.p.size for x in unique], dtype=np.int64)
        start = np.array([x.start for x in unique], dtype=np.int64)
        offset, step = (np.array([getattr(x, f) for x in unique], dtype=float) for f in ("offset", "step"))
        base = np.cumsum(size) - size
        idx = (np.arange(int(size.sum()), dtype=np.int64) + np.repeat(start - base, size)).astype(float)
        l = np.repeat(offset, size) + np.repeat(step, size) * idx
        p = np.concatenate([x.p for x in unique]) if unique else np.zeros(0)
        self.sets = AtomSets.laid_out(l, p, base[which], size[which])
        lam = 4 * U * (np.abs(offset) + step * (np.abs(start) + size))
        rel = np.array([x.rel for x in unique], dtype=float) + 1.01 * (size + 4) * U
        err, inf_mass = (np.array([getattr(x, f) for x in unique], dtype=float) for f in ("err", "inf_mass"))
        self.books = _Books(rel[which], err[which], inf_mass[which], lam[which])

    def __len__(self) -> int:
        return len(self.pmfs)

    def __getitem__(self, i: int) -> Atoms:
        return self.pmfs[i].atoms()

    def __iter__(self):
        return (x.atoms() for x in self.pmfs)


def _laid_out(atoms) -> tuple[AtomSets, _Books]:
    if isinstance(atoms, LatticeAtoms):
        return atoms.sets, atoms.books
    return AtomSets([(a.l, a.p) for a in atoms]), _Books.of(atoms)


def _deltas(sets: AtomSets, books: _Books, mus: np.ndarray, xs: np.ndarray, upper: bool,
            zs=WINDOW_Z) -> np.ndarray:
    """The bounds on delta at each read-out's x, with its window's z (``zs``: one or per read-out)."""
    n = sets.n
    everyone = np.arange(n)
    zs = np.broadcast_to(np.asarray(zs, dtype=float), (n,))
    js = sets.windows(everyone, xs, mus, zs)
    s = np.empty(n)
    for part in _chunks((sets.size - js).tolist()):
        i0, i1 = part.start, part.stop
        locs, p, seg = sets.gather(everyone[i0:i1], js[i0:i1])
        lam = books.lam[i0:i1]
        locs = locs + spread(lam if upper else -lam, seg)
        # one rounding: widen it to the side where delta_G (decreasing in y) is larger/smaller
        y = spread(xs[i0:i1], seg) - locs
        y = y - 2 * U * np.abs(y) if upper else y + 2 * U * np.abs(y)
        m, z = spread(mus[i0:i1], seg), spread(zs[i0:i1], seg)
        above = far(y, m, z)
        values = np.empty(y.size)
        values[above] = _far_delta(y[above], upper, _far_phi(z if seg is None else z[above]))
        near = ~above
        with np.errstate(under="ignore"):
            values[near] = np.exp(log_delta_bound(m if seg is None else m[near], y[near], upper))
        s[i0:i1] = per_set(seg, p, values)
    if not upper:
        return _each(_lower_end, s, books.rel, books.err, sets.size)
    tail = np.zeros(n)
    cut = np.flatnonzero(js > 0)
    if cut.size:    # the atoms left out below the windows
        with np.errstate(over="ignore"):    # (their computed mass may be mostly rounding: see _left_out)
            below = sets.below(cut, js[cut])
        tail[cut] = _each(_left_out, xs[cut], sets.l[sets.base[cut] + js[cut] - 1] + books.lam[cut], mus[cut],
                          below)
    return _each(_upper_end, s, tail, books.rel, books.err, books.inf_mass, sets.size)


def _each(f, *columns) -> np.ndarray:
    """f of each read-out's numbers: in Python floats for a few read-outs (numpy's overhead on a
    handful of values costs more: a bracket's lone read-out), else elementwise on the arrays (the
    same operations). f's first argument is what it computes with: _Floats or numpy."""
    if len(columns[0]) <= FEW:
        return np.array([f(_Floats, *v) for v in zip(*(np.asarray(c).tolist() for c in columns))], dtype=float)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.asarray(f(np, *columns), dtype=float)


class _Floats:
    """numpy's functions that _each's formulas use, on Python floats (fmin / fmax: the number
    where the other is nan, as numpy's)."""

    exp, log = math.exp, math.log

    @staticmethod
    def where(c, a, b):
        return a if c else b

    @staticmethod
    def fmin(x, c):
        return x if x < c else c

    @staticmethod
    def fmax(x, c):
        return x if x > c else c


def _lower_end(xp, s, rel, err, size):
    """A lower bound on delta from the sum s over the window (rel: the atoms' relative error)."""
    return xp.fmax(s * (1 - sum_margin(size, rel)) - err * (1 + 4 * U), 0.0)


def _upper_end(xp, s, tail, rel, err, inf_mass, size):
    """An upper bound on delta from the sum s over the window and the bound ``tail`` below it."""
    return xp.fmin((s + tail) * (1 + sum_margin(size, rel)) + (err + inf_mass) * (1 + 4 * U) + size * TINY, 1.0)


def _left_out(xp, x, l_top, mu, mass):
    """What the atoms below a window (the highest at l_top, lam added) add at most to delta(x):
    there delta_G(y) <= Phi(mu/2 - y/mu) <= e^{-t^2/2}, t >= the window's z, on their exact mass, at
    most 1 (their computed ``mass`` may be mostly rounding)."""
    y0 = x - l_top
    t = (y0 - 2 * U * abs(y0)) / mu - mu / 2
    return xp.fmin(mass, 1.0) * 2 * xp.exp(-0.5 * t * t * (1 - 8 * U))


def _aim(xp, upper, db, rel, err, inf_mass, size):
    """log of the delta that Newton aims at: delta_bar less what the directed bound adds (rel,
    err, inf_mass), so that the certification passes at once (log delta_bar if nothing is left)."""
    aim = (db - (err + inf_mass) * (1 + 4 * U)) / (1 + sum_margin(size, rel)) if upper else \
        (db + err * (1 + 4 * U)) / (1 - sum_margin(size, rel))
    return xp.log(xp.where(aim > 0, aim, db))


def _start(xp, guess, top, mu):
    """A search's start: the guess, or (none) the largest atom plus the Gaussian's mean."""
    return xp.where(guess > 0, guess, xp.fmax(top + mu * mu / 2, 1e-3))


def mixed_root(a: Atoms, mu: float, delta_bar: float, upper: bool, guess: float = 0.0) -> float:
    """The least x >= 0 with delta(x) <= delta_bar: >= it (upper) or <= it (lower), certified by
    evaluations of the directed bound (the Newton search itself may be approximate)."""
    return float(mixed_roots([a], [mu], [delta_bar], upper, [guess])[0])


def mixed_roots(atoms: Sequence[Atoms], mus, delta_bars, upper: bool, guesses=None) -> np.ndarray:
    """mixed_root of each atoms[i] with mus[i] at delta_bars[i] (guesses[i]: a start, 0 for none);
    ``atoms`` a sequence of Atoms or a LatticeAtoms."""
    n = len(atoms)
    if n == 0:
        return np.empty(0)
    mus, dbs = np.asarray(mus, dtype=float), np.asarray(delta_bars, dtype=float)
    guesses = np.zeros(n) if guesses is None else np.asarray(guesses, dtype=float)
    sets, books = _laid_out(atoms)
    aims = _each(lambda xp, *v: _aim(xp, upper, *v), dbs, books.rel, books.err, books.inf_mass, sets.size)
    starts = _each(_start, guesses, sets.l[sets.base + sets.size - 1], mus)
    # merged atoms put the root within ~1e-4; one cubic step on the full atoms then lands within
    # ~1e-12, inside the certification's 1e-10 margin. Fewer atoms have no merged stage: their
    # search may start far off (a batch's guess), so it runs until a step is below 1e-6. A search
    # from a guess passes over the atoms of its window (from mu (mu/2 + WINDOW_Z) below it up) and
    # merges from DIRECT_ATOMS of them on (a curve's prefixes: ~140 of ~400 atoms each, whose
    # merged stage cost more than it saved); one from above every atom may come down over all of
    # them: a batch's merges from COARSE_ATOMS atoms on.
    everyone = np.arange(n)
    window = sets.size - sets.windows(everyone, starts, mus, WINDOW_Z)
    big = np.where(guesses > 0, window > DIRECT_ATOMS, sets.size > (DIRECT_ATOMS if n == 1 else COARSE_ATOMS))
    xs = starts.copy()
    if big.any():
        idx = np.flatnonzero(big)
        merged = AtomSets([_coarse(atoms[i]) for i in idx.tolist()])
        xs[idx] = halley(merged, mus[idx], aims[idx], starts[idx], 1e-3)
    xs = halley(sets, mus, aims, xs, np.where(big, 3e-4, 1e-6))
    if upper:  # delta_up(x) <= delta_bar certifies exact root <= x (also where the root is 0)
        xs = xs * (1 + 1e-10) + 1e-12
    else:      # delta_lo(x) > delta_bar certifies exact root > x
        xs = xs * (1 - 1e-10)
    fine = np.isfinite(xs) & (xs > 0)
    out = xs.copy()
    if fine.all():
        d = _deltas(sets, books, mus, xs, upper, certify_z(dbs))
        fine = d <= dbs if upper else d > dbs
    elif fine.any():
        idx = np.flatnonzero(fine)
        d = mixed_deltas([atoms[i] for i in idx.tolist()], mus[idx], xs[idx], upper, dbs[idx])
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
