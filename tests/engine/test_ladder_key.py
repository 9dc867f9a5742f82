"""The ladder remembers brackets and upper ends under bracket.exact_key, the one key of a Twins
(every field to the bit, the discrete slacks too), not a second hand-made one."""

from __future__ import annotations

import numpy as np

from dpplanner.engine.mechanisms import ladder
from dpplanner.engine.mechanisms.bracket import exact_key, laplace_params
from dpplanner.engine.mechanisms.composition import twins
from dpplanner.engine.memo import forget


def _twins():
    r, _ = twins(laplace_params(np.array([4.0, 9.0])), np.array([30, 60]), (np.array([12.0]), np.array([12.0])),
                 np.array([30]), np.zeros(0), np.zeros(0), np.zeros(0, dtype=np.int64), 1e-6)
    return r


def test_brackets_and_upper_ends_are_remembered_under_exact_key():
    forget()
    r, eta = _twins(), 1e-3
    up = ladder.upper_end(r, eta)
    assert up.step > 0 and ladder._FIRST_UPPERS.get(exact_key(r, eta)) is not None
    b = ladder.bracket(r, eta)
    assert ladder._BRACKETS.get(exact_key(r, eta)) == b
