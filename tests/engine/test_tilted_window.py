"""A discrete Gaussian of small sigma is a few atoms ~48 apart in loss, on a lattice as fine as the
Laplace releases beside it need: a composition's window spans where its tilted mass is (a Chernoff
bound at each end), not a multiple of its standard deviation around the mean, and a read-out's
weights are computed only where they are not 1."""

from __future__ import annotations

import math

import numpy as np

from dpplanner.engine.mechanisms import spectral, tilted
from dpplanner.engine.mechanisms.discrete import DiscreteRelease


def test_a_few_atoms_far_apart_get_a_window_about_their_span_that_holds_their_mass():
    """Two discrete Gaussians of sigma 0.1445 (epsilon ~ 100 at delta 1e-6), tilted by 0.48 (their
    saddle point near epsilon 49): the window holds all but ``outside`` of the exact tilted
    composition (every pair of atoms), and is at most three times as wide as the smallest one that
    holds all but OUTSIDE (eight standard deviations each side of the mean: 5.3 times)."""
    step, theta = 2.0 ** -11, 0.4829
    kernel = DiscreteRelease("gaussian", 0.1445, 1).kernel(step, True, 1e-12)
    kind = tilted.tilt(kernel, theta, 2)
    w0, n, outside = tilted.window([kind], 256)
    j = np.flatnonzero(kind.t)
    assert 5 <= j.size <= 20     # (a few atoms on ~10^6 lattice points)
    index = (2 * kind.start + j[:, None] + j[None, :]).ravel()
    mass = (kind.t[j][:, None] * kind.t[j][None, :]).ravel()
    assert outside <= tilted.OUTSIDE
    assert float(np.sum(mass[(index < w0) | (index >= w0 + n)])) <= outside
    order = np.argsort(index)
    cum = np.cumsum(mass[order])
    lo = index[order][np.searchsorted(cum, tilted.OUTSIDE / 2)]
    hi = index[order][np.searchsorted(cum, cum[-1] - tilted.OUTSIDE / 2)]
    assert n <= 3 * (hi - lo + 1)


def test_psi_is_computed_only_below_where_it_is_1_and_the_charge_is_not_smaller(monkeypatch):
    """The read-out's psi at x_min is computed at the losses below x_min + SATURATED only (above,
    it is 1 to within 1e-17, and charged as 1): the charge is at least, and within 1e-12 of, the
    one from psi computed everywhere. (With a Gaussian mixed in: its bound is the costly one.)"""
    step, theta, mu, x_min = 2.0 ** -9, 0.4829, 0.03, 42.0
    kernel = DiscreteRelease("gaussian", 0.1445, 1).kernel(step, True, 1e-12)
    comp = tilted.compose([tilted.tilt(kernel, theta, 2)], step, theta, 2 * kernel.offset)
    loc = comp.offset + step * (comp.w0 + np.arange(comp.c.size))
    assert np.sum(loc >= x_min + tilted.SATURATED) > comp.c.size / 2
    asked = []

    def weight(at):
        asked.append(at.size)
        return spectral._weight(mu, x_min)(at)

    charged = comp.atoms(True, x_min, spectral._c_psi(mu, theta), weight).err
    assert sum(asked) <= np.sum(loc < x_min + tilted.SATURATED) + 1
    monkeypatch.setattr(tilted, "SATURATED", math.inf)
    everywhere = comp.atoms(True, x_min, spectral._c_psi(mu, theta), spectral._weight(mu, x_min)).err
    assert everywhere <= charged <= everywhere * (1 + 1e-12)
