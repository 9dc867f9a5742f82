"""The scale search of an allocation (allocate.py): the largest scale t of the free queries whose
composed total fits a budget, from the scale they have now. A secant search near it usually ends
within CLOSE below the budget in three or four compositions; otherwise Brent's method finds the
crossing (up from t = 0 if that start was no use) and bisection closes in on what is left. The
caller composes; this module only decides where."""

from __future__ import annotations

import math
from typing import Optional

from .errors import BudgetError
from .mechanisms.bracket import ALIGN_TOLERANCE
from .types import Composition

#: Brent's tolerance on t, relative; well inside the 1e-6 relative waste allowed. (The total is a
#: lattice-dependent step function of t on the fast optimal path, so Brent often falls back to
#: bisection: each factor of 10 here costs ~3 more compositions.)
RTOL = 1e-9
#: The waste (share of epsilon_g left unspent) the search refines below, and its bisection rounds.
WASTE = 1e-6
REFINE_ROUNDS = 60
#: A bracket whose totals rise by more than JUMP times what the slope predicts over its width
#: straddles a jump of the total (pld's whole total stopping on the first lattice at one scale and
#: on a finer one, ~2e-4 of the budget lower, at the next): the search stops on its fitting side.
#: Bisecting on would gain at most the slope's share of the rise, under 1 / JUMP of it.
JUMP = 8.0


#: Secant steps of the warm start before it gives up and searches up from t = 0.
WARM_STEPS = 8
#: A warm-start scale whose total is this close below the budget (relative) is taken as it is: the
#: waste allowed is 1e-6 (the whole total at that scale may be read on another lattice than the
#: search's, ~1e-10 away: it stays below 1e-6 too). The warm start's steps aim at AIM below the
#: budget: aimed at the budget itself, a quarter of the edits of the 100-query example landed a
#: hair above it (1e-10 to 1e-7) and paid one more composition (aimed 2e-7 or 4e-7 below, no fewer).
#: A step along the model of the bend aims at the window's middle, CLOSE / 2 below: the model is
#: ~1% off, and aimed at AIM, 9 of synthetic-100's 20 edits landed over (3.36 upper ends per edit;
#: 3.07 at the middle; census 2.93, 2.86). A secant step aims lower by its own expected miss, up to
#: the middle (search_near).
CLOSE = 8e-7
AIM = 1e-7
#: Lattice steps per unit scale this close (relative) are laid alike (alike).
ALIKE = 0.1
#: A search from the plan's own scale starts OFF below it. There a statistic pinned at a round
#: ratio of the free ones (21/20 after a x1.05 edit) has pld lay its lattice under it too, at that
#: scale only (bracket.aligned_step, to ALIGN_TOLERANCE): its total there is up to ~1e-4 of the
#: budget below the smooth total of the scales near it, so the step from it landed that far off
#: and the next step over the budget in a third of synthetic-100's edits. The own scale is
#: composed as well only where its total may be in the window: the total OFF below is within
#: OWN_BAND below the budget, or NEAR above it where a statistic is pinned as it was (its
#: epsilon the own scale times its weight: there the own scale's lattice is laid under it too).
#: So allocating an allocation's result again, or after pinning a statistic as it is, keeps it (the
#: search on the rung the whole total stopped on tests the own scale too: allocate.py).
#: OWN_BAND is 32 times the CLOSE + 2 OFF a smooth total would need: where the two scales' lattices
#: are laid otherwise (steps not in proportion to the scales, same_laying) the total moves faster
#: than the scale over OFF (an allocation of a Gaussian and two (eps, delta) releases, steps 3e-4
#: apart: 5.5e-6 of the budget below it OFF below, 8.5e-8 below at its own scale). Where they are
#: laid alike (the caller tells) the total is smooth there, and SMOOTH_BAND, twice what it needs,
#: is the band (synthetic-100's benchmark edits 5 and 19, 1.8e-5 and 6e-6 below: no own scale,
#: 2.8 upper ends per edit instead of 2.9).
OFF = 4 * ALIGN_TOLERANCE
NEAR = 2e-4
OWN_BAND = 32 * (CLOSE + 2 * OFF)
SMOOTH_BAND = 2 * (CLOSE + 2 * OFF)


