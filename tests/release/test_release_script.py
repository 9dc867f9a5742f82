"""The exported release script, run as a user runs it: every check passes on data within the
plan's bounds, the stated errors hold at the stated confidence, and a script that no longer matches
its plan (a lowered scale, an unfilled custom statistic) releases nothing."""

from __future__ import annotations

import json
import math

import pytest

from dpplanner import engine
from dpplanner.model.examples import example_path
from dpplanner.model.files import load_plan
from dpplanner.model.statistic import Neighbouring
from dpplanner.release import ExportError

from release_scripts import (every_kind_plan, export, fill_customs, load_module, opendp_example, redigest, run,
                             write_data)

dp = pytest.importorskip("opendp.prelude")

EXAMPLES = ("psi-survey", "census", "synthetic-100", "synthetic-1000")


def _rows(block: dict) -> int:
    return block["size"] if block["size"] is not None else 300


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_shipped_example_exports_and_releases(name, tmp_path):
    plan = opendp_example(name)
    script = tmp_path / "release.py"
    block = export(plan, script)
    if block["custom"]:
        fill_customs(script)
    columns = write_data(block, tmp_path / "data.csv", _rows(block), seed=1)
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "all checks passed" in done.stdout
    released = json.loads((tmp_path / "out" / "release.json").read_text())
    names = {r["statistic"].split(" #")[0] for r in released["released"]}
    assert names == {s.name for s in plan}
    record = (tmp_path / "out" / "release-record.txt").read_text()
    assert plan.title in record and "OpenDP: 0.16" in record
    # the theorems as the window names them (QA17 N2: "under pld", "  pld: epsilon = ...")
    label = engine.theorem(plan.budget.theorem).label
    assert f"delta = {plan.budget.delta!r} under {label}\n" in record and f"\n  {label}: epsilon = " in record
    for name in (n for n in engine.THEOREMS if engine.theorem(n).label != n):
        assert f"under {name}\n" not in record and f"\n  {name}:" not in record, name


def test_an_over_budget_plan_is_not_exported(tmp_path):
    plan = load_plan(example_path("psi-survey"))                     # balanced: it spends its budget
    plan.set_budget(redistribute=False)
    plan.replace_all([s.replace(epsilon=s.epsilon * 1.01) for s in plan])
    with pytest.raises(ExportError, match=r"under its theorem \(noise-aware \(PLD\)\) it is over budget"):
        export(plan, tmp_path / "release.py")
    assert not (tmp_path / "release.py").exists()


@pytest.mark.parametrize("neighbouring", list(Neighbouring))
def test_a_plan_with_every_kind_releases_what_it_planned(neighbouring, tmp_path):
    plan = every_kind_plan(neighbouring)
    script = tmp_path / "release.py"
    block = export(plan, script)
    columns = write_data(block, tmp_path / "data.csv", _rows(block), seed=2)
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out")
    assert done.returncode == 0, done.stderr
    rows = json.loads((tmp_path / "out" / "release.json").read_text())["released"]
    by_name = {}
    for r in rows:
        by_name.setdefault(r["statistic"], []).append(r)
    for s, p in zip(plan.statistics, plan.privacy_all()):
        got = by_name[s.name]
        assert all(r["error"] == p.error for r in got)          # the plan's error, as shown
        assert got[0]["scale"] == pytest.approx(p.scale, rel=1e-9) and got[0]["scale"] >= p.scale
        assert len(got) == p.opendp.certified.coordinates


def test_a_whole_numbers_flag_left_from_a_mean_does_not_reach_other_kinds(tmp_path):
    """"Values are whole numbers" ticked on a mean, then its kind changed (the tick is hidden for
    the other kinds, and kept): the plan's numbers ignore it outside sums and means, and so must
    the script - its quantile cast to integers crashed in OpenDP before any check."""
    plan = every_kind_plan()
    plan.replace_all([s if s.kind.value in ("sum", "mean") else s.replace(integer=True) for s in plan])
    assert any(s.kind.value == "quantile" and s.integer for s in plan)
    script = tmp_path / "release.py"
    block = export(plan, script)
    assert not any(st["integer"] for st in block["statistics"] if st["kind"] not in ("sum", "mean"))
    columns = write_data(block, tmp_path / "data.csv", _rows(block), seed=3)
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out", "--check-only")
    assert done.returncode == 0, done.stderr
    assert "all checks passed" in done.stdout


