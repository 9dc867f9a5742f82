"""What a theorem's compose and curve functions receive: the validated inputs plus the work that
several theorems share (running sums, the optimal composition, the homogeneous roots), computed
at most once per request and only when a theorem asks for it."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Optional

import numpy as np

from .delta import delta_bar_bounds, infeasible_reason, log_survival, total_delta_up
from .never_worse import best_cheap, best_cheap_for
from .stats import Sums, plan_sums
from .theorems import OPTIMAL
from .types import CancelToken, Composition, ProgressCallback
from .validation import Releases

#: A prefix curve over at most this many distinct epsilons, with at least PER_POINT_QUERIES
#: queries per requested point, brackets each point on its own (``CurveInputs.few_kinds``).
PER_POINT_MAX_KINDS = 16
PER_POINT_QUERIES = 64


def grouped(plan: Releases) -> tuple[np.ndarray, np.ndarray]:
    """Distinct eps values with their total multiplicity (deltas are already in delta_bar)."""
    eps_u, inverse = np.unique(plan.eps, return_inverse=True)
    mult_u = np.bincount(inverse, weights=plan.mult.astype(float)).astype(np.int64)
    return eps_u, mult_u


def optimal(plan: Releases, delta_g: float, eta: float, cancel: Optional[CancelToken] = None,
            progress: Optional[ProgressCallback] = None, sums: Optional[Sums] = None,
            time_limit: Optional[float] = None) -> Composition:
    """Murtagh–Vadhan optimal composition: delta_i moved into delta_bar, then the optimal core,
    whose upper end is met with the cheaper theorems' totals (never worse than any of them)."""
    from .optimal import optimal_bracket  # the optimal core (engine/optimal/)

    db, db_hi = delta_bar_bounds(delta_g, plan.delta, plan.mult)  # upper read at db, lower at db_hi
    if db < 0:
        forced = float(total_delta_up(0.0, log_survival(plan.delta, plan.mult)))
        return Composition(OPTIMAL, math.inf, delta_g, detail="infeasible",
                           reason=infeasible_reason(delta_g, forced))
    eps_u, mult_u = grouped(plan)
    bracket = optimal_bracket(eps_u, mult_u, db, eta, cancel=cancel, progress=progress, delta_bar_hi=db_hi,
                              time_limit=time_limit)
    cheap, name = best_cheap_for(plan, plan_sums(plan) if sums is None else sums, delta_g, float(bracket.upper))
    upper, detail = float(bracket.upper), bracket.method
    if cheap < upper:
        upper = cheap
        detail = never_worse_detail(detail, name, float(bracket.upper), upper - float(bracket.lower) <= eta)
    return Composition(OPTIMAL, upper, delta_g, epsilon_lower=float(bracket.lower), detail=detail,
                       extra={"delta_bar": db, "eta": eta, "cheaper bound": (name, cheap)})


def never_worse_detail(method: str, name: str, own_upper: float, within_eta: bool) -> str:
    """The method of a bracket whose upper end a cheaper theorem's total replaced: what it was, and
    the reason for a width above eta only while it still applies."""
    cut = method.find("; width > eta")
    base, why = (method, "") if cut < 0 else (method[:cut], method[cut:])
    return (f"{base}; upper end from {name} (never worse than a cheaper theorem; the lattice gave "
            f"{own_upper:.9g}){'' if within_eta else why}")