def search_near(t0: float, excess, epsilon_g: float, slope: float = 0.0, bend=lambda t, total: 1.0,
                 alike=lambda t, u: True) -> Optional[tuple[float, float]]:
    """Secant search for the crossing from t0, the scale the free queries have now: (t, t) when a
    fitting scale within CLOSE of the budget is found, else (t_ok, t_over) around the crossing
    for Brent, or None (t0 unusable, an infinite total, no progress): search up from t = 0.

    After an edit the plan was balanced a moment ago, so t0 is within a few per cent of the
    answer: a proportional step and two or three secant steps end the search, where the search up
    from t = 0 spends about twice as many compositions. Each step aims below the budget (AIM, or
    CLOSE / 2 along the model), so that it ends on the fitting side within CLOSE. ``slope`` (> 0):
    the total's slope in t near t0 where known (a coarser search's), for the first step; else the
    first step, a step off a flat stretch of the total (where a secant has no slope) and one from
    a scale whose total was read on a lattice laid otherwise than the last one's (``alike(t, u)``
    false) take the slope from ``bend(t, total)``, a model's d log total / d log t at t. (The
    plan's own epsilons may sit at round ratios, a statistic pinned at 21/20 of the free ones, on
    which pld lays its lattice otherwise than at any scale near, bracket.aligned_step: the total
    there is off the smooth curve by up to ~8e-5 of the budget, and a secant through it missed by
    1-18%: synthetic-100's x1.05 / x0.95 edits, one more composition in 12 of 20.) A secant step's
    total is asked for as ``excess(t, True)``: likely the last (18 of those 20 edits' secant steps
    ended their search), the caller may compose its verification meanwhile."""
    if not (math.isfinite(t0) and t0 > 0):
        return None
    ok = bad = prev = model = None
    aim = AIM * epsilon_g      # (each step solves excess(t) + aim = 0)
    t, f = t0, excess(t0)
    for _ in range(WARM_STEPS):
        secant = False
        if not math.isfinite(f):
            return None
        if f <= 0 and (ok is None or t > ok[0]):
            ok = (t, f)
        if f > 0 and (bad is None or t < bad[0]):
            bad = (t, f)
        if ok is not None and ok[1] >= -CLOSE * epsilon_g:
            return ok[0], ok[0]
        if prev is not None and f == prev[1] and ok is not None and bad is not None:
            return ok[0], bad[0]        # flat here, both sides known: Brent takes over
        if ok is not None and bad is not None and straddles_jump(slope, ok, bad):
            return ok[0], bad[0]        # (Brent stops at once on it: see ScaleSearch.scale)
        if prev is None and slope > 0:
            t_next = t - (f + aim) / slope
        elif prev is None or f == prev[1] or not alike(prev[0], t):
            if f + epsilon_g <= 0:
                return None
            if model is None:       # (once: it moves by ~1e-4 of itself over a search's steps)
                model = bend(t, f + epsilon_g)
            # d total/dt = total bend / t; aimed at the middle of the window (the model is ~1% off)
            t_next = t - (f + CLOSE / 2 * epsilon_g) * t / ((f + epsilon_g) * model)
        else:
            # (a secant misses by its curvature term, 0.65-1.7 times the product of the two excesses
            # it is drawn through, either way: aimed lower by half of it, up to the window's middle)
            below = min(aim + abs(f * prev[1]) / (2 * epsilon_g), CLOSE / 2 * epsilon_g)
            t_next = t - (f + below) * (t - prev[0]) / (f - prev[1])
            secant = True
        t_next = min(max(t_next * (1 - 2 * RTOL), t / 4), t * 4)   # no wild jump on a step of the total
        if ok is not None and bad is not None and not ok[0] < t_next < bad[0]:
            t_next = 0.5 * (ok[0] + bad[0])
        if not t_next > 0:          # over budget all the way down: perhaps the held queries alone
            return None
        prev = (t, f)
        t, f = t_next, excess(t_next, secant)
    return (ok[0], bad[0]) if ok is not None and bad is not None else None


def _listed(indices) -> str:
    """Query numbers counted from 1, the first five and how many more."""
    shown = [i + 1 for i in list(indices)[:5]]
    more = len(indices) - len(shown)
    return f"{shown}" + (f" and {more} more" if more else "")


