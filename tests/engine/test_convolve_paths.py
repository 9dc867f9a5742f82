"""Which of its three ways ``lattice.convolve`` composes two dense pmfs: the fixed-order direct sum
for small ones, the double FFT where its rounding fits the budget and it costs less, else the
long-double FFT where that costs less (counted by calls, not timed)."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine.optimal import lattice
from dpplanner.engine.optimal.atoms import U
from dpplanner.engine.optimal.lattice import U_LONG, LatticePMF, convolve


def _dense(n: int, seed: int) -> LatticePMF:
    p = np.random.default_rng(seed).random(n)
    return LatticePMF(2.0 ** -12, 0, p / p.sum(), 0.0, True)


def _paths(monkeypatch) -> list:
    taken = []
    direct, fft = lattice.direct_convolve, lattice.fft_convolve
    monkeypatch.setattr(lattice, "direct_convolve", lambda a, b: taken.append("direct") or direct(a, b))
    monkeypatch.setattr(lattice, "fft_convolve",
                        lambda a, b, extended=False: taken.append("long double" if extended else "double")
                        or fft(a, b, extended))
    return taken


@pytest.mark.skipif(not U_LONG < U, reason="long double is double on this platform")
def test_a_long_double_fft_where_the_direct_sum_costs_more(monkeypatch):
    """1628 x 1628 points (an optimal total's groups at 1000 queries): ~4 ms summed directly, ~0.4 ms
    by a long-double FFT."""
    taken = _paths(monkeypatch)
    c = convolve(_dense(1628, 1), _dense(1628, 2), 0.0, 0.0)
    assert taken == ["long double"]
    assert c.err > 0 and abs(float(c.p.sum()) - 1.0) < 1e-9


def test_small_pmfs_are_still_summed_directly(monkeypatch):
    """90 x 90 points: the direct sum (relative errors only) is the cheaper, whatever the budget."""
    taken = _paths(monkeypatch)
    convolve(_dense(90, 3), _dense(90, 4), 0.0, 0.0)
    convolve(_dense(90, 3), _dense(90, 4), 0.0, 1.0)
    assert taken == ["direct", "direct"]


def test_a_double_fft_where_its_rounding_fits_the_budget(monkeypatch):
    """833 x 833 points (a group's power in the split bracket): ~1.8 ms summed directly, ~0.07 ms by
    a double FFT, whose rounding is charged to err."""
    taken = _paths(monkeypatch)
    c = convolve(_dense(833, 5), _dense(833, 6), 0.0, 1e-6)
    assert taken == ["double"]
    assert 0 < c.err <= 1e-6
