"""The shipped grouped example (census-tables): it loads and validates as a household plan with
tables by group, and the comparison the README and the groups guide print is what the command
line says of it and of its variants (tools/groups_comparison.py)."""

from __future__ import annotations

import json
import sys

import pytest

from doc_pages import ROOT
from dpplanner.cli import main
from dpplanner.model import Kind
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan
from dpplanner.model.statistic import Noise

sys.path.insert(0, str(ROOT / "tools"))
import groups_comparison  # noqa: E402


@pytest.fixture(scope="module")
def runs():
    return groups_comparison.runs()


def test_the_example_validates_as_households_with_tables_by_group(capsys):
    assert main(["validate", "census-tables", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["valid"] and not report["over_budget"]
    assert report["notes"] == [] and report["warnings"] == []
    plan = load_plan(example_path("census-tables"))
    b = plan.budget
    assert (b.unit, b.contributions, b.truncate) == ("household", 4, True)
    grouped = {s.name: s for s in plan if s.group_by}
    assert len(grouped) == 4 and len(plan) == 7 and plan.k == 7
    assert grouped["mean income by region"].one_group_each
    assert all(s.noise is Noise.OPENDP for s in plan if s.kind is not Kind.CUSTOM)
    # one region per household: one cell of the income table moves
    income = plan.privacy(list(plan.statistics).index(grouped["mean income by region"]))
    assert income.moves.cells == 1 and income.problem is None


def test_the_release_sees_households_of_four(runs):
    stats = {s["name"]: s for s in runs["shipped"]["statistics"]}
    # a household's 4 persons may fall in 4 of the 90 cells, 4 rows in all: L1 4 records
    population = stats["population by age group × sex × region"]
    assert population["implementation"]["d_in"] == 4
    assert population["implementation"]["sensitivity_l1"] == 4.0
    # one region per household, up to 4 incomes in it: 4 x 200,000
    assert stats["mean income by region"]["cells_moved"] == 1
    assert stats["mean income by region"]["implementation"]["sensitivity_l2"] == pytest.approx(800_000)
    assert stats["total persons"]["implementation"]["sensitivity_l1"] == 4.0


def test_the_docs_show_what_the_command_line_says(runs):
    blocks = groups_comparison.blocks(runs)
    for name, path in groups_comparison.BLOCKS.items():
        text = path.read_text(encoding="utf-8")
        assert groups_comparison.replaced(text, name, blocks[name]) == text, \
            f"{path.name}: the census-tables comparison is stale: run .venv/bin/python tools/groups_comparison.py"


def test_grouping_and_households_change_every_error_the_way_the_docs_say(runs):
    shipped, separate, persons = (groups_comparison._errors(runs[k]) for k in ("shipped", "separate", "persons"))
    for _what, grouped, single in groups_comparison.ROWS:
        # one table, not one statistic per group: every error of the plan is smaller at the same budget
        assert shipped[grouped][0] < separate[single][0]
        # one row per person: c = 1 needs a quarter of the noise (up to the discrete lattice)
        assert persons[grouped][0] < shipped[grouped][0] <= 4.1 * persons[grouped][0]
    # the example's own noise, entered one statistic per group, is charged far more than its budget
    same = runs["same_noise"]
    assert same["totals"][same["best"]]["epsilon"] > 5 * runs["shipped"]["epsilon_g"]
    assert len(runs["separate"]["statistics"]) == 3 + 90 + 3 * 5
