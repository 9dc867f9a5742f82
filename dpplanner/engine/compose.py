"""compose / compose_all / best: one entry point per question, every theorem behind it."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Optional

from .errors import NotApplicable
from .theorem_inputs import ComposeInputs
from .theorems import OPTIMAL, THEOREMS, theorem as registry_entry, validate_theorems
from .types import CancelToken, Composition, ProgressCallback
from .validation import validate_delta_g, validate_eta, validate_plan, validate_time_limit


def compose_one(name: str, inputs: ComposeInputs) -> Composition:
    """One registered theorem on already-validated inputs, timed."""
    start = time.perf_counter()
    result = registry_entry(name).compose(inputs)
    return replace(result, seconds=time.perf_counter() - start)


def compose(epsilons, deltas, delta_g, theorem: str = OPTIMAL, eta: float = 1e-3, multiplicities=None,
            *, mechanisms=None, cancel: Optional[CancelToken] = None,
            progress: Optional[ProgressCallback] = None, time_limit: Optional[float] = None) -> Composition:
    """Total epsilon of the plan under one theorem (a sound upper bound; inf if delta_g is infeasible).

    ``mechanisms`` (optional, one of engine.MECHANISMS per row) says what each release is; only the
    noise-aware theorems use it. ``time_limit`` (seconds, optional): the optimal engine (optimal,
    concurrent) stops refining there and returns the certified bracket it has, its ``detail`` saying
    so; without it the result depends only on the arguments, never on the machine's speed. Raises
    ValueError on bad input and NotApplicable (a ValueError) for kov on unequal queries.
    """
    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    inputs = ComposeInputs(plan, validate_delta_g(delta_g), validate_eta(eta), cancel, progress,
                           validate_time_limit(time_limit))
    return compose_one(registry_entry(theorem).name, inputs)


def compose_all(epsilons, deltas, delta_g, eta: float = 1e-3, multiplicities=None, *, theorems=THEOREMS,
                mechanisms=None, cancel: Optional[CancelToken] = None,
                progress: Optional[ProgressCallback] = None, time_limit: Optional[float] = None
                ) -> dict[str, Composition]:
    """Every requested theorem at once; a theorem that does not apply comes back applicable=False.
    ``time_limit``: as for ``compose``, for the optimal engine's one computation (shared by optimal
    and concurrent)."""
    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    inputs = ComposeInputs(plan, validate_delta_g(delta_g), validate_eta(eta), cancel,
                           time_limit=validate_time_limit(time_limit))
    names = validate_theorems(theorems)
    results: dict[str, Composition] = {}
    for j, name in enumerate(names):
        if cancel is not None:
            cancel.check()
        if progress is not None:
            inputs.progress = lambda f, j=j: progress((j + min(max(f, 0.0), 1.0)) / len(names))
        start = time.perf_counter()
        try:
            results[name] = compose_one(name, inputs)
        except NotApplicable as exc:
            results[name] = Composition(name, math.nan, inputs.delta_g, applicable=False, reason=str(exc),
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
