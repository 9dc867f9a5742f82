"""Total epsilon as a function of the number of queries k, computed incrementally.

Closed forms (basic, advanced, filter) come from running sums, O(K) for the whole curve; the
optimal (and concurrent) curve comes from the optimal core's incremental prefix routine; kov and
the repeat mode use the exact homogeneous root per k.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .advanced import advanced_epsilon
from .basic import basic_epsilon
from .delta import delta_bar_from_log
from .filters import filter_epsilon
from .stats import prefix_sums
from .types import CancelToken, ProgressCallback
from .validation import THEOREMS, validate_delta_g, validate_eta, validate_expandable, validate_plan, \
    validate_theorems

MODES = ("prefix", "repeat")


@dataclass(frozen=True)
class Curve:
    """upper[name][j]: sound total eps after ks[j] queries (nan: not applicable, inf: infeasible)."""

    ks: np.ndarray
    upper: dict
    lower: dict


def _positive_int(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value) \
            or value != int(value) or value < 1:
        raise ValueError(f"{name} = {value!r} is not allowed; it must be a whole number >= 1")
    return int(value)


def sample_ks(k_total: int, points: Optional[int]) -> np.ndarray:
    """1..K, or about ``points`` evenly spaced values of k that always include K."""
    if points is None or points >= k_total:
        return np.arange(1, k_total + 1, dtype=np.int64)
    ks = np.unique(np.round(np.linspace(1, k_total, points)).astype(np.int64))
    return ks if ks[-1] == k_total else np.append(ks, k_total)


def _homogeneous_curve(eps: float, ks: np.ndarray, delta_bars: np.ndarray, cancel, progress):
    from .optimal import homogeneous_bracket

    upper = np.full(ks.size, np.nan)
    lower = np.full(ks.size, np.nan)
    for j, (k, db) in enumerate(zip(ks, delta_bars)):
        if cancel is not None:
            cancel.check()
        if db < 0:
            upper[j], lower[j] = np.inf, np.inf
        else:
            b = homogeneous_bracket(eps, int(k), float(db))
            upper[j], lower[j] = b.upper, b.lower
        if progress is not None and (j % 64 == 0 or j == ks.size - 1):
            progress((j + 1) / ks.size)
    return upper, lower


def curve(epsilons, deltas, delta_g, *, mode: str = "prefix", k_max=None, points=None,
          theorems=THEOREMS, eta: float = 1e-2, multiplicities=None,
          cancel: Optional[CancelToken] = None, progress: Optional[ProgressCallback] = None) -> Curve:
    """Sound total epsilon under each theorem after k = 1..K queries.

    ``mode="prefix"``: the first k queries of the plan in order (multiplicities expanded), K = the
    plan's size (or ``k_max`` if smaller). ``mode="repeat"``: the query (epsilons[0], deltas[0])
    repeated k times, K = ``k_max`` (default: the plan's size). ``points`` evaluates only about that
    many evenly spaced k, always including K.
    """
    plan = validate_plan(epsilons, deltas, multiplicities)
    delta_g = validate_delta_g(delta_g)
    eta = validate_eta(eta)
    names = validate_theorems(theorems)
    if mode not in MODES:
        raise ValueError(f"unknown curve mode {mode!r}; known modes are {', '.join(MODES)}")
    if points is not None:
        points = _positive_int(points, "points")
    if mode == "prefix":
        k_total = plan.k if k_max is None else min(_positive_int(k_max, "k_max"), plan.k)
    else:
        k_total = plan.k if k_max is None else _positive_int(k_max, "k_max")
    validate_expandable(k_total, "curve")
    if mode == "prefix":
        eps_seq, delta_seq = (a[:k_total] for a in _expanded_head(plan, k_total))
    else:
        eps_seq = np.full(k_total, plan.eps[0])
        delta_seq = np.full(k_total, plan.delta[0])

    ks = sample_ks(k_total, points)
    s = prefix_sums(eps_seq, delta_seq, ks)
    delta_bars = np.atleast_1d(delta_bar_from_log(delta_g, s.log_surv))
    # where sum delta_i <= delta_g exactly, delta_bar >= 0 exactly (see delta.delta_bar)
    delta_bars = np.where((delta_bars < 0) & s.delta_fits(delta_g), 0.0, delta_bars)
    upper: dict = {}
    lower: dict = {}

    # kov applies to the prefixes made only of copies of the first query.
    same = (eps_seq == eps_seq[0]) & (delta_seq == delta_seq[0])
    homogeneous_len = int(np.argmin(same)) if not same.all() else k_total
    need_hom = "kov" in names or (mode == "repeat" and ({"optimal", "concurrent"} & set(names)))
    need_prefix = mode == "prefix" and ({"optimal", "concurrent"} & set(names))
    hom_progress, prefix_progress = _split_progress(progress, bool(need_hom), bool(need_prefix))
    if need_hom:
        hom = ks <= homogeneous_len
        h_up = np.full(ks.size, np.nan)
        h_lo = np.full(ks.size, np.nan)
        h_up[hom], h_lo[hom] = _homogeneous_curve(float(eps_seq[0]), ks[hom], delta_bars[hom], cancel,
                                                  hom_progress)
    for name in names:
        if cancel is not None:
            cancel.check()
        if name == "basic":
            upper[name], lower[name] = basic_epsilon(s, delta_g), None
        elif name == "advanced":
            upper[name], lower[name] = advanced_epsilon(s, delta_g), None
        elif name == "filter":
            upper[name], lower[name] = filter_epsilon(s, delta_g), None
        elif name == "kov":
            upper[name], lower[name] = h_up.copy(), h_lo.copy()
    if {"optimal", "concurrent"} & set(names):
        if mode == "repeat":
            o_up, o_lo = h_up, h_lo
        else:
            o_up, o_lo = _optimal_prefix(eps_seq, ks, delta_bars, eta, cancel, prefix_progress)
        # Lyu22/VZ23: concurrent composition equals non-interactive composition; the VW21 bound
        # (sum eps) is never smaller than the optimal one wherever both are valid.
        for name in ("optimal", "concurrent"):
            if name in names:
                upper[name], lower[name] = o_up.copy(), o_lo.copy()
    if progress is not None:
        progress(1.0)
    return Curve(ks=ks, upper={n: upper[n] for n in names}, lower={n: lower[n] for n in names})


def _split_progress(progress, first: bool, second: bool):
    """Map the two long phases (homogeneous roots, optimal prefix curve) onto one 0..1 scale."""
    if progress is None or not (first and second):
        return progress, progress
    return (lambda f: progress(0.5 * f)), (lambda f: progress(0.5 + 0.5 * f))


def _expanded_head(plan, k_total: int):
    """The first k_total queries with multiplicities spelled out (without expanding the rest)."""
    cum = np.cumsum(plan.mult)
    rows = int(np.searchsorted(cum, k_total)) + 1  # the row holding query number k_total
    mult = plan.mult[:rows].copy()
    mult[-1] -= int(cum[rows - 1]) - k_total  # only the copies of the last row that are needed
    return np.repeat(plan.eps[:rows], mult), np.repeat(plan.delta[:rows], mult)


def _optimal_prefix(eps_seq, ks, delta_bars, eta, cancel, progress):
    from .optimal import optimal_prefix_curve

    up = np.full(ks.size, np.inf)
    lo = np.full(ks.size, np.inf)
    feasible = delta_bars >= 0  # delta_bar only shrinks with k: the feasible ks are a prefix
    if feasible.any():
        kf = ks[feasible]
        u, l_ = optimal_prefix_curve(eps_seq[: int(kf[-1])], delta_bars[feasible], kf, eta,
                                     cancel=cancel, progress=progress)
        up[feasible], lo[feasible] = u, l_
    return up, lo
