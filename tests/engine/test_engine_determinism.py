"""Issue 27: the same plan gives the same certified bracket on any machine and under any load.

No timing is measured or asserted: the machine's speed is simulated by replacing the clock the
process reads with one that runs 100x (or far more) fast.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from dpplanner.engine import compose, compose_all, curve


def _plans():
    rng = np.random.default_rng(27)
    return [
        ("k=1500 heterogeneous", rng.uniform(0.002, 0.1, 1500).tolist(), 1e-7, 1e-3),
        ("k=50 to 1e-4", rng.uniform(0.01, 0.5, 50).tolist(), 1e-6, 1e-4),
    ]


def _fast_clock(monkeypatch, factor: float):
    """Every clock of the time module runs ``factor`` times as fast from now on."""
    for name in ("monotonic", "perf_counter", "time"):
        real = getattr(time, name)
        base = real()
        monkeypatch.setattr(time, name, lambda real=real, base=base: base + factor * (real() - base))


def _key(r):
    return r.epsilon, r.epsilon_lower, r.detail


@pytest.mark.parametrize("name, eps, delta_g, eta", _plans(), ids=[p[0] for p in _plans()])
def test_a_clock_100x_fast_gives_the_same_bracket(name, eps, delta_g, eta, monkeypatch):
    """On a machine (or a load) that makes every step look 100x slower, the answer is the same,
    bit for bit: no stopping rule reads the clock unless the caller sets a time limit."""
    quiet = compose(eps, [0.0] * len(eps), delta_g, eta=eta)
    _fast_clock(monkeypatch, 100.0)
    busy = compose(eps, [0.0] * len(eps), delta_g, eta=eta)
    assert _key(busy) == _key(quiet)
    assert busy.epsilon - busy.epsilon_lower <= eta


def test_every_theorem_and_the_curve_ignore_the_clock(monkeypatch):
    rng = np.random.default_rng(2027)
    eps = rng.uniform(0.001, 0.2, 300).tolist()
    deltas = [1e-9] * 300
    quiet = compose_all(eps, deltas, 1e-6, eta=1e-3)
    quiet_curve = curve(eps, deltas, 1e-6, points=20)
    _fast_clock(monkeypatch, 1000.0)
    busy = compose_all(eps, deltas, 1e-6, eta=1e-3)
    busy_curve = curve(eps, deltas, 1e-6, points=20)
    assert {n: _key(r) for n, r in busy.items()} == {n: _key(r) for n, r in quiet.items()}
    for name in quiet_curve.upper:
        assert np.array_equal(busy_curve.upper[name], quiet_curve.upper[name], equal_nan=True)
        lo_q, lo_b = quiet_curve.lower[name], busy_curve.lower[name]
        assert (lo_q is None and lo_b is None) or np.array_equal(lo_b, lo_q, equal_nan=True)


def test_a_time_limit_that_bites_says_so_and_stays_certified(monkeypatch):
    """A caller's explicit time limit may stop the refinement; the detail then says so, and the
    bracket is still certified and never worse than the cheaper theorems."""
    eps = np.random.default_rng(3).uniform(0.002, 0.1, 1500).tolist()
    full = compose(eps, [0.0] * 1500, 1e-7, eta=1e-3)
    advanced = compose(eps, [0.0] * 1500, 1e-7, "advanced")
    _fast_clock(monkeypatch, 1e9)       # every step looks like years
    cut = compose(eps, [0.0] * 1500, 1e-7, eta=1e-3, time_limit=1.0)
    assert "time limit of 1 s" in cut.detail
    assert cut.epsilon_lower <= full.epsilon and cut.epsilon >= full.epsilon_lower
    assert cut.epsilon <= advanced.epsilon
    both = compose_all(eps, [0.0] * 1500, 1e-7, eta=1e-3, theorems=("optimal", "concurrent"), time_limit=1.0)
    assert "time limit" in both["optimal"].detail and "time limit" in both["concurrent"].detail


def test_without_a_limit_no_clock_is_read(monkeypatch):
    """The strongest form of determinism: compose never asks the engine's clock."""
    from dpplanner.engine.optimal import deadline

    def refuse():
        raise AssertionError("the engine read the clock without a time limit")

    monkeypatch.setattr(deadline, "now", refuse)
    eps = np.random.default_rng(4).uniform(0.01, 0.3, 200).tolist()
    r = compose(eps, [0.0] * 200, 1e-6, eta=1e-3)
    assert math.isfinite(r.epsilon)
