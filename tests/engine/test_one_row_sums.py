"""Two closed forms computed for one plan by the operations of their many-row (or library) form:
the same bits, without the arrays' overhead (engine/filters.py, engine/concurrent.py)."""

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
    cases = [np.array([1.0]), np.array([-np.inf, 2.0]), np.array([np.inf, 1.0]), np.array([3.0, 3.0, 1.0])]
    for _ in range(2000):
        a = rng.normal(rng.uniform(-700, 10), rng.uniform(0, 50), int(rng.integers(1, 200)))
        a[rng.integers(0, a.size, 2)] = a.max() if rng.random() < 0.3 else a[0]
        cases.append(a)
    for a in cases:
        assert repr(_log_sum_exp(a)) == repr(float(logsumexp(a)))
