"""Plan files trust no field they do not have and no key they have twice (issue 23.2-3): a
required field that is missing is an error naming it, an optional one takes its documented
default and is listed by ``defaults_used`` (and ``dpplanner-cli validate``), and a key repeated
anywhere in the document is refused with where it is."""

from __future__ import annotations

import copy
import json

import pytest

from dpplanner.cli import main as cli
from dpplanner.model import Kind, Mechanism
from dpplanner.model.examples import example_path, example_paths
from dpplanner.model.files import (BUDGET_DEFAULTS, STATISTIC_DEFAULTS, PlanFileError, defaults_used,
                                   load_plan, loads_plan, parse_document)


def census() -> dict:
    return json.loads(example_path("census").read_text(encoding="utf-8"))


def without(doc: dict, *path) -> dict:
    doc = copy.deepcopy(doc)
    where = doc
    for key in path[:-1]:
        where = where[key]
    del where[path[-1]]
    return doc


@pytest.mark.parametrize("path, message", [
    (("budget", "epsilon"), "the budget has no 'epsilon': the field is required"),
    (("budget", "delta"), "the budget has no 'delta': the field is required"),
    (("budget",), "the plan has no 'budget': the field is required"),
    (("statistics",), "the plan has no 'statistics': the field is required"),
    (("format_version",), "'format_version' must be a whole number"),
    (("statistics", 0, "name"), "statistic 1 has no 'name'"),
    (("statistics", 3, "kind"), r"statistic 4 \('median rent north'\) has no 'kind'"),
    (("statistics", 3, "mechanism"), r"statistic 4 \('median rent north'\) has no 'mechanism'"),
    (("statistics", 3, "epsilon"), r"statistic 4 \('median rent north'\) has no 'epsilon'"),
])
def test_a_missing_required_field_is_refused_naming_it(path, message):
    with pytest.raises(PlanFileError, match=message):
        loads_plan(json.dumps(without(census(), *path)))


def test_census_without_its_budget_epsilon_no_longer_spends_four_times_its_budget(tmp_path, capsys):
    """The issue's case: validate said "valid" and allocate -o wrote a plan spending ε = 1."""
    bad = tmp_path / "census.dpplan"
    bad.write_text(json.dumps(without(census(), "budget", "epsilon")))
    out = tmp_path / "out.dpplan"
    for command in (["validate", str(bad)], ["allocate", str(bad), "-o", str(out)]):
        assert cli(command) == 2
        assert "has no 'epsilon': the field is required" in capsys.readouterr().err
    assert not out.exists()


def test_a_custom_statistic_needs_its_delta_but_no_mechanism():
    doc = {"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-6},
           "statistics": [{"name": "c", "kind": "custom", "epsilon": 0.2, "delta": 1e-8}]}
    plan = loads_plan(json.dumps(doc))
    assert plan[0].kind is Kind.CUSTOM and plan[0].delta == 1e-8
    assert not any("mechanism" in note for note in defaults_used(doc))
    with pytest.raises(PlanFileError, match=r"statistic 1 \('c'\) has no 'delta'"):
        loads_plan(json.dumps(without(doc, "statistics", 0, "delta")))


def test_a_version_0_file_is_told_its_old_names():
    old = {"format_version": 0, "global_delta": 1e-6,
           "statistics": [{"name": "n", "type": "count", "mechanism": "laplace", "epsilon": 0.1}]}
    with pytest.raises(PlanFileError, match=r"no 'epsilon' \('global_epsilon' in a format_version 0"):
        loads_plan(json.dumps(old))
    old["global_epsilon"] = 0.5
    del old["statistics"][0]["type"]
    with pytest.raises(PlanFileError, match=r"no 'kind' \('type' in a format_version 0 file\)"):
        loads_plan(json.dumps(old))
    old["statistics"][0]["type"] = "count"
    plan = loads_plan(json.dumps(old))
    assert plan.budget.epsilon == 0.5 and plan.notes          # and it is told it was migrated


