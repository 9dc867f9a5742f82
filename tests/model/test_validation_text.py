"""Typed text is read exactly or refused with the reason; plan values are shown so they read back."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpplanner.model import BUDGET_RULES, FIELD_RULES, PlanError
from dpplanner.model.typed import format_value, parse_text


@pytest.mark.parametrize("rule, text, value", [
    (BUDGET_RULES["epsilon"], "0.25", 0.25),
    (BUDGET_RULES["epsilon"], " 1e-3 ", 0.001),
    (BUDGET_RULES["dataset_size"], "2500", 2500),
    (BUDGET_RULES["dataset_size"], "1e3", 1000),
    (BUDGET_RULES["dataset_size"], "", None),
    (BUDGET_RULES["delta_split"], "33.3", 0.333),         # not 0.33299999999999996
    (BUDGET_RULES["reserve"], "10 %", 0.1),
    (BUDGET_RULES["confidence"], "95", 0.95),
    (FIELD_RULES["repetitions"], "3", 3),
    (FIELD_RULES["delta"], "-0", 0.0),
    (FIELD_RULES["delta"], "2.2250738585072014e-308", 2.2250738585072014e-308),     # (the least normal double)
    (BUDGET_RULES["reserve"], "2.2250738585072014e-306", 2.2250738585072014e-308),
])
def test_typed_text_is_stored_exactly(rule, text, value):
    parsed = parse_text(rule, text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize("rule, text, reason", [
    (BUDGET_RULES["epsilon"], "150",
     r"global epsilon = 150 is not allowed; it must be a number in \(0, 100\]"),
    (BUDGET_RULES["epsilon"], "1e309", r"global epsilon = 1e309 is not allowed"),
    (BUDGET_RULES["epsilon"], "nan", r"global epsilon = nan is not allowed"),
    (BUDGET_RULES["epsilon"], "0,5", r"'0,5' is not a number \(write decimals with a point"),
    (BUDGET_RULES["dataset_size"], "1 000", r"'1 000' is not a number \(write it without spaces: 1000\)"),
    (BUDGET_RULES["dataset_size"], "2\u202f500", r"is not a number \(write it without spaces: 2500\)"),
    (BUDGET_RULES["epsilon"], "", r"global epsilon is required"),
    (BUDGET_RULES["dataset_size"], "-250.5", r"dataset size n = -250.5 is not allowed; it must be a "
                                             r"whole number in \[1, 1e\+12\]"),
    (BUDGET_RULES["dataset_size"], "2.5", r"dataset size n = 2.5 is not a whole number"),
    (BUDGET_RULES["reserve"], "100", r"reserve = 100 % is not allowed; it must be a percentage in "
                                     r"\[0 %, 100 %\)"),
    (BUDGET_RULES["delta_split"], "100", r"delta to statistics = 100 % is not allowed"),
    (FIELD_RULES["repetitions"], "0", r"number of releases = 0 is not allowed"),
    (FIELD_RULES["repetitions"], "2.5", r"number of releases = 2.5 is not a whole number"),
    # Not whole, though the nearest double is: typed values are kept or refused, never rounded.
    (BUDGET_RULES["dataset_size"], "0.99999999999999999", r"dataset size n = 0.99999999999999999 is not "
                                                         r"a whole number"),
    (BUDGET_RULES["dataset_size"], "1.0000000000000001", r"= 1.0000000000000001 is not a whole number"),
    (FIELD_RULES["repetitions"], "1e20", r"number of releases = 1e20 is not allowed"),
    # Nearer 0 than any double: it would have been stored as 0 (a pure release, a pure-DP budget)
    # or as -0.0 (a negative number typed), or refused as outside a range it is in. Nearer 0 than
    # the least normal double: stored with fewer digits ("3e-324" as 4.94e-324).
    (FIELD_RULES["delta"], "1e-400", r"delta = 1e-400 is too close to 0 to store"),
    (FIELD_RULES["delta"], "-1e-400", r"delta = -1e-400 is too close to 0 to store"),
    (BUDGET_RULES["delta"], "1e-330", r"global delta = 1e-330 is too close to 0 to store"),
    (BUDGET_RULES["delta_split"], "5e-324", r"delta to statistics = 5e-324 % is too close to 0 to store "
                                            r"exactly \(numbers nearer 0 than about 2.2250738585072014e-306 % "
                                            r"are not kept\)"),
    (FIELD_RULES["delta"], "3e-324", r"delta = 3e-324 is too close to 0 to store exactly \(numbers nearer "
                                     r"0 than about 2.2250738585072014e-308 are not kept\); it must be"),
    (FIELD_RULES["lower"], "-1e-310", r"lower bound = -1e-310 is too close to 0 to store exactly"),
    (BUDGET_RULES["reserve"], "1e-306", r"reserve = 1e-306 % is too close to 0 to store exactly"),
    (FIELD_RULES["epsilon"], "1e-330", r"epsilon = 1e-330 is too close to 0 to store .*"
                                       r"it must be a number in \(0, 100\]"),
])
def test_unacceptable_text_is_refused_with_the_reason(rule, text, reason):
    with pytest.raises(PlanError, match=reason) as info:
        parse_text(rule, text)
    assert info.value.field == rule.name


@given(st.floats(min_value=1e-12, max_value=100, allow_nan=False))
def test_shown_value_reads_back_to_the_same_number(x):
    rule = BUDGET_RULES["epsilon"]
    assert parse_text(rule, format_value(rule, x)) == x


@given(st.floats(min_value=0, max_value=1, exclude_max=True, allow_subnormal=False))
def test_percent_fields_round_trip(x):
    rule = BUDGET_RULES["reserve"]
    text = format_value(rule, x)
    assert parse_text(rule, text) == x and len(text) <= 24     # (1e-300 %: not 300 zeros)
    assert ("e" in text) == (0 < x < 1e-8)


def test_format_shows_whole_numbers_and_empty():
    assert format_value(BUDGET_RULES["dataset_size"], 2500) == "2500"
    assert format_value(BUDGET_RULES["population"], None) == ""
    assert format_value(BUDGET_RULES["delta_split"], 0.5) == "50"
    assert format_value(BUDGET_RULES["delta"], 1e-7) == "1e-7"
    assert format_value(BUDGET_RULES["epsilon"], 1e16) == "1e16"
    assert format_value(BUDGET_RULES["epsilon"], 1.0) == "1"
    assert format_value(FIELD_RULES["lower"], -18.0) == "-18"


@given(st.text(alphabet="0123456789.-+eE, %x_", max_size=12))
def test_text_is_read_whole_or_refused_never_trimmed(text):
    """Whatever is typed is either read as the whole decimal it spells, or refused: no character
    is ever dropped to make it fit (a spin box turned 150 into 15)."""
    from decimal import Decimal, InvalidOperation

    for rule in (BUDGET_RULES["epsilon"], BUDGET_RULES["reserve"], FIELD_RULES["repetitions"]):
        try:
            value = parse_text(rule, text)
        except PlanError:
            continue
        raw = text.strip()
        if rule.percent and raw.endswith("%"):
            raw = raw[:-1].strip()
        try:
            exact = Decimal(raw) / (100 if rule.percent else 1)
        except InvalidOperation:
            raise AssertionError(f"{text!r} is not a number but was read as {value!r}") from None
        assert value == float(exact)
