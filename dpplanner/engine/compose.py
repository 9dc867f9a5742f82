"""compose / compose_all / best: one entry point per question, every theorem behind it."""

from __future__ import annotations

import math
import time
from dataclasses import replace
from typing import Optional

from .errors import NotApplicable
from .never_worse import best_cheap
from .optimal.deadline import OutOfTime, with_limit
from .theorem_inputs import ComposeInputs
from .theorems import OPTIMAL, THEOREMS, theorem as registry_entry, validate_theorems
from .types import CancelToken, Composition, ProgressCallback
from .validation import validate_delta_g, validate_eta, validate_plan, validate_time_limit


def compose_one(name: str, inputs: ComposeInputs) -> Composition:
    """One registered theorem on already-validated inputs, timed. A theorem stopped by the
    caller's time limit (``inputs.cancel`` a deadline) gives the cheaper theorems' bound."""
    start = time.perf_counter()
    try:
        result = registry_entry(name).compose(inputs)
    except OutOfTime:
        result = out_of_time(name, inputs)
    return replace(result, seconds=time.perf_counter() - start)


def out_of_time(name: str, inputs: ComposeInputs) -> Composition:
    """``name``'s total when the time limit stopped it before it had a bracket: the least of the
    cheaper theorems' bounds and of the optimal composition if it was computed already (each
    bounds the composition of any releases with these (eps_i, delta_i), so also this theorem's,
    noise-aware or not), marked and with the reason."""
    cheap, names = best_cheap(inputs.sums, inputs.delta_g)
    upper, source = float(cheap[0]), f"{names[0]} (a cheaper theorem)"
    known = inputs.known_optimal()
    if known is not None and known.epsilon < upper:
        upper, source = known.epsilon, f"the optimal composition ({known.detail})"
    reason = inputs.cancel.reason() if hasattr(inputs.cancel, "reason") else "stopped at the time limit"
    return Composition(name, upper, inputs.delta_g, detail=f"{reason}: upper bound from {source}",
                       extra={"time_limited": True})


def compose(epsilons, deltas, delta_g, theorem: str = OPTIMAL, eta: float = 1e-3, multiplicities=None,
            *, mechanisms=None, cancel: Optional[CancelToken] = None,
            progress: Optional[ProgressCallback] = None, time_limit: Optional[float] = None) -> Composition:
    """Total epsilon of the plan under one theorem (a sound upper bound; inf if delta_g is infeasible).

    ``mechanisms`` (optional, one of engine.MECHANISMS per row) says what each release is; only the
    noise-aware theorems use it. ``time_limit`` (seconds, optional): the optimal engine (optimal,
    concurrent) stops refining there and returns the certified bracket it has, its ``detail`` saying
    so; any other theorem still working then returns the least of the cheaper theorems' bounds
    (``extra["time_limited"]``, its ``detail`` saying so); without it the result depends only on
    the arguments, never on the machine's speed. Raises
    ValueError on bad input and NotApplicable (a ValueError) for kov on unequal queries.
    """
    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    inputs = ComposeInputs(plan, validate_delta_g(delta_g), validate_eta(eta),
                           with_limit(cancel, validate_time_limit(time_limit)), progress)
    return compose_one(registry_entry(theorem).name, inputs)


def compose_all(epsilons, deltas, delta_g, eta: float = 1e-3, multiplicities=None, *, theorems=THEOREMS,
                mechanisms=None, cancel: Optional[CancelToken] = None,
                progress: Optional[ProgressCallback] = None, time_limit: Optional[float] = None
                ) -> dict[str, Composition]:
    """Every requested theorem at once; a theorem that does not apply comes back applicable=False.
    ``time_limit``: as for ``compose``, one limit for the whole call (the optimal engine's one
    computation is shared by optimal and concurrent)."""
    inputs = compose_inputs(epsilons, deltas, delta_g, eta, multiplicities, mechanisms=mechanisms,
                            cancel=cancel, time_limit=time_limit)
    return compose_rows(inputs, theorems, cancel, progress)


def compose_inputs(epsilons, deltas, delta_g, eta: float = 1e-3, multiplicities=None, *, mechanisms=None,
                   cancel: Optional[CancelToken] = None, time_limit: Optional[float] = None) -> ComposeInputs:
    """``compose_all``'s validated inputs, for a caller that asks for the theorems in parts
    (``compose_rows``): the work they share (sums, the optimal composition) is done once."""
    plan = validate_plan(epsilons, deltas, multiplicities, mechanisms)
    return ComposeInputs(plan, validate_delta_g(delta_g), validate_eta(eta),
                         with_limit(cancel, validate_time_limit(time_limit)))


def compose_rows(inputs: ComposeInputs, theorems=THEOREMS, cancel: Optional[CancelToken] = None,
                 progress: Optional[ProgressCallback] = None) -> dict[str, Composition]:
    """``compose_all`` of ``theorems`` on ``compose_inputs``."""
    names = validate_theorems(theorems)
    results: dict[str, Composition] = {}
    for j, name in enumerate(names):
        if cancel is not None:
            cancel.check()
        inputs.progress = None if progress is None else \
            (lambda f, j=j: progress((j + min(max(f, 0.0), 1.0)) / len(names)))
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
