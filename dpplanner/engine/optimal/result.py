"""The certified bracket every optimal-composition routine returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Bracket:
    """lower <= OptComp <= upper; ``method`` says how it was computed (e.g. "pld d=2^-17")."""

    upper: float
    lower: float
    method: str

    @property
    def width(self) -> float:
        return self.upper - self.lower
