"""The prefix curve's running pmfs, one query at a time, and each prefix's bracket from them.

Every side keeps the running connect-the-dots (upper) pmf; what it adds for the lower bounds:

* ``_LatticeLower`` (typed decimals, one small common lattice): a second running pmf with the exact
  rounded-down kernels;
* ``_SecondOrderLower``: the same running pmf read from below minus the certified second-order
  error bound of ``split``, blocks smoothed by the running pmf's snapshots at doubling lengths (the
  first queries' by true queries, ``true_smoothing``); short prefixes also get a rounded-down twin
  on a finer grid (first order) and, where that is too wide, exact enumeration;
* ``_NoLower``: nothing (a caller that wants upper bounds only).

``snapshot()`` captures what a prefix's lower read needs, so that the curve can read the upper
ends of several prefixes at once (``prefix_reads``) and their lower ends after.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Optional

import numpy as np

from ..exact import directed
from .atoms import U, delta_fn, delta_slope, lower_root, sup_root
from .binomial import log_rr
from .bracket import merge_groups
from .exact import grouped_atoms
from .lattice import LatticePMF, sparse_convolve, truncate
from .pld import STEP_MAX, initial_step, kernels, lattice_points
from .hybrid_error import ErrorSum, block_terms, entry_bound, group_terms, kernel_shift, log_window_max
from .true_smoothing import smoothing_window

#: Bound on the running lattice size (points) of the prefix curve.
PREFIX_MAX_POINTS = 1 << 20


def _lattice_kernel(a: int, d: float, upper: bool) -> LatticePMF:
    """RR(a d) exactly on the Y-lattice 2d (stride a): the common-lattice (exact) prefix path."""
    if a > PREFIX_MAX_POINTS:  # the caller checked the lattice size; never allocate unboundedly
        raise ValueError(f"a common lattice of {a:,} points per query is beyond what the prefix curve "
                         f"can compute (at most {PREFIX_MAX_POINTS:,})")
    exact = Fraction(a) * Fraction(d)
    e_eff = float(exact)
    lp, lq = log_rr(e_eff)
    ker = np.zeros(a + 1)
    ker[0] += math.exp(lq)
    ker[a] += math.exp(lp)
    rel = 16 * U + 4 * U * (abs(lp) + abs(lq) + 1) + 4 * U * e_eff  # e_eff is a d rounded
    return LatticePMF(2 * d, 0, ker, directed(-exact, upper), upper, rel=rel)


def _extend(run: LatticePMF, ker: LatticePMF, tail: float) -> LatticePMF:
    c, terms = sparse_convolve(run.p, ker.p)
    g = 1.01 * (terms + 2) * U
    rel = run.rel + ker.rel + run.rel * ker.rel
    rel = rel + g + rel * g
    off = run.offset + ker.offset
    off = math.nextafter(off, math.inf) if run.upper else math.nextafter(off, -math.inf)
    nxt = LatticePMF(run.step, run.start + ker.start, c, off, run.upper, rel=rel,
                     err=run.err, inf_mass=run.inf_mass)
    return truncate(nxt, tail)


_ZERO_UP = LatticePMF(1.0, 0, np.ones(1), 0.0, True)   # RR(0): loss 0 with probability 1
_ZERO_LO = LatticePMF(1.0, 0, np.ones(1), 0.0, False)

#: Prefixes this short are enumerated exactly on the connect-the-dots path (at most 2^12 outcomes).
EXACT_HEAD = 12
#: Prefixes up to this length also get the first-order (rounded-down) lower bound.
FIRST_ORDER_PREFIX = 32
#: Tilts tried for the prefix error bounds (one grid for every prefix).
PREFIX_THETAS = np.concatenate([[0.0], np.geomspace(1e-3, 300.0, 63)])


class _Side:
    """The running upper pmf ``run_up`` of the queries so far, which every side keeps; a side adds
    its own lower-side work in ``extend``, ``snapshot`` and ``bracket``."""

    def __init__(self, step_up: float):
        self.run_up = LatticePMF(step_up, 0, np.ones(1), 0.0, True)

    def extend(self, i: int, x: float, trim: float) -> None:
        self.run_up = _extend(self.run_up, self.upper_kernel(x), trim)   # (each side's kernels)


class _LatticeLower(_Side):
    """Exact common lattice (typed decimals): a second running pmf with the rounded-down kernels."""

    def __init__(self, lat, e, want_lower: bool = True):
        self.a_of = {float(v): int(ai) for v, ai in zip(e.tolist(), lat[0].tolist())}
        self.d_up, self.d_lo = lat[1], lat[2]
        self.run = LatticePMF(2 * self.d_lo, 0, np.ones(1), 0.0, False) if want_lower else None
        super().__init__(2 * self.d_up)

    def upper_kernel(self, x: float) -> LatticePMF:
        return _ZERO_UP if x == 0.0 else _lattice_kernel(self.a_of[x], self.d_up, True)

    def extend(self, i: int, x: float, trim: float) -> None:
        super().extend(i, x, trim)
        if self.run is not None:
            ker = _ZERO_LO if x == 0.0 else _lattice_kernel(self.a_of[x], self.d_lo, False)
            self.run = _extend(self.run, ker, trim)

    def snapshot(self) -> Optional[LatticePMF]:
        return self.run

    def bracket(self, n: int, db_up: float, db: float, floor: float, up: float,
                run: Optional[LatticePMF]) -> tuple[float, float]:
        """(upper, lower): the upper bound ``up`` was read at db_up, the lower one at db >= db_up
        from the prefix's snapshot (0 when the lower side is not wanted)."""
        return up, (0.0 if run is None else sup_root(run.atoms(above=floor), db, floor))


