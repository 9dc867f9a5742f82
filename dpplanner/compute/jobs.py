"""What the window computes: immutable requests (built by the model) in, immutable results out.

Plain top-level functions over the engine and the model (no Qt here), so the compute controller
can run them on its worker thread or in the engine process, and tests can swap in a fake. Each
has the controller's signature ``fn(request, cancel, progress) -> result``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import numpy as np

from dpplanner import engine
from dpplanner.engine import offload
from dpplanner.compute import engine_process
from dpplanner.compute.engine_process import in_engine_process
from dpplanner.engine.theorems import OPTIMAL
from dpplanner.engine.types import CancelToken, Composition
from dpplanner.model.engine_inputs import composition_inputs
from dpplanner.model.redistribution import rebalanced
from dpplanner.model.requests import CurveView, EvaluateRequest, ProfileRequest, evaluation_request
from dpplanner.model.statistic import Budget, Statistic
from dpplanner.model.validation import PlanError

Progress = Callable[[float], None]


@dataclass(frozen=True)
class EvaluateResult:
    request_id: int
    request: EvaluateRequest
    totals: dict[str, Composition]
    best: Optional[str]
    curve: Any = None                     # engine.Curve, upper bounds only (the plot); None: failed
    problems: dict[str, str] = field(default_factory=dict)   # part -> message (the curve)


#: With a helper process, the registry says where each theorem is computed (Theorem.evaluated):
#: about half the work each on the 100-query example. After an allocation under a theorem that
#: remembers its total (pld), the "either" rows are computed here too: ~27 ms (pld's curve ~18)
#: against the helper's ~28 (optimal's total and curve, which concurrent shares; CPU, median of
#: the bench's 20 edits, 2026-11-27).


@in_engine_process
def evaluate(request: EvaluateRequest, cancel: CancelToken, progress: Progress, *,
             total_known: bool = False) -> EvaluateResult:
    """Totals under every theorem and the cost-vs-k curve of one plan (what an edit must update).

    In the engine process on a machine with two cores or more, a helper process computes about
    half the theorems (see _halves; ``total_known``: an allocation has just left the plan's total
    in memory) beside the others; pld's curve, never above the generic optimal one, takes that one from
    the helper. The numbers are the same as computing everything here."""
    _not_cancelled(cancel)
    here, there = _halves(request.theorems, total_known)
    side = engine_process.helper(start=False) if here and there else None
    if side is None:
        result = _evaluate(request, cancel, progress)
    else:
        result = _evaluate_beside(side, request, here, there, cancel, progress)
    engine_process.helper()     # started after a first result, so start-up never waits for it
    return result


@dataclass(frozen=True)
class PlanEvaluation:
    """A plan state and the view to evaluate it for: the EvaluateRequest is built where the job
    runs, not by the caller (for a plan of 800 statistics with OpenDP noise building it takes ~50 ms
    of CPU, which the window's GUI thread must not spend while a plan opens). ``evaluate`` is what
    the built request is given to (``evaluate`` above, or a test's fake)."""

    budget: Budget
    statistics: tuple[Statistic, ...]
    view: CurveView
    evaluate: Callable = evaluate
    request_id: int = 0


def evaluate_plan_here(request: PlanEvaluation, cancel: CancelToken, progress: Progress):
    """``request.evaluate`` of the plan's EvaluateRequest, in this process."""
    _not_cancelled(cancel)
    built = evaluation_request(composition_inputs(request.budget, request.statistics), request.view)
    return request.evaluate(built, cancel, progress)


@in_engine_process
def evaluate_plan(request: PlanEvaluation, cancel: CancelToken, progress: Progress):
    """``evaluate_plan_here`` in the engine process (for an ``evaluate`` that may run there)."""
    return evaluate_plan_here(request, cancel, progress)


def _halves(theorems: tuple, total_known: bool = False) -> tuple[tuple, tuple]:
    """(computed here, computed in the helper), each in the request's order."""
    mine = ("here", "either") if total_known else ("here",)
    here = tuple(t for t in theorems if engine.theorem(t).evaluated in mine)
    return here, tuple(t for t in theorems if t not in here)


def _evaluate(request: EvaluateRequest, cancel: CancelToken, progress: Progress,
              optimal_curve=None) -> EvaluateResult:
    eps, dels, mult = list(request.epsilons), list(request.deltas), list(request.multiplicities)
    mech = list(request.mechanisms) or ["eps-delta"] * len(eps)
    totals = engine.compose_all(
        eps, dels, request.delta_g, eta=request.eta, multiplicities=mult, mechanisms=mech,
        theorems=request.theorems, cancel=cancel, progress=_part(progress, 0.0, 0.3))
    best = _best(totals)
    problems: dict[str, str] = {}

    curve = None
    try:
        if request.curve_mode == "repeat":
            i = request.repeat_index
            k_max = request.curve_k_max or max(request.k, 1)
            curve = engine.curve(
                [eps[i]], [dels[i]], request.delta_g, mode="repeat", k_max=k_max, mechanisms=[mech[i]],
                points=request.curve_points, theorems=request.theorems, lower=False, cancel=cancel,
                progress=_part(progress, 0.3, 1.0))
        else:
            curve = engine.curve(
                eps, dels, request.delta_g, mode="prefix", k_max=request.curve_k_max,
                points=request.curve_points, theorems=request.theorems, multiplicities=mult,
                mechanisms=mech, lower=False, cancel=cancel, progress=_part(progress, 0.3, 1.0),
                optimal_curve=optimal_curve)
    except engine.Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - the totals are still worth showing
        problems["curve"] = _describe(exc)

    progress(1.0)
    return EvaluateResult(request.request_id, request, totals, best, curve, problems)


def _evaluate_beside(side, request: EvaluateRequest, here: tuple, there: tuple, cancel: CancelToken,
                     progress: Progress) -> EvaluateResult:
    """``there`` in the helper process, ``here`` in this one; if the helper is taken meanwhile or
    fails, its part is computed here after all. Its job is collected when pld's curve needs
    optimal's, or at the end."""
    token = cancel if cancel is not None else CancelToken()
    collect = _hand_over(side, _evaluate, replace(request, theorems=there), token)
    if collect is None:
        return _evaluate(request, cancel, progress)

    def optimal_curve():
        theirs = collect()
        if theirs is _FAILED or theirs.curve is None or OPTIMAL not in theirs.curve.upper:
            return None     # computed here instead
        up, lo = theirs.curve.upper[OPTIMAL], theirs.curve.lower[OPTIMAL]
        return up, (np.zeros_like(up) if lo is None else lo)

    try:
        mine = _evaluate(replace(request, theorems=here), cancel, progress, optimal_curve)
    except BaseException:
        try:
            collect()       # ends the claim (a cancellation reaches the helper through the token)
        except BaseException:  # noqa: BLE001 - the first failure is the one raised
            pass
        raise
    theirs = collect()
    if theirs is _FAILED:
        theirs = _evaluate(replace(request, theorems=there), cancel, _ignore)
    return _merged(request, mine, theirs)


#: What a collected helper job gives when the helper failed (its part is then computed here).
_FAILED = object()


def _hand_over(side, fn, request, token: CancelToken) -> Optional[Callable[[], Any]]:
    """Send ``fn(request)`` to the helper ``side`` if it is idle now (claimed without waiting) and
    return a callable that collects its value once and ends the claim: the value, or _FAILED if
    the helper failed; a cancellation is raised. None if the helper is taken or the job could not
    be sent (a dead pipe, a request that would not pickle). The job is sent from this thread
    before it computes its own part: a sending thread first needed the interpreter lock from the
    computing one, up to the 5 ms switch interval of the helper's head start. A cancelled token
    raises Cancelled here: nothing is sent."""
    token.check()
    if not side.claim():
        return None
    try:
        job = side.start_claimed(fn, request)
    except Exception:  # noqa: BLE001 - not sent: computed here instead
        return None
    box: dict[str, Any] = {}

    def collect() -> Any:
        if "value" not in box:
            try:
                box["value"] = side.finish_claimed(job, token, _ignore)
            except engine.Cancelled:
                box["value"] = engine.Cancelled
            except Exception:  # noqa: BLE001 - the helper failed
                box["value"] = _FAILED
        if box["value"] is engine.Cancelled:
            raise engine.Cancelled("computation cancelled")
        return box["value"]

    return collect


def _merged(request: EvaluateRequest, mine: EvaluateResult, theirs: EvaluateResult) -> EvaluateResult:
    parts = (mine, theirs)
    totals = {n: (mine.totals if n in mine.totals else theirs.totals)[n] for n in request.theorems}
    problems = {**theirs.problems, **mine.problems}
    curve = None
    if mine.curve is not None and theirs.curve is not None:
        def pick(side: str) -> dict:
            return {n: next(getattr(p.curve, side)[n] for p in parts if n in getattr(p.curve, side))
                    for n in request.theorems}

        notes = {n: p.curve.notes[n] for p in parts for n in request.theorems if n in p.curve.notes}
        curve = engine.Curve(ks=mine.curve.ks, upper=pick("upper"), lower=pick("lower"), notes=notes)
    return EvaluateResult(request.request_id, request, totals, _best(totals), curve, problems)


def _ignore(_fraction: float) -> None:
    pass


def _in_helper(fn, args: tuple, cancel):
    """engine.offload's runner: ``fn(*args, cancel)`` in the engine process's helper when it is
    idle (e.g. a bracket's lower twin while an allocation composes the upper one here), else None.
    If the helper fails, the value is computed here."""
    side = engine_process.helper(start=False)
    collect = None if side is None else _hand_over(side, _apply, (fn, args),
                                                    cancel if cancel is not None else CancelToken())
    if collect is None:
        return None

    def wait():
        value = collect()
        return fn(*args, cancel) if value is _FAILED else value

    return wait


def _apply(request: tuple, cancel: CancelToken, progress: Progress):
    fn, args = request
    return fn(*args, cancel)


offload.set_runner(_in_helper)


@dataclass(frozen=True)
class ProfileResult:
    request_id: int
    request: ProfileRequest
    profile: Any                          # engine.Profile


@in_engine_process
def profile(request: ProfileRequest, cancel: CancelToken, progress: Progress) -> ProfileResult:
    _not_cancelled(cancel)
    result = engine.privacy_profile(
        list(request.epsilons), list(request.deltas), eta=request.eta,
        multiplicities=list(request.multiplicities), num=request.points,
        mechanisms=list(request.mechanisms) or None, cancel=cancel, progress=progress)
    return ProfileResult(request.request_id, request, result)


@dataclass(frozen=True)
class AllocateRequest:
    """An edit that redistributes: the state the edit reached (not yet in the plan) and the view
    its evaluation is for. One job checks the pins, allocates and evaluates the result."""

    budget: Budget
    statistics: tuple[Statistic, ...]
    view: CurveView
    request_id: int = 0


@dataclass(frozen=True)
class AllocateResult:
    request_id: int
    request: AllocateRequest
    statistics: Optional[tuple[Statistic, ...]]     # None: refused
    evaluation: Optional[EvaluateResult]            # of ``statistics`` under the request's view
    refusal: Optional[str] = None                   # why not (pins that leave nothing, ...)
    held_indices: tuple[int, ...] = ()              # the pins to release, when that is why
    unspent_reason: Optional[str] = None            # why budget may be left unspent (the engine's words)


@in_engine_process
def allocate(request: AllocateRequest, cancel: CancelToken, progress: Progress) -> AllocateResult:
    _not_cancelled(cancel)
    try:
        done = rebalanced(request.budget, request.statistics, cancel=cancel,
                          progress=_part(progress, 0.0, 0.6))
    except PlanError as exc:        # an answer, not a failure: the edit is refused
        return AllocateResult(request.request_id, request, None, None, str(exc), exc.held_indices)
    # The totals of the rebalanced state come back with it: the window needs no second trip.
    evaluation = evaluate(evaluation_request(composition_inputs(request.budget, done.statistics),
                                             request.view),
                          cancel, _part(progress, 0.6, 1.0),
                          total_known=engine.theorem(request.budget.theorem).remembers_total)
    return AllocateResult(request.request_id, request, done.statistics, evaluation,
                          unspent_reason=done.unspent_reason)


def _not_cancelled(cancel: Optional[CancelToken]) -> None:
    """A job whose token is cancelled before it starts does no work (a remembered result would
    otherwise come back at once, as if nobody had cancelled it)."""
    if cancel is not None:
        cancel.check()


def _describe(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, ValueError) else f"{type(exc).__name__}: {text}"


def _best(totals: dict[str, Composition]) -> Optional[str]:
    try:
        return engine.best(totals)
    except ValueError:
        return None             # nothing feasible: no row gets the star


def _part(progress: Progress, start: float, stop: float) -> Progress:
    """Map a sub-computation's [0, 1] onto [start, stop] of the whole job."""
    return lambda fraction: progress(start + (stop - start) * min(max(fraction, 0.0), 1.0))
