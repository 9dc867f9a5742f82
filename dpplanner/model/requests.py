"""What a computation of the plan needs, frozen: built here by the model, run by ``compute.jobs``.

A request holds numbers only (no Statistic objects), so it is cheap to compare, safe to hand to
another thread and picklable for the engine process. ``request_id`` is stamped by whoever runs it
(the window's compute controller) and is the only thing that decides whether a result is stale.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Optional

from dpplanner import engine

from .engine_inputs import CompositionInputs


@dataclass(frozen=True)
class CurveView:
    """How the cost-vs-k plot is asked for: the view's part of an evaluation request."""

    mode: str = "prefix"                  # "prefix" or "repeat"
    k_max: Optional[int] = None           # None: the plan's own k
    points: int = 100
    repeat_row: int = 0                   # which statistic "repeat" mode repeats


@dataclass(frozen=True)
class EvaluateRequest(CompositionInputs):
    """Everything the results panel and the plots need, snapshotted from the plan: what the engine
    composes (the fields of CompositionInputs, first) and how the plot asks for it."""

    curve_mode: str = "prefix"            # "prefix" or "repeat"
    curve_k_max: Optional[int] = None     # None: the plan's own k (prefix) / k (repeat)
    curve_points: int = 100
    repeat_index: int = 0                 # which query "repeat" mode repeats
    theorems: tuple[str, ...] = engine.THEOREMS
    request_id: int = 0

    @property
    def plan_curve_k(self) -> Optional[int]:
        """The plan's k when the plot is the plan's prefixes (its point there is the plan's total:
        ``curve_totals.meet_totals``), None when it repeats one query."""
        return self.k if self.curve_mode == "prefix" else None

    def profile_request(self) -> "ProfileRequest":
        # The profile's own accuracy: eta finer than 1e-3 costs seconds and is invisible in a plot.
        return ProfileRequest(self.epsilons, self.deltas, self.multiplicities,
                              eta=max(self.eta, 1e-3), mechanisms=self.mechanisms)


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
    mechanisms: tuple[str, ...] = ()      # given: the profile of the actual noise (see privacy_profile)


def evaluation_request(inputs: CompositionInputs, view: CurveView) -> EvaluateRequest:
    repeat_index = min(max(view.repeat_row, 0), max(len(inputs.epsilons) - 1, 0))
    return EvaluateRequest(
        **{f.name: getattr(inputs, f.name) for f in fields(CompositionInputs)},
        curve_mode=view.mode, curve_k_max=view.k_max, curve_points=view.points, repeat_index=repeat_index)
