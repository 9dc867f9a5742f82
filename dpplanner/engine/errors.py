"""Exceptions of the engine's public API (both are ValueErrors: bad input, said clearly)."""

from __future__ import annotations


class NotApplicable(ValueError):
    """The chosen theorem does not apply to this plan (e.g. kov on unequal queries)."""


class BudgetError(ValueError):
    """A budget cannot be allocated; ``held_indices`` names the held queries involved."""

    def __init__(self, message: str, held_indices: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.held_indices = tuple(held_indices)