def test_every_default_taken_is_listed_and_nothing_else():
    doc = census()
    assert defaults_used(doc) == []                      # a saved plan says everything
    del doc["budget"]["reserve"], doc["budget"]["theorem"], doc["title"]
    for i in (0, 1, 2, 4):
        del doc["statistics"][i]["weight"]
    del doc["statistics"][7]["held"]
    plan = loads_plan(json.dumps(doc))
    assert plan.budget.reserve == BUDGET_DEFAULTS["reserve"] == 0.0
    assert plan.budget.theorem == BUDGET_DEFAULTS["theorem"]
    assert plan[4].weight == STATISTIC_DEFAULTS["weight"] and plan.title == ""
    assert list(plan.defaults) == [
        'title = ""', "budget theorem = \"optimal\"", "budget reserve = 0.0",
        "statistics 1-3, 5: weight = 1.0", "statistic 8: held = false"]


def test_every_shipped_example_says_every_field():
    for name, path in example_paths().items():
        assert load_plan(path).defaults == (), name


def test_validate_echoes_the_defaults_it_used(tmp_path, capsys):
    path = tmp_path / "short.dpplan"
    path.write_text(json.dumps(without(census(), "budget", "confidence")))
    assert cli(["validate", str(path)]) == 0
    assert "note: not in the file, default used: budget confidence = 0.95" in capsys.readouterr().out
    assert cli(["validate", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["notes"] == [
        "not in the file, default used: budget confidence = 0.95"]


# -- duplicate keys -------------------------------------------------------------------------------
BUDGET = '"budget": {"epsilon": 1.0, "delta": 1e-6}'
STAT = '{"name": "n", "kind": "count", "mechanism": "laplace", "epsilon": 0.1}'


@pytest.mark.parametrize("text, where", [
    # the four cases
    ('{"format_version": 1, ' + BUDGET + ', "statistics": [' + STAT + '], "statistics": []}',
     "'statistics' appears more than once at the top level"),
    ('{"format_version": 1, "budget": {"epsilon": 5000}, ' + BUDGET + ', "statistics": []}',
     "'budget' appears more than once at the top level"),
    ('{"format_version": 1, "budget": {"epsilon": -7, "epsilon": 1.0, "delta": 1e-6}, '
     '"statistics": []}', "'epsilon' appears more than once in the budget"),
    ('{"format_version": 99, "format_version": 1, ' + BUDGET + ', "statistics": []}',
     "'format_version' appears more than once at the top level"),
    # anywhere else
    ('{"format_version": 1, ' + BUDGET + ', "statistics": [' + STAT + ', '
     + STAT.replace('"epsilon"', '"held": true, "held"') + ']}', "'held' appears more than once in statistic 2"),
    ('{"format_version": 1, ' + BUDGET + ', "statistics": [], "x": [[{"a": {"b": 1, "b": 1}}]]}',
     r"'b' appears more than once in x\[0\]\[0\]\.a"),
    ('{"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-6, "note": {"k": 1, "k": 2}}, '
     '"statistics": []}', "'k' appears more than once in the budget's note"),
    ('{"format_version": 0, "global_epsilon": 1, "global_epsilon": 2, "statistics": []}',
     "'global_epsilon' appears more than once at the top level"),
])
def test_a_key_given_twice_anywhere_is_refused_with_where_it_is(text, where):
    with pytest.raises(PlanFileError, match=where):
        parse_document(text)


def test_the_same_key_in_different_objects_is_fine():
    text = ('{"format_version": 1, ' + BUDGET + ', "statistics": [' + STAT + ", "
            + STAT.replace('"n"', '"m"') + '], "epsilon": 3}')
    plan = loads_plan(text)
    assert [s.name for s in plan] == ["n", "m"] and plan[0].mechanism is Mechanism.LAPLACE