@dataclass
class ComposeInputs:
    """One plan composed under one or more theorems; ``progress`` is the current theorem's."""

    plan: Releases
    delta_g: float
    eta: float
    cancel: Optional[CancelToken] = None
    progress: Optional[ProgressCallback] = None
    time_limit: Optional[float] = None
    #: Only a certified upper end is wanted (an allocation's search): a theorem may skip its lower
    #: end and report an upper end above its total's (pld: the first lattice's, see ladder.upper_end).
    upper_only: bool = False
    #: With upper_only: the rung of pld's ladder of lattices to read it on (0: the first; a later
    #: one where a whole total at a nearby scale climbed there, see allocate.py).
    upper_rung: int = 0
    #: With upper_only: the whole total of these releases is likely asked for next (an allocation's
    #: search step likely its last): pld composes its lower end meanwhile where it can (ladder.upper_end).
    lower_ahead: bool = False
    _optimal: Optional[Composition] = field(default=None, repr=False)

    @cached_property
    def sums(self) -> Sums:
        # exact running sums cost ~1 us a query: only the closed forms ask for them
        return plan_sums(self.plan)

    def known_optimal(self) -> Optional[Composition]:
        """The optimal composition if a theorem has asked for it already, else None."""
        return self._optimal

    def optimal(self) -> Composition:
        if self._optimal is None:
            self._optimal = optimal(self.plan, self.delta_g, self.eta, self.cancel, self.progress, self.sums,
                                    self.time_limit)
        return self._optimal