def test_the_stated_errors_hold_at_the_stated_confidence(tmp_path):
    """>= 300 releases of every statistic (the noise drawn by OpenDP in one process): the share
    within the stated error is the confidence, within sampling error (a single value's error is
    exact; a histogram's or CDF's bounds every coordinate at once, so it may only be higher)."""
    plan = every_kind_plan()
    script = tmp_path / "release.py"
    block = export(plan, script)
    columns = write_data(block, tmp_path / "data.csv", block["size"], seed=3)
    module = load_module(script)
    dp.enable_features("contrib", "honest-but-curious")
    records, _ = module.read_records(str(tmp_path / "data.csv"), module.needed_columns(block, columns))
    _, built = module.build(dp, block, columns, module.CATEGORIES)
    runs, conf = 400, block["confidence"]
    sampling = 4 * math.sqrt(conf * (1 - conf) / runs)
    for stat in block["statistics"]:
        (_, transformation, _, scale), = built[stat["name"]]       # (one cell: not grouped)
        exact = transformation(records)
        noise = module.noise(dp, stat, (transformation.output_domain, transformation.output_metric), scale)
        covered = sum(_within(stat, exact, noise(exact)) for _ in range(runs)) / runs
        if stat["cells"] == 1:
            assert abs(covered - conf) <= sampling, (stat["name"], covered)
        else:
            assert covered >= conf - sampling, (stat["name"], covered)


def _within(stat: dict, exact, noisy) -> bool:
    if stat["cells"] == 1:
        return abs(noisy - exact) / stat["divisor"] <= stat["error"]
    diffs = [n - e for n, e in zip(noisy, exact)]
    if stat["kind"] == "quantile":
        running, worst = 0, 0
        for d in diffs:
            running += d
            worst = max(worst, abs(running))
        return worst <= stat["error"]
    return max(abs(d) for d in diffs) <= stat["error"]


def test_lowering_any_scale_by_one_percent_makes_it_refuse(tmp_path):
    plan = every_kind_plan()
    script = tmp_path / "release.py"
    block = export(plan, script)
    columns = write_data(block, tmp_path / "data.csv", block["size"], seed=4)
    text = script.read_text()
    for stat in block["statistics"]:
        old = f"'scale': {stat['scale']!r}"
        at = text.index(old, text.index(f"'name': {stat['name']!r}"))
        lowered = text[:at] + f"'scale': {stat['scale'] * 0.99!r}" + text[at + len(old):]
        edited = tmp_path / "lowered.py"
        # the digest is recomputed too, so that only the privacy check can catch it
        module_text = redigest(lowered)
        edited.write_text(module_text)
        done = run(edited, tmp_path / "data.csv", columns, tmp_path / "never")
        assert done.returncode == 1, stat["name"]
        assert "nothing was released" in done.stderr
        assert f"statistic {stat['name']!r}: OpenDP's privacy map gives" in done.stderr
        assert not (tmp_path / "never").exists()


def test_an_unfilled_custom_statistic_makes_it_refuse(tmp_path):
    plan = opendp_example("census")
    script = tmp_path / "release.py"
    block = export(plan, script)
    columns = write_data(block, tmp_path / "data.csv", 300, seed=5)
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "never")
    assert done.returncode == 1
    assert "custom statistic 'pre-released headline' is not filled in" in done.stderr
    assert not (tmp_path / "never").exists()


def test_a_data_file_of_the_wrong_size_is_refused(tmp_path):
    plan = every_kind_plan()
    script = tmp_path / "release.py"
    block = export(plan, script)
    columns = write_data(block, tmp_path / "data.csv", block["size"] + 1, seed=6)
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "never", "--check-only")
    assert done.returncode == 1
    assert f"the data has {block['size'] + 1} records" in done.stderr


def test_the_script_imports_nothing_from_dpplanner_and_pins_opendp(tmp_path):
    script = tmp_path / "release.py"
    export(every_kind_plan(), script)
    text = script.read_text()
    assert "dpplanner import" not in text and "import dpplanner" not in text
    assert 'opendp==0.16.*' in text


def test_names_that_quote_the_templates_markers_are_written_as_typed(tmp_path):
    plan = every_kind_plan()
    plan.replace_all([s.replace(name=s.name + " # @@PLAN@@ # @@CHECKS@@") if s.name == "people" else s
                      for s in plan])
    plan.set_metadata(title="Survey # @@DATA@@")
    script = tmp_path / "release.py"
    block = export(plan, script)
    assert load_module(script).PLAN["title"] == "Survey # @@DATA@@"
    columns = write_data(block, tmp_path / "data.csv", block["size"], seed=7)
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out", "--check-only")
    assert done.returncode == 0, done.stderr
    assert "all checks passed: 11 statistics match the plan 'Survey # @@DATA@@'" in done.stdout
