"""The windows of atoms that a read-out of delta at x looks at (readout.py, mixed_search.py), and
the atom sets of many read-outs laid end to end once (a curve's prefixes, a privacy profile's
points), so that finding each read-out's window and gathering the atoms of all windows costs a
few numpy calls however many read-outs a pass serves (one call per read-out each was ~40% of a
curve's read-out time). A set shared by several read-outs is stored once.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

#: Atoms this many Gaussian sd (plus the mean) below x are counted at one bound (delta_G ~ 1e-50).
WINDOW_Z = 15.0
#: Up to this many read-outs each is handled in Python floats (numpy's overhead on a handful of
#: values costs more: a bracket's lone read-out took a quarter longer).
FEW = 8
#: Rounds of correcting the windows' first guesses by one atom before a set is searched alone.
_FIX_ROUNDS = 3


def window(locs: np.ndarray, mu: float, x: float, z: float) -> int:
    """Index of the first atom that matters at x: below it, x - l >= mu (mu/2 + z), where
    delta_G <= Phi(-z) (~1e-50 at WINDOW_Z; the upper bound still counts those atoms, at that
    value; a search may look at fewer, see mixed_search.search_z)."""
    return int(locs.searchsorted(x - mu * (mu / 2 + z)))     # (side left; the method: ~1 us less a call)


def far(y: np.ndarray, m, z) -> np.ndarray:
    """Which atoms (at y = x - l, Gaussian mu m) are far above x: -m/2 - y/m >= z up to the
    rounding of this test (a relative 1e-15 of z)."""
    return y <= -m * (m / 2 + z)


def spread(values: np.ndarray, seg):
    """Per-read-out values as per-atom ones of a gather (a scalar for a single read-out)."""
    return float(values[0]) if seg is None else values[seg.of]


def per_set(seg, p: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The sums of p * values over each read-out's atoms of a gather."""
    if seg is None:     # (not np.dot: BLAS threads fight on a busy machine, and sum in any order)
        return np.array([np.sum(p * values)])
    return seg.sums(p * values)


