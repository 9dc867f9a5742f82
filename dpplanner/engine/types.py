"""Immutable results and the cooperative cancellation token shared by every engine function."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Callable, Optional

#: Called with a fraction in [0, 1] while a long computation runs.
ProgressCallback = Callable[[float], None]


class Cancelled(Exception):
    """Raised inside an engine computation when its CancelToken was cancelled."""


class CancelToken:
    """Cooperative cancellation: the worker thread calls ``check()`` inside long loops."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def check(self) -> None:
        if self._event.is_set():
            raise Cancelled("computation cancelled")


@dataclass(frozen=True)
class Composition:
    """The total privacy cost of a plan under one theorem.

    ``epsilon`` is always a sound upper bound (``math.inf`` when the target delta is infeasible,
    with ``reason`` saying why). ``epsilon_lower`` is a certified lower bound on the exact value of
    this theorem's bound, or None where the theorem is a closed form with nothing to bracket.
    """

    theorem: str
    epsilon: float
    delta: float
    epsilon_lower: Optional[float] = None
    detail: str = ""          # which variant won, e.g. "KOV Thm 3.5 (b)" or "exact (grouped)"
    reason: Optional[str] = None  # why epsilon is inf / why the theorem does not apply
    applicable: bool = True   # False when the theorem does not apply (kov on unequal queries)
    seconds: float = 0.0      # wall time of this computation
    extra: dict = field(default_factory=dict, compare=False)

    @property
    def feasible(self) -> bool:
        return self.applicable and self.epsilon != float("inf")
