"""Error bounds of OpenDP noise at the tiny epsilons a global epsilon of 1e-15 gives: a sound
bound (never below the least j), and an end (the search stepped by 1 where a double steps by 2+)."""

from __future__ import annotations

import math
from decimal import Decimal, getcontext

import pytest

from dpplanner.model.opendp_noise import _dl_count


def _least(t: float, beta: float) -> int:
    """The least j with 2 a^{j+1} / (1 + a) <= beta, a = e^{-1/t}, in 60-digit arithmetic."""
    getcontext().prec = 60
    a = (Decimal(-1) / Decimal(t)).exp()
    x = ((Decimal(2) / (1 + a)).ln() - Decimal(beta).ln()) * Decimal(t)
    return max(0, int(x.to_integral_value(rounding="ROUND_CEILING")) - 1)


@pytest.mark.parametrize("t", [10.0, 1e6, 4e15, 1e17, 1e300])
def test_a_discrete_laplace_count_error_is_the_least_j_or_just_above(t):
    beta = 0.05 / 3
    j, least = _dl_count(t, beta), _least(t, beta)
    assert least <= j <= least * (1 + 1e-11) + 3
