"""Budget inversion (PSI style): scale the free queries' epsilons to use up a global budget.

Held queries keep their epsilon; free query i gets t * weights[i]. We find the largest t whose
composed upper bound is <= epsilon_g. The engine configuration (theorem, eta, deltas) is fixed
for the whole search, so the composed bound is non-decreasing in t. The search (scale_search.py)
starts from the scale the free queries have now and usually ends within 8e-7 below the budget in
three or four compositions; a forward ``compose`` of the final epsilons verifies it before
anything is returned (stepping t down if float noise put it a hair over the budget).

Where eta is much finer than the budget needs (below _SEARCH_ETA of epsilon_g), the search
composes at that coarser eta and only its answer at eta: an upper end converges far faster than
the bracket's lower end, so the scale found at the coarse eta is nearly as good (300 distinct
pinned releases at eta = 1e-6 of 0.25: the search's compositions cost 0.6 s instead of ~40 s of
CPU each, and the total certified at eta is 4e-8 lower). That answer is certified at eta, so the
plan never spends more than the budget; where it leaves WASTE of it or more unspent, the search
goes on at eta from there, its first step along the coarse search's slope.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Optional

import numpy as np

from .compose import compose, compose_one
from .errors import BudgetError
from .mechanisms.zcdp import cks_epsilon
from .numerics import round_up
from .optimal import deadline as clock
from .optimal.deadline import with_limit
from .scale_search import (AIM, CLOSE, NEAR, OFF, OWN_BAND, REFINE_ROUNDS, WASTE, ScaleSearch,
                           no_room, same_laying, slope_near)
from .types import CancelToken, Composition, ProgressCallback
from .theorem_inputs import ComposeInputs
from .theorems import CONCURRENT, OPTIMAL, PLD, ZCDP, theorem as registry_entry
from .validation import (Releases, least_epsilon, validate_delta_g, validate_epsilon_g, validate_eta,
                         validate_plan, validate_time_limit)

#: The search composes at eta, or at this share of epsilon_g where that is coarser (see above).
_SEARCH_ETA = 2e-4
#: The relative step in t over which zCDP's total is differenced (``bend`` in allocate).
_BEND_STEP = 1e-6


def _zcdp(releases: Releases, delta_g: float, eta: float) -> Composition:
    """The "zcdp" row's total of ``releases`` (rho and the delta it was converted at in extra)."""
    return registry_entry(ZCDP).compose(ComposeInputs(releases, delta_g, eta, upper_only=True))


def _scale_now(eps: np.ndarray, w: np.ndarray, free: np.ndarray) -> float:
    """The scale the free queries have now: one whose eps_i = t w_i gives their epsilons back to
    the bit where one does (an allocation's own result: allocating it again changes nothing),
    else their mean ratio."""
    mean = float(eps[free].sum() / w[free].sum())
    for t in (mean, float(eps[free][0] / w[free][0])):
        if np.array_equal(t * w[free], eps[free]):
            return t
    return mean


def _start_rung(theorem: str, eps: np.ndarray, plan: Releases, delta_g: float, eta: float) -> Optional[int]:
    """The rung of pld's ladder the search starts on, read from the plan at its first scale
    (mechanisms.theorems.pld_start_rung; None: the whole total there tells); 0 for the other
    theorems."""
    if theorem != PLD:
        return 0
    from .mechanisms.theorems import pld_start_rung

    eps.flags.writeable = False
    return pld_start_rung(Releases(eps, plan.delta, plan.mult, plan.mech), delta_g, eta)


def _pinned_as_free(t0: float, eps: np.ndarray, weights: list, held: np.ndarray) -> bool:
    """Whether a held query has the epsilon it would have free at scale t0 (pinned as it was)."""
    numbers = (int, float, np.integer, np.floating)
    return any(isinstance(weights[i], numbers) and not isinstance(weights[i], bool)
               and t0 * float(weights[i]) == eps[i] for i in np.flatnonzero(held).tolist())


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
                mechanisms=None, enough: float = -math.inf) -> float:
    """A certified upper bound on the total ``compose`` gives for the same arguments, never below
    it, for at most its work: under pld the first lattice's upper end alone (ladder.upper_end, what
    the search composes; a third of a whole bracket that climbs two lattices), or where that is
    ``enough`` (below it), the zcdp row's total of the same releases, a closed form (pld meets its
    totals with it; releases of (epsilon, delta) alone get the optimal total, met with a zCDP
    bound within ~1e-13 of it: widened by 1e-9). Enough to tell that pinned statistics leave room
    in a budget (synthetic-100 from its 21st benchmark edit on, pins adding up to more than the
    budget: no lattice of theirs, one composition less an edit); a refusal is decided on their
    whole total."""
    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    inputs = ComposeInputs(plan, validate_delta_g(delta_g), validate_eta(eta), upper_only=True)
    name = registry_entry(theorem).name
    if name == PLD:
        # (widened by 1e-9: a margin only; pld's whole totals never exceed the zcdp row's)
        zcdp = float(round_up(_zcdp(plan, inputs.delta_g, inputs.eta).epsilon, 1e-9))
        if zcdp < enough:
            return zcdp
    return compose_one(name, inputs).epsilon


