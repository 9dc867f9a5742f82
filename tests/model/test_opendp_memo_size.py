"""The OpenDP memories (certifications, recipes, tags) hold a whole plan: a plan's statistics are
asked for in one pass, in order, and a least-recently-used memory smaller than the pass would drop
each one before it is asked for again, recomputing everything on every pass."""

import pytest

from dpplanner import engine
from dpplanner.engine.memo import forget
from dpplanner.model import opendp_noise, opendp_sensitivity
from dpplanner.model.field_rules import MAX_STATISTICS
from dpplanner.model.privacy import statistics_privacy
from dpplanner.model.releases import statistic_mechanisms
from dpplanner.model.statistic import Budget, Kind, Noise, Statistic

MEMORIES = (opendp_sensitivity.CERTIFICATIONS, opendp_noise._RECIPES, opendp_noise._TAGS)
#: Their sizes before any plan grew them (as the modules make them).
FIRST = {id(m): size for m, size in zip(MEMORIES, (1 << 12, 1 << 12, 1 << 14))}
#: More distinct statistics than the certifications' first size.
N = 4500


@pytest.fixture
def counted(monkeypatch):
    """Fresh memories at their first sizes, and the calls that fill them, counted."""
    for memo in MEMORIES:
        monkeypatch.setattr(memo, "size", FIRST[id(memo)])
    forget()
    counts = {}
    for module, name in ((opendp_sensitivity, "_certified"), (opendp_noise, "lattice_of"),
                         (engine, "discrete_laplace_scale")):
        real = getattr(module, name)

        def call(*args, real=real, name=name):
            counts[name] = counts.get(name, 0) + 1
            return real(*args)
        monkeypatch.setattr(module, name, call)
    yield counts
    forget()


def _plan():
    budget = Budget(dataset_size=1000)
    return budget, [Statistic(f"s{i}", "x", Kind.SUM, lower=0.0, upper=100.0 + i, noise=Noise.OPENDP,
                              epsilon=0.01) for i in range(N)]


def test_the_second_pass_over_a_large_plan_recomputes_nothing(counted):
    budget, stats = _plan()
    first = statistic_mechanisms(budget, stats)
    assert counted["_certified"] == N and counted["discrete_laplace_scale"] >= N
    counted.clear()
    assert statistic_mechanisms(budget, stats) == first
    assert counted == {}


def test_the_privacy_pass_certifies_each_statistic_once(counted):
    budget, stats = _plan()
    deltas = [0.0] * N
    first = statistics_privacy(budget, stats, deltas)
    assert counted["_certified"] == N
    counted.clear()
    assert statistics_privacy(budget, stats, deltas) == first
    assert "_certified" not in counted


def test_the_memories_stay_bounded_by_the_largest_plan(counted):
    opendp_noise.hold_plan(10 ** 6)
    assert [m.size for m in MEMORIES] == [MAX_STATISTICS] * 3
