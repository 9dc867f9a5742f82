"""Far below the tilt's saddle point the untilted composition is rounding noise blown up by
e^{-theta s k}: those atoms are left out (their exact mass charged), and the mixed read-out counts
the atoms below its window at their exact mass, at most 1, whatever was computed for them."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpplanner.engine import DiscreteLaplace, Gaussian, Laplace, compose_mechanisms
from dpplanner.engine.mechanisms import spectral, tilted
from dpplanner.engine.mechanisms.gaussian import log_delta_bound
from dpplanner.engine.mechanisms.kernels import laplace_upper, rr_upper
from dpplanner.engine.mechanisms.readout import mixed_delta
from dpplanner.engine.memo import forget
from dpplanner.engine.optimal.atoms import Atoms, delta_at
from direct_composition import direct as _direct


@pytest.mark.parametrize("mu", [0.0, 0.3])
def test_noise_far_below_the_saddle_is_left_out_and_every_read_still_bounds_delta(mu):
    """A tilt of 20 on 50 Laplace and 5 RR releases: the atoms below ~2 untilt to entries up to 2e5
    (the exact ones sum to 1); left out, every entry is <= 1, and the upper read at x >= x_min is
    above the exact delta (direct convolution; with mu, each delta_G at its lower bound)."""
    step, theta, x_min = 2.0 ** -9, 20.0, 3.0
    kernels = [(laplace_upper(0.1, step), 50), (rr_upper(0.02, step), 5)]
    offset = 50 * -0.1 + 5 * -0.02
    comp = tilted.compose([tilted.tilt(k, theta, n) for k, n in kernels], step, theta, offset)
    atoms = comp.atoms(True, x_min, spectral._c_psi(mu, theta), spectral._weight(mu, x_min))
    assert atoms.p.size < comp.c.size and atoms.l[0] > offset + step * comp.w0
    assert np.all(atoms.p <= 1.0)
    exact = _direct(kernels)
    locs = offset + step * np.arange(exact.size)
    xs = np.array([x_min, x_min + 0.5, x_min + 1.0, x_min + 2.0])
    if mu > 0:
        got = mixed_delta(atoms, mu, xs, True)
        with np.errstate(under="ignore"):
            want = np.array([np.sum(exact * np.exp(log_delta_bound(mu, x - locs, False))) for x in xs.tolist()])
    else:
        got = delta_at(atoms, xs)
        want = np.array([np.sum(exact * np.maximum(-np.expm1(x - locs), 0.0)) for x in xs.tolist()])
    assert np.all(want > 0) and np.all(got >= want * (1 + 1e-9))


def test_the_mass_left_out_is_charged_at_the_weight_of_the_highest_atom_left_out():
    """Half the mass at 0 and half at 5, tilted by 10 (entries at a step of 0.5), with an l2 error
    bound that makes the untilted entry at 0 all noise: it is left out, and the upper read mixed
    with a Gaussian (mu 1, where delta_G(2) ~ 0.02 counts) is still above the exact delta."""
    step, theta, mu, x_min = 0.5, 10.0, 1.0, 2.0
    p = np.zeros(11)
    p[[0, 10]] = 0.5
    k = np.arange(p.size)
    log_m = math.log(float(np.sum(p * np.exp(theta * step * k))))
    c = p * np.exp(theta * step * k - log_m)
    comp = tilted.Composed(c, 0, step, 0.0, theta, log_m, rel=0.0, e2=math.exp(1.0 - log_m), e1=0.0, outside=0.0, inf_mass=0.0)
    atoms = comp.atoms(True, x_min, spectral._c_psi(mu, theta), spectral._weight(mu, x_min))
    assert atoms.l[0] > 0.0
    xs = np.array([2.0, 3.0])
    want = np.array([np.sum(p * np.exp(log_delta_bound(mu, x - step * k, False))) for x in xs.tolist()])
    assert np.all(mixed_delta(atoms, mu, xs, True) >= want)


@pytest.mark.parametrize("releases, mult", [
    ([Laplace(144.75), DiscreteLaplace(17.39, 3)], [49, 40]),
    ([Laplace(144.75), Laplace(0.111), DiscreteLaplace(17.39, 3), Gaussian(5.0)], [49, 2, 40, 3]),
])
def test_the_atoms_a_bracket_reads_are_probabilities(monkeypatch, releases, mult):
    """Plans whose reads untilted entries up to 34 and 8e6 (bits of rounding): now each is <= 1."""
    seen = []
    real = tilted.Composed.atoms
    monkeypatch.setattr(tilted.Composed, "atoms", lambda *a: seen.append(real(*a)) or seen[-1])
    forget()
    r = compose_mechanisms(releases, 1.87e-5, multiplicities=mult)
    assert seen and r.epsilon_lower <= r.epsilon < math.inf
    assert max(float(np.max(a.p)) for a in seen) <= 1.0


def test_the_mixed_read_counts_the_atoms_below_its_window_at_most_at_their_exact_mass():
    """Entries of 1e308 far below x (no sum of them is finite) add at most their exact mass, 1,
    times delta_G there (~1e-90): the read is that of the atoms near x, with no overflow."""
    near = Atoms(np.array([4.0, 5.0, 6.0]), np.array([0.5, 0.3, 0.2]), True)
    far = Atoms(np.array([-40.0, -39.0, 4.0, 5.0, 6.0]), np.array([1e308, 1e308, 0.5, 0.3, 0.2]), True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = mixed_delta(far, 0.3, [5.0], True)[0]
    want = mixed_delta(near, 0.3, [5.0], True)[0]
    assert want <= got <= want * (1 + 1e-12) + 1e-80
