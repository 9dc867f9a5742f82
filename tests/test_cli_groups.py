"""Issue 26 at the command line: a grouped statistic's error is shown for one group (as in the
window), `allocate --json` gives both errors and the cells one individual moves, and `target`
sets one group's error."""

from __future__ import annotations

import json

from dpplanner.cli import main
from dpplanner.model import Budget, Kind, Plan, Statistic, files
from dpplanner.model.statistic import Noise


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def grouped_plan(path):
    plan = Plan(Budget(epsilon=1.0, delta=1e-6, dataset_size=100_000, unit="household", contributions=4),
                [Statistic("people by region", kind=Kind.COUNT, epsilon=0.5, group_by="region", groups=50,
                           one_group_each=True, noise=Noise.CONTINUOUS),
                 Statistic("households", kind=Kind.COUNT, epsilon=0.5, noise=Noise.CONTINUOUS)])
    files.save_plan(plan, path)
    return plan


def test_allocate_shows_one_groups_error_and_json_gives_both(capsys, tmp_path):
    path = tmp_path / "g.dpplan"
    grouped_plan(path)
    code, out, err = run(capsys, "allocate", path, "--json", "-o", path)
    assert code == 0, err
    plan = files.load_plan(path)
    table, single = json.loads(out)["statistics"]
    p = plan.privacy(0)
    assert (table["group_by"], table["cells_moved"]) == ("region", 1)
    assert table["error_one_group"] == p.cell_error and table["error"] == p.error > p.cell_error
    assert single["group_by"] == "" and single["error_one_group"] == single["error"]
    code, out, _ = run(capsys, "allocate", path)
    assert "records per group" in out


def test_target_sets_one_groups_error(capsys, tmp_path):
    path = tmp_path / "g.dpplan"
    grouped_plan(path)
    code, out, err = run(capsys, "target", path, "people by region", "30", "-o", path)
    assert code == 0, err
    assert "per group), pinned" in out
    p = files.load_plan(path).privacy(0)
    assert p.cell_error <= 30 < p.error
