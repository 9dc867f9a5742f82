"""Issue 15: a saved plan always opens again, and hostile files fail fast with a short message."""

from __future__ import annotations

import dataclasses
import json

import pytest

from dpplanner.model import Budget, Plan, PlanError, Statistic
from dpplanner.model import files, jsontext
from dpplanner.model.validation import BUDGET_RULES, FIELD_RULES, ok_range
from dpplanner.model.files import FORMAT_VERSION, MAX_FILE_BYTES, PlanFileError, load_plan, loads_plan, save_plan


def _doc(**extra) -> dict:
    return {"format_version": 1, "budget": {"epsilon": 1.0, "delta": 1e-5},
            "statistics": [{"name": "c", "kind": "count", "mechanism": "laplace", "epsilon": 0.5}],
            **extra}


def _text(**extra) -> str:
    return json.dumps(_doc(**extra))


def _padded_plan(total_bytes: int, compact: bool) -> Plan:
    """A plan whose saved form takes exactly ``total_bytes`` (compact or indented)."""
    base = len(_encoded(Plan(Budget(), [Statistic("c")], extra={"pad": ""}), compact))
    return Plan(Budget(), [Statistic("c")], extra={"pad": "x" * (total_bytes - base)})


def _encoded(plan: Plan, compact: bool) -> bytes:
    options = {"separators": (",", ":")} if compact else {"indent": 1}
    return (json.dumps(files.plan_to_document(plan), ensure_ascii=False, **options) + "\n").encode()


# --- item 1: the writer never produces what the reader refuses ----------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("compact_size", [MAX_FILE_BYTES, MAX_FILE_BYTES - 1])
def test_a_plan_whose_indented_form_is_too_large_is_saved_compact_and_reopens(tmp_path, compact_size):
    plan = _padded_plan(compact_size, compact=True)
    assert len(_encoded(plan, compact=False)) > MAX_FILE_BYTES
    path = tmp_path / "big.dpplan"
    save_plan(plan, path)
    assert path.stat().st_size == compact_size
    assert load_plan(path).snapshot() == plan.snapshot()


@pytest.mark.slow
def test_an_indented_plan_at_the_limit_stays_indented(tmp_path):
    plan = _padded_plan(MAX_FILE_BYTES, compact=False)
    path = tmp_path / "p.dpplan"
    save_plan(plan, path)
    assert path.stat().st_size == MAX_FILE_BYTES
    assert path.read_text().startswith(f'{{\n "format_version": {FORMAT_VERSION}')
    assert load_plan(path).snapshot() == plan.snapshot()


def test_a_plan_too_large_even_compact_is_refused_and_the_old_file_kept(tmp_path):
    path = tmp_path / "p.dpplan"
    save_plan(Plan(Budget(), [Statistic("old")]), path)
    old = path.read_bytes()
    # the model refuses the plan no file can hold, so it never reaches a save
    with pytest.raises(PlanError, match=rf"a plan file could not hold this plan: the plan takes "
                                        rf"{MAX_FILE_BYTES + 1} bytes even without indentation"):
        save_plan(_padded_plan(MAX_FILE_BYTES + 1, compact=True), path)
    assert path.read_bytes() == old
    assert [p.name for p in tmp_path.iterdir()] == ["p.dpplan"]


def _nested(depth: int):
    """A value that brings the document to ``depth`` levels (the top-level object is level 1)."""
    value = [0]
    for _ in range(depth - 2):
        value = [value]
    return value


def test_nesting_at_the_limit_saves_and_reopens_one_more_is_refused(tmp_path):
    depth = jsontext.MAX_DEPTH
    plan = loads_plan(_text(x=_nested(depth)))
    path = tmp_path / "p.dpplan"
    save_plan(plan, path)
    assert load_plan(path).extra["x"] == _nested(depth)
    with pytest.raises(PlanFileError, match=f"nested more than {depth} levels"):
        loads_plan(_text(x=_nested(depth + 1)))
    # a plan built in memory (not read from a file) that is too deep is refused by the model
    with pytest.raises(PlanError, match="could not hold this plan: the file is nested more than"):
        Plan(Budget(), [Statistic("c")], extra={"x": _nested(depth + 1)})


def test_value_count_at_the_limit_loads_one_more_is_refused_before_parsing():
    base = _doc(x=[])
    # the top object and format_version, the budget and its 2 fields, the statistic list, its
    # object and 4 fields, the list x
    used = 2 + 3 + 2 + 4 + 1
    at_limit = json.dumps({**base, "x": [0] * (jsontext.MAX_VALUES - used)})
    assert jsontext.check_text(at_limit)["x"][-1] == 0
    # as a plan it is refused, clearly: saved, with every default written out, it would be over
    with pytest.raises(PlanFileError, match="a plan file could not hold this plan"):
        loads_plan(at_limit)
    over = json.dumps({**base, "x": [0] * (jsontext.MAX_VALUES - used + 1)})
    with pytest.raises(PlanFileError, match=f"about {jsontext.MAX_VALUES + 1} values"):
        loads_plan(over)


