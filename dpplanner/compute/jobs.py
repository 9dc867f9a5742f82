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
from dpplanner.model.curve_totals import meet_totals
from dpplanner.model.engine_inputs import composition_inputs, with_epsilons
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


#: With a helper process, the registry says where each theorem's total is computed
#: (Theorem.evaluated): after an allocation under a theorem that remembers its total (pld), the
#: "either" rows are computed here too. The optimal prefix curve (which concurrent's shares and
#: pld's is never above) goes to whichever process gets to it first: the helper after its totals,
#: or this process once pld's own read-outs are done. On the 100-query example the helper's
#: totals are quick and it takes the curve (~20 ms each side); on the 1000-query one its optimal
#: total alone is ~55 ms and this process takes the curve after pld's (~45 ms) instead of waiting
#: for the helper's total and curve one after the other (~85 ms).


@in_engine_process
def evaluate(request: EvaluateRequest, cancel: CancelToken, progress: Progress, *,
             total_known: bool = False) -> EvaluateResult:
    """Totals under every theorem and the cost-vs-k curve of one plan (what an edit must update).

    In the engine process on a machine with two cores or more, a helper process computes about
    half the totals (see _halves; ``total_known``: an allocation has just left the plan's total
    in memory) beside the others, and the optimal curve if it gets to it first (see above). The
    numbers are the same as computing everything here."""
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


def _evaluate(request: EvaluateRequest, cancel: CancelToken, progress: Progress) -> EvaluateResult:
    totals = _totals(request, cancel, _part(progress, 0.0, 0.3))
    curve, problems = _curve(request, request.theorems, cancel, _part(progress, 0.3, 1.0))
    progress(1.0)
    return EvaluateResult(request.request_id, request, totals, _best(totals),
                          meet_totals(curve, totals, request.plan_curve_k), problems)


def _totals(request: EvaluateRequest, cancel: CancelToken, progress: Progress) -> dict[str, Composition]:
    return engine.compose_all(
        list(request.epsilons), list(request.deltas), request.delta_g, eta=request.eta,
        multiplicities=list(request.multiplicities), mechanisms=_mechanisms(request),
        theorems=request.theorems, cancel=cancel, progress=progress)


def _mechanisms(request: EvaluateRequest) -> list:
    return list(request.mechanisms) or ["eps-delta"] * len(request.epsilons)


def _curve(request: EvaluateRequest, theorems: tuple, cancel: CancelToken, progress: Progress,
           optimal_curve=None) -> tuple[Any, dict[str, str]]:
    """(the upper curve of ``theorems``, or None and the problem that stopped it)."""
    eps, dels, mech = list(request.epsilons), list(request.deltas), _mechanisms(request)
    try:
        if request.curve_mode == "repeat":
            i = request.repeat_index
            k_max = request.curve_k_max or max(request.k, 1)
            curve = engine.curve(
                [eps[i]], [dels[i]], request.delta_g, mode="repeat", k_max=k_max, mechanisms=[mech[i]],
                points=request.curve_points, theorems=theorems, lower=False, cancel=cancel,
                progress=progress)
        else:
            curve = engine.curve(
                eps, dels, request.delta_g, mode="prefix", k_max=request.curve_k_max,
                points=request.curve_points, theorems=theorems, multiplicities=list(request.multiplicities),
                mechanisms=mech, lower=False, cancel=cancel, progress=progress,
                optimal_curve=optimal_curve)
    except engine.Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - the totals are still worth showing
        return None, {"curve": _describe(exc)}
    return curve, {}


@dataclass(frozen=True)
class _Half:
    """What the helper sends back: its theorems' totals and, if it took it, the optimal curve's
    (upper, lower) arrays (None: left to the sender, or it failed there)."""

    totals: dict[str, Composition]
    optimal_curve: Optional[tuple] = None


def _helper_half(request: EvaluateRequest, cancel: CancelToken, progress: Progress) -> _Half:
    """The helper's part of an evaluation: the totals of ``request.theorems``, then the optimal
    prefix curve unless the sender has taken it meanwhile (engine_process.take_part). (A repeated
    query's optimal curve is the exact homogeneous roots kov's curve computes there anyway.)"""
    totals = _totals(request, cancel, progress)
    if request.curve_mode != "prefix" or OPTIMAL not in request.theorems or not engine_process.take_part():
        return _Half(totals)
    curve, _problem = _curve(request, (OPTIMAL,), cancel, _ignore)
    if curve is None:
        return _Half(totals)        # (the sender computes it, and says what went wrong)
    up, lo = curve.upper[OPTIMAL], curve.lower[OPTIMAL]
    return _Half(totals, (up, np.zeros_like(up) if lo is None else lo))


