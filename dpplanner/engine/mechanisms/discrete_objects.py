"""Discrete noise on the integers, as OpenDP adds it: the releases and their arguments' checks.

A release adds discrete Laplace noise (P(x) ~ exp(-|x| / scale)) or discrete Gaussian noise
(P(x) ~ exp(-x^2 / (2 sigma^2))) on the integers to a query whose value on neighbouring datasets
differs by an integer of at most ``shift`` = S lattice units. Both noises are symmetric and
log-concave, so their likelihood ratio is monotone and a shift of exactly S is the worst case
(the Neyman-Pearson tests of 0 against d are threshold tests, more powerful as d grows).

Ranges (a clear ValueError outside them): S a whole number in [1, 2^53] (exact in a double);
scale / S and sigma / S in [2^-10, 2^64] (below, the release is about as private as no noise at
all, epsilon >= 1024 or mu >= 1024; above, its loss is below 2^-64: no privacy loss worth
accounting); sigma <= 2^57 (the discrete Gaussian's lattice sums index integers up to 30 sigma in
int64).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from ..validation import MAX_SHIFT

#: scale / S (and sigma / S) must lie in [MIN_RATIO, MAX_RATIO].
MIN_RATIO, MAX_RATIO = 2.0 ** -10, 2.0 ** 64
MAX_SIGMA = 2.0 ** 57


def check_shift(shift, kind: str) -> int:
    """The shift S as an int, or a ValueError saying what is allowed."""
    if isinstance(shift, bool) or not isinstance(shift, numbers.Real):
        raise ValueError(f"{kind} shift = {shift!r} is not a number; it must be a whole number of lattice "
                         f"units between 1 and 2^53")
    ok = isinstance(shift, numbers.Integral) or (math.isfinite(float(shift)) and float(shift) == int(shift))
    if not ok or not 1 <= int(shift) <= MAX_SHIFT:
        raise ValueError(f"{kind} shift = {shift!r} is not allowed; it must be a whole number of lattice "
                         f"units between 1 and 2^53 (how far neighbouring datasets can move the query)")
    return int(shift)


def check_scale(value, shift: int, kind: str, name: str) -> float:
    """The scale (or sigma) as a float in the allowed range for this shift, or a ValueError."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{kind} {name} = {value!r} is not a number")
    v = float(value)
    lo, hi = shift * MIN_RATIO, shift * MAX_RATIO
    if name == "sigma":
        hi = min(hi, MAX_SIGMA)
    if not (math.isfinite(v) and lo <= v <= hi):
        raise ValueError(f"{kind} {name} = {v!r} is not allowed with shift {shift}; it must be a finite "
                         f"number between {lo:.6g} and {hi:.6g} (shift / 1024 to shift * 2^64"
                         f"{', and at most 2^57' if name == 'sigma' else ''}), in lattice units")
    return v


@dataclass(frozen=True)
class DiscreteLaplace:
    """Discrete Laplace noise of this scale t on the integers, shift S: pure (S / t)-DP on its own,
    with privacy loss on {(S - 2j) / t : j = 0..S} (for S = 1 exactly randomized response)."""

    scale: float
    shift: int = 1

    def __post_init__(self):
        s = check_shift(self.shift, "DiscreteLaplace")
        object.__setattr__(self, "shift", s)
        object.__setattr__(self, "scale", check_scale(self.scale, s, "DiscreteLaplace", "scale"))


@dataclass(frozen=True)
class DiscreteGaussian:
    """Discrete Gaussian noise N_Z(0, sigma^2) on the integers, shift S: (S^2 / 2 sigma^2)-zCDP
    (Canonne, Kamath, Steinke 2020), with privacy loss (S^2 - 2 x S) / (2 sigma^2), x ~ N_Z(0, sigma^2)."""

    sigma: float
    shift: int = 1

    def __post_init__(self):
        s = check_shift(self.shift, "DiscreteGaussian")
        object.__setattr__(self, "shift", s)
        object.__setattr__(self, "sigma", check_scale(self.sigma, s, "DiscreteGaussian", "sigma"))