@dataclass
class CurveInputs:
    """The queries of a curve spelled out in order (eps, delta, mech, length K) and the ks to
    evaluate. ``mode`` is "prefix" (the first k queries) or "repeat" (query 0 k times: the
    sequences are then already that repetition). ``sums`` and ``delta_bars`` are per k in ks."""

    eps: np.ndarray
    delta: np.ndarray
    mech: np.ndarray
    ks: np.ndarray
    delta_g: float
    eta: float
    mode: str
    sums: Sums
    delta_bars: np.ndarray
    delta_bars_hi: np.ndarray  # delta_bars rounded up (the lower bounds are read there)
    cancel: Optional[CancelToken] = None
    want_lower: bool = True    # False: the caller drops the lower bounds, a theorem may skip them
    progress: Optional[ProgressCallback] = None
    #: The optimal row computed elsewhere, as ``optimal()`` gives it (met with the cheap bounds)
    optimal_source: Optional[Callable[[], Optional[tuple]]] = None
    #: The eta of the same plan's totals where it differs from the curve's (None: the curve's):
    #: pld's curve reads its lattice from the whole plan's bracket at that eta, the one its total has,
    #: where it is no coarser than the curve's (a coarser one's lattice would miss the curve's eta)
    total_eta: Optional[float] = None
    _shared: dict = field(default_factory=dict, repr=False)

    def check(self) -> None:
        if self.cancel is not None:
            self.cancel.check()

    @property
    def homogeneous_len(self) -> int:
        """Length of the leading run of copies of query 0 (where kov applies)."""
        same = (self.eps == self.eps[0]) & (self.delta == self.delta[0])
        return int(np.argmin(same)) if not same.all() else int(self.eps.size)

    def homogeneous(self) -> tuple[np.ndarray, np.ndarray]:
        """The exact homogeneous root per k (nan past the leading run of equal queries; 0 below
        where the lower bounds are not wanted)."""
        if "hom" not in self._shared:
            from .optimal import homogeneous_bracket

            up = np.full(self.ks.size, np.nan)
            lo = np.full(self.ks.size, np.nan)
            eps = float(self.eps[0])
            for j, (k, db, db_hi) in enumerate(zip(self.ks, self.delta_bars, self.delta_bars_hi)):
                if k > self.homogeneous_len:
                    break
                self.check()
                if db < 0:
                    up[j], lo[j] = np.inf, np.inf
                else:
                    b = homogeneous_bracket(eps, int(k), float(db), float(db_hi), lower=self.want_lower)
                    up[j], lo[j] = b.upper, b.lower
                if self.progress is not None and (j % 64 == 0 or j == self.ks.size - 1):
                    self.progress((j + 1) / self.ks.size)
            self._shared["hom"] = (up, lo)
        up, lo = self._shared["hom"]
        return up.copy(), lo.copy()

    def optimal(self) -> tuple[np.ndarray, np.ndarray]:
        """The optimal composition per k: homogeneous roots when repeating one query, else the
        optimal core's incremental prefix curve; the upper ends met with the cheaper theorems'
        and, where the prefix is copies of query 0, with its exact homogeneous root (kov's)."""
        if OPTIMAL not in self._shared:
            given = self._given_optimal()
            if given is not None:       # (met with the cheap bounds where it was computed)
                self._shared[OPTIMAL] = given
            else:
                up, lo = self._optimal_core()
                cheap, _names = best_cheap(self.sums, self.delta_g)
                up = np.minimum(up, cheap)
                if self.mode == "prefix":
                    # where the prefix is copies of query 0 the exact homogeneous root (kov's row,
                    # the same for any order of rows asked) is a valid bound too: a lattice's is
                    # wider (fmin: kov is nan past the run)
                    up = np.fmin(up, self._homogeneous_quietly()[0])
                self._shared[OPTIMAL] = (up, lo)
        up, lo = self._shared[OPTIMAL]
        return up.copy(), lo.copy()

    def _homogeneous_quietly(self) -> tuple[np.ndarray, np.ndarray]:
        """``homogeneous()`` without reporting progress (a part of another row's work)."""
        before, self.progress = self.progress, None
        try:
            return self.homogeneous()
        finally:
            self.progress = before

    def optimal_curve(self) -> tuple[np.ndarray, np.ndarray, tuple]:
        """``optimal()`` with its per-point notes (where a point's width exceeds eta, and why)."""
        from .curve import width_notes

        up, lo = self.optimal()
        why = ("the curve's lattices serve every prefix at once; compose() of this prefix alone "
               "resolves it" if self.mode == "prefix" else "floating-point error bounds of the exact roots")
        return up, lo, width_notes(up, lo if self.want_lower else None, self.eta, why)

    def few_kinds(self) -> bool:
        """A long prefix curve with few points over few distinct epsilons: each point's own
        (grouped) bracket is cheaper than extending the running lattices query by query."""
        k_total = int(self.ks[-1])
        return (k_total >= PER_POINT_QUERIES * self.ks.size
                and np.unique(self.eps[:k_total]).size <= PER_POINT_MAX_KINDS)

    def _optimal_per_point(self) -> tuple[np.ndarray, np.ndarray]:
        """Each point bracketed on its own: the prefix's distinct epsilons with their counts."""
        from .optimal import optimal_bracket

        up = np.full(self.ks.size, np.inf)
        lo = np.full(self.ks.size, np.inf)
        for j, (k, db, db_hi) in enumerate(zip(self.ks.tolist(), self.delta_bars, self.delta_bars_hi)):
            self.check()
            if db < 0:
                continue            # infeasible: no finite epsilon (as in the incremental curve)
            e, counts = np.unique(self.eps[:k], return_counts=True)
            b = optimal_bracket(e, counts, float(db), self.eta, cancel=self.cancel, delta_bar_hi=float(db_hi))
            up[j], lo[j] = b.upper, (b.lower if self.want_lower else 0.0)
            if self.progress is not None:
                self.progress((j + 1) / self.ks.size)
        return up, lo

    def _given_optimal(self) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """The prefix curve's optimal row computed elsewhere (``optimal_source``), or None."""
        given = self.optimal_source() if self.optimal_source is not None and self.mode == "prefix" else None
        if given is None:
            return None
        up, lo = (np.asarray(a, dtype=float) for a in given)
        if up.shape != self.ks.shape or lo.shape != self.ks.shape:
            raise ValueError(f"the optimal curve given has {up.size} points for {self.ks.size} values of k")
        return up, lo

    def _optimal_core(self) -> tuple[np.ndarray, np.ndarray]:
        if self.mode == "repeat":
            return self.homogeneous()
        if self.few_kinds():
            return self._optimal_per_point()
        from .optimal import optimal_prefix_curve

        up = np.full(self.ks.size, np.inf)
        lo = np.full(self.ks.size, np.inf)
        feasible = self.delta_bars >= 0  # delta_bar only shrinks with k: a prefix of ks
        if feasible.any():
            kf = self.ks[feasible]
            up[feasible], lo[feasible] = optimal_prefix_curve(
                self.eps[: int(kf[-1])], self.delta_bars[feasible], kf, self.eta,
                cancel=self.cancel, progress=self.progress, delta_bars_hi=self.delta_bars_hi[feasible],
                want_lower=self.want_lower)
        return up, lo
