"""Issue 26 in the release script: a statistic whose groups are selected privately is exported with
OpenDP's make_laplace_threshold on each group's count of distinct individuals (one row per
individual per group, each in at most L0 groups), at the scale, integer threshold and (eps_s,
delta_s) the plan shows; the script checks OpenDP's privacy map against them before releasing and
refuses a tampered selection."""

from __future__ import annotations

import csv
import json
import random

import pytest

from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, Statistic
from dpplanner.model.csvio import export_csv
from dpplanner.model.redistribution import rebalance
from dpplanner.model.statistic import Noise
from dpplanner.release import render_script

from release_scripts import export, load_module, redigest, run

dp = pytest.importorskip("opendp.prelude")

COMMON = {"clerk": 0.5, "nurse": 0.3, "teacher": 0.2}
RARE = "astronaut"              # held by 3 households: far below any threshold here
OPTIONS = ["--id-column", "hh", "--column", "people by occupation (group)=occupation",
           "--column", "income by occupation (group)=occupation"]


def selecting_plan(neighbouring=Neighbouring.ADD_REMOVE) -> Plan:
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=5000, neighbouring=neighbouring, unit="household",
               contributions=3, truncate=True)
    grouped = {"group_by": "occupation", "select_groups": True, "max_groups": 2}
    stats = [Statistic("people by occupation", "", Kind.COUNT, Mechanism.LAPLACE, **grouped),
             Statistic("income by occupation", "income", Kind.SUM, Mechanism.GAUSSIAN, lower=0, upper=5000,
                       **grouped),
             Statistic("households", "", Kind.COUNT, Mechanism.LAPLACE)]
    plan = Plan(b, [s.replace(noise=Noise.OPENDP) for s in stats], title="By occupation")
    rebalance(plan)
    return plan


def write(path, households: int, seed: int) -> dict:
    """Households of 1 to 3 rows, each row in one of the household's (at most 3) occupations: a
    household with 3 occupations is beyond the plan's L0 = 2 and truncated by the script."""
    rng = random.Random(seed)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        w = csv.writer(handle)
        w.writerow(["hh", "occupation", "income"])
        for hh in range(households):
            jobs = rng.choices(list(COMMON), weights=list(COMMON.values()), k=rng.randint(1, 3))
            for job in jobs:
                w.writerow([hh, job, repr(rng.uniform(0, 5000))])
        for hh in range(households, households + 3):
            w.writerow([hh, RARE, "100"])
    return {"income by occupation": "income"}


def test_the_plans_threshold_is_the_scripts_and_the_groups_it_keeps_are_released(tmp_path):
    plan = selecting_plan()
    script = tmp_path / "release.py"
    block = export(plan, script)
    for entry, p in zip(block["statistics"][:2], plan.privacy_all()):
        chosen = p.selection
        # the very numbers the window and the plan's CSV show (an integer threshold: OpenDP's)
        assert entry["selection"] == {"scale": chosen.scale, "threshold": chosen.threshold, "d_in": [2, 2, 1],
                                      "epsilon": chosen.epsilon, "delta": chosen.delta}
        assert isinstance(chosen.threshold, int) and f"τ = {chosen.threshold} " in chosen.sentence("household")
        assert f",{chosen.threshold}\n" in export_csv(plan).replace("\r\n", "\n")
    columns = write(tmp_path / "data.csv", 1800, seed=1)
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out", *OPTIONS)
    assert done.returncode == 0, done.stderr
    released = json.loads((tmp_path / "out" / "release.json").read_text())["released"]
    for name in ("people by occupation", "income by occupation"):
        assert {r["group"] for r in released if r["statistic"] == name} == set(COMMON)
    record = (tmp_path / "out" / "release-record.txt").read_text()
    assert f"threshold {block['statistics'][1]['selection']['threshold']!r}" in record and "3 kept" in record


def test_openDPs_map_of_the_selection_is_within_the_plans_budget(tmp_path):
    for neighbouring in (Neighbouring.ADD_REMOVE, Neighbouring.REPLACE_ONE):
        plan = selecting_plan(neighbouring)
        (tmp_path / "release.py").write_text(render_script(plan), encoding="utf-8")
        module = load_module(tmp_path / "release.py")
        dp.enable_features("contrib")
        for stat, p in zip(module.PLAN["statistics"][:2], plan.privacy_all()):
            measurement, scale = module.selector(dp, stat)
            eps, delta = measurement.map(tuple(stat["selection"]["d_in"]))
            assert eps <= p.selection.epsilon and delta <= p.selection.delta
            assert stat["selection"]["d_in"][0] == (4 if neighbouring is Neighbouring.REPLACE_ONE else 2)
            assert module.check_selection(stat, measurement, scale) == []


def test_each_individual_counts_once_in_a_group(tmp_path):
    (tmp_path / "release.py").write_text(render_script(selecting_plan()), encoding="utf-8")
    module = load_module(tmp_path / "release.py")
    stat = module.PLAN["statistics"][0]
    records = ["clerk", "clerk", "clerk", "nurse", module.OUTSIDE]
    assert module.distinct_counts(stat, records, ["a", "a", "b", "a", "c"], 0) == {"clerk": 2, "nurse": 1}


@pytest.mark.parametrize("field, factor, message", [
    ("threshold", 0.5, "a group held by one individual is kept with probability above"),
    ("scale", 0.5, "OpenDP's privacy map gives (epsilon, delta)")])
def test_a_tampered_selection_is_refused(tmp_path, field, factor, message):
    plan = selecting_plan()
    script = tmp_path / "release.py"
    block = export(plan, script)
    columns = write(tmp_path / "data.csv", 1800, seed=2)
    chosen = block["statistics"][0]["selection"]
    old = f"'{field}': {chosen[field]!r}"
    lowered = type(chosen[field])(chosen[field] * factor)
    text = script.read_text().replace(old, f"'{field}': {lowered!r}", 1)
    for edited, why in ((text, "the PLAN block was edited"), (redigest(text), message)):
        script.write_text(edited)
        done = run(script, tmp_path / "data.csv", columns, tmp_path / "never", *OPTIONS)
        assert done.returncode == 1 and "nothing was released" in done.stderr
        assert why in done.stderr, done.stderr
        assert not (tmp_path / "never").exists()
