"""The engine's memory of parsed release tags holds the largest plan validated: a plan of
discrete sums of distinct bounds has one tag per row (its shift), validated in one pass on every
edit, and a memory of 4096 tags parsed a larger plan's again on each pass. It stays bounded."""

from __future__ import annotations

import pytest

from dpplanner.engine import validation


@pytest.fixture
def parses(monkeypatch):
    """A fresh, empty memory; the number of tags parsed (not found in it) so far."""
    monkeypatch.setattr(validation, "_TAGS", {})
    monkeypatch.setattr(validation, "_tag_room", 4096)
    count = [0]
    real = validation._parsed

    def counted(tag, what):
        count[0] += 1
        return real(tag, what)

    monkeypatch.setattr(validation, "_parsed", counted)
    return count


def _validate(tags: list[str]) -> None:
    validation.validate_plan([1.0] * len(tags), [0.0] * len(tags), mechanisms=tags)


def test_a_plan_of_more_distinct_tags_than_4096_is_parsed_once(parses):
    tags = [f"discrete-laplace:{i + 1}" for i in range(5000)]
    _validate(tags)
    assert parses[0] == 5000
    _validate(tags)
    _validate(tags)
    assert parses[0] == 5000
    assert validation.parse_tag("discrete-laplace:17*3") == ("discrete-laplace", 17, 3)


def test_the_memory_starts_again_when_full_and_then_holds_the_plan(parses):
    _validate([f"discrete-laplace:{i + 1}" for i in range(4096)])          # an earlier plan's tags
    tags = [f"laplace*{i + 1}" for i in range(3000)]
    _validate(tags)
    _validate(tags)                 # refilled once, by the pass after the memory started again
    before = parses[0]
    _validate(tags)
    assert parses[0] == before and len(validation._TAGS) <= 4096


def test_the_memory_grows_no_further_than_max_tags(parses, monkeypatch):
    monkeypatch.setattr(validation, "MAX_TAGS", 6000)
    _validate([f"discrete-laplace:{i + 1}" for i in range(9000)])
    assert validation._tag_room == 6000 and len(validation._TAGS) <= 6000
    assert parses[0] == 9000
