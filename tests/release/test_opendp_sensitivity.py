"""The sensitivities dpplanner plans with are exactly those OpenDP 0.16's stability maps give."""

from __future__ import annotations

import random

import pytest

from dpplanner.model import Budget, Kind, Neighbouring, Statistic
from dpplanner.model.opendp_sensitivity import (DEFAULT_SIZE_LIMIT, certified, float_sum_sized,
                                                float_sum_unsized)

dp = pytest.importorskip("opendp.prelude")
dp.enable_features("contrib")


def _draws(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        n = rng.choice([rng.randint(2, 10 ** 7), 2 ** rng.randint(1, 23)])
        lower = rng.choice([0.0, -rng.uniform(0, 1e6), rng.uniform(0, 100), float(rng.randint(-100, 100))])
        upper = lower + rng.choice([rng.uniform(1e-3, 1e6), float(rng.randint(1, 1000))])
        yield n, lower, upper


def test_the_float_sum_rounding_term_is_opendps_to_the_last_bit():
    for n, lower, upper in _draws(5, 150):
        sized = dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(lower, upper)), size=n),
                              dp.symmetric_distance())
        limited = dp.t.make_bounded_float_checked_sum(size_limit=n, bounds=(lower, upper))
        for d_in in (1, 2, 3):
            assert float_sum_sized(n, lower, upper, d_in) == sized.map(d_in), (n, lower, upper, d_in)
            assert float_sum_unsized(n, lower, upper, d_in) == limited.map(d_in), (n, lower, upper, d_in)


def _opendp_sensitivity(stat: Statistic, budget: Budget, d_in: int) -> float:
    """OpenDP's own d_out at d_in for the query the release script noises (see opendp_sensitivity)."""
    replace = budget.neighbouring is Neighbouring.REPLACE_ONE
    size = budget.dataset_size if replace else None
    if stat.kind in (Kind.COUNT, Kind.PROPORTION):
        return dp.t.make_sum(dp.vector_domain(dp.atom_domain(bounds=(0, 1)), size=size),
                             dp.symmetric_distance()).map(d_in)
    if stat.kind in (Kind.SUM, Kind.MEAN):
        if stat.integer:
            dom = dp.vector_domain(dp.atom_domain(bounds=(int(stat.lower), int(stat.upper))), size=size)
            return dp.t.make_sum(dom, dp.symmetric_distance()).map(d_in)
        bounds = (float(stat.lower), float(stat.upper))
        if replace:
            dom = dp.vector_domain(dp.atom_domain(bounds=bounds), size=size)
            return dp.t.make_sum(dom, dp.symmetric_distance()).map(d_in)
        limit = budget.dataset_size or DEFAULT_SIZE_LIMIT
        return dp.t.make_bounded_float_checked_sum(limit, bounds).map(d_in)
    m = stat.bins if stat.kind is Kind.HISTOGRAM else 4
    dom = dp.vector_domain(dp.atom_domain(T=int), size=size)
    counts = dp.t.make_count_by_categories(dom, dp.symmetric_distance(), categories=list(range(m)),
                                           null_category=False)
    return counts.map(d_in)


@pytest.mark.parametrize("neighbouring", list(Neighbouring))
@pytest.mark.parametrize("stat", [
    Statistic("c", kind=Kind.COUNT),
    Statistic("p", "x", Kind.PROPORTION, n=400),
    Statistic("s", "x", Kind.SUM, lower=-3, upper=100, integer=True),
    Statistic("s", "x", Kind.SUM, lower=-30.5, upper=100.25),
    Statistic("m", "x", Kind.MEAN, lower=18, upper=100, integer=True),
    Statistic("m", "x", Kind.MEAN, lower=0, upper=250_000),
    Statistic("h", "x", Kind.HISTOGRAM, bins=9),
    Statistic("q", "x", Kind.QUANTILE, lower=0, upper=100, granularity=25),
], ids=lambda s: f"{s.kind.value}-{'int' if s.integer else 'real'}")
def test_each_kind_is_planned_with_opendps_certified_sensitivity(stat, neighbouring):
    budget = Budget(dataset_size=2500, neighbouring=neighbouring)
    cert = certified(stat, budget)
    want = _opendp_sensitivity(stat, budget, cert.d_in)
    assert cert.l1 == want and cert.l2 == want
    replace = neighbouring is Neighbouring.REPLACE_ONE
    if stat.kind in (Kind.HISTOGRAM, Kind.QUANTILE) and replace:
        # a replaced record moves two counts by 1: two cells, each certified at d_in = 1
        assert (cert.d_in, cert.cells) == (1, 2)
    else:
        assert (cert.d_in, cert.cells) == (2 if replace else 1, 1)


@pytest.mark.parametrize("neighbouring", list(Neighbouring))
@pytest.mark.parametrize("stat", [
    Statistic("c", kind=Kind.COUNT),
    Statistic("s", "x", Kind.SUM, lower=-3, upper=100, integer=True),
    Statistic("s", "x", Kind.SUM, lower=-30.5, upper=100.25),
    Statistic("m", "x", Kind.MEAN, lower=0, upper=250_000),
], ids=lambda s: f"{s.kind.value}-{'int' if s.integer else 'real'}")
def test_c_rows_per_individual_are_opendps_d_in_of_c_or_2c(stat, neighbouring):
    budget = Budget(dataset_size=2500, neighbouring=neighbouring, contributions=4)
    cert = certified(stat, budget)
    assert cert.d_in == (8 if neighbouring is Neighbouring.REPLACE_ONE else 4)
    assert cert.l1 == _opendp_sensitivity(stat, budget, cert.d_in)


def test_tighter_than_make_count_and_looser_where_opendp_is():
    replace = Budget(dataset_size=100, neighbouring=Neighbouring.REPLACE_ONE)
    # the indicator sum certifies 1 where make_count certifies 2 at d_in = 2
    count = dp.t.make_count(dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance())
    assert count.map(2) == 2 and certified(Statistic("c"), replace).l1 == 1.0
    # histogram under replace-one: two counts move by 1 (two cells at d_in = 1), not OpenDP's L2 = 2
    hist = certified(Statistic("h", kind=Kind.HISTOGRAM, bins=3), replace)
    assert (hist.l2, hist.cells, hist.d_in) == (1.0, 2, 1)


def test_what_opendp_needs_is_asked_for():
    with pytest.raises(ValueError, match="known size: set the plan's dataset size"):
        certified(Statistic("c"), Budget(neighbouring=Neighbouring.REPLACE_ONE))
    with pytest.raises(ValueError, match="custom statistic"):
        certified(Statistic("x", kind=Kind.CUSTOM, delta=1e-9), Budget())
