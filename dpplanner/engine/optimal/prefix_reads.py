"""The upper read-outs of a prefix curve that wants no lower bounds, a group at a time.

Without lower bounds no read-out depends on another's result, so they are collected and read
ten at a time by ``sup_roots`` (one table per group instead of thirty numpy calls per read-out).
Each group scans only the atoms above 0.9 x the previous group's last root: the curve grows with
k while delta_bar does not grow, so the roots are usually above it. Any start is sound: the upper
read-out from a start is the same root when the root is above it, and at least the start
otherwise, so a root found within a hair of its start is read again over all atoms.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from .atoms import sup_root
from .batched_roots import sup_roots
from .lattice import LatticePMF

#: Read-outs per group: a group's table costs a few numpy passes over its atoms.
READ_GROUP = 10
#: A read-out scans the atoms above this share of a root its own is known to be at least.
START_SHARE = 0.9
#: A root this close above its start (relative) may lie below it: read again over every atom.
AGAIN = 1e-6


def upper_root_from(run: LatticePMF, delta_bar: float, below: float) -> float:
    """sup_root of the upper pmf ``run``, whose root is known to be at least ``below`` (0: nothing
    known), one read-out alone (``GroupedUpperReads`` reads many at once the same way)."""
    start = START_SHARE * below
    if start > 0:
        root = sup_root(run.atoms(above=start), delta_bar, start)
        if root > start * (1 + AGAIN):
            return root
    return sup_root(run.atoms(above=0.0), delta_bar)


class GroupedUpperReads:
    """Collects (j, running upper pmf, delta_bar) and calls ``finish(j, root)`` for each, in order."""

    def __init__(self, finish: Callable[[int, float], None]):
        self.finish = finish
        self.pending: list[tuple[int, LatticePMF, float]] = []
        self.last_root, self.last_db = 0.0, math.inf

    def add(self, j: int, run: LatticePMF, delta_bar: float) -> None:
        self.pending.append((j, run, delta_bar))
        if len(self.pending) >= READ_GROUP:
            self.flush()

    def flush(self) -> None:
        if not self.pending:
            return
        runs = [run for _j, run, _db in self.pending]
        dbs = np.array([db for _j, _run, db in self.pending])
        starts = np.where(dbs <= self.last_db, START_SHARE * self.last_root, 0.0)
        roots = sup_roots([run.atoms(above=s) for run, s in zip(runs, starts.tolist())], dbs, starts)
        again = np.flatnonzero((starts > 0) & ~(roots > starts * (1 + AGAIN)))
        if again.size:
            roots[again] = sup_roots([runs[k].atoms(above=0.0) for k in again.tolist()], dbs[again],
                                     np.zeros(again.size))
        for (j, _run, _db), root in zip(self.pending, roots.tolist()):
            self.finish(j, root)
        if math.isfinite(roots[-1]):    # (an infinite root, no certified bound, starts nothing)
            self.last_root, self.last_db = float(roots[-1]), float(dbs[-1])
        self.pending = []
