"""No measurement log in the documentation: outside docs/performance.md (which `make bench`
writes), no page names a commit, a time of day, or a timing in a table. Figures go stale the day
after they are typed; the benchmark's page is rewritten by every run."""

from __future__ import annotations

import re

import pytest

from doc_pages import PAGES, ROOT

TYPED = [p for p in PAGES if p != ROOT / "docs" / "performance.md"]
COMMIT = re.compile(r"(?<![.\w])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w+-])")
TIME_OF_DAY = re.compile(r"\b[0-2]\d:[0-5]\d\b")
TIMING = re.compile(r"\d\s?(ms|s|seconds|minutes)\b")


def _lines(page):
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        yield f"{page.relative_to(ROOT)}:{n}", line


@pytest.mark.parametrize("page", TYPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_commit_hash_and_no_time_of_day(page):
    for where, line in _lines(page):
        assert not COMMIT.search(line), f"{where}: a commit hash: {line.strip()}"
        assert not TIME_OF_DAY.search(line), f"{where}: a time of day: {line.strip()}"


@pytest.mark.parametrize("page", TYPED, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_timing_in_a_table(page):
    for where, line in _lines(page):
        if line.lstrip().startswith("|"):
            assert not TIMING.search(line), f"{where}: a timing typed into a table (make bench writes them): {line.strip()}"


def test_the_patterns_catch_what_they_are_for():
    assert COMMIT.search("the previous round's last commit (26d3674)")
    assert not COMMIT.search("colour #0072b2, 20971520 bytes, deadline, 5.949132686176e-07")
    assert TIME_OF_DAY.search("81, 80, 80 / 95, 96, 90 ms (00:33)")
    assert TIMING.search("| k=50 | 7.2e-5 in 0.6 s |") and TIMING.search("| 257 ms |")
    assert not TIMING.search("| count | Δ = 1 |")
