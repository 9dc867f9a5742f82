import math

from dpplanner.model import Kind, Statistic
from dpplanner.model.relative_error import full_range, relative_error_percent


def test_each_kind_is_measured_against_its_own_range():
    n = 1000
    assert full_range(Statistic("c", kind=Kind.COUNT), n) == 1000
    assert full_range(Statistic("s", kind=Kind.SUM, lower=-5, upper=2), n) == 5000
    assert full_range(Statistic("m", kind=Kind.MEAN, lower=10, upper=60, n=50), n) == 50
    assert full_range(Statistic("p", kind=Kind.PROPORTION, n=40), n) == 1
    assert full_range(Statistic("h", kind=Kind.HISTOGRAM, bins=4), n) == 1000
    assert full_range(Statistic("c", kind=Kind.COUNT), None) is None


def test_relative_error_is_a_percentage_rounded_up():
    stat = Statistic("c", kind=Kind.COUNT)
    value = relative_error_percent(stat, 3.0, 1000)
    assert value >= 0.3 and value == math.nextafter(math.nextafter(0.3, 1), 1)
    assert math.isnan(relative_error_percent(stat, 3.0, None))
    assert math.isnan(relative_error_percent(Statistic("x", kind=Kind.CUSTOM, epsilon=0.1), 1.0, 10))
