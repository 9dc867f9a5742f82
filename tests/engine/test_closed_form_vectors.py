"""formulas.md §9 test vectors for basic (§1), advanced (§2), concurrent (§5) and filters (§6)."""

from __future__ import annotations

import numpy as np
import pytest

from dpplanner.engine import compose, filter_admits
from dpplanner.engine.advanced import drv_epsilon, kov35_b, kov35_c, steinke_epsilon, tanh_epsilon
from dpplanner.engine.concurrent import vadhan_wang_delta
from dpplanner.engine.delta import log_survival, total_delta_up
from dpplanner.engine.filters import rruv_statistic, wrrw_statistic
from dpplanner.engine.stats import eps_tanh

REL = 1e-8


def approx(x):
    return pytest.approx(x, rel=REL, abs=0)


@pytest.mark.parametrize("eps, delta, eps_g, delta_g", [
    ([0.1, 0.2, 0.5], [1e-6, 0, 1e-7], 0.8, 1.1e-6),
    ([1] * 10, [0] * 10, 10.0, 0.0),
    ([0.2, 0.4, 0.7], [1e-6] * 3, 1.3, 3e-6),
])
def test_basic_vectors(eps, delta, eps_g, delta_g):
    r = compose(eps, delta, 1e-5, "basic")
    assert r.epsilon == approx(eps_g) and r.epsilon >= eps_g
    assert r.delta == approx(delta_g) and r.delta >= delta_g


@pytest.mark.parametrize("eps, k, dprime, drv, tanh, steinke", [
    (0.001, 500, 1e-6, 0.1180396501, 0.1177894000, 0.1177894000),
    (0.1, 100, 1e-6, 6.308230951, 5.756105519, 5.756521770),
    (1.0, 10, 1e-5, 32.35708958, 19.79544287, 20.17427129),
    (0.01, 1000, 1e-9, 2.136343798, 2.085841711, 2.085842127),
])
def test_advanced_homogeneous_vectors(eps, k, dprime, drv, tanh, steinke):
    assert drv_epsilon(eps, k, dprime) == approx(drv)
    assert tanh_epsilon(eps, k, dprime) == approx(tanh)
    assert steinke_epsilon(k * eps * eps, dprime) == approx(steinke)
    # through the public API (delta_i = 0): the winner is the smallest candidate, never above basic
    r = compose([eps], [0.0], dprime, "advanced", multiplicities=[k])
    assert r.extra["DRV"] == approx(drv)
    assert r.epsilon == min(r.extra.values())
    assert r.epsilon <= min(drv, tanh, steinke, k * eps) * (1 + REL)


def test_drv_with_query_deltas():
    r = compose([0.1], [1e-7], 1.1e-5, "advanced", multiplicities=[100])
    assert r.extra["DRV"] == approx(6.308230951)


@pytest.mark.parametrize("eps, delta, expected", [
    ([0.1] * 5 + [0.5] * 5, 1e-5, 6.121161322),
    ([0.01] * 50 + [0.05] * 50, 1e-6, 1.960265877),
])
def test_steinke_heterogeneous(eps, delta, expected):
    r = compose(eps, [0.0] * len(eps), delta, "advanced")
    assert r.extra["Steinke"] == approx(expected)


@pytest.mark.parametrize("eps, delta_i, delta_tilde, b, c, winner, delta_total", [
    ([0.1] * 5 + [0.5] * 5, 0.0, 1e-5, 6.139524633, 6.108437165, 3.0, 1e-5),
    ([0.01] * 50 + [0.05] * 50, 0.0, 1e-6, 1.888940359, 1.960252839, 1.888940359, 1e-6),
    ([0.2, 0.4, 0.7], 1e-6, 1e-5, 4.288059845, 4.320301593, 1.3, 1.299996700e-5),
    ([0.001] * 500, 0.0, 1e-6, 0.1003258756, 0.1177894000, 0.1003258756, 1e-6),
])
def test_kov35_vectors(eps, delta_i, delta_tilde, b, c, winner, delta_total):
    e = np.array(eps)
    s_tanh, s_sq = eps_tanh(e).sum(), (e * e).sum()
    assert kov35_b(s_tanh, s_sq, delta_tilde) == approx(b)
    assert kov35_c(s_tanh, s_sq, delta_tilde) == approx(c)
    assert min(e.sum(), kov35_b(s_tanh, s_sq, delta_tilde), kov35_c(s_tanh, s_sq, delta_tilde)) == approx(winner)
    d = np.full(len(eps), delta_i)
    assert total_delta_up(delta_tilde, log_survival(d, np.ones(len(eps), dtype=int))) == approx(delta_total)


