"""compose / compose_all / best: one entry point per question, every theorem behind it."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Optional

import numpy as np

from .advanced import advanced
from .basic import basic
from .concurrent import concurrent
from .delta import delta_bar, infeasible_reason, log_survival, total_delta_up
from .errors import NotApplicable
from .filters import filter_composition
from .kov import kov
from .stats import plan_sums
from .types import CancelToken, Composition, ProgressCallback
from .validation import THEOREMS, Plan, validate_delta_g, validate_eta, validate_plan, validate_theorem, \
    validate_theorems


def grouped(plan: Plan) -> tuple[np.ndarray, np.ndarray]:
    """Distinct eps values with their total multiplicity (deltas are already in delta_bar)."""
    eps_u, inverse = np.unique(plan.eps, return_inverse=True)
    mult_u = np.bincount(inverse, weights=plan.mult.astype(float)).astype(np.int64)
    return eps_u, mult_u


def optimal(plan: Plan, delta_g: float, eta: float, cancel: Optional[CancelToken] = None,
            progress: Optional[ProgressCallback] = None) -> Composition:
    """Murtagh–Vadhan optimal composition: delta_i moved into delta_bar, then the optimal core."""
    from .optimal import optimal_bracket  # the optimal core (engine/optimal/)

    db = delta_bar(delta_g, plan.delta, plan.mult)
    if db < 0:
        forced = float(total_delta_up(0.0, log_survival(plan.delta, plan.mult)))
        return Composition("optimal", math.inf, delta_g, detail="infeasible",
                           reason=infeasible_reason(delta_g, forced))
    eps_u, mult_u = grouped(plan)
    bracket = optimal_bracket(eps_u, mult_u, db, eta, cancel=cancel, progress=progress)
    return Composition("optimal", float(bracket.upper), delta_g, epsilon_lower=float(bracket.lower),
                       detail=bracket.method, extra={"delta_bar": db, "eta": eta})


def _compose_one(name: str, plan: Plan, delta_g: float, eta: float, cancel, progress,
                 cache: dict) -> Composition:
    if name == "optimal":  # needs no running sums (exact decimal sums cost ~2 us a query)
        if "optimal" not in cache:
            cache["optimal"] = optimal(plan, delta_g, eta, cancel, progress)
        return cache["optimal"]
    if "sums" not in cache:
        cache["sums"] = plan_sums(plan)
    s = cache["sums"]
    if name == "basic":
        return basic(s, delta_g)
    if name == "advanced":
        return advanced(s, delta_g)
    if name == "kov":
        return kov(plan, delta_g)
    if name == "filter":
        return filter_composition(s, delta_g)
    if name in ("optimal", "concurrent"):
        if "optimal" not in cache:
            cache["optimal"] = optimal(plan, delta_g, eta, cancel, progress)
        if name == "optimal":
            return cache["optimal"]
        return concurrent(plan, delta_g, float(s.sum_eps[0]), cache["optimal"])
    raise AssertionError(name)  # validate_theorem rejected anything else


def _timed(name, plan, delta_g, eta, cancel, progress, cache) -> Composition:
    start = time.perf_counter()
    result = _compose_one(name, plan, delta_g, eta, cancel, progress, cache)
    return replace(result, seconds=time.perf_counter() - start)


def compose(epsilons, deltas, delta_g, theorem: str = "optimal", eta: float = 1e-3, multiplicities=None,
            *, cancel: Optional[CancelToken] = None, progress: Optional[ProgressCallback] = None
            ) -> Composition:
    """Total epsilon of the plan under one theorem (a sound upper bound; inf if delta_g is infeasible).

    Raises ValueError on bad input and NotApplicable (a ValueError) for kov on unequal queries.
    """
    plan = validate_plan(epsilons, deltas, multiplicities)
    delta_g = validate_delta_g(delta_g)
    eta = validate_eta(eta)
    theorem = validate_theorem(theorem)
    return _timed(theorem, plan, delta_g, eta, cancel, progress, {})


def compose_all(epsilons, deltas, delta_g, eta: float = 1e-3, multiplicities=None, *, theorems=THEOREMS,
                cancel: Optional[CancelToken] = None, progress: Optional[ProgressCallback] = None
                ) -> dict[str, Composition]:
    """Every requested theorem at once; a theorem that does not apply comes back applicable=False."""
    plan = validate_plan(epsilons, deltas, multiplicities)
    delta_g = validate_delta_g(delta_g)
    eta = validate_eta(eta)
    names = validate_theorems(theorems)
    cache: dict = {}
    results: dict[str, Composition] = {}
    for j, name in enumerate(names):
        if cancel is not None:
            cancel.check()
        sub = None
        if progress is not None:
            def sub(f, j=j):
                progress((j + min(max(f, 0.0), 1.0)) / len(names))
        start = time.perf_counter()
        try:
            results[name] = _timed(name, plan, delta_g, eta, cancel, sub, cache)
        except NotApplicable as exc:
            results[name] = Composition(name, math.nan, delta_g, applicable=False, reason=str(exc),
                                        seconds=time.perf_counter() - start)
        if progress is not None:
            progress((j + 1) / len(names))
    return results


def best(results: dict[str, Composition]) -> str:
    """Name of the theorem with the smallest valid upper bound (ties: the earlier in THEOREMS)."""
    usable = [(r.epsilon, THEOREMS.index(n) if n in THEOREMS else len(THEOREMS), n)
              for n, r in results.items() if r.applicable and not math.isnan(r.epsilon)]
    if not usable:
        raise ValueError("no applicable result to choose from; every theorem was not applicable")
    return min(usable)[2]
