"""Display text for the window: bounds rounded in the safe direction (shared with the CLI and
the report, see ``dpplanner.model.display``) and computation times."""

from __future__ import annotations

from dpplanner.model.display import (count, error, error_with_units, exact, lower, percent_of, upper,
                                      value)

__all__ = ["count", "error", "error_with_units", "exact", "lower", "percent_of", "upper", "value",
           "seconds"]


def seconds(value: float) -> str:
    if value < 1e-3:
        return "<1 ms"
    if value < 1.0:
        return f"{value * 1e3:.0f} ms"
    return f"{value:.2f} s"