def no_room(total: float, theorem: str, epsilon_g: float, held: tuple,
            floored: Optional[dict] = None) -> BudgetError:
    """The refusal where the scale 0 already spends epsilon_g: what is there then is the held
    queries at their epsilons and the free ones ``floored`` at the least epsilon their noise is
    calibrated for (index: that epsilon; validation.least_epsilon), each named only if any."""
    need = (f"need epsilon = {total:.6g} under '{theorem}', which leaves nothing of epsilon_g = "
            f"{epsilon_g:.6g}")
    if floored:
        from .validation import DISCRETE_MIN_EPSILON
        top = max(floored, key=lambda i: (floored[i], -i))
        said = f"{DISCRETE_MIN_EPSILON:.3g}" if floored[top] == DISCRETE_MIN_EPSILON else \
            f"up to {floored[top]:.3g}: below it query {top + 1}'s discrete Gaussian noise would need a sigma " \
            "above 2^57 lattice units, more than the engine accounts"
        with_held = f" and the held queries {_listed(held)}" if held else ""
        return BudgetError(
            f"the free discrete (OpenDP) queries {_listed(sorted(floored))}{with_held} (counted from 1), the "
            f"discrete ones at the least epsilon their noise is calibrated for ({said}), {need}; raise the "
            f"budget{' or release some held queries' if held else ''}", held_indices=held, floored=floored,
            needed=total)
    if held:
        return BudgetError(f"the held queries {_listed(held)} (counted from 1) alone {need}; release some of "
                           "them or raise the budget", held_indices=held)
    return BudgetError(f"with every query at epsilon 0 the releases still {need}; raise the budget",
                       held_indices=held)


class ScaleSearch:
    """The scale whose total composed at an eta spends epsilon_g (see the module doc): the secant
    search near t0, Brent's method, bisection of what is left. ``composed(t, eta)`` composes the
    plan with the free queries at scale t (``composed(t, eta, True)``: a secant step's, likely the
    search's last)."""

    def __init__(self, composed, epsilon_g: float, weight: float, theorem: str, held_indices: tuple,
                 bend=lambda t, total: 1.0, floored: Optional[dict] = None,
                 laid_alike=lambda t, u: False) -> None:
        self.composed, self.epsilon_g, self.weight = composed, epsilon_g, weight
        self.theorem, self.held_indices, self.bend = theorem, held_indices, bend
        self.floored, self.laid_alike = floored, laid_alike

    def scale(self, at: float, t0: float, slope: float = 0.0, own: Optional[float] = None) -> float:
        """The largest scale found whose total at ``at`` fits, searching from t0. ``own``: t0 is
        the plan's own scale, started OFF below; it is composed too where the total there is
        within ``own`` above (a share of epsilon_g) or the band below the budget: SMOOTH_BAND where
        ``laid_alike(start, t0)`` (its totals there are read on lattices laid alike, not composed
        to tell), else OWN_BAND."""
        epsilon_g, composed, held_indices = self.epsilon_g, self.composed, self.held_indices
        if own is not None and t0 > 0:
            start = t0 * (1 - OFF)
            off = composed(start, at).epsilon - epsilon_g
            near = -OWN_BAND * epsilon_g <= off <= own * epsilon_g and \
                not (off < -SMOOTH_BAND * epsilon_g and self.laid_alike(start, t0))
            if near and 0 <= epsilon_g - composed(t0, at).epsilon <= CLOSE * epsilon_g:
                return t0
            t0 = start      # (the own scale's total, read on its own lattice, is no point of the search)
        # best fitting t and least over-budget t, with their totals
        seen = {"ok": (0.0, -math.inf), "bad": (math.inf, math.inf)}

        def excess(x: float, last: bool = False) -> float:
            total = composed(x, at, last).epsilon
            if total <= epsilon_g and total >= seen["ok"][1]:
                seen["ok"] = (x, total)
            elif total > epsilon_g and x < seen["bad"][0]:
                seen["bad"] = (x, total)
            return total - epsilon_g

        found = search_near(t0, excess, epsilon_g, slope, self.bend,
                             lambda x, y: alike(x, composed(x, at), y, composed(y, at)))
        if found is None:
            base = composed(0.0, at)
            if not math.isfinite(base.epsilon):
                raise BudgetError(f"no allocation is possible: {base.reason}", held_indices=held_indices)
            if base.epsilon >= epsilon_g:
                raise no_room(base.epsilon, self.theorem, epsilon_g, held_indices, self.floored)
            if base.epsilon >= seen["ok"][1]:
                seen["ok"] = (0.0, base.epsilon)
            t_lo, t_hi = 0.0, max(epsilon_g / self.weight, 5e-324)
            for i in range(200):
                if composed(t_hi, at).epsilon > epsilon_g:
                    break
                # steps of 2^1 ... 2^16: a total delta_g absorbs stays 0 from epsilon_g = 1e-300
                # up to ~1e-7 per query, 2^800 above (beyond what 200 doublings reach)
                t_lo, t_hi = t_hi, t_hi * 2.0 ** min(1 << i, 16)
            else:  # pragma: no cover - every theorem grows without bound in t
                raise BudgetError("could not find a scale that exhausts the budget", held_indices=held_indices)
            if t_hi < seen["bad"][0]:
                seen["bad"] = (t_hi, composed(t_hi, at).epsilon)
        else:
            t_lo, t_hi = found
        # The total need not be continuous in t (the optimal engine's lattice follows the epsilons;
        # pld's bracket may stop on another lattice): Brent and the bisection after it stop once the
        # best fitting and the least over-budget scale are RTOL apart (a total whose d log / d log t
        # is at most ~2 moves by ~1e-9 there: a jump is left; psi-survey with OpenDP noise: one edit
        # took 36 compositions, 23 with this stop), or, where the total's slope near here is known
        # (``slope`` > 0: the upper ends searched before), once twice it times their distance is
        # below the waste allowed: closing in on the jump raises the total by less than that
        # (synthetic-100 after 35 pinning edits, its bracket on the first or second lattice by
        # turns: 16 whole totals for one edit instead of 27, 0.48 s of CPU instead of 0.67), or
        # once their totals rise by more than JUMP times that (a jump the bisection cannot close:
        # the same plan's edits 35 and 38, 5 whole totals instead of 12 and 14, the waste 7.4e-5
        # and 1.75e-4 instead of 5.1e-5 and 1.71e-4: below the rise, of which bisecting on could
        # gain the slope's share only; allocate reports it).
        def jump_left() -> bool:
            (t_ok, total_ok), (t_bad, total_bad) = seen["ok"], seen["bad"]
            return slope > 0 and 2 * slope * (t_bad - t_ok) < WASTE * epsilon_g or \
                straddles_jump(slope, (t_ok, total_ok), (t_bad, total_bad))

        def brent_excess(x: float) -> float:
            f = excess(x)
            if jump_left():
                raise _JumpLeft
            return f

        if epsilon_g - seen["ok"][1] > CLOSE * epsilon_g:
            from scipy.optimize import brentq   # here: the window starts without scipy.optimize
            try:
                brentq(brent_excess, t_lo, t_hi, xtol=1e-300, rtol=RTOL, maxiter=500)
            except _JumpLeft:
                pass
        for _ in range(REFINE_ROUNDS):
            (t_ok, total), (t_bad, _) = seen["ok"], seen["bad"]
            mid = 0.5 * (t_ok + t_bad)
            if epsilon_g - total < WASTE * epsilon_g or not t_ok < mid < t_bad \
                    or t_bad - t_ok <= RTOL * t_bad or jump_left():
                break
            excess(mid)
        return seen["ok"][0]


