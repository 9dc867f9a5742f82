"""Exceptions of the engine's public API (both are ValueErrors: bad input, said clearly)."""

from __future__ import annotations

from typing import Optional


class NotApplicable(ValueError):
    """The chosen theorem does not apply to this plan (e.g. kov on unequal queries)."""


class BudgetError(ValueError):
    """A budget cannot be allocated; ``held_indices`` names the held queries involved, ``floored``
    the free discrete ones given the least epsilon their noise is calibrated for (index: that
    epsilon) where those already spend the budget, and ``needed`` what they need then."""

    def __init__(self, message: str, held_indices: tuple[int, ...] = (), floored: Optional[dict] = None,
                 needed: Optional[float] = None) -> None:
        super().__init__(message)
        self.held_indices = tuple(held_indices)
        self.floored, self.needed = dict(floored or {}), needed
