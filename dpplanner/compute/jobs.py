"""What the worker thread computes: immutable requests in, immutable results out.

Plain top-level functions over the engine (no Qt here), so the compute controller can run them on
its thread and tests can swap in a fake. Each function has the controller's signature
``fn(request, cancel, progress) -> result``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from dpplanner import engine
from dpplanner.engine.types import CancelToken, Composition
from dpplanner.compute.engine_process import in_engine_process

Progress = Callable[[float], None]


@dataclass(frozen=True)
class EvaluateRequest:
    """Everything the results panel and the plots need, snapshotted from the plan."""

    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    multiplicities: tuple[int, ...]
    delta_g: float
    eta: float
    curve_mode: str = "prefix"            # "prefix" or "repeat"
    curve_k_max: Optional[int] = None     # None: the plan's own k (prefix) / k (repeat)
    curve_points: int = 100
    repeat_index: int = 0                 # which query "repeat" mode repeats
    theorems: tuple[str, ...] = engine.THEOREMS
    request_id: int = 0
    mechanisms: tuple[str, ...] = ()      # what each release is (engine.MECHANISMS); () = generic

    @property
    def k(self) -> int:
        return int(sum(self.multiplicities))


@dataclass(frozen=True)
class EvaluateResult:
    request_id: int
    request: EvaluateRequest
    totals: dict[str, Composition]
    best: Optional[str]
    curve: Any = None                     # engine.Curve or None when it failed
    problems: dict[str, str] = field(default_factory=dict)   # part -> message (the curve)


@in_engine_process
def evaluate(request: EvaluateRequest, cancel: CancelToken, progress: Progress) -> EvaluateResult:
    """Totals under every theorem and the cost-vs-k curve of one plan (what an edit must update)."""
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
                points=request.curve_points, theorems=request.theorems, cancel=cancel,
                progress=_part(progress, 0.3, 1.0))
        else:
            curve = engine.curve(
                eps, dels, request.delta_g, mode="prefix", k_max=request.curve_k_max,
                points=request.curve_points, theorems=request.theorems, multiplicities=mult,
                mechanisms=mech, cancel=cancel, progress=_part(progress, 0.3, 1.0))
    except engine.Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - the totals are still worth showing
        problems["curve"] = _describe(exc)

    progress(1.0)
    return EvaluateResult(request.request_id, request, totals, best, curve, problems)


@dataclass(frozen=True)
class ProfileRequest:
    """The privacy profile is slower than the totals (about 1 s for 1000 queries at η = 1e-3), so
    it runs as its own job after the totals, and an edit never waits for it."""

    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]
    multiplicities: tuple[int, ...]
    eta: float
    points: int = 120
    request_id: int = 0


@dataclass(frozen=True)
class ProfileResult:
    request_id: int
    request: ProfileRequest
    profile: Any                          # engine.Profile


@in_engine_process
def profile(request: ProfileRequest, cancel: CancelToken, progress: Progress) -> ProfileResult:
    result = engine.privacy_profile(
        list(request.epsilons), list(request.deltas), eta=request.eta,
        multiplicities=list(request.multiplicities), num=request.points, cancel=cancel,
        progress=progress)
    return ProfileResult(request.request_id, request, result)


@dataclass(frozen=True)
class AllocateRequest:
    """A redistribution: the model's allocation request plus the undo step it belongs to."""

    payload: Any                          # what plan.allocation_request() returned
    revision: int                         # the plan revision it was taken from
    request_id: int = 0


@dataclass(frozen=True)
class AllocateResult:
    request_id: int
    request: AllocateRequest
    allocation: Any                       # engine.Allocation


@in_engine_process
def allocate(request: AllocateRequest, cancel: CancelToken, progress: Progress) -> AllocateResult:
    allocation = request.payload.run(cancel=cancel, progress=progress)
    return AllocateResult(request.request_id, request, allocation)


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