def _evaluate_beside(side, request: EvaluateRequest, here: tuple, there: tuple, cancel: CancelToken,
                     progress: Progress) -> EvaluateResult:
    """The totals of ``there`` in the helper process, those of ``here`` and the curve in this one;
    the optimal curve in whichever gets to it first. If the helper is taken meanwhile or fails,
    its part is computed here after all. Its job is collected when the curve needs optimal's, or
    at the end."""
    token = cancel if cancel is not None else CancelToken()
    sent = _hand_over(side, _helper_half, replace(request, theorems=there), token)
    if sent is None:
        return _evaluate(request, cancel, progress)
    collect, job = sent

    def optimal_curve():
        if side.take_part(job):
            return None     # the helper has not started it: computed here
        theirs = collect()
        return None if theirs is _FAILED else theirs.optimal_curve

    try:
        mine = _totals(replace(request, theorems=here), cancel, _part(progress, 0.0, 0.3))
        # the helper's theorems' curves last: by then the helper may have the optimal one
        curve, problems = _curve(request, here + there, cancel, _part(progress, 0.3, 1.0), optimal_curve)
    except BaseException:
        try:
            collect()       # ends the claim (a cancellation reaches the helper through the token)
        except BaseException:  # noqa: BLE001 - the first failure is the one raised
            pass
        raise
    theirs = collect()
    theirs = (_totals(replace(request, theorems=there), cancel, _ignore) if theirs is _FAILED
              else theirs.totals)
    totals = {n: (mine if n in mine else theirs)[n] for n in request.theorems}
    if curve is not None:   # (in the request's order)
        curve = engine.Curve(ks=curve.ks, upper={n: curve.upper[n] for n in request.theorems},
                             lower={n: curve.lower[n] for n in request.theorems},
                             notes={n: curve.notes[n] for n in request.theorems if n in curve.notes})
    progress(1.0)
    return EvaluateResult(request.request_id, request, totals, _best(totals),
                          meet_totals(curve, totals, request.plan_curve_k), problems)


#: What a collected helper job gives when the helper failed (its part is then computed here).
_FAILED = object()


def _hand_over(side, fn, request, token: CancelToken) -> Optional[tuple[Callable[[], Any], int]]:
    """Send ``fn(request)`` to the helper ``side`` if it is idle now (claimed without waiting) and
    return a callable that collects its value once and ends the claim (the value, or _FAILED if
    the helper failed; a cancellation is raised), with the job's id. None if the helper is taken
    or the job could not be sent (a dead pipe, a request that would not pickle). The job is sent
    from this thread before it computes its own part: a sending thread first needed the
    interpreter lock from the computing one, up to the 5 ms switch interval of the helper's head
    start. A cancelled token raises Cancelled here: nothing is sent."""
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

    return collect, job


def _ignore(_fraction: float) -> None:
    pass


def _in_helper(fn, args: tuple, cancel):
    """engine.offload's runner: ``fn(*args, cancel)`` in the engine process's helper when it is
    idle (e.g. a bracket's lower twin while an allocation composes the upper one here), else None.
    If the helper fails, the value is computed here."""
    side = engine_process.helper(start=False)
    sent = None if side is None else _hand_over(side, _apply, (fn, args),
                                                 cancel if cancel is not None else CancelToken())
    if sent is None:
        return None
    collect = sent[0]

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
    """The redistributed state as its epsilons, every statistic's in order (only the free ones
    changed): not the statistics themselves, which crossed the pipe in both directions (at 1000,
    ~1 ms to pickle here and ~2.5 ms to unpickle in the window, on the way to the plot)."""

    request_id: int
    request: AllocateRequest
    epsilons: Optional[tuple[float, ...]]           # None: refused
    evaluation: Optional[EvaluateResult]            # of ``statistics`` under the request's view
    refusal: Optional[str] = None                   # why not (pins that leave nothing, ...)
    held_indices: tuple[int, ...] = ()              # the pins to release, when that is why
    unspent_reason: Optional[str] = None            # why budget may be left unspent (the engine's words)

    @property
    def statistics(self) -> Optional[tuple[Statistic, ...]]:
        """The request's statistics with the redistributed epsilons (None: refused)."""
        if self.epsilons is None:
            return None
        stats = self.request.statistics
        return with_epsilons(stats, self.epsilons, [not s.held for s in stats])


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
    return AllocateResult(request.request_id, request, tuple(s.epsilon for s in done.statistics), evaluation,
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
