"""What the window computes: immutable requests (built by the model) in, immutable results out.

Plain top-level functions over the engine and the model (no Qt here), so the compute controller
can run them on its worker thread or in the engine process, and tests can swap in a fake. Each
has the controller's signature ``fn(request, cancel, progress) -> result``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, NamedTuple, Optional

from dpplanner import engine
from dpplanner.compute import answered, early, engine_process, helper_process, split
from dpplanner.compute.ahead import Ahead
from dpplanner.compute.handover import FAILED, hand_over
from dpplanner.compute.prepared import Prepared
from dpplanner.compute.engine_process import in_engine_process
from dpplanner.engine.theorems import OPTIMAL
from dpplanner.engine.types import CancelToken, Composition
from dpplanner.model.curve_totals import meet_totals
from dpplanner.model.engine_inputs import composition_inputs, with_epsilons
from dpplanner.model.redistribution import rebalanced
from dpplanner.model.requests import CurveView, EvaluateRequest, evaluation_request
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


class _Sent(NamedTuple):
    """The helper's half of an evaluation, sent (handover.hand_over), and the request's inputs
    built here to be sent with it (this process's own parts compose from them too)."""

    side: Any
    collect: Callable[[], Any]
    job: int
    prepared: Prepared


@in_engine_process
def evaluate(request: EvaluateRequest, cancel: CancelToken, progress: Progress, *,
             total_known: bool = False, sent: Optional[_Sent] = None) -> EvaluateResult:
    """Totals under every theorem and the cost-vs-k curve of one plan (what an edit must update).

    In the engine process on a machine with two cores or more, a helper process computes about
    half the totals (see split.py; ``total_known``: an allocation has just left the plan's total
    in memory) beside the others, and the optimal curve if it gets to it first (see above). The
    numbers are the same as computing everything here. ``sent``: that half of this very request
    (and ``total_known``), sent already (``_sent_half``)."""
    _not_cancelled(cancel)
    sent = sent or _sent_half(request, total_known, cancel)
    if sent is None:
        result = _evaluate(request, cancel, progress)
    else:
        result = _evaluate_beside(sent.side, request, *split.halves(request.theorems, total_known), cancel,
                                  progress, sent)
    helper_process.helper()     # started after a first result, so start-up never waits for it
    return result


def _sent_half(request: EvaluateRequest, total_known: bool, cancel: Optional[CancelToken]) -> Optional[_Sent]:
    """The helper's half of evaluating ``request``, sent if the helper is up and idle, else None."""
    here, there = split.halves(request.theorems, total_known)
    side = helper_process.helper(start=False) if here and there else None
    return None if side is None else _send_half(side, request, here, there, cancel)


def _send_half(side, request: EvaluateRequest, here: tuple, there: tuple,
               cancel: Optional[CancelToken]) -> Optional[_Sent]:
    """The helper's half of evaluating ``request`` (the totals of ``there``, and the spare totals
    and parts of the curve it gets to first), sent to ``side`` if it is idle (else None: computed
    here). A cancelled token raises Cancelled: nothing is sent."""
    job = _HelperJob(replace(request, theorems=there), split.either(request),
                     split.spare(request, here, there))
    prepared = Prepared(request, cancel)
    sent = hand_over(side, _helper_half, job, cancel if cancel is not None else CancelToken(),
                     lambda job: replace(job, received=prepared.shipped()))
    return None if sent is None else _Sent(side, *sent, prepared)


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


def _evaluate(request: EvaluateRequest, cancel: CancelToken, progress: Progress) -> EvaluateResult:
    totals = _totals(request, cancel, _part(progress, 0.0, 0.3))
    curve, problems = _curve(request, request.theorems, cancel, _part(progress, 0.3, 1.0))
    progress(1.0)
    return EvaluateResult(request.request_id, request, totals, _best(totals),
                          meet_totals(curve, totals, request.plan_curve_k), problems)


def _totals(request: EvaluateRequest, cancel: CancelToken, progress: Progress,
            prepared: Optional[Prepared] = None) -> dict[str, Composition]:
    """The totals of ``request.theorems`` (from ``prepared``: its plan's inputs, shared by its parts)."""
    from dpplanner.engine.compose import compose_rows

    inputs = (prepared or Prepared(request, cancel)).compose_inputs()
    return compose_rows(inputs, request.theorems, cancel, progress)


def _curve(request: EvaluateRequest, theorems: tuple, cancel: CancelToken, progress: Progress,
           optimal_curve=None, prepared: Optional[Prepared] = None) -> tuple[Any, dict[str, str]]:
    """(the upper curve of ``theorems``, or None and the problem that stopped it); ``prepared``
    as for ``_totals`` (built with its ``optimal_curve``)."""
    from dpplanner.engine.curve import curve_rows

    try:
        inputs = (prepared or Prepared(request, cancel, optimal_curve)).curve_inputs()
        curve = curve_rows(inputs, theorems, cancel, progress)
    except engine.Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - the totals are still worth showing
        return None, {"curve": _describe(exc)}
    return curve, {}


@dataclass(frozen=True)
class _HelperJob:
    request: EvaluateRequest            # with the theorems whose totals the helper computes
    either: tuple[str, ...] = ()        # the rows whose curves it may take
    spare: tuple[str, ...] = ()         # the rows whose totals it may take
    received: tuple = (None, None)      # the request's inputs built by the sender (Prepared.shipped)


@dataclass(frozen=True)
class _Half:
    """What the helper sends back: its theorems' totals and the parts it took: the optimal curve's
    (upper, lower) arrays, the "either" rows' engine.Curve (None: left to the sender, or it failed
    there), the spare rows' totals (None: left to the sender)."""

    totals: dict[str, Composition]
    optimal_curve: Optional[tuple] = None
    either_curves: Any = None
    spare_totals: Optional[dict[str, Composition]] = None


def _helper_half(job: _HelperJob, cancel: CancelToken, progress: Progress) -> _Half:
    """The helper's part of an evaluation: the totals of its theorems, then each part the sender
    has not taken meanwhile: the optimal prefix curve, the spare rows' totals, the "either" rows'
    curves. (A repeated query's optimal curve is the exact homogeneous roots kov's curve computes
    there anyway: the sender keeps both.)"""
    request = job.request
    prepared = Prepared(request, cancel, received=job.received)
    totals = _totals(request, cancel, progress, prepared)
    optimal = either = spare = None
    if request.curve_mode == "prefix" and OPTIMAL in request.theorems and \
            engine_process.take_part(split.OPTIMAL_CURVE):
        curve, _problem = _curve(request, (OPTIMAL,), cancel, _ignore, prepared=prepared)
        if curve is not None:       # (else the sender computes it, and says what went wrong)
            import numpy as np      # here: the window imports this module before numpy is needed

            up, lo = curve.upper[OPTIMAL], curve.lower[OPTIMAL]
            optimal = (up, np.zeros_like(up) if lo is None else lo)
    if job.spare and engine_process.take_part(split.SPARE_TOTALS):
        spare = _totals(replace(request, theorems=job.spare), cancel, _ignore, prepared)
    if job.either and engine_process.take_part(split.EITHER_CURVES):
        either, _problem = _curve(request, job.either, cancel, _ignore, prepared=prepared)
    return _Half(totals, optimal, either, spare)


def _evaluate_beside(side, request: EvaluateRequest, here: tuple, there: tuple, cancel: CancelToken,
                     progress: Progress, sent: Optional[_Sent] = None) -> EvaluateResult:
    """The totals of ``there`` in the helper process ``side`` (its job ``sent``, or sent now),
    those of ``here`` and pld's and zcdp's curves in this one; the optimal curve, the "either"
    rows' curves and the spare rows' totals in whichever gets to them first. If the helper is taken
    meanwhile or fails, its part is computed here after all. Its job is collected when a curve
    needs a part it took, or at the end."""
    sent = sent or _send_half(side, request, here, there, cancel)
    if sent is None:
        return _evaluate(request, cancel, progress)
    collect, job = sent.collect, sent.job
    either, spare = split.either(request), split.spare(request, here, there)

    rows: list = []         # the "either" rows' (curve, problems), once computed here
    spared: list = []       # whether this process took the spare totals, once asked; then them
    prepared = sent.prepared
    prepared.take_optimal_curve(lambda: taken(split.OPTIMAL_CURVE, "optimal_curve"))

    def take_spare() -> None:
        if spare and not spared:
            spared.append(side.take_part(job, split.SPARE_TOTALS))
            if spared[0]:
                spared.append(_totals(replace(request, theorems=spare), cancel, _ignore, prepared))

    def taken(part: int, name: str):
        """None if this process takes the part (the helper has not started it), else the
        helper's value of it (None if it failed there: then computed here too). Before waiting
        for the optimal curve, this process computes the spare totals and the "either" rows'
        curves if they are still free."""
        if side.take_part(job, part):
            return None
        if part == split.OPTIMAL_CURVE:
            take_spare()
            if either and side.take_part(job, split.EITHER_CURVES):
                rows.append(_curve(request, either, cancel, _ignore, prepared=prepared))
        theirs = collect()
        return None if theirs is FAILED else getattr(theirs, name)

    try:
        mine = _totals(replace(request, theorems=here), cancel, _part(progress, 0.0, 0.3), prepared)
        own = split.curve_order(tuple(t for t in here + spare + there if t not in either), there)
        curve, problems = _curve(request, own, cancel, _part(progress, 0.3, 1.0), prepared=prepared)
        if either and curve is not None:
            rest = None if rows else taken(split.EITHER_CURVES, "either_curves")
            if rest is None:
                rest, problems = rows[0] if rows else \
                    _curve(request, either, cancel, _ignore, prepared=prepared)
            curve = None if rest is None else _joined((curve, rest), request.theorems)
        take_spare()
    except BaseException:
        try:
            collect()       # ends the claim (a cancellation reaches the helper through the token)
        except BaseException:  # noqa: BLE001 - the first failure is the one raised
            pass
        raise
    half = collect()
    theirs = _totals(replace(request, theorems=there), cancel, _ignore, prepared) if half is FAILED \
        else half.totals
    if spared[1:]:
        theirs = {**theirs, **spared[1]}
    elif spare:     # (the helper took them)
        theirs = {**theirs, **(_totals(replace(request, theorems=spare), cancel, _ignore, prepared)
                               if half is FAILED else half.spare_totals)}
    totals = {n: (mine if n in mine else theirs)[n] for n in request.theorems}
    if curve is not None:
        curve = _joined((curve,), request.theorems)     # (in the request's order)
    progress(1.0)
    return EvaluateResult(request.request_id, request, totals, _best(totals),
                          meet_totals(curve, totals, request.plan_curve_k), problems)


def _joined(curves: tuple, names: tuple):
    """One engine.Curve of the rows ``names``, in this order, from curves that hold them."""
    of = {n: c for c in curves for n in c.upper}
    return engine.Curve(ks=curves[0].ks, upper={n: of[n].upper[n] for n in names},
                        lower={n: of[n].lower[n] for n in names},
                        notes={n: of[n].notes[n] for n in names if n in of[n].notes})


@dataclass(frozen=True)
class AllocateRequest:
    """An edit that redistributes: the state the edit reached (not yet in the plan) and the view
    its evaluation is for. One job checks the pins, allocates and evaluates the result."""

    budget: Budget
    statistics: Optional[tuple[Statistic, ...]]     # None: not rebuilt in the engine process
    view: CurveView
    request_id: int = 0
    owner: int = 0                  # whose answers the engine process keeps (answered.py)
    base: Optional[answered.Answered] = field(default=None, compare=False, repr=False)

    def __reduce__(self):
        """For the pipe: the rows of ``base`` go as its id (answered.py)."""
        packed = answered.packed(self)
        if packed is None:
            return AllocateRequest, (self.budget, self.statistics, self.view, self.request_id, self.owner)
        return _unpacked_request, (self.budget, packed, self.view, self.request_id, self.owner)


def _unpacked_request(budget, packed, view, request_id, owner) -> AllocateRequest:
    return AllocateRequest(budget, answered.unpacked(*packed), view, request_id, owner)


@dataclass(frozen=True)
class AllocateResult:
    """The redistributed state as its epsilons, every statistic's in order (only the free ones
    changed): not the statistics themselves, which crossed the pipe in both directions (at 1000,
    ~1 ms to pickle here and ~2.5 ms to unpickle in the window, on the way to the plot)."""

    request_id: int
    request: AllocateRequest
    epsilons: Optional[tuple[float, ...]]           # None: refused
    evaluation: Optional[EvaluateResult]            # of ``statistics`` under the request's view
    #                                                 (None in the early answer: still computing)
    refusal: Optional[str] = None                   # why not (pins that leave nothing, ...)
    held_indices: tuple[int, ...] = ()              # the pins to release, when that is why
    unspent_reason: Optional[str] = None            # why budget may be left unspent (the engine's words)
    resend: bool = False        # the request's statistics were not rebuilt there: send them whole

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
    if request.statistics is None:
        return AllocateResult(request.request_id, request, None, None, resend=True)
    total_known = engine.theorem(request.budget.theorem).remembers_total
    ahead = Ahead(request.statistics,
                  lambda stats: evaluation_request(composition_inputs(request.budget, stats), request.view),
                  lambda built: _sent_half(built, total_known, cancel))
    # (without a helper process nothing could be sent ahead: the request is built after the shares)
    found = ahead.found if helper_process.helper(start=False) is not None else None
    try:
        try:
            done = rebalanced(request.budget, request.statistics, cancel=cancel,
                              progress=_part(progress, 0.0, 0.6), found=found)
        except PlanError as exc:        # an answer, not a failure: the edit is refused
            return AllocateResult(request.request_id, request, None, None, str(exc), exc.held_indices)
        answered.remember(request.owner, request.request_id, done.statistics)
        shares = AllocateResult(request.request_id, request, tuple(s.epsilon for s in done.statistics),
                                None, unspent_reason=done.unspent_reason)
        # The shares go first: the window adopts and draws them while their totals are composed here.
        early.give(shares)
        # The totals of the rebalanced state come back with it: the window needs no second trip.
        built = ahead.evaluation(done.statistics)
        evaluation = evaluate(built, cancel, _part(progress, 0.6, 1.0), total_known=total_known,
                              sent=ahead.sent)
    finally:
        ahead.drop()
    return replace(shares, evaluation=evaluation)


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


def _ignore(_fraction: float) -> None:
    pass


def _part(progress: Progress, start: float, stop: float) -> Progress:
    """Map a sub-computation's [0, 1] onto [start, stop] of the whole job."""
    return lambda fraction: progress(start + (stop - start) * min(max(fraction, 0.0), 1.0))
