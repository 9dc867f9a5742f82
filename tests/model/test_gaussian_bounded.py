"""The Gaussian noise scale search ends for every epsilon (found by the window's soak test: a
typed weight of 1e-320 gave a statistic a subnormal epsilon and froze the window)."""

import pytest

from dpplanner.model import Budget, Kind, Mechanism, Plan, Statistic
from dpplanner.model.accuracy import gaussian_sigma


@pytest.mark.parametrize("epsilon", [5e-324, 1e-320, 1e-310])
def test_a_subnormal_epsilon_is_refused_not_searched_for_ever(epsilon):
    with pytest.raises(ValueError, match="too small for Gaussian noise"):
        gaussian_sigma(1.0, epsilon, 1e-6)


def test_the_table_shows_the_problem_instead_of_freezing():
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, redistribute=False, dataset_size=1000),
                [Statistic("c", kind=Kind.COUNT, epsilon=1e-320, mechanism=Mechanism.GAUSSIAN)])
    privacy = plan.privacy_all()[0]
    assert privacy.error is None
    assert "too small for Gaussian noise" in privacy.problem