def test_advanced_names_winner_and_keeps_every_candidate():
    r = compose([0.001] * 500, [0.0] * 500, 1e-6, "advanced")
    assert r.detail == "KOV Thm 3.5 (b)"
    assert r.epsilon == approx(0.1003258756)
    assert set(r.extra) == {"basic", "DRV", "tanh", "KOV Thm 3.5 (b)", "KOV Thm 3.5 (c)", "Steinke"}
    assert r.extra["tanh"] == approx(0.1177894000)
    assert r.delta == 1e-6


def test_advanced_falls_back_to_basic_when_basic_wins():
    r = compose([1.0] * 10, [0.0] * 10, 1e-5, "advanced")
    assert r.detail == "basic" and r.epsilon == approx(10.0)
    assert r.extra["DRV"] == approx(32.35708958)


def test_vadhan_wang_vectors():
    d, order = vadhan_wang_delta(np.array([1, 0.5, 0.1]), np.array([1e-6, 1e-5, 1e-4]))
    assert order == [2, 1, 0] and d == approx(1.128738280e-4)
    d, order = vadhan_wang_delta(np.array([0.1, 1, 0, 0.3]), np.array([1e-5, 1e-5, 1e-7, 0]))
    assert order == [2, 0, 1, 3] and d == approx(2.115170918e-5)
    d, _ = vadhan_wang_delta(np.array([0.5]), np.array([1e-6]), np.array([4]))
    assert d == approx(9.848692169e-6)
    # multiplicities give the same as the expanded sequence
    d_exp, _ = vadhan_wang_delta(np.array([0.5] * 4), np.array([1e-6] * 4))
    assert d == approx(d_exp)


def test_vadhan_wang_order_is_the_brute_force_minimum():
    from itertools import permutations
    rng = np.random.default_rng(7)
    for _ in range(20):
        eps = rng.uniform(0, 1.5, 5)
        delta = rng.choice([0.0, 1e-7, 1e-6, 1e-5], 5)
        best = min(sum(np.exp(eps[list(p[:i])].sum()) * delta[p[i]] for i in range(5))
                   for p in permutations(range(5)))
        d, _ = vadhan_wang_delta(eps, delta)
        assert d >= best and d == pytest.approx(best, rel=1e-9, abs=1e-300)


def test_filter_statistics():
    eps = np.full(10, 0.1)
    assert rruv_statistic((eps * np.expm1(eps)).sum(), (eps * eps).sum(), 1.0, 1e-6) == approx(2.960696414)
    assert wrrw_statistic(0.1, 1e-6) == approx(1.712258136)


@pytest.mark.parametrize("eps_i, delta_i, n, filt, expected", [
    (0.3, 0.0, 10, "basic", 3),
    (0.01, 0.0, 1000, "basic", 99),  # binary 0.01 x 100 exceeds 1.0 (issue 13.6: no decimals)
    (0.01, 0.0, 1000, "rruv", 147),
    (0.01, 0.0, 1000, "wrrw", 349),
    (0.001, 0.0, 50000, "rruv", 14799),
    (0.001, 0.0, 50000, "wrrw", 34937),
    (0.01, 1e-9, 1000, "wrrw", 333),
    (0.01, 1e-9, 1000, "rruv", 147),
])
def test_filter_admits_vectors(eps_i, delta_i, n, filt, expected):
    assert filter_admits([eps_i], [delta_i], 1.0, 1e-6, filter=filt, multiplicities=[n]) == expected


