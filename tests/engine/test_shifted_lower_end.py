"""The pld bracket's lower end read from the upper end's composition, shifted down in epsilon
(spectral._shifted_lower): continuous twins of discrete releases and a small Gaussian, against
the exact epsilon in 30 digits."""

from __future__ import annotations

import mpmath
import pytest

from dpplanner.engine import DiscreteLaplace, Gaussian, compose_mechanisms
from dpplanner.engine.mechanisms import spectral


def _dl_atoms(t: float, S: int):
    """The exact loss of discrete Laplace (scale t, shift S) under its first distribution:
    (loss, probability) atoms (S/t for y <= 0, -S/t for y >= S, (S - 2y)/t between)."""
    t = mpmath.mpf(t)
    q = mpmath.exp(-1 / t)
    atoms = [(S / t, 1 / (1 + q)), (-S / t, q ** S / (1 + q))]
    atoms += [((S - 2 * y) / t, (1 - q) / (1 + q) * q ** y) for y in range(1, S)]
    return atoms


def _exact_epsilon(discrete, mu: float, delta: float) -> mpmath.mpf:
    """The least x with delta(x) <= delta for the discrete Laplace releases and one Gaussian mu:
    delta(x) = E[delta_G(x - L)] over the discrete losses L (formulas.md §8), by bisection."""
    mu = mpmath.mpf(mu)
    rest = [(mpmath.mpf(0), mpmath.mpf(1))]
    for t, S in discrete:
        rest = [(l + m, p * q) for l, p in rest for m, q in _dl_atoms(t, S)]

    def d(x):
        return mpmath.fsum(p * (mpmath.ncdf(mu / 2 - (x - l) / mu) - mpmath.exp(x - l) * mpmath.ncdf(-mu / 2 - (x - l) / mu))
                           for l, p in rest)

    lo, hi = mpmath.mpf(0), mpmath.mpf(20)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


@pytest.mark.parametrize("t, S, eta", [(10.0, 20, 0.1), (12.0, 30, 0.05)])
def test_the_shifted_lower_end_is_below_the_exact_epsilon(monkeypatch, t, S, eta):
    """A discrete Laplace composed as its continuous Laplace twins (a_hi - a_lo ~ 1 / 4t^2: far too
    much as a Lipschitz charge on delta), a small Gaussian (not enough for the hybrid bound's own
    route) and randomized response: one composition gives both ends, the lower one shifted down
    by the twins' distance, and it stays below the exact epsilon (without the shift it would not)."""
    mpmath.mp.dps = 30
    shifted = []
    real = spectral._shifted_lower
    monkeypatch.setattr(spectral, "_shifted_lower", lambda *a: shifted.append(real(*a)) or shifted[-1])
    m, delta = 4.0, 1e-6
    mechs = [DiscreteLaplace(t, S), Gaussian(m), DiscreteLaplace(2.0, 1)]
    r = compose_mechanisms(mechs, delta, eta=eta)
    assert shifted and r.epsilon_lower == pytest.approx(shifted[-1], abs=1e-12)
    exact = _exact_epsilon([(t, S), (2.0, 1)], 1 / m, delta)
    assert r.epsilon_lower <= exact <= r.epsilon
    assert r.epsilon - r.epsilon_lower <= eta
