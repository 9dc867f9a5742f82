"""What the pages state that the code also says is the same: the harm-level presets, the plan
file's defaults, the version and its changelog section. A change to one fails here until the other
follows."""

from __future__ import annotations

import dataclasses
import enum
import re

import pytest

import dpplanner
from doc_pages import ROOT
from dpplanner.engine.theorems import DEFAULT_THEOREM
from dpplanner.model import files
from dpplanner.model.statistic import SENSITIVITY_TIERS, Budget, Statistic


def _page(path: str) -> str:
    return (ROOT / path).read_text(encoding="utf-8")


def test_the_harm_levels_are_the_presets():
    listed = re.findall(r"^- \*\*(.+?)\*\*: ε = ([\d.e-]+), δ = ([\d.e-]+)$", _page("docs/guide/basics.md"), re.M)
    assert [(label, float(e), float(d)) for label, e, d in listed] == \
        [(t.label, t.epsilon, t.delta) for t in SENSITIVITY_TIERS]


def _defaults_table(text: str, first_header: str) -> dict[str, str]:
    block = text.split(f"| {first_header} | default |", 1)[1].split("\n\n", 1)[0]
    return {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| `(\w+)` \| (.+?) \|$", block, re.M)}


def _shown(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, str):
        return f'`"{value}"`'
    return repr(value)


@pytest.mark.parametrize("cls, header, defaults, required", [
    (Budget, "`budget` field", files.BUDGET_DEFAULTS, files.REQUIRED_BUDGET),
    (Statistic, "statistic field", files.STATISTIC_DEFAULTS, files.REQUIRED_STATISTIC + ("mechanism",))])
def test_the_file_formats_defaults_are_the_readers(cls, header, defaults, required):
    """The table gives what the file reader does with a missing field: refuse it (required) or
    take the default (a note after it may say more)."""
    table = _defaults_table(_page("docs/reference/file-format.md"), header)
    fields = [f.name for f in dataclasses.fields(cls) if f.name != "extra"]
    assert set(table) == set(fields), "every field of the plan file has a row in its Defaults table"
    for name in fields:
        if name in required:
            assert table[name].startswith("(required"), f"{cls.__name__}.{name}"
        elif name == "theorem":                 # a file that names none keeps the legacy theorem
            assert table[name].startswith(_shown(defaults[name])) and _shown(DEFAULT_THEOREM) in table[name]
        else:
            assert table[name].split(" (")[0] == _shown(defaults[name]), f"{cls.__name__}.{name}"


def test_the_changelog_opens_with_the_version_in_progress():
    sections = re.findall(r"^## (\d+\.\d+\.\d+)", _page("CHANGELOG.md"), re.M)
    assert sections[0] == dpplanner.__version__, "bump dpplanner.__version__ with a new CHANGELOG section"
    assert len(sections) == len(set(sections))