class AtomSets:
    """Read-out i's atoms are l[base[i]:base[i] + size[i]] (ascending) with masses p[...]."""

    def __init__(self, sets: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
        self.n = len(sets)
        if self.n == 1:             # (a lone read-out, as a bracket's: views, no copy)
            self.l, self.p = sets[0]
            self.base = np.zeros(1, dtype=np.int64)
            self.size = np.array([self.l.size], dtype=np.int64)
        else:
            where: dict = {}
            stored: list = []
            which = []
            for l, p in sets:
                key = (id(l), id(p))
                if key not in where:
                    where[key] = len(stored)
                    stored.append((l, p))
                which.append(where[key])
            sizes = np.array([l.size for l, _p in stored], dtype=np.int64)
            self.l = np.concatenate([l for l, _p in stored])
            self.p = np.concatenate([p for _l, p in stored])
            idx = np.array(which, dtype=np.int64)
            self.base, self.size = (np.cumsum(sizes) - sizes)[idx], sizes[idx]

    @classmethod
    def laid_out(cls, l: np.ndarray, p: np.ndarray, base: np.ndarray, size: np.ndarray) -> "AtomSets":
        """Sets already laid end to end: read-out i's atoms are l[base[i]:base[i] + size[i]]."""
        sets = cls.__new__(cls)
        sets.n, sets.l, sets.p, sets.base, sets.size = int(base.size), l, p, base, size
        return sets

    def view(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        b, n = int(self.base[i]), int(self.size[i])
        return self.l[b:b + n], self.p[b:b + n]

    def windows(self, sel: np.ndarray, x: np.ndarray, mu: np.ndarray, z, side: float = -1.0) -> np.ndarray:
        """For each selected read-out, ``window`` of its atoms: the number below x - mu (mu/2 + z)
        (``side`` +1: below x + mu (mu/2 + z), where the atoms far above x begin), exactly as
        searchsorted (side left) finds it: a first guess from the set's first and last atoms
        (exact for a lattice up to rounding), corrected one atom at a time against the atoms
        themselves; a set still off is searched."""
        if len(sel) <= FEW:
            zs = z.tolist() if np.ndim(z) else [z] * len(sel)
            return np.array([int(self.l[b:b + n].searchsorted(x_i + side * (m * (m / 2 + z_i)))) for b, n, x_i, m, z_i
                             in zip(self.base[sel].tolist(), self.size[sel].tolist(), x.tolist(), mu.tolist(), zs)],
                            dtype=np.int64)
        t = x + side * (mu * (mu / 2 + z))
        base, size = self.base[sel], self.size[sel]
        top = max(self.l.size - 1, 0)
        first = self.l[np.minimum(base, top)] if self.l.size else np.zeros(len(sel))
        last = self.l[np.minimum(base + np.maximum(size - 1, 0), top)] if self.l.size else first
        with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
            rate = np.where(last > first, (size - 1) / (last - first), 0.0)
            guess = np.ceil((t - first) * rate)
        guess = np.where(t > first, np.where(np.isnan(guess), size, guess), 0.0)
        j = np.minimum(np.maximum(guess, 0.0), size).astype(np.int64)
        j = np.where(np.isnan(t), size, j)
        for _ in range(_FIX_ROUNDS):
            down = (j > 0) & (self.l[np.maximum(base + j - 1, 0)] >= t)
            up = (j < size) & (self.l[np.minimum(base + j, top)] < t)
            if not (down.any() or up.any()):
                return j
            j = j - down + up
        down = (j > 0) & (self.l[np.maximum(base + j - 1, 0)] >= t)
        up = (j < size) & (self.l[np.minimum(base + j, top)] < t)
        for k in np.flatnonzero(down | up).tolist():
            b = int(base[k])
            j[k] = int(self.l[b:b + int(size[k])].searchsorted(t[k]))
        return j

    def gather(self, sel: np.ndarray, js: np.ndarray, stops=None):
        """The atoms from index js[i] on (up to stops[i]; default: the end) of each selected
        read-out, concatenated: (locations, probabilities, their Segments; None for one read-out,
        whose arrays are views)."""
        stops = self.size[sel] if stops is None else stops
        if len(sel) == 1:
            b, j, n = int(self.base[sel[0]]), int(js[0]), int(stops[0])
            return self.l[b + j:b + n], self.p[b + j:b + n], None
        start = self.base[sel] + js
        count = stops - js
        ends = np.cumsum(count)
        idx = np.arange(int(ends[-1])) + np.repeat(start - (ends - count), count)
        return self.l[idx], self.p[idx], Segments(count, ends - count)

    def below(self, sel: np.ndarray, js: np.ndarray) -> np.ndarray:
        """For each selected read-out with js > 0, the mass of its atoms below index js."""
        if len(sel) <= FEW:
            return np.array([float(np.sum(self.p[b:b + j])) for b, j in zip(self.base[sel].tolist(), js.tolist())])
        start = self.base[sel]
        cuts = np.empty(2 * len(sel), dtype=np.int64)
        cuts[0::2], cuts[1::2] = start, start + js
        return np.add.reduceat(np.append(self.p, 0.0), cuts)[0::2]


class Segments:
    """Where each read-out's atoms are in a gather: ``of`` per atom (its read-out's position),
    ``starts`` per read-out (empty ones hold none)."""

    def __init__(self, count: np.ndarray, starts: np.ndarray) -> None:
        self.n, self.starts, self.filled = count.size, starts, count > 0
        self.of = np.repeat(np.arange(count.size), count)

    def sums(self, values: np.ndarray) -> np.ndarray:
        """The sum of ``values`` over each read-out's atoms (one pass: np.add.reduceat)."""
        out = np.zeros(self.n)
        if values.size:
            out[self.filled] = np.add.reduceat(values, self.starts[self.filled])
        return out
