"""Adversarial property tests of the optimal engine against an exact oracle (issue 13).

Shapes of the audit: the queries' own deltas using up almost all of delta_g, eps from 1e-8 to 1e4,
delta_g from 1e-300 to 0.999999, binary-lattice neighbours (0.1 vs 0.1 + 1e-15), near-equal groups,
k from 1 to 10^6. Every answer must satisfy upper >= exact >= lower, be finite on feasible plans,
and have width <= eta or a detail that says why not.

The number of examples scales with the environment variable ``DPPLANNER_ADVERSARIAL_SCALE``
(default 1; e.g. 10 for "10x the default examples").
"""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from dpplanner.engine import compose, curve

from adversarial_oracle import delta_bar, delta_grouped, delta_homogeneous

SCALE = int(os.environ.get("DPPLANNER_ADVERSARIAL_SCALE", "1"))


def _settings(n: int):
    return settings(max_examples=n * SCALE, deadline=None, derandomize=SCALE == 1,
                    suppress_health_check=[HealthCheck.too_slow])


def log_uniform(lo: float, hi: float):
    return st.floats(math.log10(lo), math.log10(hi)).map(lambda u: 10.0 ** u)


@st.composite
def delta_split(draw, k: int):
    """(delta_i, delta_g): delta_i = 0, or k delta_i a hair below (or above) delta_g."""
    dg = draw(st.one_of(log_uniform(1e-300, 0.999999), st.sampled_from([1e-300, 1e-12, 0.5, 0.999999])))
    kind = draw(st.sampled_from(["zero", "close", "closer", "over"]))
    if kind == "zero":
        return 0.0, dg
    gap = {"close": draw(log_uniform(1e-6, 1e-2)), "closer": draw(log_uniform(1e-16, 1e-9)),
           "over": -draw(log_uniform(1e-16, 1e-12))}[kind]
    d = dg * (1.0 - gap) / k
    assume(0.0 < d < 1.0)
    return d, dg


def check(r, eps_list, mult, deltas, dg, eta, delta_at):
    db = delta_bar(dg, deltas, mult)
    if db < 0:
        assert r.epsilon == math.inf and r.reason
        return
    assert math.isfinite(r.epsilon), f"feasible plan got inf: {r.detail}"
    assert r.epsilon_lower is not None and r.epsilon_lower <= r.epsilon
    # upper >= exact: delta(upper) <= delta_bar; lower <= exact: delta(lower) >= delta_bar (or 0)
    assert delta_at(r.epsilon) <= db, ("upper below exact", r)
    assert r.epsilon_lower == 0 or delta_at(r.epsilon_lower) >= db, ("lower above exact", r)
    assert r.epsilon - r.epsilon_lower <= eta or "width > eta" in r.detail, r


@_settings(40)
@given(eps=st.one_of(log_uniform(1e-8, 1e4), st.sampled_from([0.1, 0.1 + 1e-15, 1.0, 50.0])),
       k=st.one_of(st.integers(1, 2000), log_uniform(1, 1e6).map(int)),
       data=st.data(), eta=st.sampled_from([1e-6, 1e-3, 0.1]))
@pytest.mark.slow
def test_homogeneous_against_the_exact_delta(eps, k, data, eta):
    d, dg = data.draw(delta_split(k))
    r = compose([eps], [d], dg, eta=eta, multiplicities=[k])
    check(r, [eps], [k], [d], dg, eta, lambda x: delta_homogeneous(eps, k, x))


@st.composite
def small_plans(draw):
    """2-4 groups, at most ~2000 joint outcomes: lattice neighbours and near-equal values."""
    base = draw(st.one_of(log_uniform(1e-3, 20.0), st.sampled_from([0.1, 0.3, 1.0, 2.1234567891])))
    kind = draw(st.sampled_from(["neighbours", "near", "spread"]))
    g = draw(st.integers(2, 4))
    if kind == "neighbours":
        eps = [base + i * 1e-15 * max(1.0, base) for i in range(g)]
    elif kind == "near":
        eps = [base * (1 + i * draw(log_uniform(1e-13, 1e-6))) for i in range(g)]
    else:
        eps = sorted(draw(st.lists(log_uniform(1e-3, 20.0), min_size=g, max_size=g)))
    cap = int(round(2000 ** (1.0 / g)))
    mult = draw(st.lists(st.integers(1, max(1, cap - 1)), min_size=g, max_size=g))
    return eps, mult


@_settings(25)
@given(plan=small_plans(), data=st.data(), eta=st.sampled_from([1e-6, 1e-3, 0.1]))
def test_small_heterogeneous_against_the_exact_delta(plan, data, eta):
    eps, mult = plan
    d, dg = data.draw(delta_split(int(sum(mult))))
    deltas = [d] * len(eps)
    r = compose(eps, deltas, dg, eta=eta, multiplicities=mult)
    check(r, eps, mult, deltas, dg, eta, lambda x: delta_grouped(eps, mult, x))


@_settings(12)
@given(plan=small_plans(), data=st.data())
def test_prefix_curve_against_the_exact_delta(plan, data):
    eps, mult = plan
    k = int(sum(mult))
    d, dg = data.draw(delta_split(k))
    c = curve(eps, [d] * len(eps), dg, points=4, multiplicities=mult, theorems=("optimal",))
    seq = np.repeat(eps, mult)
    for j, kk in enumerate(c.ks.tolist()):
        e, m = np.unique(seq[:kk], return_counts=True)
        db = delta_bar(dg, [d], [kk])
        up, lo = float(c.upper["optimal"][j]), float(c.lower["optimal"][j])
        if db < 0:
            assert up == math.inf
            continue
        assert math.isfinite(up) and lo <= up
        assert delta_grouped(e, m, up) <= db
        assert lo == 0 or delta_grouped(e, m, lo) >= db


@pytest.mark.slow
@_settings(6)
@given(a=st.floats(0.05, 3.0), ratio=st.floats(1.05, 1.6), m1=st.integers(100, 900), m2=st.integers(100, 900),
       dg=log_uniform(1e-12, 1e-4), seed=st.integers(0, 2 ** 16))
def test_two_near_equal_groups_are_finite_and_within_eta(a, ratio, m1, m2, dg, seed):
    """Two groups of near-equal values (each perturbed by 1e-12 relative): a certified bracket
    within eta (or one that says why), containing the clustered exact answer of both ends."""
    rng = np.random.default_rng(seed)
    eps = np.concatenate([a * (1 + 1e-12 * rng.standard_normal(m1)),
                          a * ratio * (1 + 1e-12 * rng.standard_normal(m2))])
    r = compose(eps.tolist(), [0.0] * eps.size, dg, eta=0.1)
    assert math.isfinite(r.epsilon) and r.epsilon_lower <= r.epsilon
    assert r.epsilon - r.epsilon_lower <= 0.1 or "width > eta" in r.detail
    lo_plan = compose([float(eps[:m1].min()), float(eps[m1:].min())], [0, 0], dg, eta=1e-6, multiplicities=[m1, m2])
    hi_plan = compose([float(eps[:m1].max()), float(eps[m1:].max())], [0, 0], dg, eta=1e-6, multiplicities=[m1, m2])
    assert r.epsilon >= lo_plan.epsilon_lower and r.epsilon_lower <= hi_plan.epsilon