def test_filter_admits_everything_when_the_plan_fits():
    assert filter_admits([0.01] * 5, [0.0] * 5, 1.0, 1e-6, filter="wrrw") == 5


def test_filter_theorem_reports_best_filter_and_its_eps_admits_the_plan():
    eps = [0.01] * 50 + [0.05] * 50
    r = compose(eps, [0.0] * 100, 1e-6, "filter")
    assert r.detail == "WRRW filter" and r.epsilon == approx(1.960265877)
    assert set(r.extra) == {"basic filter", "RRUV advanced filter", "WRRW filter"}
    for name, filt in (("WRRW filter", "wrrw"), ("RRUV advanced filter", "rruv"), ("basic filter", "basic")):
        assert filter_admits(eps, [0.0] * 100, r.extra[name], 1e-6, filter=filt) == 100
        assert filter_admits(eps, [0.0] * 100, r.extra[name] * (1 - 1e-6), 1e-6, filter=filt) < 100


def test_rruv_needed_epsilon_matches_K_vector():
    # history [0.1]*10 with eps_g = 1 has K = 2.96 > 1: a filter given eps_g = 1 must stop earlier,
    # and the eps_g the RRUV filter needs for the whole history is a fixed point K(eps_g) <= eps_g.
    r = compose([0.1], [0.0], 1e-6, "filter", multiplicities=[10])
    need = r.extra["RRUV advanced filter"]
    eps = np.full(10, 0.1)
    assert rruv_statistic((eps * np.expm1(eps)).sum(), 0.1, need, 1e-6) <= need
    assert rruv_statistic((eps * np.expm1(eps)).sum(), 0.1, need * (1 - 1e-6), 1e-6) > need * (1 - 1e-6)
    assert r.detail == "basic filter" and r.epsilon == approx(1.0)


@pytest.mark.parametrize("delta_g", [1e-12, 1e-6, 0.1])
def test_the_rruv_root_is_found_in_a_few_evaluations(monkeypatch, delta_g):
    """The RRUV filter's least eps_g (per prefix of a curve: a hundred rows at once): doublings to
    a passing eps_g, then false position with a halving or, close to the root, two points
    straddling it: about ten evaluations for all rows (halving a 2^(1/16) cell took ~42), and
    the answer passes its own test K(eps_g) <= eps_g within 2e-14 of the root."""
    import dpplanner.engine.filters as filters

    rng = np.random.default_rng(11)
    v = 10 ** rng.uniform(-6, 2, 200)
    kl = v * (1 + rng.uniform(0, 0.5, 200))
    calls = []
    real = filters.rruv_statistic
    monkeypatch.setattr(filters, "rruv_statistic", lambda *a: calls.append(1) or real(*a))
    got = filters._rruv_least_root(kl, v, delta_g)
    assert len(calls) <= 20
    assert np.all(real(kl, v, got, delta_g) <= got)
    below = got * (1 - 2e-14)
    assert not np.any(real(kl, v, below, delta_g) <= below)


def test_the_filter_curve_is_the_least_filter_at_every_prefix():
    """filter_epsilon (the curve) searches RRUV's root only where its floor is below the other two
    filters' least: the curve is still, to the bit, the least of all three filters per prefix."""
    from dpplanner.engine.filters import filter_candidates, filter_epsilon
    from dpplanner.engine.stats import prefix_sums

    rng = np.random.default_rng(4)
    for delta_g, eps in ((1e-6, rng.uniform(0.001, 0.5, 60)), (0.2, np.full(40, 0.3)),
                         (1e-9, 10 ** rng.uniform(-4, 0.5, 80))):
        s = prefix_sums(eps, np.zeros(eps.size), np.arange(1, eps.size + 1))
        every = filter_candidates(s, delta_g)
        assert np.isfinite(every["RRUV advanced filter"]).any()
        assert np.array_equal(filter_epsilon(s, delta_g), np.min(np.stack(list(every.values())), axis=0))
