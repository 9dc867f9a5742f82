"""The releases compose_mechanisms accounts: what noise each one adds, fixed in advance.

Neighbouring datasets move a query by at most one sensitivity; the worst case for Laplace and
Gaussian noise is a shift by exactly one sensitivity, so only the noise multiplier m (scale over
sensitivity) matters. A release known only by its (eps, delta) is accounted as the worst
mechanism with those parameters (the dominating pair of (eps, delta)-DP, formulas.md §4.1).
Discrete noise on the integers (what OpenDP adds) is given by its scale and the integer shift S
in lattice units: its loss depends on both, not only on their ratio (discrete_objects.py).
"""

from __future__ import annotations

import math
import sys
import numbers
from dataclasses import dataclass


#: The least noise multiplier accounted: below it 1/m (Laplace) or 1/m^2 (Gaussian) is not a finite
#: double, i.e. the release's privacy loss is beyond floating point.
MIN_MULTIPLIER = {"Laplace": 2.0 ** -1020, "Gaussian": 2.0 ** -510}
#: The most copies of one release: counts stay exact in a double and in int64 arithmetic.
MAX_MULTIPLICITY = 2 ** 53


def _real(value, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} = {value!r} is not a number")
    try:
        return float(value)
    except OverflowError:       # (an int or Fraction beyond the double range, e.g. 10**400)
        raise ValueError(f"{what} = {_short(value)} is too large: it must be a finite double "
                         f"(at most {sys.float_info.max:.3g})") from None


def _short(value) -> str:
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:20]}...{text[-8:]} ({len(text)} characters)"


def _multiplier(m, kind: str) -> float:
    v = _real(m, f"{kind} noise multiplier m")
    if not (v > 0 and math.isfinite(v)):
        raise ValueError(f"{kind} noise multiplier m = {v!r} is not allowed; it must be a finite number "
                         "> 0 (noise scale divided by the sensitivity)")
    if v < MIN_MULTIPLIER[kind]:
        raise ValueError(f"{kind} noise multiplier m = {v!r} is too small: its privacy loss is beyond "
                         f"floating point; it must be at least {MIN_MULTIPLIER[kind]:.3g}")
    return v


@dataclass(frozen=True)
class Laplace:
    """Continuous Laplace noise of scale b = m * (L1 sensitivity): eps = 1/m pure DP on its own."""

    m: float

    def __post_init__(self):
        object.__setattr__(self, "m", _multiplier(self.m, "Laplace"))


@dataclass(frozen=True)
class Gaussian:
    """Continuous Gaussian noise of standard deviation sigma = m * (L2 sensitivity)."""

    m: float

    def __post_init__(self):
        object.__setattr__(self, "m", _multiplier(self.m, "Gaussian"))


@dataclass(frozen=True)
class EpsDelta:
    """Any (epsilon, delta)-DP release (custom statistics, mechanisms not modelled)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self):
        e = _real(self.epsilon, "EpsDelta epsilon")
        d = _real(self.delta, "EpsDelta delta")
        if not (e >= 0 and math.isfinite(e)):
            raise ValueError(f"EpsDelta epsilon = {e!r} is not allowed; it must be a finite number >= 0")
        if not (0.0 <= d < 1.0):
            raise ValueError(f"EpsDelta delta = {d!r} is not allowed; it must be in [0, 1)")
        object.__setattr__(self, "epsilon", e)
        object.__setattr__(self, "delta", d)


from .discrete_objects import DiscreteGaussian, DiscreteLaplace  # noqa: E402  (they use _real)

MECHANISM_TYPES = (Laplace, Gaussian, EpsDelta, DiscreteLaplace, DiscreteGaussian)
_EXACT_TYPES = frozenset(MECHANISM_TYPES)
_NAMES = "Laplace(m), Gaussian(m), EpsDelta(epsilon, delta), DiscreteLaplace(scale, shift) or " \
    "DiscreteGaussian(sigma, shift)"


def validate_mechanisms(mechanisms, multiplicities=None) -> tuple[tuple, tuple[int, ...]]:
    """The releases and their multiplicities, checked (ValueError naming the bad entry)."""
    if isinstance(mechanisms, (str, bytes)) or not hasattr(mechanisms, "__len__"):
        raise ValueError(f"mechanisms must be a sequence of {_NAMES}, got {mechanisms!r}")
    mechs = tuple(mechanisms)
    if not mechs:
        raise ValueError(f"no releases to compose: give at least one of {_NAMES}")
    if not all(type(m) in _EXACT_TYPES for m in mechs):     # (the fast check first: ~0.1 us each)
        for i, m in enumerate(mechs):
            if not isinstance(m, MECHANISM_TYPES):
                raise ValueError(f"mechanisms[{i}] = {m!r} is not allowed; use {_NAMES}")
    if multiplicities is None:
        return mechs, (1,) * len(mechs)
    if isinstance(multiplicities, (str, bytes)) or not hasattr(multiplicities, "__len__"):
        raise ValueError(f"multiplicities must be a sequence of whole numbers, got {multiplicities!r}")
    mult = list(multiplicities)
    if len(mult) != len(mechs):
        raise ValueError(f"mechanisms has {len(mechs)} entries but multiplicities has {len(mult)}; "
                         "give one multiplicity per release")
    if all(type(k) is int and 1 <= k <= MAX_MULTIPLICITY for k in mult):
        return mechs, tuple(mult)
    out = []
    for i, k in enumerate(mult):
        v = _real(k, f"multiplicities[{i}]")
        if not math.isfinite(v) or v != int(v) or v < 1 or v > MAX_MULTIPLICITY:
            raise ValueError(f"multiplicities[{i}] = {_short(k)} is not allowed; a multiplicity must be a "
                             f"whole number from 1 to 2**53")
        out.append(int(v))
    return mechs, tuple(out)
