"""Issue 26 in the release script: a statistic by group is exported as one measurement per group,
each at the sensitivity, shift and noise scale the plan shows for a cell, and checked against the
plan before anything is released; groups that are not the plan's, and individuals beyond the
plan's bounds of groups and rows, make it refuse (or are truncated when the plan truncates)."""

from __future__ import annotations

import csv
import json
import random

import pytest

from dpplanner.model import Budget, Kind, Mechanism, Neighbouring, Plan, Statistic
from dpplanner.model.redistribution import rebalance
from dpplanner.model.statistic import Noise

from release_scripts import export, run

dp = pytest.importorskip("opendp.prelude")

REGIONS = ["north", "south", "east", "west", "centre"]


def grouped_plan(neighbouring=Neighbouring.ADD_REMOVE, truncate=False) -> Plan:
    b = Budget(epsilon=1.0, delta=1e-6, dataset_size=600, neighbouring=neighbouring, unit="household",
               contributions=3, truncate=truncate)
    stats = [
        Statistic("people by region", "", Kind.COUNT, Mechanism.LAPLACE, group_by="region",
                  group_keys=", ".join(REGIONS), one_group_each=True),
        Statistic("income by region", "income", Kind.SUM, Mechanism.GAUSSIAN, lower=0, upper=5000,
                  group_by="region", groups=5, one_group_each=True),
        Statistic("age by sex", "age", Kind.HISTOGRAM, Mechanism.LAPLACE, bins=3, group_by="sex",
                  group_keys="f, m", max_rows=2),
        Statistic("households", "", Kind.COUNT, Mechanism.LAPLACE),
    ]
    plan = Plan(b, [s.replace(noise=Noise.OPENDP) for s in stats], title="By group")
    rebalance(plan)
    return plan


def write(path, rows: int, seed: int, households_over: bool = False) -> dict:
    """Households of up to 3 persons, each household in one region, at most 2 of one sex."""
    rng = random.Random(seed)
    with open(path, "w", newline="", encoding="utf-8") as handle:
        w = csv.writer(handle)
        w.writerow(["hh", "region", "income", "age", "sex"])
        hh, left, region = 0, 0, None
        for _ in range(rows):
            if left == 0:
                hh, left, region = hh + 1, rng.randint(1, 3), rng.choice(REGIONS)
            left -= 1
            w.writerow([hh, region, repr(rng.uniform(0, 5000)), rng.randrange(3), "fm"[left % 2]])
        if households_over:             # one household with three rows in one sex
            for _ in range(3):
                w.writerow([hh + 1, "north", "10", "1", "f"])
    return {"income by region": "income", "age by sex": "age"}


def options(*extra: str) -> list[str]:
    return ["--column", "people by region (group)=region", "--column", "income by region (group)=region",
            "--column", "age by sex (group)=sex", "--id-column", "hh", *extra]


def test_a_grouped_plan_releases_one_value_per_group_at_the_plans_noise(tmp_path):
    plan = grouped_plan()
    script = tmp_path / "release.py"
    block = export(plan, script)
    privacy = plan.privacy_all()
    for entry, s, p in zip(block["statistics"], plan.statistics, privacy):
        assert entry["scale"] == p.opendp.scale            # the noise the plan shows
        assert entry["moved_cells"] == p.moves.cells       # the cells it was composed as
        if s.group_by:
            assert entry["error_one_group"] == p.cell_error and entry["d_in"] == p.opendp.certified.d_in
    columns = write(tmp_path / "data.csv", 590, seed=1)
    text = script.read_text()
    assert "'income by region': []" in text             # g only: its keys are typed in the DATA block
    script.write_text(text.replace("'income by region': []", f"'income by region': {REGIONS!r}", 1))
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out", *options())
    assert done.returncode == 0, done.stderr
    released = json.loads((tmp_path / "out" / "release.json").read_text())["released"]
    by = {}
    for row in released:
        by.setdefault(row["statistic"], []).append(row)
    assert sorted(r["group"] for r in by["people by region"]) == sorted(REGIONS)
    assert sorted(r["group"] for r in by["income by region"]) == sorted(REGIONS)
    assert len(by["age by sex"]) == 2 * 3 and {r["group"] for r in by["age by sex"]} == {"f", "m"}
    assert "group" not in by["households"][0]
    # each group's value with one group's error, the error the plan's table shows
    for s, p in zip(plan.statistics, privacy):
        assert {r["error"] for r in by[s.name]} == {p.cell_error if s.group_by else p.error}, s.name
    with open(tmp_path / "out" / "release.csv", newline="") as handle:
        assert {r["group"] for r in csv.DictReader(handle)} >= set(REGIONS)
    record = (tmp_path / "out" / "release-record.txt").read_text()
    assert "Neighbouring datasets: add / remove one household (all of their rows, at most c = 3)" in record
    assert "a statistic by group: all coordinates of one group" in record       # the error a group's row carries


def test_groups_that_are_not_the_plans_are_refused(tmp_path):
    plan = grouped_plan()
    script = tmp_path / "release.py"
    export(plan, script)
    columns = write(tmp_path / "data.csv", 590, seed=2)
    # "income by region" only counts its 5 groups: none given, then four
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out", *options())
    assert done.returncode == 1 and "0 group key(s) given" in done.stderr and "g = 5" in done.stderr
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out",
               *options("--groups", "income by region=north,south,east,west"))
    assert done.returncode == 1 and "4 group key(s) given" in done.stderr
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out",
               *options("--groups", f"income by region={','.join(REGIONS)}",
                        "--groups", "people by region=" + ",".join(reversed(REGIONS))))
    assert done.returncode == 1 and "not the plan's keys" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_individual_beyond_the_bounds_is_refused_or_truncated(tmp_path):
    regions = f"income by region={','.join(REGIONS)}"
    for truncate in (False, True):
        plan = grouped_plan(truncate=truncate)
        script = tmp_path / f"release{truncate}.py"
        export(plan, script)
        columns = write(tmp_path / "data.csv", 590, seed=3, households_over=True)   # 3 rows in "f"
        done = run(script, tmp_path / "data.csv", columns, tmp_path / f"out{truncate}",
                   *options("--groups", regions))
        if truncate:
            assert done.returncode == 0, done.stderr
        else:
            assert done.returncode == 1 and "more than 2 row(s) in group 'f'" in done.stderr



def test_a_group_column_given_as_an_option_is_the_one_read(tmp_path):
    """The usage's --column "STATISTIC (group)=COLUMN" names a statistic's group column; the DATA
    block's GROUP_COLUMNS (the default, "region") had overwritten it."""
    plan = grouped_plan()
    script = tmp_path / "release.py"
    export(plan, script)
    columns = write(tmp_path / "data.csv", 590, seed=3)
    text = (tmp_path / "data.csv").read_text(encoding="utf-8")
    (tmp_path / "data.csv").write_text(text.replace("hh,region,", "hh,area,", 1), encoding="utf-8")
    area = ["--column", "people by region (group)=area", "--column", "income by region (group)=area",
            "--column", "age by sex (group)=sex", "--id-column", "hh",
            "--groups", f"income by region={','.join(REGIONS)}", "--check-only"]
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out", *area)
    assert done.returncode == 0, done.stderr
    done = run(script, tmp_path / "data.csv", columns, tmp_path / "out", *area[4:])
    assert done.returncode == 1 and "no column named 'region'" in done.stderr
    assert "--column" in done.stderr and "GROUP_COLUMNS" in done.stderr