class _UpperKernels(_Side):
    """Connect-the-dots kernels on the lattice ``step``, built for every distinct x of the plan in
    one vectorised pass (a table per query cost a fifth of the 100-query example's curve)."""

    def __init__(self, eps: np.ndarray, step: float):
        super().__init__(step)
        self.kernels_up = kernels(eps, step, True)

    def upper_kernel(self, x: float) -> LatticePMF:
        return self.kernels_up[x]


@dataclass(frozen=True)
class _Snapshot:
    """What a prefix's second-order lower read needs, as it was right after its last query: the
    running pmfs, the mass cut so far, how many blocks there were, and the open block's sums."""

    run_up: LatticePMF
    run_lo: Optional[LatticePMF]
    cut_mass: float
    blocks: int
    open_log_k: Optional[np.ndarray]
    open_pg: float


class _SecondOrderLower(_UpperKernels):
    """Connect-the-dots with the certified second-order error bound of ``split``.

    The lower side reads delta(C_all) - Err from the running connect-the-dots pmf itself (read
    from below). The queries are replaced block by block: the first ``EXACT_HEAD`` in doubling
    sub-blocks smoothed by the twins before them and the true queries after them
    (``true_smoothing``), then blocks [head 2^(i-1), head 2^i) in query order, each smoothed by the
    running pmf at its start (kept as a snapshot of window bounds). (No query is rounded down to
    smooth, as ``split`` does: the true queries smooth the first blocks as well, at no first-order
    cost, and the lower side needs no running pmf of its own.) Prefixes up to ``EXACT_HEAD`` are
    enumerated exactly.
    """

    def __init__(self, eps: np.ndarray, step: float, width: float, dmin: float, tail: float):
        super().__init__(eps, step)
        K = eps.size
        self.eps, self.step, self.tail, self.width = eps, step, tail, width
        th = PREFIX_THETAS
        ones = np.ones(K, dtype=np.int64)
        self.log_m, log_term, pg = group_terms(eps, ones, step, th)
        self.cum_log_m = np.vstack([np.zeros(th.size), np.cumsum(self.log_m, axis=0)])
        self.head = min(K, EXACT_HEAD)
        self.log_term, self.pg = log_term, pg
        # -(sum of the first n epsilons), rounded down: the lower read's offset
        self.neg_sums_lo = -(np.cumsum(eps) * (1 + 2.02 * (np.arange(K) + 2) * U) + 1e-300)
        # blocks: [start, log S_theta of the smoothing pmf, its extra mass, log K_b, sum p_j G_j,
        # fixed part of log M_B]; the MGF of the rest is (running sum from start) + fixed part.
        # The head's queries come first, sorted by p_j G_j and in doubling sub-blocks, each
        # smoothed by the sub-blocks before it; then [head 2^i, head 2^(i+1)) in query order,
        # smoothed by the running pmf at their start; the last block is open.
        self.blocks = []
        self._stack = None      # (``_stacked``'s cache)
        others = np.flatnonzero(eps[: self.head] > 0)
        others = others[np.argsort(pg[others], kind="stable")]
        smooth_pmf, size, pos = LatticePMF(step, 0, np.ones(1), 0.0, False), 1, 0
        while pos < others.size:
            sub, later = others[pos: pos + size], others[pos + size:]
            # the head's later queries are still true while this sub-block is replaced: as many as
            # fit smooth it (true_smoothing), the others stay in the rest's MGF
            log_s, extra, n_true = smoothing_window(smooth_pmf, pos, eps[later], step, th)
            fixed = self.log_m[np.concatenate([sub, later[n_true:]])].sum(axis=0)
            self.blocks.append([self.head, log_s, extra,
                                np.logaddexp.reduce(log_term[sub], axis=0), float(np.sum(pg[sub])), fixed])
            for i in sub.tolist():
                smooth_pmf = _extend(smooth_pmf, self.upper_kernel(float(eps[i])), 0.0)
            pos += sub.size
            size *= 2
        self.next_cut = self.head
        self.cut_mass = 0.0
        # short prefixes are too lumpy for the smoothing: also keep the rounded-down twin (its
        # first-order error is small while the prefix is short)
        head_lo = eps[:FIRST_ORDER_PREFIX]
        head_lo = head_lo[head_lo > 0]
        self.step_lo = step
        if head_lo.size:
            ones_lo = np.ones(head_lo.size, dtype=np.int64)
            self.step_lo = min(step, initial_step(head_lo, ones_lo, dmin, width))
            while lattice_points(head_lo, ones_lo, self.step_lo) > PREFIX_MAX_POINTS / 4 and self.step_lo < STEP_MAX:
                self.step_lo *= 2
        self.run_lo = LatticePMF(self.step_lo, 0, np.ones(1), 0.0, False)
        self.kernels_lo = kernels(head_lo, self.step_lo, False)

    def extend(self, i: int, x: float, trim: float) -> None:
        if i == self.next_cut:  # the running pmf is the smoothing of the block starting here
            l, logp, extra = entry_bound(self.run_up, self.cut_mass, i)
            self.blocks.append([i, log_window_max(l, logp, PREFIX_THETAS), extra,
                                np.full(PREFIX_THETAS.size, -np.inf), 0.0, 0.0])
            self.next_cut *= 2
        if i >= self.head:
            blk = self.blocks[-1]
            blk[3] = np.logaddexp(blk[3], self.log_term[i])   # (a new array: snapshots keep theirs)
            blk[4] += float(self.pg[i])
        super().extend(i, x, trim)
        self.cut_mass += 2 * trim    # cut from the running pmf's ends (moved up, or to +infinity)
        if self.run_lo is not None and x != 0.0:
            self.run_lo = _extend(self.run_lo, self.kernels_lo[x], trim) if i < FIRST_ORDER_PREFIX else None

    def snapshot(self) -> "_Snapshot":
        blk = self.blocks[-1] if self.blocks else None
        return _Snapshot(self.run_up, self.run_lo, self.cut_mass, len(self.blocks),
                         None if blk is None else blk[3], 0.0 if blk is None else blk[4])

    def _upper_read_lower(self, n: int, snap: "_Snapshot") -> LatticePMF:
        """The connect-the-dots pmf of the first n queries as a lower pmf: the upper one with its
        mass at +infinity dropped, the mass its truncations moved up (<= cut_mass) charged, and
        its offset the exact -sum eps rounded down (both only lower delta); and the rounded-up
        kernel weights charged (``kernel_shift``)."""
        up = snap.run_up
        return replace(up, upper=False, offset=min(up.offset, float(self.neg_sums_lo[n - 1])), inf_mass=0.0,
                       err=(up.err + snap.cut_mass) * (1 + 4 * U) + kernel_shift(np.ones(n), self.step))

    def _error(self, n: int, x_ref: float, snap: Optional["_Snapshot"] = None) -> ErrorSum:
        """The bound for the prefix of length n, from its snapshot (default: now, right after
        query n - 1 was added)."""
        snap = self.snapshot() if snap is None else snap
        base, log_s, closed_k, closed_additive = self._stacked(snap.blocks)
        mag = float(np.max(np.abs(self.cum_log_m[n]))) + 1.0
        slack = 4 * U * (n + 2) * mag  # differences of running sums
        rest_mgf = self.cum_log_m[n][None, :] - base + slack
        # the last block grows with the queries after the snapshot: its sums as they were then
        log_k = np.vstack([closed_k, snap.open_log_k[None, :]])
        additive = closed_additive + self.blocks[snap.blocks - 1][2] * snap.open_pg
        thetas, coefs = block_terms(PREFIX_THETAS, log_s, log_k, rest_mgf, x_ref)
        return ErrorSum(thetas, coefs, additive * (1 + 1e-9))

    def _stacked(self, count: int) -> tuple:
        """The first ``count`` blocks as arrays, built once per count: -(running MGF sum at each
        start) + the fixed part, log S_theta, and the log K_b and additive sum of the closed ones
        (all but the last)."""
        if self._stack is None or self._stack[0] != count:
            blocks = self.blocks[:count]
            fixed = np.array([np.broadcast_to(b[5], PREFIX_THETAS.shape) for b in blocks])
            base = self.cum_log_m[[b[0] for b in blocks]] - fixed
            closed_k = np.array([b[3] for b in blocks[:-1]]).reshape(-1, PREFIX_THETAS.size)
            self._stack = (count, base, np.array([b[1] for b in blocks]), closed_k,
                           sum(b[2] * b[4] for b in blocks[:-1]))
        return self._stack[1:]

    def bracket(self, n: int, db_up: float, db: float, floor: float, up: float,
                snap: "_Snapshot") -> tuple[float, float]:
        """(upper, lower): the upper bound ``up`` was read at db_up, the lower one at db >= db_up
        from the prefix's snapshot."""
        first_order = floor
        if snap.run_lo is not None:
            first_order = sup_root(snap.run_lo.atoms(above=floor), db, floor)
        if not math.isfinite(up) or up - first_order <= 0.25 * self.width:
            return up, first_order  # short prefix: the first-order bound is already tight enough
        if n <= self.head:
            return up, max(first_order, _exact_head_lower(self.eps[:n], db))
        run = self._upper_read_lower(n, snap)
        atoms = run.atoms(above=floor)
        err = self._error(n, up, snap)
        tol = max(1e-11, 1e-12 * up, 1e-3 * self.width)  # a lower bound needs no more digits

        delta = delta_fn(atoms)

        def h(x: float) -> float:
            return delta(x) - err(x) - db

        return up, max(first_order, lower_root(h, up, tol, self.width / 8, delta_slope(atoms, up)))


class _NoLower(_UpperKernels):
    """Upper bounds only (a caller that drops the lower ones): the connect-the-dots lattice of
    ``_SecondOrderLower``, none of its lower-side work; 0 is the lower bound."""

    def snapshot(self) -> None:
        return None

    def bracket(self, n: int, db_up: float, db: float, floor: float, up: float, snap: None) -> tuple[float, float]:
        return up, 0.0


def _exact_head_lower(eps: np.ndarray, db: float) -> float:
    """The lower bound of a short prefix, its outcomes enumerated exactly. (Its upper side is the
    lattice's: within a small part of the width there, and enumerating both sides of the first
    dozen prefixes cost a third of a 100-point curve.)"""
    e, m = merge_groups(eps, np.ones(eps.size, dtype=np.int64))
    return 0.0 if e.size == 0 else sup_root(grouped_atoms(e, m, False), db)


