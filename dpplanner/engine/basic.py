"""Basic (sequential) composition: (sum eps_i, sum delta_i) (formulas.md §1)."""

from __future__ import annotations

import numpy as np

from .stats import Sums
from .types import Composition

NAME = "basic"


def basic_epsilon(s: Sums, delta_g: float) -> np.ndarray:
    """Sum of eps (already an upper bound); inf where sum delta_i exceeds delta_g."""
    return np.where(s.delta_fits(delta_g), s.sum_eps, np.inf)


def basic(s: Sums, delta_g: float) -> Composition:
    eps = float(basic_epsilon(s, delta_g)[0])
    total_delta = float(s.sum_delta[0])
    if eps == np.inf:
        return Composition(NAME, eps, total_delta, detail="basic composition",
                           reason=f"the query deltas sum to {total_delta:.6g}, more than delta_g = "
                                  f"{delta_g:.6g}; basic composition needs sum delta_i <= delta_g")
    return Composition(NAME, eps, total_delta, epsilon_lower=None, detail="basic composition")
