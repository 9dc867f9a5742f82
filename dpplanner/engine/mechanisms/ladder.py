"""The certified [lower, upper] bracket of a composition of releases: a ladder of lattices.

Closed forms first: all releases Gaussian (gaussian.py), one Laplace release, delta_bar = 0 (the
sum of the epsilons), or cheap bounds already within eta (cheap.py). Otherwise the releases are
composed on a ladder of lattices (spectral.py, one rung each): the first rung has about
FIRST_POINTS points and depends on the releases only; each next one halves the step (both ends
second order in it: the hybrid bound) or quarters it (a first-order lower end). The climb stops
when the width is at most eta, when two rungs in a row did not narrow it, or when the next rung
would exceed MAX_POINTS: a function of the plan and eta, never of the clock. A coarser eta climbs
the first rungs of a finer eta's ladder and every bound kept is the best found so far, so a
finer eta never gives a worse bracket; when a width above eta is left, ``detail`` says why.
Every upper end is also capped by the cheap bounds (zCDP, basic, KOV Thm 3.5) and every lower end
floored by the largest single release's own epsilon.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np

from ..memo import Memo
from ..optimal.pld import TAIL_FRACTION
from ..numerics import round_down, round_up
from . import spectral
from .bracket import (MAX_POINTS, Twins, _gaussian_root, aligned_step, exact_key, finer_for_ctd, lattice_points,
                      pure_sum)
from .cheap import cheap_lower, cheap_lower_ceiling, cheap_upper, laplace_root
from .tilted import WindowTooWide

#: A lattice small enough to cost little next to a composition (the floor on "optimal" and the
#: curve's coarser lattice are sized from it).
CHEAP_POINTS = 1 << 12
#: Relative width below which no lattice is composed: rounding margins of its read-outs are larger.
FLOAT_RESOLUTION = 1e-11
#: Rungs of the ladder of lattices after the first one.
MAX_REFINE = 10
#: The ladder's first rung has about this many points; without the hybrid bound each next rung
#: has RUNG times its step, else half of it.
FIRST_POINTS = 1 << 11
RUNG = 4


#: Brackets already computed, keyed by what was composed. One edit asks for the same one up to
#: three times (the allocation's last check, the totals, the curve's lattice), and a bracket is a
#: pure function of its Twins and eta. Few entries: a key holds the release arrays.
_BRACKETS_MAX = 32
_BRACKETS = Memo(_BRACKETS_MAX)


class Bracket(NamedTuple):
    upper: float
    lower: float
    detail: str
    step: float         # the lattice of upper and lower (0: none needed); a closed form's: the one a
    #                     composition of the same releases starts on
    first_fit: float    # the coarsest lattice whose width met eta (0: none)
    rung: int = 0       # which rung of the ladder ``step`` is (0: the first)


def bracket(r: Twins, eta: float, cancel=None, progress=None) -> Bracket:
    """The certified bracket of releases with delta_bar >= 0."""
    key = exact_key(r, eta)
    known = _BRACKETS.get(key)
    if known is None:
        known = _bracket(r, eta, cancel, progress)
        _BRACKETS.put(key, known)
    return known


#: The rungs' upper ends already composed (``upper_end``), keyed as the brackets (and the rung
#: after the first): the allocation's search asks for one at each scale it tries, its last check
#: for the bracket there (which reuses the upper end of each rung it climbs that the search
#: composed).
_FIRST_UPPERS = Memo(_BRACKETS_MAX)


def upper_end(r: Twins, eta: float, cancel=None, rung: int = 0, lower_ahead: bool = False) -> Bracket:
    """A certified upper end of ``r``'s composition, cheaper than its bracket where a lattice is
    composed: the upper end on the ladder's rung ``rung`` (the last one if the ladder is shorter),
    capped as the bracket caps it (lower end 0). On the first rung, where it meets eta, it is the
    bracket's upper end to the bit, else above it: an allocation's search asks for it at each scale
    it tries, for the whole bracket only at the last one (the lower end, half a rung's work with
    discrete kinds, only decides when the climb stops). Where that bracket climbed to rung n, the
    search goes on with rung n's upper ends, a few times cheaper than climbing: where the bracket
    there climbs to rung n too, its upper end on rung n (the same number) is not composed again.
    ``lower_ahead``: that bracket is likely asked for next (the search's likely last step): the
    rung's lower end is composed meanwhile in the engine process's helper where it is idle
    (spectral.upper_end), and the bracket reads it instead of composing it."""
    start = _start(r, eta)
    if isinstance(start, Bracket):
        return start
    cap, cap_name, floor, step = start
    step, n = _climbed(r, step, rung)
    key = exact_key(r, eta) + ((n,) if n else ())
    up = _FIRST_UPPERS.get(key)
    if up is None:
        try:
            up = spectral.upper_end(r, step, _first_guess(cap, floor), cancel, lower_ahead)
        except WindowTooWide:
            up = math.inf
        _FIRST_UPPERS.put(key, up)
    detail = f"pld lattice {step:.3g} (upper end only)"
    if cap < up:
        detail += f"; the {cap_name} bound is smaller, reported instead"
    return Bracket(float(round_up(min(up, cap))), 0.0, detail, step, 0.0, n)


def upper_step(r: Twins, eta: float, rung: int = 0) -> float:
    """The lattice ``upper_end`` reads its end on (0: none, a closed form or the cheap bounds), not
    composed: an allocation's search tells from it whether two scales' lattices are laid alike."""
    start = _start(r, eta)
    return 0.0 if isinstance(start, Bracket) else _climbed(r, start[3], rung)[0]


def _climbed(r: Twins, step: float, rung: int) -> tuple[float, int]:
    """(the step of rung ``rung`` (or of the last, on a shorter ladder) from the first's, its rung)."""
    n = 0
    while n < rung and (nxt := _next_rung(r, step)) is not None:
        step, n = nxt, n + 1
    return step, n


#: likely_rung says the second rung where this share of the first rung's estimated width is above
#: eta: the estimate was 1.14-1.22 times the width on synthetic-100 with 8 to 60 statistics pinned
#: by the benchmark's edits, 1.19-1.27 on census with 6 to 36 (a climb is guessed wrongly only
#: where it is above 1.33).
CLIMB_SHARE = 0.75
#: ... on plans of at least this many kinds: the estimate is a normal approximation of the total
#: loss (psi-survey's 5 kinds with 3 pinned: 4.4 times the width; there the rung its bracket stops
#: on moves with the scale, and a whole bracket at the search's first scale, 6e-3 of the budget
#: off, chose wrongly: 6 edits cost 264 / 223 ms of CPU instead of 229 / 236 with the first rung).
MIN_KINDS = 16
#: Between this share of eta and eta / CLIMB_SHARE the estimate cannot tell (likely_rung: None):
#: the bench edits' estimates over eta with no climb reached 1.19 (synthetic-100), 1.36 (census),
#: climbs came from 1.20 and 1.19. A wrong guess of the first rung cost its three upper ends;
#: the whole bracket composed first costs a lower end where no climb comes.
UNSURE = 1.1


def likely_rung(r: Twins, eta: float) -> Optional[int]:
    """The rung (0 or 1) a bracket of ``r`` at eta is likely to stop on, estimated from the
    releases alone (no composition), or None where the estimate is too near eta to tell: where
    an allocation's search starts (allocate.py), so that it does not search on the first rung's
    upper ends only for its forward check to climb to the second, and search again there
    (synthetic-100 from ~40 statistics pinned: 7.1 compositions an edit instead of 4.0); where
    unsure, it composes the whole bracket first (whose upper ends its search reads again, not
    composed twice). A wrong guess costs compositions, never soundness.

    Without the hybrid bound the first rung's lower end is the lower twins' (kernels.py): each
    Laplace kind off the lattice shrinks to a' = a - f / 2 (2a = m step + f), each discrete kind's
    kernel is rounded down, so the total loss's mean falls by D = sum n (its mean's fall), and the
    lower end by about D (1 + z / sigma) (a normal approximation of the total loss: epsilon = its
    mean + z sd, z = sqrt(2 log(1 / delta_bar)), sd sigma; d sd = (sum n a da) / sigma, the top
    atoms carrying the loss). Every pinned statistic is a kind of its own, off the lattice, and
    adds its share: ~2.5e-4 of synthetic-100's budget each, past eta = 1e-2 at ~40 pins."""
    start = _start(r, eta)
    if isinstance(start, Bracket) or spectral.hybrid_applies(r) or not r.delta_bar < 1.0:
        return 0
    step = start[3]
    if r.a_lo.size + r.rr_eps.size + len(r.disc) < MIN_KINDS or _next_rung(r, step) is None:
        return 0
    width = first_rung_width(r, step)
    return 1 if CLIMB_SHARE * width > eta else None if width >= UNSURE * eta else 0


def first_rung_width(r: Twins, step: float) -> float:
    """likely_rung's estimate of the width the lower twins leave on lattice ``step``."""
    a, mult = r.a_lo, r.lo_mult
    # (a Laplace kind whose top atom is pooled instead, f <= a^2, kernels.laplace_lower, falls less:
    # counted as shrunk all the same, the estimate followed the width more closely)
    fall = math.fsum((mult * a * np.mod(2.0 * a, step) / 2.0).tolist())
    var = float(np.sum(mult * a * a) + np.sum(r.rr_eps ** 2 * r.rr_mult)) + r.mu_lo ** 2
    tail = TAIL_FRACTION * r.delta_bar / (sum(int(k) for k in r.disc_mult) + 1)
    for d, k in zip(r.disc, r.disc_mult):
        up, lo = d.kernel(step, True, tail), d.kernel(step, False, tail)
        fall += int(k) * (_mean(up) - _mean(lo))
        var += int(k) * d.variance()
    if not (var > 0 and fall > 0):
        return 0.0
    return fall * (1.0 + math.sqrt(2.0 * math.log(1.0 / r.delta_bar) / var))


def _mean(k) -> float:
    """The mean loss of a lattice kernel."""
    return float(np.sum(k.p * (k.offset + k.step * (k.start + np.arange(k.p.size, dtype=float)))))


def _first_guess(cap: float, floor: "_Floor") -> float:
    """Where the first rung's read-out expects the root."""
    return cap if math.isfinite(cap) else max(floor.value, 1.0)


class _Floor:
    """cheap_lower(r), read only where it may decide something: a Gaussian's root is a search
    (~0.4 ms of a ~6 ms composition) that cheap_lower_ceiling bounds at once, and the floor
    seldom beats a rung's lower end."""

    def __init__(self, r: Twins) -> None:
        self.r, self.ceiling, self._value = r, cheap_lower_ceiling(r), None

    @property
    def value(self) -> float:
        if self._value is None:
            self._value = cheap_lower(self.r)
        return self._value

    def above(self, x: float) -> bool:
        """Whether the floor exceeds x (not read where its ceiling does not)."""
        return not self.ceiling <= x and self.value > x


#: _start's answers, keyed by the releases and eta (exact_key): an allocation's forward check
#: brackets the releases whose upper end its search read last (the cheap bounds and the first
#: rung's alignment: ~0.5 ms).
_STARTS = Memo(2)


def _start(r: Twins, eta: float):
    """The bracket when no lattice is needed, else (cap, its name, floor, first rung's step)."""
    key = exact_key(r, eta)
    known = _STARTS.get(key)
    if known is None:
        known = _started(r, eta)
        _STARTS.put(key, known)
    return known


def _started(r: Twins, eta: float):
    has_rest = r.a_up.size > 0 or r.rr_eps.size > 0 or len(r.disc) > 0
    if r.delta_bar == 0.0:  # (delta_bar_hi > 0 only when the deltas nearly fill delta_g; 0 is a valid lower)
        lo = 0.0 if r.delta_bar_hi > 0 else (math.inf if r.unbounded else pure_sum(r, False))
        if r.unbounded:
            return Bracket(math.inf, lo, "Gaussian noise has delta > 0 at every epsilon", 0.0, 0.0)
        return Bracket(pure_sum(r, True), lo, "pure (delta = 0): the sum of the epsilons", 0.0, 0.0)
    if not has_rest:
        if r.mu_up == 0:
            return Bracket(0.0, 0.0, "no release adds privacy loss", 0.0, 0.0)
        up, lo = _gaussian_root(r.mu_up, r.delta_bar, True), _gaussian_root(r.mu_lo, r.delta_bar_hi, False)
        up, lo = float(round_up(up)), float(round_down(lo))
        return Bracket(up, lo, "closed form (all releases Gaussian)" + _float_limit(up, lo, eta), 0.0, 0.0)
    if r.mu_up == 0 and r.rr_eps.size == 0 and not r.disc and r.up_mult.size == 1 and int(r.up_mult[0]) == 1:
        return _single_laplace(r, eta)
    cap, cap_name = cheap_upper(r)
    basic = pure_sum(r, True) if not r.unbounded else math.inf
    if basic <= cap:
        cap, cap_name = basic, "basic (sum of the epsilons)"
    floor = _Floor(r)
    step = ladder_start(r)
    # (a floor at its ceiling that leaves them apart, floating-point subtraction being monotone,
    # leaves them apart at any floor below it)
    near = not (cap - floor.ceiling > eta and cap - floor.ceiling > FLOAT_RESOLUTION * cap)
    if near and (cap - floor.value <= eta or cap - floor.value <= FLOAT_RESOLUTION * cap):
        # nothing to compose: the cheap bounds meet eta, or are as close as floating point allows
        # (the lattice's step is still given: a curve composes its prefixes there)
        detail = f"{cap_name} bound above, the largest single release's epsilon below"
        return Bracket(cap, floor.value, detail + _float_limit(cap, floor.value, eta), step, step)
    return cap, cap_name, floor, step


def _bracket(r: Twins, eta: float, cancel, progress) -> Bracket:
    start = _start(r, eta)
    if isinstance(start, Bracket):
        return start
    cap, cap_name, floor, step = start
    # (``used`` is the last rung composed: a rung whose window is too wide is not one, and an
    # allocation that goes on with upper ends on ``used_rung`` would read only infinite ends there)
    up, lo, used, first_fit, used_rung = math.inf, 0.0, step, 0.0, 0
    why = f"refinement limit reached ({MAX_REFINE + 1} lattices)"
    own = []        # each rung's own (upper, lower) ends
    # Every rung is read from the guess upper_end reads it from, so an upper end an allocation's
    # search composed on a rung is this climb's to the bit and is not composed again (issue 26's
    # table plan climbs to the third rung at each edit's last check). Read from the rung below's
    # upper end instead, the shipped examples' brackets at eta 1e-4 and 1e-5 were the same bits.
    guess = _first_guess(cap, floor)
    for it in range(MAX_REFINE + 1):
        if cancel is not None:
            cancel.check()
        try:
            # (a lower end read from the upper end's composition is kept where the width is at most
            # half of eta: census's, just within eta, was ten times the lower end's own composition's)
            key = exact_key(r, eta) + ((it,) if it else ())
            stored = _FIRST_UPPERS.get(key)
            known = stored if stored is not None and math.isfinite(stored) else None  # (inf: window too wide)
            up_here, lo_here = spectral.rung(r, step, guess, cancel, upper=known, enough=eta / 2)
        except WindowTooWide as e:     # (a finer lattice needs a wider window still)
            why = str(e)
            break
        if stored is None:  # (upper_end's number, read from the same guess: an allocation's search
            _FIRST_UPPERS.put(key, up_here)     # starting at this bracket's scale reads it again)
        used, used_rung = step, it
        up = min(up, up_here)
        lo = max(lo, lo_here)
        own.append((up_here, lo_here))
        if progress is not None:
            progress((it + 1) / (MAX_REFINE + 1))
        width = min(up, cap) - lo
        if width <= eta and not first_fit:
            first_fit = step
        # the first rung that meets eta ends the climb: a finer one would lower the upper end by a
        # few 1e-6 on the shipped examples (connect-the-dots is second order in the step; at most
        # eta, 2.3e-4 on 1000 distinct multipliers at eta 1e-3) at four times the cost, on every
        # composition of an allocation's search. Where a rung's lower end is the first-order lower
        # twins' (no hybrid bound), the rung it stops on can differ between nearby scales of one
        # plan: each Laplace group off the lattice has its a rounded down to it, so that lower end
        # is a staircase in the scale (the grouped bench plan: flat, then up by 3e-3 on the first
        # rung as a free group's a passes a lattice point), and a width near eta stops on rung 1 at
        # one scale and climbs to rung 2 at the next. An allocation whose forward check lands on
        # such a step searches again on whole totals (allocate.py: one or two more, on 1 of the 20
        # grouped bench edits); no stop read from the widths avoids a step somewhere.
        if width <= eta:
            break
        if len(own) >= 3 and _stalled([u - l for u, l in own[-3:]]):
            why = _stall_reason(own[-3:])
            break
        nxt = _next_rung(r, step)
        if nxt is None:
            why = f"the finest lattice within {MAX_POINTS:,} points was reached"
            break
        step = nxt
    detail = f"pld lattice {used:.3g}"
    if floor.above(lo):
        lo = floor.value
        detail += "; the largest single release's epsilon is a higher lower bound, reported instead"
    if cap < up:
        detail += f"; the {cap_name} bound is smaller, reported instead"
    up = min(up, cap)
    if up - lo > eta:
        detail += f"; width {up - lo:.3g} > eta = {eta:g}: {why}"
    return Bracket(float(round_up(up)), float(round_down(min(lo, up))), detail, used, first_fit, used_rung)


def _stalled(widths: list[float]) -> bool:
    """Neither of the last two finer lattices narrowed its own bracket by 30%."""
    return not (widths[2] < 0.7 * widths[1] or widths[1] < 0.7 * widths[0])


def _stall_reason(ends: list[tuple[float, float]]) -> str:
    """Why the climb stopped, with the ends that stalled (the upper end when rounding charged to
    delta dominates, the lower end when its twin stops rising), so neither hides the other."""
    (u0, l0), (_, _), (u2, l2) = ends
    return (f"two finer lattices in a row did not narrow it (upper end {u0:.6g} -> {u2:.6g}, "
            f"lower end {l0:.6g} -> {l2:.6g} on the last three)")


def _fitting(r: Twins, step: float) -> float:
    """``step``, or the finest coarser one (doubling) on which the lattice fits MAX_POINTS; aligned
    with the releases where that still fits (any step is valid, alignment only tightens)."""
    for _ in range(2100):       # (doubling from 2^-1074 reaches any finite step in ~2100 steps)
        if lattice_points(r, step) <= MAX_POINTS:
            return step
        target = step * max(2.0, lattice_points(r, step) / MAX_POINTS * 1.125)
        aligned = aligned_step(r, target)
        step = aligned if lattice_points(r, aligned) <= MAX_POINTS else target
    return step


def ladder_start(r: Twins) -> float:
    """The first rung of the ladder of lattices every bracket of ``r`` climbs: about FIRST_POINTS
    points (more where its upper end would be far above the exact: bracket.finer_for_ctd), a
    function of the releases only. Rung i + 1 is aligned_step(rung i / RUNG), so the
    lattices a bracket at eta composes are the first rungs of those at any finer eta, and (every
    bound kept being the best so far) a finer eta never gives a worse bracket."""
    per_unit = lattice_points(r, 1.0)
    if not 0.0 < per_unit < math.inf:
        return _fitting(r, 1.0)
    exponent = math.ceil(math.log2(per_unit) - math.log2(FIRST_POINTS))
    return finer_for_ctd(r, _fitting(r, aligned_step(r, 2.0 ** min(max(exponent, -1000), 1000))), _next_rung)


def _next_rung(r: Twins, step: float):
    """The next rung after ``step`` (None: no finer lattice fits MAX_POINTS, less than halving):
    half the step where both ends are second order in it (hybrid), a quarter otherwise."""
    nxt = aligned_step(r, step / (2 if spectral.hybrid_applies(r) else RUNG))
    if lattice_points(r, nxt) <= MAX_POINTS and nxt < step:
        return nxt
    finest = step * lattice_points(r, step) / MAX_POINTS * 1.125     # fits (points scale as 1/step)
    return finest if finest <= step / 2 else None       # (less than halving buys too little)


def _float_limit(up: float, lo: float, eta: float) -> str:
    """Why a closed form's bracket is wider than eta (its ends are a few ulps of the bound's rounding
    margins apart, relative: at epsilon ~ 1e9 that is more than eta = 1e-3)."""
    if up - lo <= eta:
        return ""
    return (f"; width {up - lo:.3g} > eta = {eta:g}: floating-point resolution at epsilon = {up:.6g} "
            f"(the bounds' relative rounding margins, ~1e-13 of epsilon, exceed eta)")


def _single_laplace(r: Twins, eta: float) -> Bracket:
    """One Laplace release alone: its epsilon in closed form (cheap.laplace_root)."""
    up = laplace_root(float(r.a_up[0]), r.delta_bar, True)
    lo = min(laplace_root(float(r.a_lo[0]), r.delta_bar_hi, False), up)
    # (the lattice a composition of it would start on: a curve composes its prefixes there)
    step = ladder_start(r)
    return Bracket(up, lo, "closed form (one Laplace release)" + _float_limit(up, lo, eta), step, step)
