"""The closed forms' work for one evaluation: a plan's filter and Vadhan-Wang totals by the
operations of their many-row (or library) form, the same bits without the arrays' overhead
(engine/filters.py, engine/concurrent.py); the room delta_g leaves computed once per sums."""

import numpy as np
from scipy.special import logsumexp

from dpplanner.engine.concurrent import _log_sum_exp
from dpplanner.engine.filters import _rruv_least_root, rruv_statistic


def test_a_lone_rows_rruv_root_is_that_of_the_row_among_its_copies():
    """(Rows of a search step together until all have settled: a row's copies settle with it.)"""
    rng = np.random.default_rng(11)
    for i in range(300):
        eps = rng.uniform(0, rng.choice([0.01, 0.1, 1.0, 5.0]), int(rng.integers(1, 3000)))
        kl = float(np.sum(eps * np.expm1(eps)))
        v = float(np.sum(eps * eps)) * (1e-300 if i % 50 == 0 else 1.0)     # (a tiny one too)
        delta_g = float(10 ** rng.uniform(-15, -1))
        alone = _rruv_least_root(np.array([kl]), np.array([v]), delta_g)
        copies = _rruv_least_root(np.array([kl, kl]), np.array([v, v]), delta_g)
        assert alone.shape == (1,) and repr(float(alone[0])) == repr(float(copies[0]))
        assert rruv_statistic(kl, v, alone[0], delta_g) <= alone[0]


def test_the_log_sum_is_scipys():
    rng = np.random.default_rng(12)
    cases = [np.array([1.0]), np.array([-np.inf, 2.0]), np.array([np.inf, 1.0]), np.array([3.0, 3.0, 1.0]),
             np.array([-np.inf, -np.inf])]
    for _ in range(2000):
        a = rng.normal(rng.uniform(-700, 10), rng.uniform(0, 50), int(rng.integers(1, 200)))
        a[rng.integers(0, a.size, 2)] = a.max() if rng.random() < 0.3 else a[0]
        cases.append(a)
    for a in cases:
        assert repr(_log_sum_exp(a)) == repr(float(logsumexp(a)))


def test_the_room_left_for_delta_is_computed_once_per_sums(monkeypatch):
    """advanced's Steinke, the generic zCDP cap and the filters all ask a curve's sums for the
    room delta_g leaves: the exact subtraction runs once per delta_g, and its array is read-only."""
    from dpplanner.engine import never_worse, stats
    from dpplanner.engine.filters import filter_candidates

    calls = []
    real = stats.room_down
    monkeypatch.setattr(stats, "room_down", lambda *a: calls.append(a[0]) or real(*a))
    eps = np.full(100, 0.01)
    s = stats.prefix_sums(eps, np.full(100, 1e-9), np.arange(1, 101))
    never_worse.best_cheap(s, 1e-6)
    filter_candidates(s, 1e-6, least_only=True)
    assert calls == [1e-6]
    s.delta_room(1e-5)
    assert calls == [1e-6, 1e-5] and not s.delta_room(1e-6).flags.writeable