def straddles_jump(slope: float, ok: tuple[float, float], bad: tuple[float, float]) -> bool:
    """Whether the totals at a fitting (t, total) and an over-budget one rise by more than JUMP
    times what ``slope`` (> 0, the total's slope near them; else False) predicts over their
    distance: a jump lies between them that bisection cannot close."""
    rise = bad[1] - ok[1]
    return slope > 0 and math.isfinite(rise) and rise > JUMP * slope * (bad[0] - ok[0])


class _JumpLeft(Exception):
    """Brent's method is stopped: only a jump of the total is left (see ScaleSearch.scale)."""


def alike(t: float, at_t: Composition, u: float, at_u: Composition) -> bool:
    """Whether the totals at scales t and u were read on lattices laid alike: steps equal, or in
    proportion to the scales within ALIKE (pld lays its lattice under the free queries' largest
    group, a whole number of steps to it: a step one in ~20 finer moves the total little; laid
    under other groups too, where a ratio of epsilons is round, it is 0.55-0.85 of the step near
    it). A theorem without a lattice: True."""
    step_t, step_u = (at_t.extra or {}).get("step"), (at_u.extra or {}).get("step")
    return step_t is None or step_u is None or step_t == step_u or \
        abs(step_t * u - step_u * t) <= ALIKE * step_t * u


def same_laying(t: float, step_t: Optional[float], u: float, step_u: Optional[float]) -> bool:
    """Whether lattices of these steps at scales t and u are laid alike: steps in proportion to the
    scales within OFF (aligned_step moves a step by at most ALIGN_TOLERANCE; a lattice laid under
    other groups, or a whole number of steps more to one, is ~1e-4 or more away). None: unknown."""
    return step_t is not None and step_u is not None and abs(step_t * u - step_u * t) <= OFF * step_t * u


def slope_near(totals: dict, t: float, at: float) -> float:
    """The total's slope at t from the compositions at ``at`` (its nearest other scale), or 0."""
    near = min((u for u, e in totals if e == at and u != t), key=lambda u: abs(u - t), default=None)
    if near is None:
        return 0.0
    slope = (totals[(t, at)].epsilon - totals[(near, at)].epsilon) / (t - near)
    return slope if math.isfinite(slope) and slope > 0 else 0.0