@pytest.mark.parametrize("literal", ["1" * 30, "-" + "1" * 30, "1." + "2" * 29, "1.5e" + "0" * 27 + "1",
                                     "0." + "0" * 27 + "5"])
def test_numbers_of_30_digits_load(literal):
    assert loads_plan(_text(x=0).replace('"x": 0', f'"x": {literal}')).extra["x"] == json.loads(literal)


@pytest.mark.parametrize("literal", ["1" * 31, "1." + "2" * 30, "0." + "0" * 29 + "1",
                                     "1.5e" + "0" * 28 + "1"])
def test_numbers_of_31_digits_are_refused_integers_and_floats_alike(literal):
    with pytest.raises(PlanFileError, match="31 digits is too"):
        loads_plan(_text(x=0).replace('"x": 0', f'"x": {literal}'))


# --- item 5: hostile files fail fast, messages stay short ----------------------------------------

@pytest.mark.parametrize("unit", ["[" * 30 + "0" + "]" * 30, "[0]", "{}"])
def test_a_19_mb_file_of_small_nested_values_is_refused_without_parsing(unit, monkeypatch):
    text = '{"format_version": 1, "x": [' + ",".join([unit] * (18_900_000 // (len(unit) + 1))) + "]}"
    parsed = []
    monkeypatch.setattr(jsontext.json, "loads", lambda *a, **k: parsed.append(1))
    with pytest.raises(PlanFileError, match="values; at most 1000000 are allowed"):
        loads_plan(text)
    assert parsed == []      # refused by the pre-scan: json.loads never built the objects


def test_a_deep_file_is_refused_without_parsing(monkeypatch):
    monkeypatch.setattr(jsontext.json, "loads", lambda *a, **k: pytest.fail("parsed"))
    with pytest.raises(PlanFileError, match="nested more than 32"):
        loads_plan('{"format_version": 1, "x": ' + "[" * 33 + "]" * 33 + "}")


def test_brackets_inside_strings_do_not_count():
    text = _text(x="[" * 100 + '"\\"[{' * 50, y=["]" * 100])
    assert loads_plan(text).extra["x"].startswith("[[[")


@pytest.mark.parametrize("field, value", [("title", 7), ("statistics", [{"name": "x" * 2_000_000}]),
                                          ("statistics", [{"name": "c", "kind": "k" * 2_000_000}]),
                                          ("statistics", [{"name": "c", "epsilon": "9" * 2_000_000}]),
                                          ("format_version", "v" * 2_000_000)])
def test_messages_show_at_most_about_100_characters_of_a_value(field, value):
    with pytest.raises(PlanFileError) as info:
        loads_plan(json.dumps({**_doc(), field: value}))
    assert len(str(info.value)) < 400


# --- item 3: lone surrogates ---------------------------------------------------------------------

def test_a_lone_surrogate_is_refused_when_loading_naming_the_path(tmp_path):
    path = tmp_path / "s.dpplan"
    path.write_text(_text(title="ok").replace('"ok"', '"a\\ud800b"'))
    with pytest.raises(PlanFileError, match=r"s.dpplan: .*lone UTF-16 surrogate \('\\ud800'\)"):
        load_plan(path)


def test_a_surrogate_pair_is_one_character_and_round_trips(tmp_path):
    plan = loads_plan(_text(title="ok").replace('"ok"', '"\\ud83d\\ude00"'))
    assert plan.title == "\U0001F600"
    save_plan(plan, tmp_path / "p.dpplan")
    assert load_plan(tmp_path / "p.dpplan").title == "\U0001F600"


def test_saving_a_lone_surrogate_is_a_plan_file_error_naming_the_path(tmp_path):
    path = tmp_path / "s.dpplan"
    save_plan(Plan(Budget(), [Statistic("c")], title="fine"), path)
    old = path.read_bytes()
    with pytest.raises(PlanError, match=r"title holds a lone UTF-16 surrogate"):
        save_plan(Plan(Budget(), [Statistic("c")], title="\ud800"), path)
    assert path.read_bytes() == old


# --- item 6: minor -------------------------------------------------------------------------------

def test_version_0_keeps_a_top_level_budget_field(tmp_path):
    old = {"format_version": 0, "global_epsilon": 0.5, "global_delta": 1e-6,
           "budget": {"owner": "finance", "eur": 12},
           "statistics": [{"name": "n", "type": "count", "mechanism": "laplace", "epsilon": 0.1}]}
    plan = loads_plan(json.dumps(old))
    assert plan.budget.epsilon == 0.5
    assert plan.budget.extra["budget"] == {"owner": "finance", "eur": 12}
    save_plan(plan, tmp_path / "p.dpplan")
    assert load_plan(tmp_path / "p.dpplan").budget.extra["budget"] == {"owner": "finance", "eur": 12}


def test_enum_fields_accept_their_names_as_text():
    from dpplanner.model import Kind, Mechanism, Neighbouring
    plan = Plan(Budget(neighbouring="replace-one"),
                [Statistic("m", kind="mean", mechanism="gaussian", lower=0, upper=1, n=10)])
    assert (plan[0].kind, plan[0].mechanism) == (Kind.MEAN, Mechanism.GAUSSIAN)
    assert plan.budget.neighbouring is Neighbouring.REPLACE_ONE
    with pytest.raises(ValueError, match="mechanism = 'gauss' is not allowed; use one of: laplace, "
                                         "gaussian"):
        Plan(Budget(), [Statistic("c", mechanism="gauss")])


@pytest.mark.parametrize("literal", ["1e999", "1E+400", "-1e0309", "2e308", "0.5e+00000309"])
def test_numbers_beyond_a_double_are_refused(literal):
    with pytest.raises(PlanFileError, match="too large for a double"):
        loads_plan(_text(x=0).replace('"x": 0', f'"x": {literal}'))


@pytest.mark.parametrize("literal", ["1e-12.5", "1e-1e5", "1e-9-9", "1e-300e", "1e-3000x"])
def test_a_malformed_exponent_is_refused_as_not_json(literal):
    """(A run after "e-" that is not all digits is no number: not read as one on the way.)"""
    with pytest.raises(PlanFileError, match="the file is not valid JSON"):
        loads_plan(_text(x=0).replace('"x": 0', f'"x": {literal}'))


@pytest.mark.parametrize("literal", ["1e308", "1.7976931348623157e+308", "1e+99", "2.2250738585072014e-308",
                                     "0e-999", "1e-310", "5e-324"])
def test_numbers_within_a_double_load(literal):
    """(The subnormal ones as the shortest text of their double, under a key no field reads: the
    plan keeps it as written. In a field they are refused, below.)"""
    assert loads_plan(_text(x=0).replace('"x": 0', f'"x": {literal}')).extra["x"] == float(literal)


@pytest.mark.parametrize("where, literal, named", [
    ('"delta": 1e-05', "1e-400", "the budget's delta"),
    ('"delta": 1e-05', "3e-324", "the budget's delta"),
    ('"epsilon": 0.5', "-1E-400", "statistic 1's epsilon"),
    ('"epsilon": 0.5', "1.23456789e-320", "statistic 1's epsilon"),
    ('"epsilon": 0.5', "0.00001e-320", "statistic 1's epsilon"),
])
def test_a_number_too_close_to_0_to_store_exactly_is_refused_naming_its_field(where, literal, named):
    """Written by hand, 1e-400 would be read as 0 and 3e-324 as 4.94e-324: another number."""
    with pytest.raises(PlanFileError, match=rf"{named} = {literal} is too close to 0 to store exactly"):
        loads_plan(_text().replace(where, where.split(":")[0] + f": {literal}"))


_STAT_NUMBERS = [f.name for f in dataclasses.fields(Statistic) if f.name in FIELD_RULES]


@pytest.mark.parametrize("part, field", [("budget", name) for name in BUDGET_RULES] +
                         [("statistic", name) for name in _STAT_NUMBERS])
def test_a_subnormal_in_any_numeric_field_is_refused_naming_the_field(part, field):
    """1e-310 is the shortest text of its double, yet a field refuses it when typed ("too close to
    0 to store exactly"): a file is refused by the same rule, naming the field, so that no plan
    holds a value whose shown text the window would refuse when committed again."""
    doc = _doc()
    target = doc["budget"] if part == "budget" else doc["statistics"][0]
    target[field] = 1e-310
    rule = (BUDGET_RULES if part == "budget" else FIELD_RULES)[field]
    shown = "1e-308 %" if rule.percent else "1e-310"
    with pytest.raises(PlanFileError) as refused:
        loads_plan(json.dumps(doc))
    where = "budget" if part == "budget" else "statistic 1 ('c')"
    named = f"{where}: {rule.label} = {shown} is "
    assert named in str(refused.value)
    if ok_range(rule, 1e-310) and not rule.integer:
        assert f"{named}too close to 0 to store exactly" in str(refused.value)


@pytest.mark.parametrize("extra", [{"x": 10 ** 30}, {"x": [0] * jsontext.MAX_VALUES},
                                   {"x": float("nan")}, {"x": {1, 2}}])
def test_an_in_memory_plan_the_reader_would_refuse_is_not_written(tmp_path, extra):
    path = tmp_path / "p.dpplan"
    save_plan(Plan(Budget(), [Statistic("old")]), path)
    old = path.read_bytes()
    with pytest.raises(PlanError, match="a plan file could not hold this plan"):
        save_plan(Plan(Budget(), [Statistic("c")], extra=extra), path)
    assert path.read_bytes() == old


def test_a_statistic_text_with_a_lone_surrogate_is_refused_naming_the_field():
    from dpplanner.model import PlanError
    with pytest.raises(PlanError, match=r"statistic 1 \('c'\): variable holds a lone UTF-16 "
                                        r"surrogate") as info:
        Plan(Budget(), [Statistic("c", variable="a\udc80")])
    assert (info.value.index, info.value.field) == (0, "variable")
