import math

import pytest

from dpplanner.gui import formatting


@pytest.mark.parametrize("value", [0.250004, 0.24996, 1e-7 * 3.14159, 123456.7, 0.1, 2.0, 9.99996])
def test_upper_text_is_never_below_the_value(value):
    assert float(formatting.upper(value)) >= value
    assert float(formatting.lower(value)) <= value


def test_rounding_direction_matters():
    assert formatting.upper(0.250004) == "0.2501"
    assert formatting.lower(0.250004) == "0.2500"
    assert formatting.upper(9.99996) == "10.0000"
    assert formatting.upper(3.2e-7) == "3.200e-07"


def test_special_values():
    assert formatting.upper(math.inf) == "∞"
    assert formatting.upper(math.nan) == "n/a"
    assert formatting.upper(0.0) == "0"
