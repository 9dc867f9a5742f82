"""The privacy-profile job: the plan's delta(epsilon) curve, for the window's profile plot (the
controller's signature ``fn(request, cancel, progress) -> result``, as compute/jobs.py's)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from dpplanner import engine
from dpplanner.compute.engine_process import in_engine_process
from dpplanner.engine.types import CancelToken
from dpplanner.model.requests import ProfileRequest


@dataclass(frozen=True)
class ProfileResult:
    request_id: int
    request: ProfileRequest
    profile: Any                          # engine.Profile


@in_engine_process
def profile(request: ProfileRequest, cancel: CancelToken, progress: Callable[[float], None]) -> ProfileResult:
    if cancel is not None:      # (a job cancelled before it starts does no work)
        cancel.check()
    result = engine.privacy_profile(
        list(request.epsilons), list(request.deltas), eta=request.eta,
        multiplicities=list(request.multiplicities), num=request.points,
        mechanisms=list(request.mechanisms) or None, cancel=cancel, progress=progress)
    return ProfileResult(request.request_id, request, result)