def allocate(epsilons, deltas, held, weights, epsilon_g, delta_g, *, theorem: str = OPTIMAL,
             eta: float = 1e-3, multiplicities=None, mechanisms=None, cancel: Optional[CancelToken] = None,
             progress: Optional[ProgressCallback] = None, time_limit: Optional[float] = None,
             found: Optional[Callable[[np.ndarray], None]] = None) -> Allocation:
    """The free queries scaled to spend ``epsilon_g`` (see the module doc). ``time_limit`` (seconds,
    optional): every composition of the search from then on gives the cheaper theorems' bound
    (``compose_one``), so the search ends soon after on a scale whose certified total fits (the
    waste is larger; ``composition.extra["waste_reason"]`` says why); without it the result
    depends only on the arguments. ``found``: called with the epsilons the search found, before
    their whole total is verified (the answer unless the verification moves the scale): a caller
    may start work on them meanwhile."""
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
    weights = list(weights)
    w = _weights(weights, free)
    asked = [0]     # compositions so far (the progress shown)
    # A free discrete (OpenDP) release is never given less than the least epsilon its noise is
    # calibrated for: the search probes scales below its answer (weight 3e-19 next to 2, pins
    # leaving 0.5: a probe at 0.1 per weight against the answer's 0.25), and a release there is
    # not one the engine composes (a discrete Gaussian of shift 1.5e12 at delta 2.5e-7: none below
    # eps 1.7e-5, where its sigma would pass 2^57). Raising an epsilon only raises the total, so
    # every total certified on these epsilons holds, and they are the ones returned.
    floor = np.array([least_epsilon(m, d) if is_free else 0.0
                      for m, d, is_free in zip(plan.mech, plan.delta.tolist(), free)])

    def eps_at(t: float) -> np.ndarray:
        return np.where(free, np.maximum(t * w, floor), plan.eps)

    def composer(upper_only: bool, rung: int = 0):
        """(composed(t, eta), its totals): whole totals, or upper ends only (``upper_only``, pld's
        on the ``rung`` of its ladder of lattices)."""
        totals: dict[tuple[float, float], Composition] = {}   # (t, eta): Brent asks again for its ends

        def composed(t: float, at: float, last: bool = False) -> Composition:
            """``last``: likely the search's last (its whole total asked for next)."""
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
                                                                     upper_rung=rung, lower_ahead=last))
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
    floored = {int(i): float(floor[i]) for i in np.flatnonzero(floor)}     # (a refusal names them)
    limited = deadline is not cancel
    t0 = _scale_now(plan.eps, w, free)
    coarse = max(eta, _SEARCH_ETA * epsilon_g)
    # (own, below: pld lays its lattice under the releases and the search starts OFF below the
    # plan's own scale, on the rung its bracket there likely stops on, ladder.likely_rung)
    own = None if registry_entry(theorem).generic else \
        NEAR if _pinned_as_free(t0, plan.eps, weights, held_mask) else 0.0
    upper_only = not limited and coarse == eta
    searched = _start_rung(theorem, eps_at(t0 * (1 - OFF)), plan, delta_g, eta) \
        if upper_only and own is not None and t0 > 0 else 0
    if searched is None:    # (its upper ends are the search's on that rung: none composed twice)
        searched = (composer(False)[0](t0 * (1 - OFF), eta).extra or {}).get("rung", 0)
    composed, totals = composer(upper_only, searched)
    weight = float(w[free].sum())
    def bend(t: float, total: float) -> float:
        """d log total / d log t at t, modelled on two cheap totals' bends: the plain sum's (basic
        composition: the free queries' share of it, pinned statistics holding the rest) and
        zCDP's, weighted by how near each total is to ``total`` (log ratio). The optimal total
        bends between the two (pld, share, zCDP: synthetic-100 0.933, 0.881, 0.937; census
        0.952, 0.910, 0.951; census-tables 0.849, 0.867, 0.828; psi-survey 0.767, 0.662, 0.920):
        the mix was 0.3-6% off where the share alone was 2-14% off. zCDP's bend is its
        conversion's (cks_epsilon) with the free queries' rho growing as t^2 (a pure or Laplace
        release's eps^2 / 2; a Gaussian's grows as ~t^1.9): rho at t and the pinned statistics'
        alone, no composition at a second scale (whose discrete noise was calibrated again)."""
        e = eps_at(t) * plan.mult
        plain = float(e.sum())
        share = float(e[free].sum()) / plain if plain > 0 else 1.0
        if not plain > 0 or plain == total:
            return share
        z = _zcdp(Releases(eps_at(t), plan.delta, plan.mult, plan.mech), delta_g, eta)
        if not 0 < z.epsilon < math.inf:
            return share
        rho, at = z.extra["rho"], z.extra["delta_used"]
        held_rows = Releases(plan.eps[held_mask], plan.delta[held_mask], plan.mult[held_mask],
                             tuple(np.asarray(plan.mech)[held_mask].tolist()))
        pinned = _zcdp(held_rows, delta_g, eta).extra["rho"] if held_mask.any() else 0.0
        moved = cks_epsilon(pinned + max(rho - pinned, 0.0) * (1 + _BEND_STEP) ** 2, at)
        zcdp_bend = math.log(moved / z.epsilon) / math.log1p(_BEND_STEP)
        near_plain, near_zcdp = abs(math.log(plain / total)), abs(math.log(z.epsilon / total))
        mixed = (near_zcdp * share + near_plain * zcdp_bend) / (near_plain + near_zcdp) \
            if near_plain + near_zcdp > 0 else share
        return mixed if math.isfinite(mixed) and mixed > 0 else share

    def laid(t: float) -> Optional[float]:
        """The lattice of pld's upper end searched on at scale t, not composed (None: unknown)."""
        if theorem != PLD or not upper_only:
            return None
        from .mechanisms.theorems import pld_upper_step

        e = eps_at(t)
        e.flags.writeable = False
        return pld_upper_step(Releases(e, plan.delta, plan.mult, plan.mech), delta_g, eta, searched)

    search = ScaleSearch(composed, epsilon_g, weight, theorem, held_indices, bend, floored,
                         lambda t, u: same_laying(t, laid(t), u, laid(u)))
    try:
        t = search.scale(coarse, t0, own=own)
    except BudgetError:
        if coarse == eta:
            raise
        coarse, t = eta, search.scale(eta, t0, own=own)    # the held queries fit only at the finer eta
    if coarse > eta and not 0 <= epsilon_g - composed(t, eta).epsilon < WASTE * epsilon_g \
            and not (limited and clock.now() > deadline.end):
        t = search.scale(eta, t, slope_near(totals, t, coarse))
    if found is not None:
        found(eps_at(t))
    forward: dict[float, Composition] = {}     # the public forward compositions, by scale

    def verified(t: float) -> Composition:
        if t not in forward:
            forward[t] = compose(eps_at(t).tolist(), plan.delta.tolist(), delta_g, theorem, eta,
                                 plan.mult.tolist(), mechanisms=plan.mech, cancel=cancel)
        return forward[t]

    def spends(t: float) -> bool:
        """Whether the whole total at t fits and leaves less than the waste allowed unspent."""
        return 0 <= epsilon_g - verified(t).epsilon < WASTE * epsilon_g

    def own_kept(t: float, composed) -> float:
        """t, or the plan's own scale where a search after the first found t within OWN_BAND of
        it and its total on ``composed`` fits, leaving no more unspent than CLOSE or than t's: an
        allocation's result allocated again is kept where the search's start was predicted
        further off (5.3e-5 of the scale, a plan of five releases whose bracket stops on the
        fifth rung: it moved by 2.5e-12). After an edit t is ~1e-3 off: nothing more composed."""
        if own is None or not 0 < t0 or t == t0 or abs(t - t0) > OWN_BAND * t0:
            return t
        left = max(CLOSE * epsilon_g, epsilon_g - composed(t, eta).epsilon)
        return t0 if 0 <= epsilon_g - composed(t0, eta).epsilon <= left else t

    rung = (verified(t).extra or {}).get("rung", 0) if upper_only else searched
    if not limited and (verified(t).epsilon < composed(t, eta).epsilon or rung != searched) and not spends(t):
        # The whole total's bracket stopped on another lattice of pld's ladder than the one
        # searched on: a finer one (the first one's lower end left more than eta), or a coarser one
        # (likely_rung guessed a climb that did not come: its total may be over the budget). The
        # search goes on with upper ends on that lattice, from where that total and the slope
        # searched on put the crossing: a whole bracket would climb every lattice below it, with
        # both ends, at each scale (issue 26's table plan, late edits: 2 whole totals and 2 upper
        # ends on the third lattice instead of 4 whole totals).
        slope = slope_near(totals, t, eta)
        if rung != searched:
            gap = epsilon_g - verified(t).epsilon - AIM * epsilon_g
            start = min(t + gap / slope, 4 * t) if slope else t
            composed, totals = composer(True, rung)
            if own is not None and 0 < t0 and abs(start - t0) <= OWN_BAND * t0 \
                    and 0 <= epsilon_g - composed(t0, eta).epsilon <= CLOSE * epsilon_g:
                t = t0      # the plan's own scale fits on this rung as searched: kept, as on the first
            else:
                t = own_kept(ScaleSearch(composed, epsilon_g, weight, theorem, held_indices, bend,
                                         floored).scale(eta, start, slope), composed)
        if not spends(t):   # (the bracket at t stopped on another lattice: its total is above or below)
            composed, totals = composer(False)
            t = own_kept(ScaleSearch(composed, epsilon_g, weight, theorem, held_indices, bend,
                                     floored).scale(eta, t, slope), composed)
    # Verify with the public forward composition; step down until it fits (t = 0 fits, checked above).
    for attempt in range(REFINE_ROUNDS + 1):
        final = eps_at(t)
        if limited:     # the search's certified totals of these very inputs (kept; after the limit
            # a cheaper theorem's, or the best bracket so far): the least, at eta or the coarse eta
            result = min([composed(t, eta)] + [totals[(t, e)] for e in (coarse,) if (t, e) in totals],
                         key=lambda c: c.epsilon)
        else:
            result = verified(t)
        if result.epsilon <= epsilon_g:
            break
        t = 0.0 if attempt == REFINE_ROUNDS - 1 else t * (1.0 - min(1e-12 * 4.0 ** attempt, 0.5))
    else:   # not even t = 0 fits by the verified total (the warm start never composed t = 0 itself)
        raise no_room(result.epsilon, theorem, epsilon_g, held_indices, floored)
    if progress is not None:
        progress(1.0)
    waste = (epsilon_g - result.epsilon) / epsilon_g if epsilon_g > 0 else 0.0
    extra = {**result.extra, "scale": t, "waste": waste}
    width = result.epsilon - result.epsilon_lower if result.epsilon_lower is not None else 0.0
    if limited and clock.now() > deadline.end:
        extra["time_limited"] = True
        extra["waste_reason"] = (f"{deadline.reason()}: the search ended on the best scale whose certified "
                                 f"total fits the budget ({result.detail}); up to {100 * waste:.3g}% of the budget "
                                 "may be left unspent")
    elif width > eta:
        # the budget is met by the certified upper end; with a bracket wider than eta (its detail
        # says why) the exact total may be up to its width lower: that much may be left unspent
        extra["waste_reason"] = (f"the total's certified bracket is {width:.3g} wide, more than eta = {eta:g} "
                                 f"({result.detail}); the allocation spends up to its upper end, so up to "
                                 f"ε {width:.3g} of the budget may be left unspent")
    elif waste >= WASTE:
        # (only a lattice's theorem says why: a cheaper one's total jumps through its noise's calibration)
        lattice = " (the optimal engine's lattice follows the epsilons)" if theorem in (OPTIMAL, CONCURRENT) \
            else " (its lattices follow the epsilons)" if theorem == PLD else ""
        extra["waste_reason"] = (f"{100 * waste:.3g}% of the budget is left unspent: at this scale the total "
                                 f"jumps by more than the {100 * WASTE:g}% a redistribution may leave{lattice}; "
                                 "the allocation stays within the budget")
    result = replace(result, extra=extra)
    return Allocation(epsilons=final, scale=float(t), composition=result, waste=float(waste))
