"""The fast path's refinement loop: split brackets on finer and finer lattices until the width is
at most eta, or a stated resource cap is reached (then the method says which, never silently wide).

Every cap is a function of the plan and eta (lattice size, rounds, no further narrowing), never of
the clock: the same plan gives the same bracket on any machine. Only a caller's explicit time
limit (a ``deadline.Deadline`` passed as ``cancel``) can stop it earlier, and the method says so.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from .deadline import OutOfTime
from .pld import STEP_MAX, lattice_points
from .result import Bracket
from .split import MAX_POINTS, SMOOTH_SHARE, choose_smoothing, model_step, split_side
from ..numerics import widen_down, widen_up

#: Most lattice refinements (each step is also bounded by MAX_POINTS).
MAX_ROUNDS = 24
#: From this many queries on a plan's bracket narrows as the step squared (model_step's lumpy
#: factor is within 1.3 of 1): its first refinement is sized for that.
LARGE_PLAN = 1000


def split_bracket(e: np.ndarray, m: np.ndarray, delta_bar: float, eta: float, *, cancel=None,
                  progress=None, max_points: int = MAX_POINTS,
                  delta_bar_hi: Optional[float] = None) -> Optional[Bracket]:
    """The bracket on lattices refined until width <= eta (error ~ D^2); None if not applicable."""
    if e.size < 2:
        return None
    step = model_step(e, m, eta)
    large = float(np.sum(m)) >= LARGE_PLAN
    # the model is measured on plans that smooth a few queries; a large one that can afford none
    # (large groups of equal epsilons: synthetic-1000's edited states, 2.2-3.0e-2 wide at its 2^-10
    # for eta 1e-2) starts on the next lattice, the one it was refined to. Where that plan misses
    # eta all the same, the lattice skipped is composed last (see below).
    skipped = None
    if large and not choose_smoothing(e, m, delta_bar, step, SMOOTH_SHARE * eta).any():
        skipped = _within(e, m, step, max_points)
        step /= 2
    step = _within(e, m, step, max_points)
    # the lattice the best upper end is from, and its groups rounded down: what the method names
    best_up, best_lo, best_step, best_smooth = math.inf, 0.0, step, 0
    history: list[tuple[float, float]] = []
    why, first, timed_out = "", step, False
    for it in range(MAX_ROUNDS):
        try:
            up, lo, n_smooth = split_side(e, m, delta_bar, step, SMOOTH_SHARE * eta, cancel, eta / 4,
                                          delta_bar_hi)
        except OutOfTime:
            why, timed_out = cancel.reason(), True
            break
        if up < best_up:
            best_step, best_smooth = step, n_smooth
        best_up, best_lo = min(best_up, up), max(best_lo, lo)
        width = best_up - best_lo
        if progress is not None:
            progress(min(0.9, 0.1 * (it + 1)))
        if width <= eta:
            break
        if not math.isfinite(best_up):
            why = "FFT rounding error exceeds delta_bar (delta_bar too small for this lattice)"
            break
        if history and up - lo > 0.7 * history[-1][1]:
            why = (f"a finer lattice no longer narrows the bracket (rounding charged to delta_bar = "
                   f"{delta_bar:.3g} dominates)")
            break
        if lo <= 0.0 or width >= 0.5 * up:
            ratio = 0.25  # the error bound broke down (grid too coarse for the plan): no model
        else:
            history.append((step, up - lo))
            # between first order (lumpy, small plans) and second order (large plans), aimed inside
            # eta; a large plan's first miss: second order (the method's), aimed at eta itself
            # (synthetic-1000's edited states: 2.2-3.0e-2 at 2^-10, 4.6-8.3e-3 at 2^-11, where
            # 1.5 and 0.7 eta went on to 2^-12, 1.5x the work of 2^-11, for 2.0-2.6e-3)
            order, aim = (2.0, eta) if large else (1.5, 0.7 * eta)
            if len(history) >= 2 and history[-2][1] > history[-1][1] > 0:
                order = math.log(history[-2][1] / history[-1][1]) / math.log(history[-2][0] / history[-1][0])
                order, aim = min(2.0, max(1.0, order)), 0.7 * eta
            ratio = (aim / width) ** (1.0 / order)
        new = step * 2.0 ** math.floor(math.log2(max(ratio, 1.0 / 16)))
        new = min(new, step / 2)
        while new < step / 2 and lattice_points(e, m, new) > max_points:
            new *= 2  # the finest lattice within the cap
        if lattice_points(e, m, new) > max_points:
            why = f"a finer lattice would exceed the cap of {max_points:,} points"
            break
        step = new
    else:
        why = f"stopped after {MAX_ROUNDS} refinements"
    if skipped is not None and skipped > first and best_up - best_lo > eta and not timed_out:
        # a plan that misses eta (delta_bar tiny: the rounding charged to it grows on finer
        # lattices) may have its best end on the lattice skipped (a coarser one costs less than the
        # rounds already made): a random plan of 3087 queries at delta_bar 1.2e-10, 1017.308857 on
        # 2^-11 against 1017.312453 on 2^-12; 1000 queries in a few large groups at delta_bar
        # 1e-14, 1.797 on 2^-10 where 2^-11 certified no upper end
        try:
            up, lo, n_smooth = split_side(e, m, delta_bar, skipped, SMOOTH_SHARE * eta, cancel,
                                          eta / 4, delta_bar_hi)
            if up < best_up:
                best_step, best_smooth = skipped, n_smooth
            best_up, best_lo = min(best_up, up), max(best_lo, lo)
        except OutOfTime:
            why = cancel.reason()
    method = f"pld d=2^{int(math.log2(best_step))} (second-order lower bound, {best_smooth} groups rounded down)"
    if why:
        method += f"; width > eta = {eta:.3g}: {why}"
    return Bracket(widen_up(best_up), widen_down(best_lo), method)


def _within(e: np.ndarray, m: np.ndarray, step: float, max_points: int) -> float:
    """``step``, or the finest coarser one (doubling) whose lattice fits ``max_points``."""
    while step < STEP_MAX and lattice_points(e, m, step) > max_points:
        step *= 2
    return step
