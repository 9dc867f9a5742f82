"""The sources keep PEP 8's spacing: at most two blank lines in a row (between top-level
definitions), never a stray run of them."""

from __future__ import annotations

import re
from pathlib import Path

import dpplanner

ROOT = Path(dpplanner.__file__).parent


def test_no_source_has_more_than_two_blank_lines_in_a_row():
    runs = [f"{p.relative_to(ROOT.parent)}:{text[:m.start()].count(chr(10)) + 2}"
            for p in sorted(ROOT.rglob("*.py")) for text in [p.read_text(encoding="utf-8")]
            for m in re.finditer(r"\n(?:[ \t]*\n){3,}", text)]
    assert runs == []
