"""The exact two-set (meet-in-the-middle) path against the oracle and the exact lattice path."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpplanner.engine.optimal.pld import common_lattice, lattice_bracket, pld_bracket
from dpplanner.engine.optimal.two_sets import split_sets, two_set_bracket
from oracle import Oracle

groups = st.lists(st.tuples(st.floats(0.01, 1.5), st.integers(1, 4)), min_size=2, max_size=5,
                  unique_by=lambda t: t[0])


def _contains_the_exact_value(gs, delta_bar):
    e = np.array([g[0] for g in gs])
    m = np.array([g[1] for g in gs], dtype=np.int64)
    b = two_set_bracket(e, m, delta_bar)
    assert b is not None
    exact = float(Oracle(list(np.repeat(e, m))).opt_comp(delta_bar))
    assert b.lower <= exact <= b.upper, (b, exact)
    assert b.upper - b.lower <= 1e-8 * max(1.0, exact)


@pytest.mark.slow
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups, st.floats(-12, -1).map(lambda t: 10.0 ** t))
def test_two_sets_contain_the_exact_value(gs, delta_bar):
    _contains_the_exact_value(gs, delta_bar)


@pytest.mark.slow
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(groups, st.floats(-12, -1).map(lambda t: 10.0 ** t))
def test_two_sets_contain_the_exact_value_many(gs, delta_bar):
    _contains_the_exact_value(gs, delta_bar)


def test_two_large_groups_match_the_exact_lattice_path():
    e = np.array([0.1, 0.3])
    m = np.array([3000, 2000], dtype=np.int64)
    for delta_bar in (1e-3, 1e-7, 1e-12):
        b = two_set_bracket(e, m, delta_bar)
        ref = lattice_bracket(e, m, delta_bar, common_lattice(e))
        assert b.lower <= ref.upper and ref.lower <= b.upper, (b, ref)
        assert b.upper - b.lower <= 1e-8 * b.upper


def test_sets_respect_their_caps_or_decline():
    assert split_sets(np.array([5000, 5000])) is not None
    assert split_sets(np.ones(60, dtype=np.int64)) is None  # 2^60 outcomes cannot be split
    mask = split_sets(np.ones(30, dtype=np.int64))
    assert mask is not None and 0 < mask.sum() < 30
    assert math.prod([2] * int(mask.sum())) <= 1 << 16


def test_the_roots_take_few_reads(monkeypatch):
    """Each read of delta is a pass over the loop set (~0.8 ms on an edited 100-query plan). Brent's
    method steps on log delta, which is nearly linear in x where delta itself falls by tens of
    orders of magnitude between 0 and the sum of the epsilons, and each end is read once: 19 reads
    for both roots where there were 27 (18 + 9)."""
    import dpplanner.engine.optimal.two_sets as two_sets

    e = np.array([0.00935, 0.00986, 0.0187, 0.01972, 0.02064, 0.0373, 0.05, 0.1])
    m = np.array([3, 17, 3, 36, 3, 3, 2, 1], dtype=np.int64)
    reads = []
    real = two_sets._delta
    monkeypatch.setattr(two_sets, "_delta", lambda *a: reads.append(a[3]) or real(*a))
    b = two_set_bracket(e, m, 5e-8)
    assert len(reads) <= 21
    assert 0 < b.upper - b.lower <= 1e-8 * b.upper
    ref = pld_bracket(e, m, 5e-8, 1e-4)         # the lattice path, computed independently
    assert b.lower <= ref.upper and ref.lower <= b.upper, (b, ref)


def test_the_reader_sums_plainly_when_the_locations_span_little(monkeypatch):
    """Within a log-range of 600 the reader's T is a plain suffix sum (its log-space accumulation
    was half the cost of an edited 100-query plan's 'optimal' total); it agrees with the log-space
    one within both error bounds, its own bound is smaller, and the brackets still hold the value
    the other path certifies."""
    import dpplanner.engine.optimal.two_sets as two_sets
    from dpplanner.engine.optimal.exact import grouped_atoms

    e = np.array([0.00935, 0.00986, 0.0187, 0.01972, 0.02064])
    m = np.array([3, 17, 3, 36, 3], dtype=np.int64)
    atoms = grouped_atoms(e, m, True)
    plain = two_sets._Reader(atoms)
    monkeypatch.setattr(two_sets, "_PLAIN_SPAN", -1.0)
    logspace = two_sets._Reader(atoms)
    np.testing.assert_allclose(plain.T, logspace.T, rtol=plain.rT + logspace.rT, atol=1e-300)
    assert plain.rT < logspace.rT / 10
    e2, m2 = np.array([0.00935, 0.00986, 0.0187, 0.01972, 0.02064, 0.0373]), np.array([3, 17, 3, 36, 3, 3])
    b_log = two_set_bracket(e2, m2, 5e-8)
    monkeypatch.setattr(two_sets, "_PLAIN_SPAN", 600.0)
    b_plain = two_set_bracket(e2, m2, 5e-8)
    assert b_plain.lower <= b_log.upper and b_log.lower <= b_plain.upper
    assert b_plain.upper - b_plain.lower <= b_log.upper - b_log.lower
