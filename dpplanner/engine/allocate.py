"""Budget inversion (PSI style): scale the free queries' epsilons to use up a global budget.

Held queries keep their epsilon; free query i gets t * weights[i]. We find the largest t whose
composed upper bound is <= epsilon_g. The engine configuration (theorem, eta, deltas) is fixed
for the whole search, so the composed bound is non-decreasing in t. A secant search from the
scale the free queries have now usually ends within 8e-7 below the budget in three or four
compositions; otherwise Brent's method finds the crossing (up from t = 0 if that start was no
use), and a forward ``compose`` of the final epsilons verifies it before anything is returned
(stepping t down if float noise put it a hair over the budget).

Where eta is much finer than the budget needs (below _SEARCH_ETA of epsilon_g), the search
composes at that coarser eta and only its answer at eta: an upper end converges far faster than
the bracket's lower end, so the scale found at the coarse eta is nearly as good (300 distinct
pinned releases at eta = 1e-6 of 0.25: the search's compositions cost 0.6 s instead of ~40 s of
CPU each, and the total certified at eta is 4e-8 lower). That answer is certified at eta, so the
plan never spends more than the budget; where it leaves _WASTE of it or more unspent, the search
goes on at eta from there, its first step along the coarse search's slope.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from .compose import compose, compose_one
from .errors import BudgetError
from .optimal import deadline as clock
from .optimal.deadline import with_limit
from .types import CancelToken, Composition, ProgressCallback
from .theorem_inputs import ComposeInputs
from .theorems import OPTIMAL, theorem as registry_entry
from .validation import (Releases, validate_delta_g, validate_epsilon_g, validate_eta, validate_plan,
                         validate_time_limit)

#: Brent's tolerance on t, relative; well inside the 1e-6 relative waste allowed. (The total is a
#: lattice-dependent step function of t on the fast optimal path, so Brent often falls back to
#: bisection: each factor of 10 here costs ~3 more compositions.)
_RTOL = 1e-9
#: The waste (share of epsilon_g left unspent) the search refines below, and its bisection rounds.
_WASTE = 1e-6
_REFINE_ROUNDS = 60
#: The search composes at eta, or at this share of epsilon_g where that is coarser (see above).
_SEARCH_ETA = 2e-4


#: Secant steps of the warm start before it gives up and searches up from t = 0.
_WARM_STEPS = 8
#: A warm-start scale whose total is this close below the budget (relative) is taken as it is: the
#: waste allowed is 1e-6 (the whole total at that scale may be read on another lattice than the
#: search's, ~1e-10 away: it stays below 1e-6 too). The warm start's steps aim at _AIM below the
#: budget: aimed at the budget itself, a quarter of the edits of the 100-query example landed a
#: hair above it (1e-10 to 1e-7) and paid one more composition (aimed 2e-7 or 4e-7 below, no fewer).
_CLOSE = 8e-7
_AIM = 1e-7


def _search_near(t0: float, excess, epsilon_g: float, slope: float = 0.0,
                 share=lambda t: 1.0) -> Optional[tuple[float, float]]:
    """Secant search for the crossing from t0, the scale the free queries have now: (t, t) when a
    fitting scale within _CLOSE of the budget is found, else (t_ok, t_over) around the crossing
    for Brent, or None (t0 unusable, an infinite total, no progress): search up from t = 0.

    After an edit the plan was balanced a moment ago, so t0 is within a few per cent of the
    answer: a proportional step and two or three secant steps end the search, where the search up
    from t = 0 spends about twice as many compositions. Each step aims _AIM below the budget, so
    that it ends on the fitting side within _CLOSE. ``slope`` (> 0): the total's slope in t near t0
    where known (a coarser search's), for the first step; else the first step (and a step off a
    flat stretch of the total, where a secant has no slope) takes the total as proportional to the
    plan's plain sum of epsilons, of which the free queries' ``share(t)`` scales with t (exact for
    basic composition; pinned statistics hold the rest: counting them as scaling too under-stepped
    by up to 1.6x once 20 of the 100-query example's were pinned, and by 8x on the grouped bench
    plan's 19 pins, each time one more step)."""
    if not (math.isfinite(t0) and t0 > 0):
        return None
    ok = bad = prev = None
    aim = _AIM * epsilon_g      # (each step solves excess(t) + aim = 0)
    t, f = t0, excess(t0)
    for _ in range(_WARM_STEPS):
        if not math.isfinite(f):
            return None
        if f <= 0 and (ok is None or t > ok[0]):
            ok = (t, f)
        if f > 0 and (bad is None or t < bad[0]):
            bad = (t, f)
        if ok is not None and ok[1] >= -_CLOSE * epsilon_g:
            return ok[0], ok[0]
        if prev is None and slope > 0:
            t_next = t - (f + aim) / slope
        elif prev is None or f == prev[1]:
            if prev is not None and ok is not None and bad is not None:
                return ok[0], bad[0]    # flat here, both sides known: Brent takes over
            if f + epsilon_g <= 0:
                return None
            t_next = t - (f + aim) * t / ((f + epsilon_g) * share(t))     # d total/dt = total share / t
        else:
            t_next = t - (f + aim) * (t - prev[0]) / (f - prev[1])
        t_next = min(max(t_next * (1 - 2 * _RTOL), t / 4), t * 4)   # no wild jump on a step of the total
        if ok is not None and bad is not None and not ok[0] < t_next < bad[0]:
            t_next = 0.5 * (ok[0] + bad[0])
        if not t_next > 0:          # over budget all the way down: perhaps the held queries alone
            return None
        prev = (t, f)
        t, f = t_next, excess(t_next)
    return (ok[0], bad[0]) if ok is not None and bad is not None else None


class _Search:
    """The scale whose total composed at an eta spends epsilon_g (see the module doc): the secant
    search near t0, Brent's method, bisection of what is left. ``composed(t, eta)`` composes the
    plan with the free queries at scale t."""

    def __init__(self, composed, epsilon_g: float, weight: float, theorem: str, held_indices: tuple,
                 share=lambda t: 1.0) -> None:
        self.composed, self.epsilon_g, self.weight = composed, epsilon_g, weight
        self.theorem, self.held_indices, self.share = theorem, held_indices, share

    def scale(self, at: float, t0: float, slope: float = 0.0) -> float:
        """The largest scale found whose total at ``at`` fits, searching from t0."""
        epsilon_g, composed, held_indices = self.epsilon_g, self.composed, self.held_indices
        seen = {"ok": (0.0, -math.inf), "bad": math.inf}  # best fitting t (and its total), least over

        def excess(x: float) -> float:
            total = composed(x, at).epsilon
            if total <= epsilon_g and total >= seen["ok"][1]:
                seen["ok"] = (x, total)
            elif total > epsilon_g:
                seen["bad"] = min(seen["bad"], x)
            return total - epsilon_g

        found = _search_near(t0, excess, epsilon_g, slope, self.share)
        if found is None:
            base = composed(0.0, at)
            if not math.isfinite(base.epsilon):
                raise BudgetError(f"no allocation is possible: {base.reason}", held_indices=held_indices)
            if base.epsilon >= epsilon_g:
                raise BudgetError(
                    f"the held queries {[i + 1 for i in held_indices]} (counted from 1) alone need epsilon = "
                    f"{base.epsilon:.6g} under '{self.theorem}', which leaves nothing of epsilon_g = "
                    f"{epsilon_g:.6g}; release some of them or raise the budget", held_indices=held_indices)
            if base.epsilon >= seen["ok"][1]:
                seen["ok"] = (0.0, base.epsilon)
            t_lo, t_hi = 0.0, epsilon_g / self.weight
            for _ in range(200):
                if composed(t_hi, at).epsilon > epsilon_g:
                    break
                t_hi *= 2.0
            else:  # pragma: no cover - every theorem grows without bound in t
                raise BudgetError("could not find a scale that exhausts the budget", held_indices=held_indices)
            seen["bad"] = min(seen["bad"], t_hi)
        else:
            t_lo, t_hi = found
        # The total need not be continuous in t (the optimal engine's lattice follows the epsilons;
        # pld's bracket may stop on another lattice): Brent and the bisection after it stop once the
        # best fitting and the least over-budget scale are _RTOL apart (a total whose d log / d log t
        # is at most ~2 moves by ~1e-9 there: a jump is left; psi-survey with OpenDP noise: one edit
        # took 36 compositions, 23 with this stop), or, where the total's slope near here is known
        # (``slope`` > 0: the upper ends searched before), once twice it times their distance is
        # below the waste allowed: closing in on the jump raises the total by less than that
        # (synthetic-100 after 35 pinning edits, its bracket on the first or second lattice by
        # turns: 16 whole totals for one edit instead of 27, 0.48 s of CPU instead of 0.67).
        def jump_left() -> bool:
            return slope > 0 and 2 * slope * (seen["bad"] - seen["ok"][0]) < _WASTE * epsilon_g

        def brent_excess(x: float) -> float:
            f = excess(x)
            if jump_left():
                raise _JumpLeft
            return f

        if epsilon_g - seen["ok"][1] > _CLOSE * epsilon_g:
            from scipy.optimize import brentq   # here: the window starts without scipy.optimize
            try:
                brentq(brent_excess, t_lo, t_hi, xtol=1e-300, rtol=_RTOL, maxiter=500)
            except _JumpLeft:
                pass
        for _ in range(_REFINE_ROUNDS):
            (t_ok, total), t_bad = seen["ok"], seen["bad"]
            mid = 0.5 * (t_ok + t_bad)
            if epsilon_g - total < _WASTE * epsilon_g or not t_ok < mid < t_bad \
                    or t_bad - t_ok <= _RTOL * t_bad or jump_left():
                break
            excess(mid)
        return seen["ok"][0]


class _JumpLeft(Exception):
    """Brent's method is stopped: only a jump of the total is left (see _Search.scale)."""


def _slope(totals: dict, t: float, at: float) -> float:
    """The total's slope at t from the compositions at ``at`` (its nearest other scale), or 0."""
    near = min((u for u, e in totals if e == at and u != t), key=lambda u: abs(u - t), default=None)
    if near is None:
        return 0.0
    slope = (totals[(t, at)].epsilon - totals[(near, at)].epsilon) / (t - near)
    return slope if math.isfinite(slope) and slope > 0 else 0.0


def _scale_now(eps: np.ndarray, w: np.ndarray, free: np.ndarray) -> float:
    """The scale the free queries have now: one whose eps_i = t w_i gives their epsilons back to
    the bit where one does (an allocation's own result: allocating it again changes nothing),
    else their mean ratio."""
    mean = float(eps[free].sum() / w[free].sum())
    for t in (mean, float(eps[free][0] / w[free][0])):
        if np.array_equal(t * w[free], eps[free]):
            return t
    return mean


@dataclass(frozen=True)
class Allocation:
    """epsilons: the allocated per-query epsilons; scale: t; composition: the verified forward result."""

    epsilons: np.ndarray
    scale: float
    composition: Composition
    waste: float = 0.0  # (epsilon_g - composition.epsilon) / epsilon_g


def _held_mask(held, n: int) -> np.ndarray:
    held_list = list(held)
    if len(held_list) != n:
        raise ValueError(f"held has {len(held_list)} entries but the plan has {n} queries; give one flag "
                         "per query")
    for i, h in enumerate(held_list):
        if not isinstance(h, (bool, np.bool_)):
            raise ValueError(f"held[{i}] = {h!r} is not allowed; each entry must be True or False")
    return np.array(held_list, dtype=bool)


def _weights(weights, free: np.ndarray) -> np.ndarray:
    w_list = list(weights)
    if len(w_list) != free.size:
        raise ValueError(f"weights has {len(w_list)} entries but the plan has {free.size} queries; give one "
                         "weight per query")
    w = np.zeros(free.size)
    for i, (wi, is_free) in enumerate(zip(w_list, free)):
        if not is_free:
            continue
        v = float(wi) if isinstance(wi, (int, float, np.integer, np.floating)) and not isinstance(wi, bool) \
            else math.nan
        if not (math.isfinite(v) and v > 0):
            raise BudgetError(f"weights[{i}] = {wi!r} is not allowed; a free query needs a finite weight > 0")
        w[i] = v
    return w


def upper_bound(epsilons, deltas, delta_g, theorem: str = OPTIMAL, eta: float = 1e-3, multiplicities=None, *,
                mechanisms=None) -> float:
    """A certified upper bound on the total ``compose`` gives for the same arguments, never below
    it, for at most its work: under pld the first lattice's upper end alone (ladder.upper_end, what
    the search composes; a third of a whole bracket that climbs two lattices). Enough to tell that
    pinned statistics leave room in a budget; a refusal is decided on their whole total."""
    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    inputs = ComposeInputs(plan, validate_delta_g(delta_g), validate_eta(eta), upper_only=True)
    return compose_one(registry_entry(theorem).name, inputs).epsilon


def allocate(epsilons, deltas, held, weights, epsilon_g, delta_g, *, theorem: str = OPTIMAL,
             eta: float = 1e-3, multiplicities=None, mechanisms=None, cancel: Optional[CancelToken] = None,
             progress: Optional[ProgressCallback] = None, time_limit: Optional[float] = None) -> Allocation:
    """The free queries scaled to spend ``epsilon_g`` (see the module doc). ``time_limit`` (seconds,
    optional): every composition of the search from then on gives the cheaper theorems' bound
    (``compose_one``), so the search ends soon after on a scale whose certified total fits (the
    waste is larger; ``composition.extra["waste_reason"]`` says why); without it the result
    depends only on the arguments."""
    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    deadline = with_limit(cancel, validate_time_limit(time_limit))
    epsilon_g = validate_epsilon_g(epsilon_g)
    delta_g = validate_delta_g(delta_g)
    eta = validate_eta(eta)
    theorem = registry_entry(theorem).name
    held_mask = _held_mask(held, plan.eps.size)
    free = ~held_mask
    if not free.any():
        raise BudgetError("no query is free to receive budget: every query is held; release at least one",
                          held_indices=tuple(int(i) for i in np.flatnonzero(held_mask)))
    w = _weights(weights, free)
    asked = [0]     # compositions so far (the progress shown)

    def eps_at(t: float) -> np.ndarray:
        return np.where(free, t * w, plan.eps)

    def composer(upper_only: bool, rung: int = 0):
        """(composed(t, eta), its totals): whole totals, or upper ends only (``upper_only``, pld's
        on the ``rung`` of its ladder of lattices)."""
        totals: dict[tuple[float, float], Composition] = {}   # (t, eta): Brent asks again for its ends

        def composed(t: float, at: float) -> Composition:
            if (t, at) not in totals:
                if cancel is not None:
                    cancel.check()
                if progress is not None:
                    asked[0] += 1
                    progress(min(0.99, asked[0] / 80))
                e = eps_at(t)
                e.flags.writeable = False
                totals[(t, at)] = compose_one(theorem, ComposeInputs(Releases(e, plan.delta, plan.mult, plan.mech),
                                                                     delta_g, at, deadline, upper_only=upper_only,
                                                                     upper_rung=rung))
            return totals[(t, at)]
        return composed, totals

    # The search needs upper ends only (a theorem may then skip its lower end: pld composes the
    # first lattice's upper end, half its work with discrete kinds); the forward check composes
    # the whole total at the scale found. Where that total is lower than the upper end searched on
    # by more than the waste allowed (its bracket needed a finer lattice), the search is made
    # again on whole totals. Whole totals throughout under a time limit (the search's totals are
    # then the result) and at an eta finer than the search's (the first lattice is the same at
    # any eta: only a coarse eta's whole bracket guides a fine eta's search).
    held_indices = tuple(int(i) for i in np.flatnonzero(held_mask))
    limited = deadline is not cancel
    t0 = _scale_now(plan.eps, w, free)
    coarse = max(eta, _SEARCH_ETA * epsilon_g)
    composed, totals = composer(not limited and coarse == eta)
    weight = float(w[free].sum())
    def share(t: float) -> float:
        """The free queries' share of the plan's plain sum of epsilons at scale t (1: no pins)."""
        e = eps_at(t) * plan.mult
        total = float(e.sum())
        return float(e[free].sum()) / total if total > 0 else 1.0

    search = _Search(composed, epsilon_g, weight, theorem, held_indices, share)
    try:
        t = search.scale(coarse, t0)
    except BudgetError:
        if coarse == eta:
            raise
        coarse, t = eta, search.scale(eta, t0)    # the held queries fit only at the finer eta
    if coarse > eta and not 0 <= epsilon_g - composed(t, eta).epsilon < _WASTE * epsilon_g \
            and not (limited and clock.now() > deadline.end):
        t = search.scale(eta, t, _slope(totals, t, coarse))
    forward: dict[float, Composition] = {}     # the public forward compositions, by scale

    def verified(t: float) -> Composition:
        if t not in forward:
            forward[t] = compose(eps_at(t).tolist(), plan.delta.tolist(), delta_g, theorem, eta,
                                 plan.mult.tolist(), mechanisms=plan.mech, cancel=cancel)
        return forward[t]

    def spends(t: float) -> bool:
        """Whether the whole total at t fits and leaves less than the waste allowed unspent."""
        return 0 <= epsilon_g - verified(t).epsilon < _WASTE * epsilon_g

    if not limited and verified(t).epsilon < composed(t, eta).epsilon and not spends(t):
        # The whole total's bracket climbed to a finer lattice (pld's ladder). The search goes on
        # with upper ends on that lattice, from where that total and the slope searched on put
        # the crossing: a whole bracket would climb every lattice below it, with both ends, at
        # each scale (issue 26's table plan, late edits: 2 whole totals and 2 upper ends on the
        # third lattice instead of 4 whole totals).
        slope = _slope(totals, t, eta)
        rung = (verified(t).extra or {}).get("rung", 0)
        if rung:
            gap = epsilon_g - verified(t).epsilon - _AIM * epsilon_g
            start = min(t + gap / slope, 4 * t) if slope else t
            composed, totals = composer(True, rung)
            t = _Search(composed, epsilon_g, weight, theorem, held_indices, share).scale(eta, start, slope)
        if not spends(t):   # (the bracket at t stopped on another lattice: its total is above or below)
            composed, totals = composer(False)
            t = _Search(composed, epsilon_g, weight, theorem, held_indices, share).scale(eta, t, slope)
    # Verify with the public forward composition; step down until it fits (t = 0 fits, checked above).
    for attempt in range(_REFINE_ROUNDS + 1):
        final = eps_at(t)
        if limited:     # the search's certified totals of these very inputs (kept; after the limit
            # a cheaper theorem's, or the best bracket so far): the least, at eta or the coarse eta
            result = min([composed(t, eta)] + [totals[(t, e)] for e in (coarse,) if (t, e) in totals],
                         key=lambda c: c.epsilon)
        else:
            result = verified(t)
        if result.epsilon <= epsilon_g:
            break
        t = 0.0 if attempt == _REFINE_ROUNDS - 1 else t * (1.0 - min(1e-12 * 4.0 ** attempt, 0.5))
    else:   # not even t = 0 fits by the verified total (the warm start never composed t = 0 itself)
        raise BudgetError(f"the held queries {[i + 1 for i in held_indices]} (counted from 1) alone need "
                          f"epsilon = {result.epsilon:.6g} under '{theorem}', which leaves nothing of "
                          f"epsilon_g = {epsilon_g:.6g}; release some of them or raise the budget",
                          held_indices=held_indices)
    if progress is not None:
        progress(1.0)
    waste = (epsilon_g - result.epsilon) / epsilon_g if epsilon_g > 0 else 0.0
    extra = {**result.extra, "scale": t, "waste": waste}
    width = result.epsilon - result.epsilon_lower if result.epsilon_lower is not None else 0.0
    if limited and clock.now() > deadline.end:
        extra["time_limited"] = True
        extra["waste_reason"] = (f"{deadline.reason()}: the search ended on the best scale whose certified "
                                 f"total fits the budget ({result.detail}); up to {waste:.3g} of the budget "
                                 "may be left unspent")
    elif width > eta:
        # the budget is met by the certified upper end; with a bracket wider than eta (its detail
        # says why) the exact total may be up to its width lower: that much may be left unspent
        extra["waste_reason"] = (f"the total's certified bracket is {width:.3g} wide, more than eta = {eta:g} "
                                 f"({result.detail}); the allocation spends up to its upper end, so up to "
                                 f"{width:.3g} of the budget may be left unspent")
    elif waste >= _WASTE:
        extra["waste_reason"] = ("the total jumps by more than that at this scale (the optimal engine's "
                                 "lattice follows the epsilons); the allocation stays within the budget")
    result = replace(result, extra=extra)
    return Allocation(epsilons=final, scale=float(t), composition=result, waste=float(waste))
