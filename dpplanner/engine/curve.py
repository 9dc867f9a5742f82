"""Total epsilon as a function of the number of queries k, computed incrementally.

Each registered theorem draws its own curve from the shared CurveInputs (theorem_inputs.py):
closed forms (basic, advanced, filter) come from running sums, O(K) for the whole curve; the
optimal (and concurrent) curve from the optimal core's incremental prefix routine; kov and the
repeat mode from the exact homogeneous root per k.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from .delta import prefix_delta_bar_bounds
from .never_worse import best_cheap
from .optimal.deadline import OutOfTime, with_limit
from .stats import prefix_sums
from .theorem_inputs import CurveInputs
from .theorems import KOV, PLD, THEOREMS, theorem as registry_entry, validate_theorems
from .types import CancelToken, ProgressCallback
from .validation import (Releases, validate_delta_g, validate_eta, validate_expandable, validate_plan,
                         validate_time_limit)

MODES = ("prefix", "repeat")
#: The theorems whose curves ask for the generic optimal curve (``optimal_curve`` below) only once
#: their own work is done, to be met with it: pld's, never above it (mechanisms/curves.py).
MEETS_OPTIMAL = (PLD,)


@dataclass(frozen=True)
class Curve:
    """upper[name][j]: sound total eps after ks[j] queries (nan: not applicable, inf: infeasible).

    ``lower[name]``: certified lower bounds (None where the theorem is a closed form, or lower
    bounds were not asked for). ``notes[name][j]``: "" where the point met the accuracy eta (or has
    no bracket to meet it with), else why not, e.g. "width 0.062 > eta = 0.01: ...".
    """

    ks: np.ndarray
    upper: dict
    lower: dict
    notes: dict = field(default_factory=dict)

    def met_eta(self, name: str) -> np.ndarray:
        """Per point: True where ``name``'s point met eta (or has no bracket), False where not."""
        why = self.notes.get(name)
        if why is None:
            return np.ones(len(self.ks), dtype=bool)
        return np.array([not w for w in why], dtype=bool)


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or value != int(value) or value < 1:
        raise ValueError(f"{name} = {value!r} is not allowed; it must be a whole number >= 1")
    return int(value)


