"""Handing work to the engine process's helper without waiting for it: an evaluation's half
(jobs.evaluate) and the engine's offloaded work (engine/offload.py, whose runner is installed
here). The helper takes a job only when it is idle; otherwise the caller computes it itself.
"""

from __future__ import annotations

import weakref
from typing import Any, Callable, Optional

from dpplanner import engine
from dpplanner.compute import helper_process
from dpplanner.engine import offload
from dpplanner.engine.types import CancelToken

#: What a collected helper job gives when the helper failed (its part is then computed here).
FAILED = object()


def hand_over(side, fn, request, token: CancelToken, complete: Optional[Callable[[Any], Any]] = None
              ) -> Optional[tuple[Callable[[], Any], int]]:
    """Send ``fn(request)`` to the helper ``side`` if it is idle now (claimed without waiting) and
    return a callable that collects its value once and ends the claim (the value, or FAILED if
    the helper failed; a cancellation is raised), with the job's id; dropped uncalled, or its
    ``drop()`` called first, it ends the claim too (the job is abandoned without waiting for it:
    EngineProcess.abandon). None if the helper is taken
    or the job could not be sent (a dead pipe, a request that would not pickle). The job is sent
    from this thread before it computes its own part: a sending thread first needed the
    interpreter lock from the computing one, up to the 5 ms switch interval of the helper's head
    start. A cancelled token raises Cancelled here: nothing is sent. ``complete``: a function
    of the request giving the one sent, called once the helper is claimed (work worth doing only
    for a job that is sent; if it fails, the request goes as it is)."""
    token.check()
    if not side.claim():
        return None
    if complete is not None:
        try:
            request = complete(request)
        except Exception:  # noqa: BLE001 - sent as it is: the helper does that work itself
            pass
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
                box["value"] = FAILED
        if box["value"] is engine.Cancelled:
            raise engine.Cancelled("computation cancelled")
        return box["value"]

    collect.drop = weakref.finalize(collect, _abandon, side, job, box)
    collect.drop.atexit = False
    return collect, job


def _abandon(side, job: int, box: dict) -> None:
    """A dropped collector's claim: ended without waiting for the answer it no longer wants."""
    if "value" not in box:
        box["value"] = engine.Cancelled
        side.abandon(job)


def _ignore(_fraction: float) -> None:
    pass


def in_helper(fn, args: tuple, cancel):
    """engine.offload's runner: ``fn(*args, cancel)`` in the engine process's helper when it is
    idle (e.g. a bracket's lower twin while an allocation composes the upper one here), else None.
    If the helper fails, the value is computed here."""
    side = helper_process.helper(start=False)
    sent = None if side is None else hand_over(side, apply, (fn, args),
                                                cancel if cancel is not None else CancelToken())
    if sent is None:
        return None
    collect = sent[0]

    def wait():
        value = collect()
        return fn(*args, cancel) if value is FAILED else value

    return wait


def apply(request: tuple, cancel: CancelToken, progress):
    """The helper's job for offloaded work: ``fn(*args, cancel)`` for ``request = (fn, args)``."""
    fn, args = request
    return fn(*args, cancel)


offload.set_runner(in_helper)
