"""A cancellation, or a caller's time limit, reaches a pld composition between its transforms and
not only between lattices: on a fine lattice (eta 1e-6, hundreds of distinct releases) one lattice
can take most of a minute, and `dpplanner-cli allocate --time-limit 20` ended after 48 s."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine import Cancelled, CancelToken, Gaussian, Laplace, compose_mechanisms


class CountingToken(CancelToken):
    """Counts its checks; cancels itself at check number ``stop_at`` (never if None)."""

    def __init__(self, stop_at=None):
        super().__init__()
        self.checks, self.stop_at = 0, stop_at

    def check(self) -> None:
        self.checks += 1
        if self.stop_at is not None and self.checks >= self.stop_at:
            self.cancel()
        super().check()


def _releases(n: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    scales = rng.uniform(20.0, 200.0, n)        # n distinct Laplace releases and one Gaussian
    return [Laplace(float(b)) for b in scales] + [Gaussian(50.0)]


def test_a_composition_is_checked_once_per_transform_not_once_per_lattice():
    releases = _releases(300)       # (each test its own plan: a composed plan is remembered)
    token = CountingToken()
    result = compose_mechanisms(releases, 1e-6, eta=1e-3, cancel=token)
    assert result.epsilon > 0
    # every one of the 300 distinct releases is a row of the pairwise tree (checked per level)
    # or a transform of its own (checked per kind): far more checks than lattices climbed
    assert token.checks >= 8


@pytest.mark.parametrize("stop_at", [2, 3, 5])
def test_a_cancellation_in_the_middle_of_a_lattice_is_honoured(stop_at):
    token = CountingToken(stop_at)
    with pytest.raises(Cancelled):
        compose_mechanisms(_releases(300, seed=10 + stop_at), 1e-6, eta=1e-3, cancel=token)
    assert token.checks == stop_at          # nothing is computed after the cancelled check