def sample_ks(k_total: int, points: Optional[int]) -> np.ndarray:
    """1..K, or about ``points`` values of k that always include 1 and K: half evenly spaced (a
    linear k axis), the rest geometrically spaced (a log k axis, dense at small k)."""
    if points is None or points >= k_total:
        return np.arange(1, k_total + 1, dtype=np.int64)
    linear = np.linspace(1, k_total, points - points // 2)
    ks = np.zeros(0, dtype=np.int64)
    # Geometric points that round onto linear ones or onto each other are lost: add more, at most
    # `points` in all, until the union has `points` values.
    for extra in range(points // 2, points + 1):
        ks = np.unique(np.round(np.concatenate([linear, np.geomspace(1, k_total, extra)])).astype(np.int64))
        if ks.size >= points:
            break
    return ks if ks[-1] == k_total else np.append(ks, k_total)


def curve(epsilons, deltas, delta_g, *, mode: str = "prefix", k_max=None, points=None,
          theorems=THEOREMS, eta: float = 1e-2, multiplicities=None, mechanisms=None,
          lower: bool = True, cancel: Optional[CancelToken] = None,
          progress: Optional[ProgressCallback] = None,
          optimal_curve: Optional[Callable[[], Optional[tuple]]] = None,
          time_limit: Optional[float] = None, total_eta: Optional[float] = None) -> Curve:
    """Sound total epsilon under each theorem after k = 1..K queries.

    ``mode="prefix"``: the first k queries of the plan in order (multiplicities expanded), K = the
    plan's size (or ``k_max`` if smaller). ``mode="repeat"``: the query (epsilons[0], deltas[0])
    repeated k times, K = ``k_max`` (default: the plan's size). ``points`` evaluates only about that
    many evenly spaced k, always including K. ``lower=False``: only the upper bounds are wanted
    (a plot of the totals); every ``lower[name]`` is then None and the theorems that can skip their
    lower side (pld: half its work) do. ``optimal_curve``: where the generic optimal curve of the
    same request is being computed elsewhere (another process), a function that waits for its
    ``(upper, lower)`` arrays as this call's "optimal" row would give them (met with the cheaper
    theorems' bounds already: not met again here), or None (compute it here); pld's curve, never
    above it, asks for it only once its own read-outs are done. ``time_limit`` (seconds, optional,
    one limit for the whole call): a theorem still working then gives, at every point, the least
    of the cheaper theorems' bounds (valid for any releases with these (eps_i, delta_i)), no lower
    bound, and a note saying so; without it the curve depends only on the arguments.
    ``total_eta``: the eta the same plan's totals are composed at, where the caller composes them
    too (the window): pld's curve then reads the whole plan's bracket at it, in memory, where it is
    no coarser than ``eta`` (the numbers move in their last digits; each is as sound).
    """
    inputs = curve_inputs(epsilons, deltas, delta_g, mode=mode, k_max=k_max, points=points, eta=eta,
                          multiplicities=multiplicities, mechanisms=mechanisms, lower=lower, cancel=cancel,
                          optimal_curve=optimal_curve, time_limit=time_limit, total_eta=total_eta)
    return curve_rows(inputs, theorems, cancel, progress)


def curve_inputs(epsilons, deltas, delta_g, *, mode: str = "prefix", k_max=None, points=None,
                 eta: float = 1e-2, multiplicities=None, mechanisms=None, lower: bool = True,
                 cancel: Optional[CancelToken] = None,
                 optimal_curve: Optional[Callable[[], Optional[tuple]]] = None,
                 time_limit: Optional[float] = None, total_eta: Optional[float] = None,
                 validated: Optional[Releases] = None) -> CurveInputs:
    """``curve``'s validated inputs, for a caller that asks for the theorems' rows in parts
    (``curve_rows``): the work they share (running sums, the optimal curve) is done once.
    ``total_eta``: the eta the same plan's totals are composed at (pld's curve then reads its
    lattice from that whole-plan bracket, already composed, not one at the curve's ``eta``, where
    ``total_eta`` is no coarser than ``eta``). ``validated``: what validate_plan gives for these
    epsilons, deltas, multiplicities and mechanisms, where the caller has it (the same request's
    compose_inputs): they are not validated again."""
    plan = validated if validated is not None else validate_plan(epsilons, deltas, multiplicities, mechanisms)
    delta_g = validate_delta_g(delta_g)
    eta = validate_eta(eta)
    total_eta = None if total_eta is None else validate_eta(total_eta)
    if not isinstance(lower, bool):
        raise ValueError(f"lower = {lower!r} is not allowed; it must be True or False")
    if mode not in MODES:
        raise ValueError(f"unknown curve mode {mode!r}; known modes are {', '.join(MODES)}")
    if points is not None:
        points = _positive_int(points, "points")
    limit = validate_time_limit(time_limit)
    if mode == "prefix":
        k_total = plan.k if k_max is None else min(_positive_int(k_max, "k_max"), plan.k)
    else:
        k_total = plan.k if k_max is None else _positive_int(k_max, "k_max")
    validate_expandable(k_total, "curve")
    if mode == "prefix":
        eps_seq, delta_seq, mech_seq = _expanded_head(plan, k_total)
    else:
        eps_seq = np.full(k_total, plan.eps[0])
        delta_seq = np.full(k_total, plan.delta[0])
        mech_seq = np.full(k_total, plan.mech[0])

    ks = sample_ks(k_total, points)
    s = prefix_sums(eps_seq, delta_seq, ks)
    delta_bars, delta_bars_hi = prefix_delta_bar_bounds(delta_g, delta_seq, ks)
    # where sum delta_i <= delta_g exactly, delta_bar >= 0 exactly (see delta.delta_bar_bounds)
    delta_bars = np.where((delta_bars < 0) & s.delta_fits(delta_g), 0.0, delta_bars)
    return CurveInputs(eps_seq, delta_seq, mech_seq, ks, delta_g, eta, mode, s, delta_bars, delta_bars_hi,
                       with_limit(cancel, limit), want_lower=lower, optimal_source=optimal_curve,
                       total_eta=total_eta)


def curve_rows(inputs: CurveInputs, theorems=THEOREMS, cancel: Optional[CancelToken] = None,
               progress: Optional[ProgressCallback] = None) -> Curve:
    """``curve`` of ``theorems`` on ``curve_inputs`` (also while a row of another call on them is
    computed: that call's progress is restored)."""
    names = validate_theorems(theorems)
    uppers: dict = {}
    lowers: dict = {}
    notes: dict = {}
    before = inputs.progress
    try:
        for j, name in enumerate(names):
            if cancel is not None:
                cancel.check()
            inputs.progress = None if progress is None else \
                (lambda f, j=j: progress((j + min(max(f, 0.0), 1.0)) / len(names)))
            try:
                out = registry_entry(name).curve(inputs)
            except OutOfTime:
                out = _out_of_time(inputs, name)
            uppers[name], low = out[0], out[1]
            lowers[name] = low if inputs.want_lower else None
            notes[name] = tuple(out[2]) if len(out) > 2 else \
                width_notes(uppers[name], lowers[name], inputs.eta)
    finally:
        inputs.progress = before
    if progress is not None:
        progress(1.0)
    return Curve(ks=inputs.ks, upper=uppers, lower=lowers, notes=notes)


def _out_of_time(inputs: CurveInputs, name: str) -> tuple:
    """A theorem's curve when the time limit stopped it: the cheaper theorems' least bound per
    point (as ``compose_one`` gives for a total), no lower bound, each point saying why; kov's
    stays not applicable (nan) past the leading run of equal queries."""
    cheap, names = best_cheap(inputs.sums, inputs.delta_g)
    up = np.array(cheap, dtype=float)
    if name == KOV:
        up[inputs.ks > inputs.homogeneous_len] = np.nan
    why = f"{inputs.cancel.reason()}: upper bound from "
    return up, None, tuple("" if np.isnan(u) else why + n + " (a cheaper theorem)" for u, n in zip(up, names))


def width_notes(upper: np.ndarray, lower: Optional[np.ndarray], eta: float, why: str = "") -> tuple:
    """Per point, "" where upper - lower <= eta (or there is no lower bound), else the width, eta
    and ``why`` (a theorem's curve that knows more says more)."""
    if lower is None:
        return ("",) * len(upper)
    out = []
    for u, lo in zip(np.asarray(upper, dtype=float).tolist(), np.asarray(lower, dtype=float).tolist()):
        w = u - lo
        out.append("" if not (w > eta) or math.isinf(lo) else
                   f"width {_beside(w, eta)} > eta = {eta:.3g}" + (f": {why}" if why else ""))
    return tuple(out)


def _beside(width: float, eta: float) -> str:
    """The width with the digits that tell it from eta ("0.0100004", not "0.01 > eta = 0.01")."""
    digits = 3
    while digits < 17 and f"{width:.{digits}g}" == f"{eta:.{digits}g}":
        digits += 1
    return f"{width:.{digits}g}"


def _expanded_head(plan, k_total: int):
    """The first k_total queries with multiplicities spelled out (without expanding the rest)."""
    cum = np.cumsum(plan.mult)
    rows = int(np.searchsorted(cum, k_total)) + 1  # the row holding query number k_total
    mult = plan.mult[:rows].copy()
    mult[-1] -= int(cum[rows - 1]) - k_total  # only the copies of the last row that are needed
    return (np.repeat(plan.eps[:rows], mult), np.repeat(plan.delta[:rows], mult),
            np.repeat(np.asarray(plan.mech[:rows]), mult))
